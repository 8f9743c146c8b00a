"""The dice room: seats roll dice expressions (3d6, 4d6kh3, d20+2, 2d6r1, 10d10>=8: core/dice_expr.py) —
alone with local dice, or with friends over the network where every roll is a fair shared roll
(core/diceroom.py).

A network room opened by the app lets anyone roll at any moment (option turns false): the roll line
is open whenever this seat may act, also while another roll is being decided (the new roll queues
behind it, in the host's log order); only the host closes the room. A room in turns (the local
room, older hosts) keeps the turn, pass and close of before. The Rolls tab is the room's history:
who rolled what, the dice, and each seat's reveal for that roll as checked by this seat's replica.

Secret rolls (a network room, PROTOCOL.md §16.6): `/s EXPR` rolls EXPR secretly — everyone sees who
rolled what, sealed; only this terminal sees its dice (`peeked`) until F6 (or `/open`) opens them to
all, and a closing room opens them by itself. `/s@NAME EXPR` shows it now to NAME alone, the game
master (§16.6 step 7): their terminal opens the secret boxed to them and shows them the dice; everybody
else sees "rolled EXPR secretly for NAME: sealed". Esc in a network room leaves it: the others go on
rolling, and Resume (c on the home screen) brings this seat back while the room is open. The room is
open (PROTOCOL.md §5.2): newcomers join it while it runs; the seats panel shows who is in (the free
places in one line) and the Log tab tells joins and leaves. Through a relay the host's Esc leaves too
and the room goes on under the next person; a host others dial directly closes it for everyone; the
last one out closes it.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, RichLog, TabbedContent, TabPane, Tabs

from dicetable.core.dice_expr import MAX_TEXT, BadExpression, parse
from dicetable.core.game import Move
from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.messages import Banner, ChatArrived, MoveRefused, TableChanged, TableClosed
from dicetable.tui.clipboard import copy
from dicetable.tui.screens.dice_stats_screen import DiceStatsScreen
from dicetable.tui.tables.view import FAULT, OUT, VERIFIED, WAITING, TableView, reason_words
from dicetable.tui.widgets.chat import ChatPanel
from dicetable.tui.widgets.die import face_rows
from dicetable.tui.widgets.fairness import FairnessPanel
from dicetable.tui.widgets.move_log import MoveLog
from dicetable.tui.widgets.seats import SeatsPanel
from dicetable.tui.screens.table_screen import PanelActions
from dicetable.tui.widgets.text_line import TextLine

MAX_DRAWN = 4  # six-sided dice drawn with pips, up to this many (more wrap beside the seats at 80 columns)


def roll_picture(view: TableView) -> Text:
    """The last roll: who, what, the total(s), and six-sided dice drawn with pips."""
    state = view.state
    text = Text()
    last = state.rolls[-1] if state.rolls else None
    if last is None:
        gap = "\n" if view.network else "\n\n"  # a network room's line for secret rolls takes the blank line
        text.append(f"No roll yet.{gap}Type a dice expression and press Enter:\n", "bold")
        text.append("  d20 · 3d6+2 · 4d6kh3 · 2d6r1 · 3d6! · 4dF\n  10d10>=8 · 6#4d6kh3 · 1d20+5 [attack], 2d6")
        if view.network:
            text.append("\n  /s d20: a secret roll · /open shows it\n  F7: the invite for someone new")
        return text
    if last.sealed:
        index = len(state.rolls) - 1
        text.append(f"{view.names[last.seat]} rolled {last.expr} secretly{shown_for(view, index)}: ", "bold")
        text.append(" sealed ", "reverse")
        mine, told = dict(view.peeked).get(index), dict(view.shown_me).get(index)
        if mine is not None:
            text.append(f"\n\n{only_you(view, index)}: {parse(last.expr).describe(mine)}\nF6 or /open shows it to everyone.")
        else:
            if told is not None:
                text.append(f"\n\n{only_you(view, index)}: {parse(last.expr).describe(told)}")
            text.append(f"\n\nOpened when {view.names[last.seat]} shows it, or as the room closes.")
        return text
    tallies = last.tallies
    text.append(f"{view.names[last.seat]} rolled {last.expr}" + (" (secret, opened)" if last.secret else "") + ": ", "bold")
    for n, tally in enumerate(tallies):
        text.append(", " if n else "")
        text.append(f"{tally.label} " if tally.label else "")
        text.append(f" {tally.total} ", "bold reverse")
        text.append(f" {tally.dice_text()}" if len(tallies) > 1 else f"   dice {tally.dice_text()}")
    text.append("\n")
    dice = [die for tally in tallies for die in tally.dice if not die.rerolled]  # the dice left on the table
    if all(die.sides == 6 for die in dice) and len(dice) <= MAX_DRAWN:
        rows = [face_rows(f" {die.face}") for die in dice]
        for r in range(3):
            text.append("\n" + "  ".join(f"[{row[r]}]" for row in rows))
    return text


def shown_for(view: TableView, index: int) -> str:
    """" for NAME" when roll `index` is a secret roll shown to NAME, the game master (§16.6 step 7)."""
    to = dict(view.shown).get(index)
    return f" for {view.names[to]}" if to is not None else ""


def only_you(view: TableView, index: int) -> str:
    """Who sees sealed roll `index` now, said to this terminal (its roller or the seat it was shown to)."""
    roll, to = view.state.rolls[index], dict(view.shown).get(index)
    other = to if roll.seat in view.local_seats else roll.seat
    return f"Only you and {view.names[other]} see it" if other is not None else "Only you see it"


def may_roll(view: TableView | None) -> bool:
    """This terminal's seat may roll now: its turn in a room in turns, any moment in a free room."""
    if view is None or view.final is not None or view.state is None:
        return False
    return any(view.state.may_act(seat) for seat in view.local_seats)


_MARK = {VERIFIED: ("✓", "green"), WAITING: ("…", "yellow"), FAULT: ("✗", "bold red"), OUT: ("–", "dim")}


def history_lines(view: TableView, seat: int | None = None) -> list[Text]:
    """One line per roll, oldest first: who rolled what, total and dice, and each seat's reveal check;
    then the roll being decided and the rolls queued behind it. With `seat`, that person's rolls only."""
    state, names, lines = view.state, view.names, []
    peeked = {**dict(view.shown_me), **dict(view.peeked)}  # the rolls this terminal sees sealed
    for number, roll in enumerate(state.rolls, start=1):
        if seat is not None and roll.seat != seat:
            continue
        line = Text(f"{number:>3}. ")
        if roll.sealed:
            line.append(f"{names[roll.seat]} rolled {roll.expr} secretly{shown_for(view, number - 1)}: ", "bold")
            line.append("sealed", "reverse")
            if number - 1 in peeked:
                who = only_you(view, number - 1).lower().replace(" see it", " see")
                line.append(f"  ({who}: {parse(roll.expr).describe(peeked[number - 1])})", "dim")
            lines.append(line)
            continue
        line.append(f"{names[roll.seat]} rolled {roll.expr}{' secretly, opened' if roll.secret else ''}: ", "bold")
        for n, tally in enumerate(roll.tallies):
            line.append(", " if n else "")
            line.append(f"{tally.label}: " if tally.label else "")
            line.append(f"{tally.total} ", "bold")
            line.append(tally.dice_text())
        event = view.events[number - 1] if number - 1 < len(view.events) else None
        if event is not None and event.reveals:
            line.append("   reveals ")
            for reveal in event.reveals:
                if reveal.status == OUT and view.seats[reveal.seat].kind == "free":
                    continue  # a place nobody has taken in an open room
                mark, style = _MARK.get(reveal.status, ("?", ""))
                line.append(f"{names[reveal.seat]} {mark} ", style)
        elif event is not None:
            line.append("   (local dice)", "dim")
        lines.append(line)
    if seat is not None:
        return lines
    if state.pending and view.result is not None:  # closed (a seat left or defaulted) before every reveal came
        lines.append(Text(f"     {names[state.rolling]} rolled {state.pending}: not decided, the room closed first", "dim"))
    elif state.pending:
        secretly = " secretly" if state.pending_secret else ""
        lines.append(Text(f"     {names[state.rolling]} rolls {state.pending}{secretly}: being decided…", "yellow"))
    for seat, expr, *_ in state.queue:
        lines.append(Text(f"     {names[seat]} rolls {expr}: {'not rolled' if view.result is not None else 'queued'}", "dim"))
    return lines


def room_status(view: TableView, mine: bool) -> str:
    """The status line of the room: closed, closing, waiting for someone's reveal, or who may roll."""
    state, names = view.state, view.names
    away = [names[s] for s, seat in enumerate(view.seats) if view.network and seat.kind == "remote" and not seat.connected]
    if view.result is not None:
        return f"The room is closed: {reason_words(view.result, names)}"
    if state.free and state.closing:
        waiting = f" (waiting for {', '.join(away)}, who is away)" if away and state.pending else ""
        if not state.pending and state.unopened:
            who = ", ".join(sorted({names[r.seat] for r in state.unopened}))
            return f"Closing: waiting for {who} to open their secret rolls" + (" (F3 closes now)" if mine else "")
        return f"Closing: the rolls under way are decided first{waiting}"
    gone = [names[s] for s in sorted(view.out)]
    if gone and view.local_seats & view.out:
        return "You left the room"
    if gone and state.free and mine and not view.note:
        return f"Anyone may roll at any moment ({', '.join(gone)} left the room)"
    if view.note and away and state.pending:
        return f"{', '.join(away)} is away: the roll waits for their reveal (the room closes if they do not return)"
    if view.note:
        return view.note
    if state.free and mine:
        return "Anyone may roll at any moment: type a roll and press Enter"
    if mine:
        return "Your turn: type a roll and press Enter, or pass (F2)"
    if view.actor is not None and view.actor >= 0:
        return f"{names[view.actor]} is rolling…"
    return "Rolling…"


class RollHistory(RichLog):
    """The room's rolls (history_lines), redrawn when they change."""

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, min_width=1, markup=False, highlight=False, auto_scroll=True, **kwargs)
        self.shown: list[str] = []

    def show(self, lines: list[Text]) -> None:
        plain = [line.plain for line in lines]
        if plain == self.shown:
            return
        if plain[: len(self.shown)] != self.shown or (self.shown and self.shown[-1].endswith(("…", "queued"))):
            self.clear()
            self.shown = []
        for line in lines[len(self.shown):]:
            self.write(line)
        self.shown = plain


class DiceRoomScreen(PanelActions, Screen):
    TOASTS_KEPT = 2  # the rack's ten rows over the rolls (app.tcss)
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("f2", "pass_turn", "pass"),
        Binding("f3", "close_room", "close room"),
        Binding("f", "panel('fairness')", "fairness", show=False),
        Binding("m", "panel('moves')", "rolls", show=False),
        Binding("l", "panel('log')", "log", show=False),
        Binding("t", "panel('chat')", "chat", show=False),
        Binding("v", "verify", "verify", show=False),
        Binding("f4", "dice_stats", "dice"),
        Binding("f5", "share_roll", "share roll"),
        Binding("f6", "open_secret", "open secret", show=False),
        Binding("f7", "invite", "invite", show=False),
        Binding("escape", "leave", "leave"),
    ]

    def __init__(self, controller: TableController) -> None:
        super().__init__()
        self.controller = controller
        self.view: TableView | None = None
        self._keys = (True, True)  # pass and close offered (the footer's state)

    def compose(self) -> ComposeResult:
        yield TextLine("", id="status")
        with Horizontal(id="room-top"):
            yield TextLine("", id="roll-picture")
            yield SeatsPanel(id="seats")
        with Horizontal(id="roll-row"):
            yield Input(placeholder="3d6, d20+2, 4d6kh3 … Enter rolls", id="roll-input", max_length=MAX_TEXT)
            yield Button("Pass (F2)", id="pass")
            yield Button("Close (F3)", id="close")
        with TabbedContent(id="panels", initial="moves"):
            with TabPane("Rolls", id="moves"):
                yield RollHistory(id="roll-history")
            with TabPane("Log", id="log"):
                yield MoveLog(id="move-log")
            with TabPane("Fairness", id="fairness"):
                yield FairnessPanel(id="fairness-panel")
            if self.controller.network:
                with TabPane("Chat", id="chat"):
                    yield ChatPanel(id="chat-panel")
        yield Footer()

    def on_mount(self) -> None:
        # Only the roll line (and the chat line) take keys: a focused button would eat Enter.
        for widget in (self.query_one(Tabs), self.query_one(MoveLog), self.query_one(FairnessPanel), self.query_one(RollHistory),
                       *self.query(Button)):
            widget.can_focus = False
        self.controller.attach(self)

    def on_unmount(self) -> None:
        self.controller.leave()  # nobody comes back to a room: a network seat resigns, so the room closes cleanly

    # -- messages from the table ---------------------------------------------------------------
    def on_table_changed(self, message: TableChanged) -> None:
        self.view = view = message.view
        mine = may_roll(view)
        self.query_one("#status", TextLine).update(room_status(view, mine))
        self.query_one("#roll-picture", TextLine).update(roll_picture(view))
        self.query_one(SeatsPanel).show(view)
        self.query_one(MoveLog).show(view.log, view.names)
        self.query_one(RollHistory).show(history_lines(view))
        keys = (self._may("pass_turn"), self._may("close_room"))
        self.query_one("#pass", Button).display, self.query_one("#close", Button).display = keys
        if keys != self._keys:  # the footer follows (recomposing it on every roll would be costly)
            self._keys = keys
            self.refresh_bindings()
        self.query_one(FairnessPanel).show(view)
        if isinstance(self.app.screen, DiceStatsScreen):  # the charts follow the room
            self.app.screen.show(view)
        box = self.query_one("#roll-input", Input)
        box.disabled = not mine
        chatting = isinstance(self.focused, Input) and self.focused.id == "chat-input"
        if mine and not chatting:
            box.focus()

    def on_move_refused(self, message: MoveRefused) -> None:
        self.notify(message.reason.words(self._names()), title="Not accepted", severity="warning")

    def on_chat_arrived(self, message: ChatArrived) -> None:
        if self.controller.network:
            self.query_one(ChatPanel).add(message.name, message.text)

    def on_banner(self, message: Banner) -> None:
        self.notify(message.what.words(self._names()), severity="error" if message.level == "error" else "warning", timeout=8)

    def on_table_closed(self, message: TableClosed) -> None:
        self.query_one("#status", TextLine).update(f"The table closed: {message.reason}")

    def _names(self) -> list[str]:
        return self.view.names if self.view is not None else []

    # -- acting --------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "roll-input":
            return
        event.stop()
        text = event.value.strip() or (self.view.state.option["expr"] if self.view else "d20")
        if text in ("/open", "/o"):
            event.input.clear()
            self.action_open_secret()
            return
        secret = text.startswith(("/s ", "/secret ", "/s@", "/secret@"))
        to = None
        if secret and text.partition(" ")[0].count("@"):  # `/s@NAME EXPR`: shown now to NAME, the GM (§16.6 step 7)
            to, text = self._seat_named(text.split("@", 1)[1])
            if to is None:
                return
        elif secret:
            text = text.split(" ", 1)[1].strip()
        try:
            expr = parse(text)
        except BadExpression as error:
            self.notify(str(error), title="Not a roll", severity="warning")
            return
        if secret and not self.controller.roll_secretly(str(expr), to):
            self.notify("Secret rolls are for a network room: local dice have nobody to hide them from.",
                        title="Not a secret roll", severity="warning")
            return
        event.input.clear()
        if not secret:
            self.controller.submit(Move("roll", (str(expr),)))

    def _seat_named(self, text: str) -> tuple[int | None, str]:
        """(the other seat of this room whose name `text` starts with, the rest): its name as shown
        ("Bob (4F2K)") or without the tag when that is nobody else's, any case; (None, text) said in one line."""
        view, folded = self.view, text.casefold()
        others = [s for s in range(len(self._names())) if s not in view.local_seats and s not in view.out]
        found: dict[str, set[int]] = {}
        for s in others:
            for form in {view.names[s], view.names[s].split(" (")[0]}:
                if folded.startswith(form.casefold() + " "):
                    found.setdefault(form, set()).add(s)
        form = max(found, key=len, default=None)
        if form is None or len(found[form]) != 1:
            who = ", ".join(view.names[s] for s in others) or "nobody"
            self.notify(f"/s@NAME EXPR shows a secret roll to another person in this room ({who}), "
                        f"not {text.split(' ')[0]!r}.", title="Not a secret roll", severity="warning")
            return None, text
        return found[form].pop(), text[len(form):].strip()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_pass_turn() if event.button.id == "pass" else self.action_close_room()

    def _may(self, action: str) -> bool:
        """Whether this room has the action at all: a free room has no turn to pass, and only its
        host (seat 0) closes it."""
        view = self.view
        if view is None or view.state is None:
            return True
        if view.result is not None:  # a closed room: nothing to pass, close or open; leaving (Esc) always works
            return action not in ("pass_turn", "close_room", "open_secret")
        if action == "pass_turn":
            return not view.state.free
        if action == "close_room":
            return not view.state.free or 0 in view.local_seats
        if action == "open_secret":
            return bool(view.peeked)
        return True

    def check_action(self, action: str, parameters) -> bool | None:
        return self._may(action)

    def action_pass_turn(self) -> None:
        if may_roll(self.view) and self._may("pass_turn"):
            self.controller.submit(Move("pass"))

    def action_close_room(self) -> None:
        if (may_roll(self.view) or self.view is not None and self.view.state.closing) and self._may("close_room"):
            self.controller.submit(Move("close"))

    def action_share_roll(self) -> None:
        """The last roll in one line for someone outside the room; `dicetable verify FILE --roll LINE`
        checks it against any seat's transcript."""
        decided = [e.number for e in self.view.events if e.outcome] if self.view is not None else []
        line = self.controller.roll_line(decided[-1]) if decided else None
        if line is None:
            self.notify("Nothing to share: a network room's rolls can be shared once decided "
                        "(local dice have no transcript to check them against).", severity="warning")
            return
        self.notify(copy(self.app, line, "the roll's line") + f"\n{line}", title="Share this roll", timeout=10)

    def action_invite(self) -> None:
        """The room's invite (copied, and kept in invite.txt) and short code, for a newcomer: the room is
        open while a place is free (PROTOCOL.md §5.2)."""
        from dicetable.tui.screens.waiting_room_screen import keep_invite, relay_where

        invite, code = self.controller.invitation()
        if not invite:
            self.notify("This room has no invite: nobody joins a room with local dice.", severity="warning")
            return
        said = copy(self.app, invite, "the invite", kept_in=keep_invite(invite, self.app.profile_dir))
        if code:
            said = f"Code: {code} — join with it at {relay_where(invite)}\n{said}"
        self.notify(said, title="Invite a newcomer", timeout=12)

    def action_open_secret(self) -> None:
        """Open this terminal's sealed secret rolls to everyone (every seat checks them: PROTOCOL.md §16.6)."""
        if not (self.view is not None and self.view.peeked):
            self.notify("You have no sealed secret roll to open.", severity="warning")
            return
        self.controller.unveil()

    def action_dice_stats(self) -> None:
        if self.view is not None and self.view.state is not None:
            self.app.push_screen(DiceStatsScreen(self.view, history_lines))

    def action_leave(self) -> None:
        if isinstance(self.focused, Input) and self.focused.id == "chat-input":
            self.set_focus(None)
            return
        self.app.pop_screen()
