"""How long a handshake waits for its next step: the person's `connect_timeout` plus the link's time (PROTOCOL.md §3.4).

Reaching a table is several exchanges (a relay's `relay_hello`/`relay_who`/`serve`; a joiner's ping,
the orderer's `who`, the hello, the welcome). `connect_timeout` says how long a person waits for a
table that is not there; a slow link that answers is not an absent table. So each step that shows
progress restarts the clock, and a step may take `connect_timeout` plus twice the longest exchange
measured so far (jitter or a stall can double one round trip). A link that stops answering is
still given up within that. Each named step restarts the clock once (a `who` replayed by the path
does not keep a joiner waiting for ever), and a server that answers ever more slowly gains at most
MAX_EXCHANGE per step.
"""

from __future__ import annotations

import time

MAX_EXCHANGE = 30.0  # seconds: the longest exchange counted, so a slow answerer cannot stretch a step past 5 s + 60 s


class HandshakeClock:
    """The clock of one handshake: `asked` when a step is sent, `answered` when its answer shows progress."""

    def __init__(self, timeout: float, now: float | None = None):
        self.timeout = timeout
        self.since = time.monotonic() if now is None else now  # the last progress (or the start)
        self.round_trip = 0.0  # the longest exchange measured so far
        self._asked: float | None = None  # when the step now awaited was first sent
        self._done: set[str] = set()  # the steps that have restarted the clock

    def asked(self, now: float | None = None) -> None:
        """A step went out (a resend keeps the first time: its answer may be to the first)."""
        if self._asked is None:
            self._asked = time.monotonic() if now is None else now

    def answered(self, step: str, now: float | None = None, asked_at: float | None = None) -> None:
        """The answer `step` came: the first time, the clock restarts, and the exchange counts as one round
        trip of the link."""
        if step in self._done:
            return
        self._done.add(step)
        now = time.monotonic() if now is None else now
        asked_at = self._asked if asked_at is None else asked_at
        if asked_at is not None:
            self.round_trip = min(max(self.round_trip, now - asked_at), MAX_EXCHANGE)
        self._asked, self.since = None, now

    def limit(self) -> float:
        """Seconds the step now awaited may take."""
        return self.timeout + 2 * self.round_trip

    def left(self, now: float | None = None) -> float:
        return self.since + self.limit() - (time.monotonic() if now is None else now)

    def within(self) -> str:
        """How long the last step was given, in words."""
        if self.round_trip < 0.05:
            return f"within {self.timeout:g} s"
        return (f"within {self.limit():.1f} s ({self.timeout:g} s, and twice the link's slowest exchange "
                f"so far, {self.round_trip:.1f} s)")
