"""LAN tables: the open tables announced near you (net/reach/lan.py) and on this machine (its lobby,
net/reach/same_machine.py: tables other users host on 127.0.0.1), updated live; Enter joins, w watches
without a seat (net/table/watcher.py, with the same checks of the announced host); p plays
whoever is waiting for the chosen game (g), here and on the LAN (tui/screens/queue_screen.py).

Reached from the home screen (l) and the join screen (Ctrl+L). A table the app hosts is announced
(tui/tables/opening.py): on a LAN address by mDNS, on 127.0.0.1 in this machine's lobby.

Each row shows the announcement's trust in words (verified / unverified / forged), so nothing is
told by colour alone. A forged announcement is listed, with why, but never joined. Joining does
what `dicetable join --lan` does: the CurveZMQ handshake accepts only the host holding the
announced curve key, then the table's opening must be signed by the announced Ed25519 key (else the
seat is left, saying why); only then is an unverified host pinned (trust on first use, as ssh does).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from dicetable.core import registry
from dicetable.net.reach import announcement, lan, local_networks, same_machine
from dicetable.net.reach.announcement import FORGED, Announcement
from dicetable.net.reach.local_networks import DiscoveryError


COLUMNS = ("Trust", "Game", "Seats", "Host", "Fingerprint", "Address")


class LanScreen(Screen):
    CSS_PATH = "lan_screen.tcss"
    BINDINGS = [Binding("escape", "back", "back"), Binding("enter", "join", "join", priority=True),
                Binding("w", "watch", "watch"), Binding("p", "play_whoever", "play anyone"),
                Binding("g", "next_game", "game")]

    def __init__(self, interface_addresses: list[str] | None = None, browse: bool = True,
                 machine: bool | None = None) -> None:
        super().__init__()
        self.interface_addresses = interface_addresses
        self.browse = browse  # False: no mDNS, the LAN's rows come from `show` alone (tests)
        self.machine = browse if machine is None else machine  # also this machine's lobby
        self.browser = self.lobby = None
        self.heard: dict[str, list[Announcement]] = {"lan": [], "machine": []}
        self.rows: list[tuple[Announcement, str, str]] = []
        self.game = registry.board_games()[0]  # what p asks for (g changes it)

    def compose(self) -> ComposeResult:
        with Vertical(id="lan-box"):
            yield Static("Tables on your LAN and this machine", id="lan-title")
            yield DataTable(id="lan-tables", cursor_type="row", zebra_stripes=False)
            yield Static("Looking for tables…", id="lan-note")
            yield Static(id="lan-queue")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        table.focus()
        self._show_game()
        if self.machine:
            self.lobby = same_machine.Browser(on_change=lambda tables: self._from_browser("machine", tables))
            self.call_after_refresh(self._heard, "machine", self.lobby.tables())  # `show` waits for the mount
        if self.browse:
            try:
                self.browser = lan.Browser(self.interface_addresses,
                                                 on_change=lambda tables: self._from_browser("lan", tables))
            except DiscoveryError as error:
                self._note(str(error))

    def on_unmount(self) -> None:
        for browser in (self.browser, self.lobby):
            if browser is not None:
                browser.close()

    def _from_browser(self, where: str, tables: list[Announcement]) -> None:  # in the browser's thread
        try:
            self.app.call_from_thread(self._heard, where, tables)
        except RuntimeError:
            pass  # the app is closing

    def _heard(self, where: str, tables: list[Announcement]) -> None:
        self.heard[where] = tables
        self.show(self.heard["lan"] + self.heard["machine"])

    def show(self, tables: list[Announcement]) -> None:
        """Redraw the list from the announcements now on the LAN (open tables with an address)."""
        if not self.is_mounted or not self.query(DataTable):  # not shown yet, or going (p left for the queue)
            return
        try:
            known = announcement.KnownHosts(self.app.profile_dir)
        except DiscoveryError as error:
            self._note(str(error))
            return
        own = self._own()
        grid = self.query_one(DataTable)
        keep = self.rows[grid.cursor_row][0].service if self.rows and 0 <= grid.cursor_row < len(self.rows) else None
        self.rows = [(a, *announcement.assess(a, known, own)) for a in tables if a.open and a.addresses]
        grid.clear()
        for ann, trust, _ in self.rows:
            grid.add_row(
                trust, ann.game, f"{ann.seats_taken}/{ann.seats_total}", ann.host_name, ann.fingerprint,
                f"{local_networks.best_address(ann.addresses)}:{ann.port}", key=ann.service,
            )
        services = [a.service for a, _, _ in self.rows]
        if keep in services:
            grid.move_cursor(row=services.index(keep))
        if not self.rows:
            self._note("No open tables announced yet (a host announces with `dicetable host --lan`, "
                       "or by hosting in the app).")
        else:
            self._explain()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._explain()

    def _explain(self) -> None:
        row = self._current()
        if row is not None:
            ann, trust, why = row
            waits = f"; waits for whoever asks for {ann.game} (p)" if ann.queue else ""
            self._note(f"{ann.host_name} ({trust}): {why}{waits}")

    def _current(self) -> tuple[Announcement, str, str] | None:
        index = self.query_one(DataTable).cursor_row
        return self.rows[index] if self.rows and 0 <= index < len(self.rows) else None

    def _own(self):
        from dicetable.net import identity

        try:
            return identity.load(self.app.profile_dir)
        except identity.ProfileError:
            return None

    def _note(self, text: str) -> None:
        self.query_one("#lan-note", Static).update(text)

    def action_join(self, watch: bool = False) -> None:
        """Sit down at the highlighted table, or (`watch`) follow it without a seat; the host's
        opening is checked against its announcement either way."""
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables.opening import announced_check, join_table, watch_table

        row = self._current()
        if row is None:
            return
        ann, trust, why = row
        if trust == FORGED:
            self._note(f"Not {'watching' if watch else 'joining'}: this announcement is forged ({why}).")
            return
        profile = self.app.profile()
        if profile is None:
            return
        try:
            check = announced_check(ann, trust, self.app.profile_dir)
            table = (watch_table if watch else join_table)(profile, ann.invite().encode(), on_connected=check)
        except SessionError as error:
            self._note(str(error))
            return
        self.app.open_waiting_room(table, replace=self)

    def action_watch(self) -> None:
        self.action_join(watch=True)

    def _show_game(self) -> None:
        title = registry.get(self.game).title
        self.query_one("#lan-queue", Static).update(f"p plays whoever is waiting for [b]{title}[/b] (g changes the game).")

    def action_next_game(self) -> None:
        games = registry.board_games()
        self.game = games[(games.index(self.game) + 1) % len(games)]
        self._show_game()

    def action_play_whoever(self) -> None:
        """The queue of the chosen game (tui/tables/queue.py), here and, when browsing it, on the LAN."""
        from dicetable.tui.screens.queue_screen import QueueScreen

        profile = self.app.profile()
        if profile is not None:
            self.app.switch_screen(QueueScreen(profile, self.game, lan=self.browse))

    def action_back(self) -> None:
        self.app.pop_screen()
