"""Play whoever is waiting (tui/tables/queue.py): the screen of a person in the queue of one game,
from the served lobby (p) or the LAN list (p). It says where they are — looking, waiting at their
own announced table, joining someone's — and gives way to the game's screen when the table is full;
Esc leaves the queue (their table closes, or their seat is left).

From the served lobby the table is on 127.0.0.1, announced in this machine's lobby
(net/reach/same_machine.py); from the LAN list on every address, announced by mDNS too, and both
are looked at.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from dicetable.core import registry
from dicetable.net.reach import lan as lan_discovery
from dicetable.net.reach import same_machine
from dicetable.net.reach.local_networks import DiscoveryError
from dicetable.tui.tables.messages import TableChanged, TableClosed
from dicetable.tui.tables.queue import Queue, seated

LOOK = 0.5  # seconds between two looks at the tables announced (the lobby's own poll)


class QueueScreen(Screen):
    CSS_PATH = "queue_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "leave the queue")]

    def __init__(self, profile, game: str, lan: bool = False) -> None:
        super().__init__()
        self.profile, self.game, self.lan = profile, registry.get(game), lan
        self.browsers: list = []
        self.queue: Queue | None = None
        self.started = False
        self.said = ""
        self.announced = "on this machine"  # where the table waiting here is announced, in words

    @property
    def table(self):
        """Where this person is now (the served lobby shows it as their open table)."""
        return self.queue.table if self.queue is not None else None

    def compose(self) -> ComposeResult:
        with Vertical(id="queue-box"):
            yield Static(f"Play whoever is waiting: {self.game.title}", id="queue-title")
            yield Static("Looking for someone waiting…", id="queue-status")
            yield Static("Esc leaves the queue.", id="queue-help")
        yield Footer()

    def on_mount(self) -> None:
        from dicetable.tui.tables.opening import Where
        self.browsers = [same_machine.Browser()]
        where = Where(bind="127.0.0.1", lan=True, queue=True)  # this machine's lobby
        if self.lan:
            try:
                self.browsers.append(lan_discovery.Browser())
                where = Where(bind="0.0.0.0", lan=True, queue=True).dialled()  # players on the LAN reach it
                if not same_machine.on_loopback(where.announced_at()):  # no LAN address: this machine's lobby
                    self.announced = "on your LAN"
            except DiscoveryError as error:
                self.notify(f"{error}; waiting on this machine only.", severity="warning")
        self.queue = Queue(self.profile, self.game.name, where, self._announced, self.app.profile_dir)
        self._look()
        self.set_interval(LOOK, self._look)

    def on_unmount(self) -> None:
        for browser in self.browsers:
            browser.close()

    def _announced(self) -> list:
        return [ann for browser in self.browsers for ann in browser.tables()]

    def _look(self) -> None:
        if self.started or self.queue is None:
            return
        moved = self.queue.step()
        if moved is not None:
            moved.attach(self)  # its views and closing come here
        self._start_when_full()
        self._say()

    def _say(self) -> None:
        queue, title = self.queue, self.game.title
        table = queue.table
        if queue.failed:
            text = f"[b]Your table could not open:[/b] {queue.failed}"
        elif table is None:
            text = "Looking for someone waiting…"
        elif table.role == "join":
            who = f"{queue.joining.host_name} ({queue.joining.fingerprint})"
            text = (f"{who} asked at the same moment and hosts (the lower key): joining them…" if queue.gave_way
                    else f"Joining {who}, who waits for {title}…")
        elif seated(table) > 1:
            text = "Someone sat down: starting…"
        else:
            text = (f"Waiting for whoever asks for {title}: your table is announced {self.announced}. "
                    f"The next person who presses p for {title} sits down here.")
        if text != self.said:  # no repaint when nothing changed (it would travel over SSH every look)
            self.said = text
            self.query_one("#queue-status", Static).update(text)

    def _start_when_full(self) -> None:
        table = self.queue.table if self.queue is not None else None
        view = table.view() if table is not None else None
        if view is not None and view.state is not None and not self.started:
            self.started = True
            self.app.start_network_game(table, self)

    def on_table_changed(self, message: TableChanged) -> None:
        self._start_when_full()  # the current table's own view: a message from a table left is no news

    def on_table_closed(self, message: TableClosed) -> None:
        self._look()  # a join that failed: look again at once

    def action_cancel(self) -> None:
        if self.queue is not None:
            self.queue.cancel()
        self.app.pop_screen()
