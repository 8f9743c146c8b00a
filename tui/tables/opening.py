"""Where every network table is opened: hosted, joined by its invite, resumed from a seat's transcript,
and the dealer-less deal's table. The CLI's commands (tui/commands/) and the app's screens both open
tables here; a screen never builds a session or a socket.

`Where` says where a hosted table is reached; the CLI's flags and the app's host form both fill one.
The CLI opens its sessions at once and plays them in its main thread; the app's session opens in its
`NetTable`'s thread (binding, a relay's round trips), so the functions for the app return that table.
A short code is turned into its invite first (`code_invite`), each caller saying in its own words
(flags or fields) what is wrong with a code or a relay.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from dicetable.core import registry
from dicetable.net.reach import announcement, local_networks, same_machine
from dicetable.net.reach.announcement import VERIFIED, Announcement
from dicetable.net.reach.local_networks import DiscoveryError
from dicetable.net.reach.transport import DEFAULT_BIND
from dicetable.net.table.deal_table import DealHost, DealPeer
from dicetable.net.table.events import TranscriptOpened
from dicetable.net.table.host import HostSession, TakenOver
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError, TableSession

if TYPE_CHECKING:
    from dicetable.tui.tables.net_table import NetTable  # imported where the app needs it: the CLI loads no Textual

INVITE_PREFIXES = ("dt1-", "dr1-", "invite:")  # an invite as typed; anything else is taken for a short code
DICE_ROOM = "diceroom"
FRIENDS = 1  # a dice room hosted starts once this many people are in (the host alone: 1); more join while it is open
ANYONE_ROLLS = {"turns": False}  # a dice room among friends: anyone rolls at any moment, the host closes it


@dataclass(frozen=True)
class Where:
    """Where a hosted table is reached: the address and port it listens on, the address its invite
    names, or a relay (no open port: joiners use a short code); and whether it is announced nearby."""

    bind: str = DEFAULT_BIND  # this machine only unless asked otherwise
    port: int = 0  # 0: any free port
    advertise: str | None = None  # the address joiners dial (None: the bind address)
    relay: str | None = None  # the line `dicetable relay` prints
    second_relay: str | None = None  # with a relay: where the table moves if that one dies (net/reach/relay_link.py)
    code_uses: str = "table"  # through a relay: one short code for the table, or "one" for each seat
    code_minutes: float = 30.0  # ... how long a code stays valid
    lan: bool = False  # announced while seats are free: by mDNS on a LAN address, in this machine's lobby on loopback
    interfaces: tuple[str, ...] = ()  # the network interfaces announced on (none named: every one)
    queue: bool = False  # announced as waiting for whoever asks for its game (tui/tables/queue.py)

    def announced_at(self) -> list[str]:
        """The addresses the table is announced on (none without `lan`); DiscoveryError says why
        there are none."""
        return local_networks.advertised_addresses(self.bind, self.interfaces or None) if self.lan else []

    def dialled(self) -> Where:
        """This Where with the address joiners dial: announced and bound to every address, the first
        address announced (a table on every address has no one address of its own); DiscoveryError."""
        if self.advertise is not None or not self.lan or self.bind not in local_networks.WILDCARDS:
            return self
        return dataclasses.replace(self, advertise=self.announced_at()[0])

    def session_args(self) -> dict[str, Any]:
        """The host session's arguments for this place (net/table/host.py)."""
        relay = [self.relay, self.second_relay] if self.second_relay is not None else self.relay
        return {"bind": self.bind, "port": self.port, "advertise": self.advertise, "relay": relay,
                "code_uses": self.code_uses, "code_ttl": self.code_minutes * 60}


def saved_where(path: Path) -> Where:
    """Where a host seat's table was: its seat file keeps the bind address and the invite's address
    (the resumed session takes the invite's port from it too), so that the joiners' invites still
    reach it; the defaults for a seat file written without them."""
    from dicetable.net.table.seat_file import load_seat

    seat = load_seat(path)
    bind, advertise = seat.get("bind"), seat.get("advertise")
    return Where(bind=bind if type(bind) is str and bind else DEFAULT_BIND,
                 advertise=advertise if type(advertise) is str and advertise else None)


def is_invite(text: str) -> bool:
    """`text` is an invite (else a short code to claim at a relay)."""
    return text.strip().lower().startswith(INVITE_PREFIXES)


# -- hosting -------------------------------------------------------------------------------------
def hosting_seats(game: str, seats: int) -> int | None:
    """The seats of a table the app hosts from the number asked (None: the game's own, a game for
    two); ValueError says in one sentence why not."""
    info = registry.get(game)
    if game == DICE_ROOM:
        if not FRIENDS <= seats <= info.max_seats:
            raise ValueError(f"A dice room starts with {FRIENDS} to {info.max_seats} people; more join while it is open.")
        return seats
    if info.max_seats > 2:  # a table for more than two (Dice Breaker): as many seats as asked
        if not info.min_seats <= seats <= info.max_seats:
            raise ValueError(f"{info.title} is played by {info.min_seats} to {info.max_seats}.")
        return seats
    return None


def hosted(profile, game: str | None = None, seats: int | None = None, options: dict | None = None,
           where: Where = Where(), resume: Path | str | None = None, **session: Any) -> HostSession:
    """A table hosted where `where` says, not opened yet: a new one of `game`, or `resume` (its
    transcript) reopened; `session`: the session's own settings (timing, chooser, transcript…).
    SessionError or GameError say why not."""
    if resume is not None:
        return HostSession(profile, resume=resume, **where.session_args(), **session)
    return HostSession(profile, game, seats, options, **where.session_args(), **session)


def opened(host: HostSession, taken_over: Callable[[PeerSession, str], None] | None = None,
           **rejoining: Any) -> TableSession:
    """Open a hosted table (bind, or reach its relay; the invite is told as an event) and return the
    session that plays it: the host's, or, for a resumed host whose table another seat orders now at
    the relay (net/table/succession.py), seat 0's as it rejoins, connected. `taken_over(peer, why)`
    hears that seat's session before it connects; `rejoining`: its settings."""
    try:
        host.open()
        return host
    except TakenOver as taken:
        peer = PeerSession.rejoining(host, **rejoining)
        if taken_over is not None:
            taken_over(peer, str(taken))
        peer.connect()
        return peer


def announce(host: HostSession, where: Where):
    """Announce a hosted table where `where` says while it has free seats (net/reach/same_machine.py):
    the announcer (closed when the session ends, or by the caller), or None. DiscoveryError."""
    addresses = where.announced_at()
    if not addresses:
        return None
    chosen = local_networks.interface_addresses(list(where.interfaces)) if where.interfaces else None
    return same_machine.session_announcer(host, addresses, chosen, queue=where.queue)


def host_table(profile, game: str, seats: int | None, where: Where, **session: Any) -> NetTable:
    """A table the app hosts, announced where `where` says; its session opens in the table's thread.
    A dice room hosted is among friends (ANYONE_ROLLS) and open: it starts once `seats` people are in and
    takes newcomers while it runs, up to the game's most seats (PROTOCOL.md §5.2)."""
    from dicetable.tui.tables.net_table import NetTable

    if game == DICE_ROOM:
        host = hosted(profile, game, registry.get(game).max_seats, ANYONE_ROLLS, where, start_with=seats, **session)
    else:
        host = hosted(profile, game, seats, None, where, **session)
    try:
        announce(host, where)
    except DiscoveryError:
        pass  # discovery is a convenience: the invite still works
    return NetTable(host, "host")


# -- joining -------------------------------------------------------------------------------------
def joined(profile, invite: str | None = None, resume: Path | str | None = None, **session: Any) -> PeerSession:
    """A seat at the table of `invite` (or rejoining from `resume`, its transcript), not connected
    yet; SessionError says why not (a bad invite, a missing seat file)."""
    return PeerSession(profile, invite, resume=resume, **session)


def code_invite(code: str, relay, timeout: float = 30.0) -> str:
    """The invite a short code stands for, agreed with its host through `relay` (a RelayAddress, or
    the line `dicetable relay` prints; net/reach/codes.py). Blocks until the host answers or
    `timeout`: off the app's UI thread. BadRelay, CodeError or TransportError say why not."""
    from dicetable.net.reach.relay_address import RelayAddress
    from dicetable.net.reach.relay_link import invite_for_code

    return invite_for_code(relay if isinstance(relay, RelayAddress) else RelayAddress.decode(relay), code, timeout)


def join_table(profile, invite: str, on_connected=None) -> NetTable:
    """A seat the app takes at the table of `invite`; it connects in the table's thread, then runs
    `on_connected(session)` (NetTable)."""
    from dicetable.tui.tables.net_table import NetTable

    return NetTable(joined(profile, invite), "join", on_connected=on_connected)


def watch_table(profile, invite: str, on_connected=None) -> NetTable:
    """A table the app watches without a seat (net/table/watcher.py); it connects in the table's thread,
    then runs `on_connected(session)` (the LAN list's opening check). SessionError: a bad invite."""
    from dicetable.net.table.watcher import WatchSession
    from dicetable.tui.tables.net_table import NetTable

    return NetTable(WatchSession(profile, invite), "watch", on_connected=on_connected or (lambda session: None))


def announced_check(ann: Announcement, trust: str, directory=None) -> Callable[[TableSession], None]:
    """The check of a table found by discovery, once seated: its opening is signed by the announced
    key (net/reach/lan.py `opening_mismatch`); then an unverified host is pinned (trust on first
    use, as ssh does). SessionError says why the seat is left."""

    def check(session) -> None:
        why = announcement.opening_mismatch(session, ann)
        if why is not None:
            session.close()
            raise SessionError(why)
        if trust != VERIFIED:
            try:
                announcement.KnownHosts(directory).pin(ann.host_key, ann.curve_key, ann.host_name)
            except (DiscoveryError, OSError) as error:
                session.close()
                raise SessionError(str(error)) from None

    return check


# -- resuming ------------------------------------------------------------------------------------
def reopened_table(profile, path: Path, seat: int) -> NetTable:
    """A game this profile left unfinished, reopened by the app as the CLI's --resume does: the host
    seat where its table was (saved_where), another seat by reaching the host again. Blocks up to
    the session's connect timeout: call it in a thread. SessionError, SeatFileError; a table that
    does not reopen is left closed."""
    from dicetable.tui.tables.net_table import NetTable

    tables: list[NetTable] = []  # the table made for each session, the one that plays on last
    try:
        if seat == 0:
            host = hosted(profile, where=saved_where(path), resume=path)
            tables.append(NetTable(host, "host"))
            opened(host, taken_over=lambda peer, why: tables.append(NetTable(peer, "join")))
        else:
            tables.append(NetTable(joined(profile, resume=path), "join"))
            tables[-1].session.connect()
        # Where the game stands, before the table's thread takes over: its screen shows it at once.
        session = tables[-1].session
        session.emit(TranscriptOpened(session.transcript_path))
    except BaseException:
        if tables:
            tables[-1].session.close()
        raise
    return tables[-1]


# -- the dealer-less deal (net/table/deal_table.py) -------------------------------------------------
def deal_hosted(profile, seats: int, where: Where, **session: Any) -> DealHost:
    """The ID deal's table for `seats`, hosted where `where` says, not opened yet."""
    return DealHost(profile, seats, **where.session_args(), **session)


def deal_joined(profile, invite: str, **session: Any) -> DealPeer:
    """A seat at the ID deal's table of `invite`, not connected yet."""
    return DealPeer(profile, invite, **session)
