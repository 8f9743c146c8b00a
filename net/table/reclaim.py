"""An orderer takes back what the seats' copies hold beyond its own (PROTOCOL.md §10.8, §11.3).

A host that resumes (`--resume`, the app's Resume; a seat taking over, net/table/succession.py) may lack
entries a seat holds: relayed before its crash, or ordered by a successor gone too. Each seat's hello
and pings say how long its copy is; a seat with a longer copy is asked for the rest (`ask {next}`,
answered `give {start, frames}`), each frame taken only through the orderer's replica (signed by its
author, hash-linked to this copy) and relayed on; a frame that does not fit is refused and blamed on
the seat that gave it, which is not asked again. Until every seat that was not away is back with its
copy (or the grace has passed: a seat that never answers is not waited for longer), the orderer authors
nothing, not even the app's move: a frame of its own would take a place the seats' copies may hold.
"""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.net.refusals import Refusal
from dicetable.core.phrase import Phrase
from dicetable.net.table.events import Refused


@dataclass
class Awaiting:
    """A resumed orderer's wait for the seats' copies: since when, and for which seats."""

    since: float
    seats: set[int]


class Reclaim:
    """One orderer's asks for the seats' longer copies, and its wait for them after a resume."""

    def __init__(self, orderer) -> None:
        self.orderer = orderer
        self.emit = orderer.own.emit
        self.awaiting: Awaiting | None = None  # set while nothing of the orderer's own may go to the log
        self.asked: dict[bytes, float] = {}  # connection -> when it was last asked for its longer copy

    def start(self, now: float) -> None:
        """An orderer come back or taking over may lack entries a seat holds: it authors nothing until
        the seats are back with them (`seats_back`), and gives each seat the grace from now."""
        orderer = self.orderer
        replica, own = orderer.replica, orderer.own
        others = [s for s in range(replica.seat_count) if s != own.seat]
        orderer.last_seen = {s: now for s in others}
        # Awaited even if they drop meanwhile: a seat still redialling may hold what this copy lacks.
        away = own.defaults.away_since
        self.awaiting = Awaiting(now, {s for s in others if s not in away and s not in replica.out})

    def seats_back(self, now: float) -> bool:
        """Every seat that was here has reconnected (and caught this copy up), or the grace has passed."""
        orderer, awaited = self.orderer, self.awaiting.seats
        caught_up = all(orderer.acked.get(s, -1) <= len(orderer.replica.log) for s in awaited)
        back = awaited <= set(orderer.routes.values()) and caught_up
        return back or now - self.awaiting.since > orderer.own.timing.grace

    def ask_if_longer(self, peer: bytes, now: float) -> None:
        """A seat whose copy is longer than this log is asked for the rest, at most once a heartbeat."""
        orderer = self.orderer
        if orderer.acked[orderer.routes[peer]] > len(orderer.replica.log) \
                and now - self.asked.get(peer, float("-inf")) >= orderer.own.timing.heartbeat:
            self.asked[peer] = now
            orderer.tell(peer, "ask", {"next": len(orderer.replica.log)})

    def adopt(self, peer: bytes, start: int, frames: list) -> None:
        """Frames of the log a seat holds beyond this copy: each checked by this replica as any frame
        is (signed by its author, hash-linked to this copy), in order, and relayed to every seat; the
        first that does not fit is refused, recorded and blamed on the seat that gave it (not asked again)."""
        orderer = self.orderer
        own = orderer.own
        seat = orderer.routes[peer]
        for offset, frame in enumerate(frames):
            if start + offset != len(orderer.replica.log) or type(frame) is not bytes:
                continue
            try:
                record = orderer.replica.accept(frame)
            except Refusal as refusal:
                reason = f"{orderer.replica.who(seat)}'s copy of the log does not fit this one: {refusal}"
                own.record_refusal(frame, reason)
                self.emit(Refused(seat, Phrase.read(reason)))
                self.asked[peer] = float("inf")
                return
            own.applied(record)
            orderer.outbox.pass_on(record)
        if orderer.handed is not None:  # the host relayed these: a rejoining host keeps them (net/table/succession.py)
            orderer.handed = max(orderer.handed, len(orderer.replica.log))

    def only_stop(self) -> None:
        """While the seats' copies are awaited, a stop is honoured at once; other commands wait, in order."""
        commands, waiting = self.orderer.own.commands, []
        while not commands.empty():
            waiting.append(commands.get_nowait())
        for name, arg in waiting:
            if name == "stop":
                self.orderer.own.stopped = True
            else:
                commands.put((name, arg))
