"""The hash chain each seat commits to at join and opens one value per random event (FAIRNESS.md §1).

A chain of length N is built from a 32-byte secret x: h[N] = x, and

    h[k-1] = SHA-256("dicetable/chain/v2" ‖ table id (16 bytes) ‖ seat (1 byte) ‖ h[k])

The seat publishes h[0] (the anchor) and N in its signed join; for its j-th event it reveals h[j],
which anyone checks with one hash against h[j-1]. Only the owner can produce a preimage, so a
reveal needs no signature. A seat whose chain runs low commits a fresh anchor ("anchor" message)
that takes over at the event after the old chain's last.

The table id and seat are inside every hash, so a chain opens only at its own seat of its own table:
a seat that commits to another seat's anchor (to copy its reveals) or replays a chain from another
table cannot open a single value of it (FAIRNESS.md §3).
"""

from __future__ import annotations

import hashlib
import secrets

DOMAIN = b"dicetable/chain/v2"
VALUE_BYTES = 32
DEFAULT_LENGTH = 1024
REFRESH_MARGIN = 16  # commit a fresh anchor when fewer values than this are left


def _domain(table: bytes, seat: int) -> bytes:
    if type(table) is not bytes or len(table) != 16 or type(seat) is not int or not 0 <= seat < 256:
        raise ValueError("a chain belongs to a 16-byte table id and a seat number")
    return DOMAIN + table + bytes([seat])


def step(table: bytes, seat: int, value: bytes) -> bytes:
    """h[k-1] from h[k], for `seat` of `table`."""
    return hashlib.sha256(_domain(table, seat) + value).digest()


def opens(table: bytes, seat: int, previous: bytes, value: bytes, steps: int = 1) -> bool:
    """True when `value` is the chain value `steps` places after `previous` at this seat (one hash a
    place: more than one only for a seat that was out of the game for the events between)."""
    if len(value) != VALUE_BYTES or steps < 1:
        return False
    for _ in range(steps):
        value = step(table, seat, value)
    return value == previous


class Chain:
    """One seat's secret chain for one table; `first` is the table event its value h[1] opens."""

    def __init__(self, table: bytes, seat: int, secret: bytes | None = None, length: int = DEFAULT_LENGTH,
                 first: int = 1) -> None:
        if length < 1:
            raise ValueError("a chain has at least one value")
        domain = _domain(table, seat)
        secret = secrets.token_bytes(VALUE_BYTES) if secret is None else secret
        if len(secret) != VALUE_BYTES:
            raise ValueError(f"a chain secret is {VALUE_BYTES} bytes")
        values = [secret]
        for _ in range(length):
            values.append(hashlib.sha256(domain + values[-1]).digest())
        values.reverse()  # values[k] == h[k]
        self.values = values
        self.length = length
        self.first = first
        self.secret = secret

    @property
    def anchor(self) -> bytes:
        return self.values[0]

    @property
    def last(self) -> int:
        """The last table event this chain covers."""
        return self.first + self.length - 1

    def covers(self, event: int) -> bool:
        return self.first <= event <= self.last

    def reveal(self, event: int) -> bytes:
        """h[j] for table event `event` (j = event - first + 1)."""
        if not self.covers(event):
            raise ValueError(f"event {event} is outside this chain ({self.first}..{self.last})")
        return self.values[event - self.first + 1]
