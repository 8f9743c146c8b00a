"""A relay that misbehaves on the packets it carries (issue 37): the real relay (net/reach/relay.py's
RelayServer), whose every send — to a host ("from" a joiner) and to a joiner (what the host sent
it) — may be held, jittered, dropped, doubled, reordered or replayed, and that can starve one
joiner of its submissions, of its entries, or of everything.

It cannot read a seat's sealed packets or forge the host's tags (PROTOCOL §10.4): like a real relay,
it tells a `ping`/`pong` from a `submit`/`entries` by size only (`SMALL` bytes). Joiners are known by
the order they first spoke to their host (`joiners`): joined one by one, joiner k is seat k.

Randomness is the test's own `random.Random(seed)`: a run replays the same misbehaviour."""

from __future__ import annotations

import heapq
import itertools
import random
from collections import deque
from dataclasses import dataclass, field

from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.transport import BadPacket, unpack

SMALL = 200  # bytes: a tagged ping, pong or presence is smaller; a submit or an entries packet of a move is larger
KEPT = 64  # packets kept per connection for replays
MODES = ("delay", "jitter", "drop", "duplicate", "reorder", "replay", "starve_submissions", "starve_entries", "cut")


@dataclass
class Misbehaviour:
    """What the relay does to every packet (seconds; chances from 0 to 1)."""

    delay: float = 0.0  # every packet held this long
    jitter: float = 0.0  # ± this fraction of `delay`, uniformly
    drop: float = 0.0  # chance a packet is lost
    duplicate: float = 0.0  # chance a packet is sent twice (the copy up to `reorder` or 50 ms later)
    reorder: float = 0.0  # every packet held a further 0..this, so packets within such a window cross
    replay_every: float = 0.0  # every so often an earlier packet to a random connection is sent again
    # joiner k -> "submissions", "entries", "answers" (its submissions and its boxes to other seats) or "all"
    starve: dict[int, str] = field(default_factory=dict)


def misbehaviour(mode: str, size: float = 1.0) -> Misbehaviour:
    """One of MODES at the matrix's strength (`size` scales the times), aimed at joiner 1 where it
    aims at one seat."""
    return {
        "delay": Misbehaviour(delay=0.3 * size),
        "jitter": Misbehaviour(delay=0.2 * size, jitter=0.5),
        "drop": Misbehaviour(drop=0.2),
        "duplicate": Misbehaviour(duplicate=0.5),
        "reorder": Misbehaviour(reorder=0.3 * size),
        "replay": Misbehaviour(replay_every=0.2 * size),
        "starve_submissions": Misbehaviour(starve={1: "submissions"}),
        "starve_entries": Misbehaviour(starve={1: "entries"}),
        "cut": Misbehaviour(starve={1: "all"}),
    }[mode]


class MisbehavingRelay(RelayServer):
    """The real relay with a `Misbehaviour` (change it at any time with `behave`)."""

    def __init__(self, *args, behaviour: Misbehaviour | None = None, seed: int = 7, **kwargs):
        super().__init__(*args, **kwargs)
        self.behaviour = behaviour or Misbehaviour()
        self.chance = random.Random(seed)
        self.joiners: list[bytes] = []  # joiner connections, in the order they first spoke to their host
        self._held: list[tuple[float, int, bytes, bytes]] = []  # (when due, order, connection, packet)
        self._order = itertools.count()
        self._kept: dict[bytes, deque] = {}
        self._next_replay = 0.0
        self.counts = {"held": 0, "dropped": 0, "doubled": 0, "replayed": 0, "starved": 0}

    def behave(self, behaviour: Misbehaviour) -> None:
        self.behaviour = behaviour  # one attribute: the relay's thread reads it whole

    # -- the hooks: every packet the relay sends goes through _send_raw ---------------------------
    def _to_host(self, peer, conn, data, now):
        if peer not in self.joiners:
            self.joiners.append(peer)
        what = self._starved(peer)
        if what == "all" or (what in ("submissions", "answers") and len(data) > SMALL):
            self.counts["starved"] += 1
            return
        super()._to_host(peer, conn, data, now)

    def handle(self, peer, data, address=""):
        if self._starved(peer) == "answers" and _op(data) == "box_to":  # its boxes to the seats, seat to seat (§12.8)
            self.counts["starved"] += 1
            return
        super().handle(peer, data, address)

    def _send_raw(self, peer, data):
        what = self._starved(peer)
        if what == "all" or (what == "entries" and len(data) > SMALL):
            self.counts["starved"] += 1
            return
        b = self.behaviour
        if b.drop and self.chance.random() < b.drop:
            self.counts["dropped"] += 1
            return
        kept = self._kept.setdefault(peer, deque(maxlen=KEPT))
        kept.append(data)
        self._hold(peer, data, self._lateness())
        if b.duplicate and self.chance.random() < b.duplicate:
            self.counts["doubled"] += 1
            self._hold(peer, data, self._lateness() + self.chance.uniform(0, b.reorder or 0.05))

    def _starved(self, peer: bytes) -> str | None:
        starve = self.behaviour.starve
        if not starve or peer not in self.joiners:
            return None
        return starve.get(self.joiners.index(peer) + 1)

    def _lateness(self) -> float:
        b = self.behaviour
        late = b.delay * (1 + self.chance.uniform(-b.jitter, b.jitter)) if b.delay else 0.0
        return late + (self.chance.uniform(0, b.reorder) if b.reorder else 0.0)

    def _hold(self, peer: bytes, data: bytes, late: float) -> None:
        if late <= 0:
            super()._send_raw(peer, data)
            return
        self.counts["held"] += 1
        heapq.heappush(self._held, (self.clock() + late, next(self._order), peer, data))

    # -- the loop: packets fall due between polls -----------------------------------------------
    def step(self, timeout):
        if self._held:
            timeout = max(0.0, min(timeout, self._held[0][0] - self.clock()))
        super().step(timeout)
        now = self.clock()
        while self._held and self._held[0][0] <= now:
            _, _, peer, data = heapq.heappop(self._held)
            super()._send_raw(peer, data)
        every = self.behaviour.replay_every
        if every and now >= self._next_replay and self._kept:
            self._next_replay = now + every
            peer = self.chance.choice(sorted(self._kept))
            self.counts["replayed"] += 1
            super()._send_raw(peer, self.chance.choice(list(self._kept[peer])))


def _op(data: bytes) -> str | None:
    try:
        return unpack(data)[0]
    except BadPacket:
        return None


def relay_table(running, tmp_path, seats: int, timing, game: str = "dicebreaker", options=None, on_event=None):
    """A table of `seats` greedy bots through the relay `running` (tests/net_helpers.py's Running):
    the host (seat 0) and joiners seated one by one, so joiner k is seat k. Returns the sessions,
    each running in its own thread, and each seat's events (`on_event(seat, event)` hears them too)."""
    from dicetable.core import registry
    from dicetable.net.identity import Profile
    from dicetable.net.table.host import HostSession
    from dicetable.net.table.joiner import PeerSession
    from dicetable.net.table.session import bot_chooser
    from net_helpers import in_thread, wait_until

    rules = registry.get(game)
    events: list[list] = [[] for _ in range(seats)]

    def hear(seat):
        def heard(event):
            events[seat].append(event)
            if on_event is not None:
                on_event(seat, event)
        return heard

    names = ("ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal")
    host = HostSession(Profile.generate(names[0]), game, seats, dict(options or {}), timing=timing, relay=running.line,
                       chooser=bot_chooser(rules, "greedy", 1), on_event=hear(0), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    sessions = [host]
    for k in range(1, seats):
        peer = PeerSession(Profile.generate(names[k]), invite, timing=timing, chooser=bot_chooser(rules, "greedy", k + 1),
                           on_event=hear(k), transcript=tmp_path / f"{names[k]}.dtt")
        peer.connect()
        in_thread(peer)
        sessions.append(peer)
        wait_until(lambda: len(running.server.joiners) >= k, what=f"joiner {k} to speak to its host")
    return sessions, events
