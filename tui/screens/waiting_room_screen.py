"""The waiting room of a network table: the invite to share, who has joined, until the table fills.

When the game starts the room hands its table to the game's screen; leaving the room leaves the
table.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from dicetable.tui.clipboard import copy
from dicetable.tui.tables.messages import Banner, TableChanged, TableClosed
from dicetable.tui.widgets.seats import SeatsPanel


class WaitingRoomScreen(Screen):
    BINDINGS = [Binding("c", "copy_invite", "copy invite"), Binding("escape", "leave", "leave")]

    def __init__(self, table) -> None:
        super().__init__()
        self.table = table
        self.started = False
        self.seat_names: list[str] = []  # the seats' names, for what the table says of them

    def compose(self) -> ComposeResult:
        with Vertical(id="room-box"):
            yield Static("Waiting room", id="room-title")
            yield Static("Connecting…", id="room-status")
            yield Static(id="room-invite")
            yield SeatsPanel(id="room-seats")
        yield Footer()

    def on_mount(self) -> None:
        self.table.attach(self)

    def on_table_changed(self, message: TableChanged) -> None:
        view = message.view
        self.seat_names = view.names
        if self.table.invite:
            self.query_one("#room-invite", Static).update(
                f"Invite (give it to the other players; c copies it):\n[b]{self.table.invite}[/b]"
            )
        self.query_one("#room-status", Static).update(view.note or "Starting…")
        if view.game is not None:
            self.query_one(SeatsPanel).show(view)
        if view.state is not None and not self.started:
            self.started = True
            self.app.start_network_game(self.table, self)

    def on_table_closed(self, message: TableClosed) -> None:
        what = "open the table" if getattr(self.table, "role", "") == "host" else "join the table"
        self.query_one("#room-status", Static).update(
            Text.assemble(("Could not " + what + ": ", "bold"), message.reason, "\n\nEsc goes back.")
        )

    def on_banner(self, message: Banner) -> None:
        self.notify(message.what.words(self.seat_names), severity="error" if message.level == "error" else "warning")

    def action_copy_invite(self) -> None:
        if self.table.invite:
            self.notify(copy(self.app, self.table.invite, "the invite"), title="Invite", timeout=10)

    def action_leave(self) -> None:
        self.table.close()
        self.app.pop_screen()
