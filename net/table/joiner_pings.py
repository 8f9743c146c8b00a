"""A joiner's clocks with whoever orders the log: the handshake's steps while it waits for a seat
(PROTOCOL.md §3.4), its heartbeat pings and the orderer's pongs (§7.5, §10.6), and the orderer's
presence as this seat sees it.

Every ping carries the length of this seat's log (the orderer answers the entries it lacks) and a
number its pong echoes, which times this seat's round trip to the orderer: the orderer's seat is due
for a claim only after a deadline plus that round trip (`wait_start`); another seat only while the
orderer's last pong, on a log that holds the wait, names it due. A pong that says the orderer's log is
as long as this seat's lets it send again what the orderer has not ordered (the joiner's `_resend`).
"""

from __future__ import annotations

import time

from dicetable.net.table import deadlines
from dicetable.net.reach.handshake_clock import HandshakeClock


class OrdererPresence:
    """A joiner's view of whoever orders the log: when it was last heard, since when it is out of reach
    (past `drop_after`), and its last outage, which the seat's own view of a claim against it counts."""

    def __init__(self) -> None:
        self.last_heard = time.monotonic()
        self.away_since: float | None = None
        self.outage: tuple[float, float | None] | None = None  # (from, to) the last time the orderer was out of reach

    def heard(self, now: float) -> bool:
        """A packet from the orderer: True when it ends an outage."""
        self.last_heard = now
        if self.away_since is None:
            return False
        self.outage, self.away_since = (self.away_since, now), None
        return True

    def silent(self, now: float, drop_after: float) -> bool:
        """True the moment the orderer has been silent past `drop_after`: away since it was last heard."""
        if self.away_since is None and now - self.last_heard > drop_after:
            self.away_since = self.last_heard
            return True
        return False

    def caught_up(self, now: float) -> None:
        if self.outage is not None and self.outage[1] is None:
            self.outage = (self.outage[0], now)  # resumed and caught up: back at the table

    def cut_off(self, now: float, since: float) -> float | None:
        """How long the orderer was out of this seat's reach since `since` (a resumed seat: since its crash)."""
        if self.away_since is not None:
            return now - self.away_since
        if self.outage is None:
            return None
        start, end = self.outage
        if end is not None and end < since:
            return None
        return (now if end is None else end) - start


class Pings:
    """A joiner's pings and the orderer's pongs, and the handshake's clock while `connect` waits."""

    def __init__(self, peer) -> None:
        self.peer = peer
        self.last = 0.0  # when this seat last pinged (or asked who)
        self.handshake: HandshakeClock | None = None  # while `connect` waits for a seat: its steps' clock (§3.4)
        self.clock = deadlines.PingClock()  # my round trip to the orderer (PROTOCOL.md §7.5)
        self.due: tuple[int, frozenset] = (0, frozenset())  # the orderer's last pong: its log length, the seats due

    def ask_who(self) -> None:
        """A ping: the host answers a connection it does not know with its challenge (`who`)."""
        now = time.monotonic()
        if self.handshake is not None:
            self.handshake.asked(now)
        self.ping(now)

    def ping(self, now: float) -> None:
        """The heartbeat: my log's length, and a number the pong echoes (my round trip to the orderer)."""
        self.last = now
        self.peer.to_orderer("ping", {"next": len(self.peer.replica.log), "echo": self.clock.ping(now)})

    def pong(self, body: dict, now: float) -> None:
        """The orderer's answer to a ping: its log's length, my round trip, the seats it says are due."""
        peer = self.peer
        peer.host_length = max(peer.host_length, body["length"])
        self.clock.pong(body.get("echo"), now)
        due = body.get("due", [])
        if type(due) is list and len(due) <= 64 and all(type(s) is int for s in due):
            self.due = (body["length"], frozenset(due))
        if body["length"] == len(peer.replica.log):
            peer._resend(now)

    def watch(self, now: float) -> None:
        """Before a welcome, ask again after a lost ping, who or hello (not before its answer could be
        back); once seated, a heartbeat."""
        peer = self.peer
        if not peer.welcomed:
            slow = 2 * self.handshake.round_trip if self.handshake is not None else 0.0
            if now - self.last >= 5 * peer.timing.heartbeat + slow:
                self.last = now
                self.ask_who()
        elif now - self.last >= peer.timing.heartbeat:
            self.ping(now)

    def wait_start(self, seat: int, since: float, length: int, now: float) -> float | None:
        """The orderer's seat: my clock plus my round trip to it. Another seat: my clock, only while the
        orderer's last pong, on a log that holds this wait, says it is due (net/table/deadlines.py)."""
        peer = self.peer
        orderer = peer.link.orderer if peer.link.orderer is not None else 0
        if seat == orderer:
            return since + self.clock.round_trip(deadlines.deadline(peer.replica, peer.timing), peer.timing)
        told, due = self.due
        return since if seat in due and told >= length else None
