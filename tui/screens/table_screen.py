"""What every board table screen shares: the controller and its messages, the panels, the game-over
flow, help, leaving; and the keys belong to the board, never to a panel.

Each game's screen (TRICE, TRIAD, Dice Breaker, Tricolor Line) keeps only what differs: its
`compose` (with `compose_panels` for the tabs), its keys (with `CURSOR_KEYS`, `panel_keys`,
`LEAVE_KEY`), `on_table_changed`, drawing, cursor and moves, and small hooks (`HELP_TEXT`,
`verdict`, `show_game_over`, `rematch_now`, `step_back`, `started`). Textual calls a message handler in EVERY
class of the MRO, so a game's screen must not define an `on_*` handler that this base also defines
(it would run twice): the hooks are plain methods for that reason.

Textual's `Screen.AUTO_FOCUS = None` does not turn autofocus off: it falls back to the app's "*",
which focuses the first focusable widget (the panel tabs, or a network table's chat log), so the
arrows would switch tabs instead of moving the cursor. "" turns it off; the panels are made
unfocusable and the focus is dropped again on mount and whenever the screen comes back from a dialog.
Only the chat line takes the focus, when the player opens it (t).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import ScreenResume
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TabbedContent, TabPane

from dicetable.core.game import Move
from dicetable.core.phrase import Phrase
from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.messages import Banner, ChatArrived, MoveRefused, TableChanged, TableClosed
from dicetable.tui.tables.view import TableView
from dicetable.tui.widgets.chat import ChatPanel
from dicetable.tui.widgets.fairness import FairnessPanel
from dicetable.tui.widgets.move_log import MoveLog
from dicetable.tui.widgets.seats import SeatsPanel
from dicetable.tui.widgets.text_line import TextLine

# The panels of a table screen that must never hold the focus.
PANELS = "Tabs, MoveLog, FairnessPanel, #chat-log"

# The cursor keys of a board whose rows grow downwards (arrows and vi keys).
CURSOR_KEYS = [
    Binding("left,h", "cursor(-1, 0)", "move", key_display="←↓↑→"),
    Binding("right,l", "cursor(1, 0)", "right", show=False),
    Binding("up,k", "cursor(0, -1)", "up", show=False),
    Binding("down,j", "cursor(0, 1)", "down", show=False),
]
PANE_KEYS = {"moves": "m", "fairness": "f", "chat": "t"}
LEAVE_KEY = Binding("escape", "leave", "leave")


def panel_keys(*panes: str | Binding, show: bool = True) -> list[Binding]:
    """? help, a key per panel in the footer's order (a game's own panel as its Binding), then
    t chat unless named, and v verify."""
    keys = [Binding("question_mark", "help", "help", key_display="?")]
    for pane in (*panes, "chat") if "chat" not in panes else panes:
        if isinstance(pane, Binding):
            keys.append(pane)
        else:
            keys.append(Binding(PANE_KEYS[pane], f"panel('{pane}')", pane, show=show))
    # t at a local table, where there is no chat: one line says so (a key that does nothing is a trap)
    keys.append(Binding(PANE_KEYS["chat"], "no_chat", show=False))
    return keys + [Binding("v", "verify", "verify", show=False)]


class PanelActions:
    """What the panel keys (`panel_keys`) do, on any screen with the panels and a controller: every
    game's table and the dice room."""

    def action_panel(self, pane: str) -> None:
        if pane == "chat" and not self.controller.network:
            return
        self.query_one(TabbedContent).active = pane
        if pane == "chat":
            self.query_one("#chat-input").focus()

    def action_no_chat(self) -> None:
        self.notify("Chat is for network tables.", timeout=4)

    def action_verify(self) -> None:
        self.query_one(TabbedContent).active = "fairness"
        self.query_one(FairnessPanel).show_verdict(self.controller.verify())


class TableScreen(PanelActions, Screen):
    AUTO_FOCUS = ""  # "" is off; None would mean the app's "*" (whichever widget is first)
    # Every game's screen inherits it; the footer shows it only while a bot of this table thinks.
    BINDINGS = [Binding("g", "hurry", "move now"), Binding("f9", "resign", "resign")]
    HELP_TEXT: str | None = None  # None: the TRICE help (HelpDialog's default); `r` in it opens the rules

    def __init__(self, controller: TableController) -> None:
        super().__init__()
        self.controller = controller
        self.view: TableView | None = None
        self._dialog_shown_for = None  # the finished state whose dialog we already opened
        self._over = False
        self._rematch = ""  # the network rematch's state last drawn (TableView.rematch)
        self._hurry_shown = False  # the footer shows "move now" (a bot thinks)
        self._sent_in = None  # the state a move was sent in, until the table answers
        self._shown = False  # resumed once: its first showing is over

    # -- hooks a game's screen may override ----------------------------------------------------
    def started(self) -> None:
        """Called once after mount, when the controller is attached."""

    def verdict(self) -> tuple[str, str]:
        """The headline and the deciding line of the finished game."""
        raise NotImplementedError

    def show_game_over(self) -> None:
        from dicetable.tui.screens.dialogs import GameOverDialog  # the dialogs wait until a game ends: not in the first frame

        headline, detail = self.verdict()
        detail = self.controller.ending_note() or detail  # e.g. claimed in default while away: said plainly
        dialog = GameOverDialog(headline, detail, self.controller.can_rematch(), self.offer_words(), self.offered())
        self.app.push_screen(dialog, self._after_game)

    def offer_words(self) -> str:
        """Another seat's rematch offer at a network table, or its refusal or end, in words ("": none)."""
        shown = ("asked", "declined", "closed")
        return self.view.note if self.view is not None and self.view.rematch in shown else ""

    def offered(self) -> bool:
        """Another seat offered a rematch this seat may accept or decline now."""
        return self.view is not None and self.view.rematch == "asked"

    def rematch_now(self) -> None:
        self.controller.rematch()

    def step_back(self) -> bool:
        """Esc undoes a step of the player's own (True), before it leaves the table."""
        return False

    # -- mounting ------------------------------------------------------------------------------
    def keep_keys_on_board(self) -> None:
        """No panel may take the cursor keys from the board (after compose)."""
        for widget in self.query(PANELS):
            widget.can_focus = False
        self.set_focus(None)  # the tabs may have taken the focus already

    def on_mount(self) -> None:
        self.keep_keys_on_board()
        self.controller.attach(self)
        view = self.controller.view() if not (self.controller.network or self.controller.replayed) else None
        if view is not None and view.result is None:
            # A local game in play is drawn now, so the screen's first frame shows it (its
            # TableChanged, which comes after that frame, draws the same again); a network table's
            # messages keep their order (a banner before the view may take the screen away), a
            # replay's screen has a handler of its own before the game's, and a game already over
            # opens its dialog from the message, over a screen that is up
            self.on_table_changed(TableChanged(view))
        self.started()

    def on_unmount(self) -> None:
        self.controller.close()

    def on_screen_resume(self, event: ScreenResume) -> None:
        if not self._shown:
            # Its first showing, just after it was pushed: its widgets took their styles as they
            # mounted, so Textual's second pass over every one of them is left out (a tenth of the
            # table's first frame). This handler runs before Screen's, which reads the flag.
            self._shown = True
            event.refresh_styles = False
        if not isinstance(self.focused, Input):  # back from a dialog: the arrows belong to the board
            self.set_focus(None)

    # -- messages from the table ---------------------------------------------------------------
    def said(self, phrase: Phrase) -> str:
        """What a table said, with the seats' names as this screen shows them."""
        return phrase.words(self.view.names if self.view is not None else ())

    def on_move_refused(self, message: MoveRefused) -> None:
        self._sent_in = None  # the position stands: the player may try another move
        self.notify(self.said(message.reason), title="Not accepted", severity="warning")

    def on_chat_arrived(self, message: ChatArrived) -> None:
        if self.controller.network:
            self.query_one(ChatPanel).add(message.name, message.text)
            if self.query_one(TabbedContent).active != "chat":
                self.notify(f"{message.name}: {message.text}", title="Chat (t)", timeout=6)

    def on_banner(self, message: Banner) -> None:
        self.notify(self.said(message.what), severity=message.level if message.level != "info" else "information", timeout=8)

    def on_table_closed(self, message: TableClosed) -> None:
        self.query_one("#status", TextLine).update(f"The table closed: {message.reason}")
        self.notify(message.reason, title="Table closed", severity="error", timeout=15)

    @on(ChatPanel.Sent)
    def _send_chat(self, message: ChatPanel.Sent) -> None:
        self.controller.send_chat(message.text)

    # -- building ------------------------------------------------------------------------------
    def compose_panels(self, initial: str = "moves", fair: str = "Fairness",
                       before: tuple[tuple[str, str, Widget], ...] = (),
                       after: tuple[tuple[str, str, Widget], ...] = ()) -> ComposeResult:
        """The tabbed panels: a game's own panes (title, id, widget) `before` and `after` the move
        log and the fairness panel, and the chat at a network table. Use with `yield from`."""
        with TabbedContent(id="panels", initial=initial):
            for title, pane_id, widget in before:
                with TabPane(title, id=pane_id):
                    yield widget
            with TabPane("Moves", id="moves"):
                yield MoveLog(id="move-log")
            with TabPane(fair, id="fairness"):
                yield FairnessPanel(id="fairness-panel")
            for title, pane_id, widget in after:
                with TabPane(title, id=pane_id):
                    yield widget
            if self.controller.network:
                with TabPane("Chat", id="chat"):
                    yield ChatPanel(id="chat-panel")

    # -- drawing -------------------------------------------------------------------------------
    def show_status(self) -> None:
        self.query_one("#status", TextLine).update(self.status_line())

    def status_line(self) -> str:
        raise NotImplementedError

    def fit(self, *said: str) -> str:
        """The first of `said` (the fullest first: words with their keys, then the words alone) that
        fits the status line; the last one when none does (it ends in … then)."""
        width = self.query_one("#status").content_region.width or self.app.size.width - 2
        return next((words for words in said if len(words) <= width), said[-1])

    def show_panels(self) -> None:
        """The seats, the move log and the fairness panel, from the current view."""
        view = self.view
        for seats in self.query(SeatsPanel):
            seats.show(view)
        self.query_one(MoveLog).show(view.log, view.names)
        self.query_one(FairnessPanel).show(view)

    def settle_result(self) -> None:
        """After a redraw: the footer follows the game's end and a thinking bot, and the end is told once
        per finished state."""
        over = self.view.result is not None
        hurry = self.controller.can_hurry()
        # The footer's "rematch" and "move now" come and go; recomposing it is costly.
        if (over, self.view.rematch, hurry) != (self._over, self._rematch, self._hurry_shown):
            self._over, self._rematch, self._hurry_shown = over, self.view.rematch, hurry
            self.refresh_bindings()
            if over:  # an offer that comes while the game-over dialog is up (imported once a game ends)
                from dicetable.tui.screens.dialogs import GameOverDialog

                if isinstance(self.app.screen, GameOverDialog):
                    self.app.screen.offer(self.offer_words(), self.controller.can_rematch(), self.offered())
        state = self.view.state
        if over and self._dialog_shown_for is not state:
            self._dialog_shown_for = state
            self.show_game_over()

    # -- acting --------------------------------------------------------------------------------
    def _acting(self) -> bool:
        view = self.view
        return view is not None and view.state is not None and view.result is None and view.my_turn()

    def _ready(self, quiet: bool = False) -> bool:
        """A move may be made now: the game runs, it is this terminal's turn, none is on its way."""
        view = self.view
        if view is None or view.state is None or view.result is not None or self._sent_in is view.state:
            return False
        if not self._acting():
            if not quiet:
                self.notify("Not your turn yet.", severity="warning", timeout=2)
            return False
        return True

    def _submit(self, move: Move) -> None:
        self._sent_in = self.view.state
        self.controller.submit(move)

    # -- keys shared by every table ------------------------------------------------------------
    def action_help(self) -> None:
        from dicetable.tui.screens.dialogs import HelpDialog

        game = self.controller.game.name
        self.app.push_screen(HelpDialog(game=game) if self.HELP_TEXT is None else HelpDialog(self.HELP_TEXT, game))

    def action_hurry(self) -> None:
        self.controller.hurry()

    def action_rematch(self) -> None:
        if self.view is not None and self.view.result is not None and self.controller.can_rematch():
            self.rematch_now()

    def action_decline_rematch(self) -> None:
        if self.offered():
            self.controller.decline_rematch()

    def action_leave(self) -> None:
        if isinstance(self.focused, Input):  # Esc in the chat line only leaves the line
            self.set_focus(None)
            return
        if self.step_back():
            return
        if self.controller.can_resign():  # a network game in play: asked first, never left by a blind Esc
            self._ask(leaving=True)
            return
        self._go()

    def action_resign(self) -> None:
        if self.controller.can_resign():
            self._ask(leaving=False)

    def _ask(self, leaving: bool) -> None:
        from dicetable.tui.screens.dialogs import LeaveDialog

        view = self.view
        others = [name for s, name in enumerate(view.names) if s not in view.local_seats] if view else []
        winners = f"{others[0]} wins" if len(others) == 1 else "the others win"
        self.app.push_screen(LeaveDialog(winners, self.controller.seat_waits(), leaving), self._left)

    def _left(self, answer: str | None) -> None:
        if answer == "resign":
            self.controller.resign()  # the game ends in the log; its end shows here as any end does
        elif answer == "leave":
            self._go()

    def _go(self) -> None:
        note = self.controller.leave_note()
        if note:
            self.app.notify(note, timeout=6)
        self.app.pop_screen()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "rematch":
            return self.view is not None and self.view.result is not None and self.controller.can_rematch()
        if action == "decline_rematch":
            return self.offered()
        if action == "panel" and parameters and parameters[0] == "chat":
            return self.controller.network
        if action == "no_chat":
            return not self.controller.network
        if action == "hurry":
            return self.controller.can_hurry()
        if action == "resign":
            return self.controller.can_resign()
        return True

    def _after_game(self, answer: str | None) -> None:
        if answer == "rematch" and self.controller.can_rematch():
            self.rematch_now()
        elif answer == "decline":
            self.controller.decline_rematch()
        elif answer == "home":
            self.app.pop_screen()
