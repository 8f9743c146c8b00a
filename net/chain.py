"""The hash chain each seat commits to at join and opens one value per random event (FAIRNESS.md §1).

A chain of length N is built from a 32-byte secret x: h[N] = x, h[k-1] = SHA-256(DOMAIN ‖ h[k]).
The seat publishes h[0] (the anchor) and N in its signed join; for its j-th event it reveals h[j],
which anyone checks with one hash against h[j-1]. Only the owner can produce a preimage, so a
reveal needs no signature. A seat whose chain runs low commits a fresh anchor ("anchor" message)
that takes over at the event after the old chain's last.
"""

from __future__ import annotations

import hashlib
import secrets

DOMAIN = b"dicetable/chain/v1"
VALUE_BYTES = 32
DEFAULT_LENGTH = 1024
REFRESH_MARGIN = 16  # commit a fresh anchor when fewer values than this are left


def step(value: bytes) -> bytes:
    """h[k-1] from h[k]."""
    return hashlib.sha256(DOMAIN + value).digest()


def opens(previous: bytes, value: bytes) -> bool:
    """True when `value` is the chain value that follows `previous` (one hash)."""
    return len(value) == VALUE_BYTES and step(value) == previous


class Chain:
    """One seat's secret chain; `first` is the table event its value h[1] opens."""

    def __init__(self, secret: bytes | None = None, length: int = DEFAULT_LENGTH, first: int = 1) -> None:
        if length < 1:
            raise ValueError("a chain has at least one value")
        secret = secrets.token_bytes(VALUE_BYTES) if secret is None else secret
        if len(secret) != VALUE_BYTES:
            raise ValueError(f"a chain secret is {VALUE_BYTES} bytes")
        values = [secret]
        for _ in range(length):
            values.append(step(values[-1]))
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
