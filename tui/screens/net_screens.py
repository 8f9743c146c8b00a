"""Host a table and join a table: the forms that open a network table (through tui/tables/opening.py).

Both end in the waiting room (tui/screens/waiting_room_screen.py), which turns into the game's screen when
every seat has joined. The dice room starts here too: alone with local dice, or hosted.
"""

from __future__ import annotations

import ipaddress
import re

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, RadioSet, Static

from dicetable.tui.tables.relay_setting import remember, remembered, resolve
from dicetable.tui.widgets.code_input import CodeInput

from dicetable.tui.widgets.choice import Choice, Choices

ASKING_KEY = "Asking the relay for its key…"  # a relay's first contact, up to relay_key.LEARN_TIMEOUT s

_HOST_NAME = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?")


def dial_address(text: str) -> str | None:
    """The address players dial as typed in the host form (None: left empty); ValueError says what
    is wrong with it in one sentence."""
    text = text.strip()
    if not text:
        return None
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        if len(text) <= 253 and _HOST_NAME.fullmatch(text) and not text.replace(".", "").isdigit():
            return text
        raise ValueError(f"Players dial: {text[:40]!r} is not an IP address or host name "
                         "(no port here: the port is the Port field).") from None
    if ip.is_unspecified:
        raise ValueError(f"Players dial: nobody can dial {text}; give your public or LAN address.")
    return text


class DiceRoomSetupScreen(Screen):
    """Roll alone with local dice, or host a room where friends roll with fair shared dice."""

    BINDINGS = [
        Binding("a", "alone", "alone"),
        Binding("h", "host", "host a room"),
        Binding("escape", "back", "back"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="net-box"):
            yield Static("Dice room", id="net-title")
            yield Static(
                "Roll dice expressions: d20+5, 4d6kh3, 2d6r1, 3d6!, 10d10>=8, 6#4d6kh3.\n"
                "Alone, the dice come from this computer. With friends, anyone rolls at any moment, "
                "and every roll is made by all seats together and checked by each (the same fair "
                "rolls as the games).\n"
                "To join a friend's room: Home → Join a table, and paste their invite."
            )
            with Horizontal(classes="net-buttons"):
                yield Button("Roll alone (a)", id="alone", variant="primary")
                yield Button("Host a room (h)", id="host")
                yield Button("Back (Esc)", id="back")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        {"alone": self.action_alone, "host": self.action_host, "back": self.action_back}[event.button.id]()

    def action_alone(self) -> None:
        self.app.pop_screen()
        self.app.start_dice_room()

    def action_host(self) -> None:
        self.app.pop_screen()
        self.app.push_screen(HostScreen("diceroom"))

    def action_back(self) -> None:
        self.app.pop_screen()


class HostScreen(Screen):
    """Open a table (TRICE, or a dice room for 2 to 8) on an address and port; the waiting room
    then shows the invite."""

    BINDINGS = [Binding("escape", "back", "back"), Binding("ctrl+o", "open_table", "open")]

    def __init__(self, game: str = "trice") -> None:
        super().__init__()
        self.game = game

    def compose(self) -> ComposeResult:
        from dicetable.core import registry
        from dicetable.tui.tables.opening import FRIENDS

        with Vertical(id="net-box"):
            yield Static("Host a dice room" if self.game == "diceroom" else "Host a table", id="net-title")
            with Horizontal(id="host-top"):
                if self.game != "diceroom":
                    with Choices(id="host-game") as games:
                        games.border_title = "Game"
                        for name in registry.board_games():
                            yield Choice(registry.get(name).title, value=name == self.game, name=name)
                seats = Input("2", id="host-seats", restrict=r"[0-9]*", max_length=1)
                seats.border_title = "People" if self.game == "diceroom" else "Seats"  # a room: to start with
                yield seats
            hint = (f"People to start with, you included: {FRIENDS} to {registry.get('diceroom').max_seats} "
                    f"(others join later, up to {registry.get('diceroom').max_seats})."
                    if self.game == "diceroom" else
                    "Seats, you included: Dice Breaker 2-6 (battle), Tricolor Line 2-8, others 2.")
            yield Static(hint, classes="net-hint")
            with Horizontal(id="host-where"):
                for box, value, title, digits in (("host-address", "127.0.0.1", "Address", 0),
                                                  ("host-advertise", "", "Players dial", 0),
                                                  ("host-port", "0", "Port", 5), ("host-clock", "0", "s per move", 4)):
                    field = Input(value, id=box, restrict=r"[0-9]*" if digits else None, max_length=digits)
                    field.border_title = title
                    yield field
            yield Static("127.0.0.1: this machine; 0.0.0.0: the LAN; Players dial: public address",
                         classes="net-hint")
            relay = Input(remembered(self.app.profile_dir), id="host-relay",
                          placeholder="HOST:PORT of a relay (or its line HOST:PORT/KEY)")
            relay.border_title = ("Relay (the last used is kept; empty: none): players join by a short code"
                                  if relay.value else "or a Relay: players join by a short code, no open port")
            yield relay
            with Horizontal(classes="net-buttons"):
                yield Button("Open the table (Ctrl+O)", id="open", variant="primary")
                yield Button("Back (Esc)", id="back")
            yield Static(id="net-note")
        yield Footer()

    def on_mount(self) -> None:
        # The first choice, not Open: an Enter meant for a choice must not open the table (Ctrl+O,
        # or Enter on Open or in a field, opens it)
        self.query_one("#host-game" if self.game != "diceroom" else "#host-seats").focus()

    def on_input_submitted(self) -> None:
        self.action_open_table()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_open_table() if event.button.id == "open" else self.action_back()

    def action_open_table(self) -> None:
        relay = self.query_one("#host-relay", Input).value.strip() or None
        if relay is None:
            self.open_table(None)
            return
        # HOST:PORT of a relay not met before: its key is learned on first contact (up to
        # relay_key.LEARN_TIMEOUT s), so off the UI thread; the form goes on once it is known
        self.run_worker(lambda: self._learn_relay(relay), thread=True, exclusive=True, group="relay-key")

    def _learn_relay(self, text: str) -> None:
        """In a worker thread: the relay's line (its key pinned or learned), then `open_table`; or the
        one line why not in the form's note. Nothing once the form was left (the worker cancelled)."""
        from textual.worker import get_current_worker

        from dicetable.net.reach.relay_address import BadRelay

        worker = get_current_worker()
        note = self.query_one("#net-note", Static)
        try:
            relay = resolve(self.app.profile_dir, text, asking=lambda: self.app.call_from_thread(note.update, ASKING_KEY))
        except BadRelay as error:
            if not worker.is_cancelled:
                self.app.call_from_thread(note.update, f"Relay: {error}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self.open_table, relay.encode())

    def open_table(self, relay: str | None) -> None:
        """Open the table with the form's fields and `relay` (a whole relay line, or None)."""
        from dicetable.net.reach.local_networks import DiscoveryError
        from dicetable.net.table.deadlines import Timing
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables import opening

        address = self.query_one("#host-address", Input).value.strip()
        port_text = self.query_one("#host-port", Input).value.strip() or "0"
        if not address or not 0 <= int(port_text) <= 65535:
            self.query_one("#net-note", Static).update("Give an address and a port from 0 to 65535.")
            return
        try:
            advertise = dial_address(self.query_one("#host-advertise", Input).value)
            # announced where it can be (listed in others' LAN tables; on 127.0.0.1, this machine's users')
            where = opening.Where(bind=address, port=int(port_text), advertise=advertise, relay=relay,
                                  lan=relay is None).dialled()
        except (ValueError, DiscoveryError) as error:
            self.query_one("#net-note", Static).update(str(error))
            return
        if self.game != "diceroom":
            picked = self.query_one("#host-game", RadioSet).pressed_button
            self.game = picked.name if picked is not None and picked.name else self.game
        try:
            seats = opening.hosting_seats(self.game, int(self.query_one("#host-seats", Input).value or "0"))
        except ValueError as error:
            self.query_one("#net-note", Static).update(str(error))
            return
        profile = self.app.profile()
        if profile is None:
            return
        try:
            clock = int(self.query_one("#host-clock", Input).value or "0")
            table = opening.host_table(profile, self.game, seats, where, timing=Timing(turn_deadline=float(clock)))
        except SessionError as error:
            self.query_one("#net-note", Static).update(str(error))
            return
        if relay is not None:
            remember(self.app.profile_dir, relay)
        self.app.open_waiting_room(table, replace=self)

    def action_back(self) -> None:
        self.app.pop_screen()


class JoinScreen(Screen):
    """Paste an invite (`dt1-...`) and take a seat."""

    BINDINGS = [Binding("escape", "back", "back"), Binding("ctrl+l", "lan", "LAN tables"),
                Binding("ctrl+o", "watch", "watch")]
    watching = False  # Watch (not Join): follow the table without a seat (net/table/watcher.py)

    def action_watch(self) -> None:
        self.watching = True
        self.join()

    def action_lan(self) -> None:
        from dicetable.tui.screens.lan_screen import LanScreen  # tables announced nearby (net/reach/lan.py)

        self.app.switch_screen(LanScreen())

    def compose(self) -> ComposeResult:
        with Vertical(id="net-box"):
            yield Static("Join a table", id="net-title")
            yield Static("Paste the invite the host gave you (dt1-… or dr1-…), or type its short code:",
                         classes="net-label")
            yield CodeInput(placeholder="dt1-...  or  7-orbit-lantern (Tab completes a word)", id="join-invite")
            relay = Input(remembered(self.app.profile_dir), id="join-relay",
                          placeholder="HOST:PORT of a relay (or its line HOST:PORT/KEY)")
            relay.border_title = "Relay (for a short code; the last one used is kept)"
            yield relay
            with Horizontal(classes="net-buttons"):
                yield Button("Join (Enter)", id="join", variant="primary")
                yield Button("Watch (^O)", id="watch")
                yield Button("Back (Esc)", id="back")
            yield Static(id="net-note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#join-invite").focus()

    def on_input_submitted(self) -> None:
        self.watching = False
        self.join()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "watch":
            self.action_watch()
            return
        self.watching = False
        self.join() if event.button.id == "join" else self.action_back()

    def join(self) -> None:
        typed = self.query_one("#join-invite", Input).value.strip()
        invite = "".join(typed.split())
        if not invite:
            self.query_one("#net-note", Static).update("Paste an invite first.")
            return
        from dicetable.tui.tables.opening import is_invite

        if not is_invite(invite):
            self.by_code(typed)
            return
        self.join_invite(invite)

    def by_code(self, code: str) -> None:
        """A short code: its relay's key (learned on first contact) and then its invite, agreed with
        the host through the relay, off the UI thread."""
        from dicetable.net.reach import codes

        note = self.query_one("#net-note", Static)
        try:
            codes.parse_code(code)
        except codes.CodeError as error:
            note.update(f"{error} (or paste the host's invite)")
            return
        note.update("Asking the relay for the table…")
        relay = self.query_one("#join-relay", Input).value
        self.run_worker(lambda: self._claim(relay, code), thread=True, exclusive=True)

    def _claim(self, text: str, code: str) -> None:
        from textual.worker import get_current_worker

        from dicetable.net.reach import codes
        from dicetable.net.reach.relay_address import BadRelay
        from dicetable.net.reach.transport import TransportError
        from dicetable.tui.tables.opening import code_invite

        worker = get_current_worker()
        note = self.query_one("#net-note", Static)

        def told(line: str) -> None:
            if not worker.is_cancelled:  # the form left, or another code asked since
                self.app.call_from_thread(note.update, line)

        try:
            relay = resolve(self.app.profile_dir, text, asking=lambda: told(ASKING_KEY))
        except BadRelay as error:
            told(f"Relay: {error} (a short code is kept at the host's relay)")
            return
        told("Asking the relay for the table…")
        try:
            invite = code_invite(code, relay)
        except (codes.CodeError, TransportError) as error:
            told(str(error))
            return
        remember(self.app.profile_dir, relay.encode())
        if not worker.is_cancelled:
            self.app.call_from_thread(self.join_invite, invite)

    def join_invite(self, invite: str) -> None:
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables.opening import join_table, watch_table

        profile = self.app.profile()
        if profile is None:
            return
        try:
            table = (watch_table if self.watching else join_table)(profile, invite)
        except SessionError as error:
            self.query_one("#net-note", Static).update(str(error))
            return
        self.app.open_waiting_room(table, replace=self)

    def action_back(self) -> None:
        self.app.pop_screen()


def net_screen(action: str) -> Screen:
    if action == "host":
        return HostScreen()
    if action == "join":
        return JoinScreen()
    return DiceRoomSetupScreen()
