"""The dice room: seats take turns rolling dice expressions (3d6, 4d6kh3, d20+2) — alone with local
dice, or with friends over the network where every roll is a fair shared roll (core/diceroom.py).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, TabbedContent, TabPane, Tabs

from core.dice_expr import BadExpression, parse
from core.game import Move
from tui.controller import TableController, TableView, with_names
from tui.messages import Banner, ChatArrived, MoveRefused, TableChanged, TableClosed
from tui.widgets.chat import ChatPanel
from tui.widgets.die import face_rows
from tui.widgets.fairness import FairnessPanel
from tui.widgets.move_log import MoveLog
from tui.widgets.seats import SeatsPanel
from tui.widgets.text_line import TextLine

MAX_DRAWN = 8  # six-sided dice drawn with pips, up to this many


def roll_picture(view: TableView) -> Text:
    """The last roll: who, what, the total, and six-sided dice drawn with pips."""
    state = view.state
    text = Text()
    last = state.rolls[-1] if state.rolls else None
    if last is None:
        text.append("No roll yet.\n\nType a dice expression and press Enter:\n", "bold")
        text.append("  d20 · 3d6 · 2d10+4 · 4d6kh3 (keep highest 3) · 4dF (Fudge)")
        return text
    expr = parse(last.expr)
    text.append(f"{view.names[last.seat]} rolled {last.expr}: ", "bold")
    text.append(f" {last.total} ", "bold reverse")
    text.append(f"   dice {last.describe().split(' ', 1)[1]}\n")
    if expr.sides == 6 and len(last.faces) <= MAX_DRAWN:
        rows = [face_rows(f" {face}") for face in last.faces]
        for r in range(3):
            text.append("\n" + "  ".join(f"[{row[r]}]" for row in rows))
    return text


class DiceRoomScreen(Screen):
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("f2", "pass_turn", "pass"),
        Binding("f3", "close_room", "close room"),
        Binding("f", "panel('fairness')", "fairness", show=False),
        Binding("m", "panel('moves')", "rolls", show=False),
        Binding("t", "panel('chat')", "chat", show=False),
        Binding("v", "verify", "verify", show=False),
        Binding("escape", "leave", "leave"),
    ]

    def __init__(self, controller: TableController) -> None:
        super().__init__()
        self.controller = controller
        self.view: TableView | None = None

    def compose(self) -> ComposeResult:
        yield TextLine("", id="status")
        with Horizontal(id="room-top"):
            yield TextLine("", id="roll-picture")
            yield SeatsPanel(id="seats")
        with Horizontal(id="roll-row"):
            yield Input(placeholder="3d6, d20+2, 4d6kh3 … Enter rolls", id="roll-input", max_length=40)
            yield Button("Pass (F2)", id="pass")
            yield Button("Close (F3)", id="close")
        with TabbedContent(id="panels", initial="moves"):
            with TabPane("Rolls", id="moves"):
                yield MoveLog(id="move-log")
            with TabPane("Fairness", id="fairness"):
                yield FairnessPanel(id="fairness-panel")
            if self.controller.network:
                with TabPane("Chat", id="chat"):
                    yield ChatPanel(id="chat-panel")
        yield Footer()

    def on_mount(self) -> None:
        # Only the roll line (and the chat line) take keys: a focused button would eat Enter.
        for widget in (self.query_one(Tabs), self.query_one(MoveLog), self.query_one(FairnessPanel),
                       *self.query(Button)):
            widget.can_focus = False
        self.controller.attach(self)

    def on_unmount(self) -> None:
        self.controller.close()

    # -- messages from the table ---------------------------------------------------------------
    def on_table_changed(self, message: TableChanged) -> None:
        self.view = view = message.view
        mine = view.my_turn()
        if view.result is not None:
            status = f"The room is closed: {with_names(view.result.reason, view.names)}"
        elif view.note:
            status = view.note
        elif mine:
            status = "Your turn: type a roll and press Enter, or pass (F2)"
        elif view.actor is not None and view.actor >= 0:
            status = f"{view.names[view.actor]} is rolling…"
        else:
            status = "Rolling…"
        self.query_one("#status", TextLine).update(status)
        self.query_one("#roll-picture", TextLine).update(roll_picture(view))
        self.query_one(SeatsPanel).show(view)
        self.query_one(MoveLog).show(view.log)
        self.query_one(FairnessPanel).show(view)
        box = self.query_one("#roll-input", Input)
        box.disabled = not mine
        chatting = isinstance(self.focused, Input) and self.focused.id == "chat-input"
        if mine and not chatting:
            box.focus()

    def on_move_refused(self, message: MoveRefused) -> None:
        self.notify(message.reason, title="Not accepted", severity="warning")

    def on_chat_arrived(self, message: ChatArrived) -> None:
        if self.controller.network:
            self.query_one(ChatPanel).add(message.name, message.text)

    def on_banner(self, message: Banner) -> None:
        self.notify(message.text, severity="error" if message.level == "error" else "warning", timeout=8)

    def on_table_closed(self, message: TableClosed) -> None:
        self.query_one("#status", TextLine).update(f"The table closed: {message.reason}")

    # -- acting --------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "roll-input":
            return
        event.stop()
        text = event.value.strip() or (self.view.state.option["expr"] if self.view else "d20")
        try:
            expr = parse(text)
        except BadExpression as error:
            self.notify(str(error), title="Not a roll", severity="warning")
            return
        event.input.clear()
        self.controller.submit(Move("roll", (str(expr),)))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_pass_turn() if event.button.id == "pass" else self.action_close_room()

    def _my_turn(self) -> bool:
        return self.view is not None and self.view.my_turn()

    def action_pass_turn(self) -> None:
        if self._my_turn():
            self.controller.submit(Move("pass"))

    def action_close_room(self) -> None:
        if self._my_turn():
            self.controller.submit(Move("close"))

    def action_panel(self, pane: str) -> None:
        if pane == "chat" and not self.controller.network:
            return
        self.query_one(TabbedContent).active = pane
        if pane == "chat":
            self.query_one("#chat-input").focus()

    def action_verify(self) -> None:
        self.query_one(TabbedContent).active = "fairness"
        self.query_one(FairnessPanel).show_verdict(self.controller.verify())

    def action_leave(self) -> None:
        if isinstance(self.focused, Input) and self.focused.id == "chat-input":
            self.set_focus(None)
            return
        self.app.pop_screen()
