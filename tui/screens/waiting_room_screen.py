"""The waiting room of a network table: the game and its seats, the invite to share, who has joined,
until the table fills.

The invite (about 104 characters, a relay's 160) is shown on one line, cut with … where the
terminal is narrower: a code wrapped over two screen lines is copied from the terminal broken. c
copies it whole (tui/clipboard.py), and it is written whole, on one line, to `invite.txt` in the
profile directory, whose path is shown (served over SSH: the command that downloads it). When the game starts the room hands its table to the
game's screen; leaving the room leaves the table.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from dicetable.tui.clipboard import copy
from dicetable.tui.tables.messages import Banner, TableChanged, TableClosed
from dicetable.tui.widgets.seats import SeatsPanel
from dicetable.tui.widgets.text_line import TextLine, fitted

INVITE_FILE = "invite.txt"


class InviteLine(TextLine):
    """One line of text that is never wrapped: cut with … at the widget's width."""

    def render(self) -> str:
        return fitted(str(self.text), self.size.width)


def keep_invite(invite: str, directory: Path | None) -> str | None:
    """Write the invite, one line, to the profile directory; where to find it, in words (None if not
    written). Served over SSH that directory is on the server: the way to download it."""
    from dicetable.net.identity import home
    from dicetable.tui.tables.lobby import served_lobby, shown_path

    path = (Path(directory) if directory is not None else home()) / INVITE_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(invite + "\n")
        path.chmod(0o600)  # it seats whoever reads it: for the players it is given to
    except OSError:
        return None
    if served_lobby() is not None:
        return shown_path(path)
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def relay_where(invite: str) -> str:
    """`relay HOST:PORT`, the relay a relay invite (`dr1-`) names: what a player who never used that
    relay types once beside the code ("your relay" while the invite is not known yet)."""
    from dicetable.net.reach.invite import BadInvite, Invite

    try:
        found = Invite.decode(invite)
    except BadInvite:
        return "your relay"
    return f"relay [{found.address}]:{found.port}" if ":" in found.address else f"relay {found.address}:{found.port}"


class WaitingRoomScreen(Screen):
    BINDINGS = [Binding("c", "copy_invite", "copy invite"), Binding("escape", "leave", "leave")]

    def __init__(self, table) -> None:
        super().__init__()
        self.table = table
        self.started = False
        self.seat_names: list[str] = []  # the seats' names, for what the table says of them
        self.invite_path: str | None = None  # where the invite is kept whole (keep_invite)
        self.shown_invite = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="room-box"):
            yield Static("Waiting room", id="room-title")
            yield Static("Connecting…", id="room-status")
            yield Static(id="room-code")
            yield Static(id="room-invite")
            yield InviteLine(id="room-invite-code")
            yield Static(id="room-invite-file")
            yield SeatsPanel(id="room-seats")
        yield Footer()

    def on_mount(self) -> None:
        self.table.attach(self)

    def on_table_changed(self, message: TableChanged) -> None:
        view = message.view
        self.seat_names = view.names
        if self.table.invite and self.table.invite != self.shown_invite:
            self.shown_invite = self.table.invite
            self.invite_path = keep_invite(self.table.invite, self.app.profile_dir)
            self.query_one("#room-invite", Static).update("Invite for the other players (c copies it whole):")
            self.query_one("#room-invite-code", InviteLine).update(self.table.invite)
            if self.invite_path is not None:
                self.query_one("#room-invite-file", Static).update(Text.assemble(
                    "The whole line is also in ", (self.invite_path, "bold")))
        code = getattr(self.table, "code", "")
        if code:  # through a relay: the short code people read aloud (`join CODE`, or the app's Join),
            # with the relay's HOST:PORT, which a player who never used it types once (its key is learned)
            self.query_one("#room-code", Static).update(Text.assemble(
                "Code: ", (code, "bold reverse"), f" — join with it at {relay_where(self.table.invite)} (30 min)"))
        elif getattr(self.table, "no_code", ""):  # codes stopped (PROTOCOL.md §13.4): why, and the invite instead
            self.query_one("#room-code", Static).update(Text.assemble(("No code: ", "bold"), self.table.no_code))
        self.query_one("#room-status", Static).update(view.note or "Starting…")
        if view.game is not None:
            places = f"up to {len(view.seats)} people" if view.game.name == "diceroom" else f"{len(view.seats)} seats"  # an open room
            self.query_one("#room-title", Static).update(f"Waiting room: {view.game.title}, {places}")
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
            self.notify(copy(self.app, self.table.invite, "the invite", kept_in=self.invite_path),
                        title="Invite", timeout=10)

    def action_leave(self) -> None:
        self.table.close()
        self.app.pop_screen()
