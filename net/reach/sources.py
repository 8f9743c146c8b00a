"""Where a packet comes from, as far as limits go, and budgets per source (PROTOCOL.md §12.5, §10.3).

A stranger can open any number of connections and make any number of keys, but each of its packets
comes from an address it cannot forge on TCP. So what one stranger may take from everyone (codes at a
relay, tries at those codes, seat holds at a table) is counted per source: an IPv4 address, or an
IPv6 address by its /64, the block one line or one machine usually gets (counting whole addresses
would let one machine take 2**64 budgets). Several people behind one NAT share one budget; the
figures leave room for a table's worth of them.

`Budget` is a token bucket per source: `burst` tries at once, then one more every `every` seconds.
It remembers at most `sources` of them; a source whose bucket is full again needs no memory, so a
flood from many addresses costs bounded memory, and when it is full the newest source waits.
`Backoff` counts lapses per source (a seat hold that no join followed, net/table/host.py): a few are
free, then each sets a wait that doubles.
"""

from __future__ import annotations

import ipaddress
import time


def source_of(address: str | bytes | None) -> str:
    """The key a peer address is counted under: the IPv4 address, or the IPv6 address's /64."""
    if isinstance(address, bytes):
        address = address.decode("ascii", "replace")
    text = (address or "").strip()
    if text.startswith("[") and "]" in text:  # "[::1]:port" as some transports print it
        text = text[1:text.index("]")]
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return text[:64] or "?"
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Budget:
    """Tries per source: at most `burst` at once, one more every `every` seconds."""

    def __init__(self, burst: int, every: float, sources: int = 65536, clock=time.monotonic):
        self.burst, self.every, self.sources, self.clock = burst, every, sources, clock
        self._spent: dict[str, tuple[float, float]] = {}  # source -> (tries spent, when last counted)

    def spend(self, source: str) -> float:
        """Take one try for `source`: 0.0 if it had one, else the seconds until it has one again."""
        now = self.clock()
        spent = self._left_spent(source, now)
        if spent + 1 > self.burst:
            return (spent + 1 - self.burst) * self.every
        if source not in self._spent and len(self._spent) >= self.sources:
            self._forget(now)
            if len(self._spent) >= self.sources:
                return self.every  # too many sources at once: the newest waits, the counted ones keep their count
        self._spent[source] = (spent + 1, now)
        return 0.0

    def _left_spent(self, source: str, now: float) -> float:
        spent, then = self._spent.get(source, (0.0, now))
        return max(0.0, spent - (now - then) / self.every)

    def _forget(self, now: float) -> None:
        """Drop every source whose bucket has filled up again."""
        for source in [s for s in self._spent if self._left_spent(s, now) == 0.0]:
            del self._spent[source]


class Backoff:
    """Lapses per source: the first `free` cost nothing, each one after sets a wait of `first`
    seconds, doubled at every further lapse up to `most`, before the source may try again."""

    def __init__(self, free: int, first: float, most: float, sources: int = 4096):
        self.free, self.first, self.most, self.sources = free, first, most, sources
        self._lapses: dict[str, tuple[int, float]] = {}  # source -> (lapses, until when it waits)

    def lapse(self, source: str, now: float) -> float:
        """Count one lapse of `source`: the seconds it now waits (0.0 while it has free ones left)."""
        count, _ = self._lapses.get(source, (0, now))
        if source not in self._lapses and len(self._lapses) >= self.sources:
            self._lapses = {s: v for s, v in self._lapses.items() if v[1] > now}  # the waits that still run
            if len(self._lapses) >= self.sources:
                return 0.0  # as many sources waiting as are remembered: this one is not counted
        count += 1
        wait = 0.0 if count <= self.free else min(self.first * 2 ** (count - self.free - 1), self.most)
        self._lapses[source] = (count, now + wait)
        return wait

    def wait(self, source: str, now: float) -> float:
        """Seconds `source` still waits before its next try (0.0: it may try now)."""
        return max(0.0, self._lapses.get(source, (0, now))[1] - now)
