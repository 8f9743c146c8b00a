"""A seat at a networked table as the app holds it: the session (net/table/host.py, net/table/joiner.py).

A session is a driver around one `Seat` (net/table/seat.py: the replica, chains, own frames, acts,
clocks and claims, the transcript with its seat file): the host's orderer (net/table/orderer.py), a
joiner's link to whoever orders (net/table/joiner.py), or, after a hand-over, the orderer a joiner's
seat becomes the driver of (net/table/succession.py). `TableSession` is what they share: the app's
commands, what the app reads of the seat, and the hooks the seat calls on its driver.

The session is one synchronous loop (`run()`), meant for a Textual thread worker or the main thread
of a headless command. The app talks to it through thread-safe methods (`move`, `chat`, `claim`,
`resign`, `stop`) and hears from it through `on_event(event)`, called in the session's thread
(in the app: `lambda e: app.call_from_thread(app.post_message, TableEvent(e))`):

    host = HostSession(profile, "trice", 2, {}, port=0, on_event=...)   # chooser=None: a person
    invite = host.open()            # binds, writes open + join, returns the `dt1-...` code
    app.run_worker(host.run, thread=True)
    peer = PeerSession(profile, invite, on_event=...); peer.connect()   # SessionError: one line
    app.run_worker(peer.run, thread=True)
    ... on `YourTurn`: session.move(Move(...)); on `Claimable`: offer session.claim(seat)

A state where several seats may move (the state's `may_act`, e.g. a free dice room): the chooser is
asked whenever this seat may move and is not the one due; it returns None when it has nothing to do.
A person's moves arrive through `move()` at any moment and go to the log as they are.

Read `session.replica` (state, seats, events, waiting_for) only from the session's thread or
treat it as a snapshot: it changes as records arrive. Timing (heartbeat, grace, deadlines) is the
host's and reaches joiners in its welcome.

The events, one type each, are in net/table/events.py. A `Recorded` follows every log entry (after
the `Joined`, `Started`, `Chat` or `RematchAnswered` the entry makes); `Fault` names a seat caught
cheating, once, the moment this seat knows (a frame of its own signing the host refused as a broken
commitment or deal rule, or what the card deal finds in the log: a shown card that opens to another,
a wrong key, a deck whose end-of-game replay fails); `Defaulted` (after `Ended`) names the claimant
whose claim against this seat decided the game (told also to a seat that learns it on its return);
`Started` follows too when the next game starts with every seat's consent.

Packets between host and joiners (`[op, body]`, net/reach/transport.py), field by field, and the
tagging of all but `who` and the hello (net/table/host_packets.py): PROTOCOL.md §10.1, §10.4.

Seats are authenticated by their signed frames, and connections by their hello: the host routes a
seat (its entries, refusals, presence, and the liveness that keeps it from default) only to a
connection whose hello proves the seat's Ed25519 key. The proof is the key's signature of
`wire.hello_bytes`: "dicetable/hello/v2" ‖ table id ‖ host curve key ‖ nonce ‖ key ‖ box, where the nonce
is the host's challenge for this one connection (`who`; an HMAC of the connection's routing id
under a secret of this host run). A hello copied onto another connection, or kept from before a
host restart, names a nonce that is not that connection's: the host answers `who` again and changes
nothing. A proof that does not verify, or a malformed hello, gets `full` and changes nothing; the
seat's route stays where it was. A first-time joiner proves its key the same way, so nobody can
reserve a seat in another's name; during joining each proven key holds at most one reservation (a
reconnect moves it), and a joiner's join frame must be for that seat and carry that key. A
connection that proves no key can still make the host send it `who`, nothing else.
Routes are keyed by ZeroMQ routing ids (net/reach/transport.py): each joiner connection announces a fresh
random 16-byte id, the host's ROUTER has no handover (a connection announcing a live connection's id
is ignored: it neither takes over that seat's packets nor keeps it present), and the host drops
packets from ids not of that form. Known limit of libzmq 4.3.5: a client that claims the id libzmq
would make up for the next client announcing none makes the host abort when that client connects;
the host seeds the counter secretly (a 1 in 2**32 guess per claimed id), but only someone holding
the invite (past the CurveZMQ handshake) can try at all; the host then restarts with `--resume`.

Rematches (PROTOCOL.md §5.10): net/table/series.py. Hidden cards and sealed answers: net/table/seat.py.
Default claims: net/table/defaults.py.
"""

from __future__ import annotations

import random
import secrets
from operator import attrgetter
from typing import Any, Callable

from dicetable.core.game import Move
from dicetable.net.table.events import NetEvent


class SessionError(Exception):
    """A table that cannot go on (wrong invite, full table, host gone): one sentence for a person."""


Chooser = Callable[[Any], Move]


def bot_chooser(game, name: str, seed: int | None = None) -> Chooser:
    """A chooser that plays `name` (one of the game's bots) from its seat's view."""
    if name not in game.bots:
        raise SessionError(f"unknown bot {name!r} for {game.title} (bots: {', '.join(game.bots)})")
    seed = secrets.randbits(64) if seed is None else seed
    bot = game.bots[name](game, random.Random(seed))
    return bot.choose


def _of_seat(path: str) -> property:
    """The session's window on its seat's `path` (e.g. "series.games"): read, and set where the app sets it."""
    owner, _, name = path.rpartition(".")
    holder = attrgetter(f"own.{owner}" if owner else "own")
    return property(attrgetter(f"own.{path}"), lambda session, value: setattr(holder(session), name, value))


class TableSession:
    """The app's handle on one seat (`own`, net/table/seat.py) and the driver that moves its frames.

    The seat calls its driver's hooks: `submit` (a frame of its own, to the log), `forward` (its
    answer boxed to each other seat), `cut_off` (how long
    the orderer was out of its reach), `away` (seats it lost sight of by the driver's word),
    `seat_data` (what the seat file needs to resume it), `handle_command` (the driver's own commands)."""

    orders_log = False  # keep any claim the seat disputes out of the log (the orderer: it orders the log)

    def __init__(self, seat) -> None:
        self.own = seat
        seat.driver = self

    # -- hooks the seat calls --------------------------------------------------------------------
    def submit(self, frame: bytes) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, frame: bytes) -> None:
        """My answer boxed to each seat but the orderer (net/table/answer_path.py), sent by a path the
        orderer relays without reading (PROTOCOL.md §10.10). The orderer's own answers need none: it
        orders them itself."""

    def cut_off(self, now: float, since: float) -> float | None:
        """How long this seat was cut off from the table since `since` (None: it was not)."""
        return None

    def away(self) -> set[int]:
        return set()

    def wait_start(self, seat: int, since: float, length: int, now: float) -> float | None:
        """When the current wait's clock starts for `seat`, which this seat saw begin at `since` with
        its log `length` long: later by what the link adds; None when `seat` has not provably received
        it (net/table/deadlines.py: presence is not lateness)."""
        return since

    def delivered(self) -> bool:
        """Whether what this seat's log holds has reached the others, as far as this driver can tell: a
        joiner's orderer has it; an orderer waits for the present seats' pings (net/table/orderer.py)."""
        return True

    def seat_data(self) -> dict:
        return {}

    def handle_command(self, name: str, arg: Any) -> None:
        """A command the seat does not know (none but the host's `refuse`)."""

    # -- thread-safe commands from the app -----------------------------------------------------
    def move(self, move: Move) -> None:
        self.own.commands.put(("move", move))

    def chat(self, text: str) -> None:
        self.own.commands.put(("chat", text))

    def claim(self, against: int) -> None:
        self.own.commands.put(("claim", against))

    def resign(self) -> None:
        self.own.commands.put(("resign", None))

    def stop(self) -> None:
        self.own.commands.put(("stop", None))

    def roll_secretly(self, expr: str, to: int | None = None) -> None:
        """A secret roll in a free dice room: only this seat (and seat `to`, the game master, if given)
        sees its dice until it opens them (§16.6)."""
        self.own.commands.put(("secret", (expr, to)))

    def unveil(self) -> None:
        """Open every secret roll of this seat still sealed."""
        self.own.commands.put(("unveil", None))

    def leave_room(self) -> None:
        """Leave a room that goes on without this seat (PROTOCOL.md §5.11)."""
        self.own.commands.put(("leave", None))

    def rematch(self, agree: bool = True) -> None:
        """Offer or accept the next game at this table (agree), or decline it (PROTOCOL.md §5.10)."""
        self.own.commands.put(("rematch", bool(agree)))

    # -- the seat as the app reads it (read `replica` only from the session's thread, or as a snapshot) --
    def emit(self, event: NetEvent) -> None:
        self.own.emit(event)

    profile, replica, seat, chains, refusals, finished = (_of_seat(name) for name in (
        "profile", "replica", "seat", "chains", "refusals", "finished"))
    timing, stopped, chooser, on_event = (_of_seat(name) for name in ("timing", "stopped", "chooser", "on_event"))
    games, can_rematch = _of_seat("series.games"), _of_seat("series.can_rematch")
    describe_result, describe_default = _of_seat("series.describe_result"), _of_seat("series.describe_default")
    transcript_path, announced_transcript = _of_seat("transcript.path"), _of_seat("transcript.announced")
