"""Outcomes every seat contributes to: event seed from the seats' chain reveals, then the DRBG.

    seed(k) = SHA-256("dicetable/event/v1" ‖ table id (16 bytes) ‖ k (8 bytes big-endian)
                      ‖ h_0[k] ‖ h_1[k] ‖ … ‖ h_{n-1}[k])          (reveals in seat order)

An Outcome for a core Chance is drawn from DRBG(seed) exactly as core.chance.LocalSource draws from
its random.Random: one `below(n)` per entry of `chance.ranges`, in order, then
core.chance.permutation(chance.shuffle, below) (Fisher–Yates). Test vectors: tests/vectors_fair.json.
"""

from __future__ import annotations

import hashlib

from dicetable.core.chance import permutation
from dicetable.core.game import Chance, Outcome
from dicetable.net.chance.drbg import DRBG

EVENT_DOMAIN = b"dicetable/event/v1"


def event_seed(table: bytes, k: int, reveals: list[bytes] | tuple[bytes, ...]) -> bytes:
    if len(table) != 16:
        raise ValueError("a table id is 16 bytes")
    if any(len(r) != 32 for r in reveals):
        raise ValueError("every reveal is 32 bytes")
    return hashlib.sha256(EVENT_DOMAIN + table + k.to_bytes(8, "big") + b"".join(reveals)).digest()


def draw(chance: Chance, seed: bytes) -> Outcome:
    """The Outcome of `chance` for an event seed."""
    stream = DRBG(seed)
    values = tuple(stream.below(n) for n in chance.ranges)
    return Outcome(values, permutation(chance.shuffle, stream.below))


class FairSource:
    """A RandomSource for one event: the seats' reveals for event k decide the outcome."""

    def __init__(self, table: bytes, k: int, reveals: list[bytes] | tuple[bytes, ...]) -> None:
        self.seed = event_seed(table, k, reveals)

    def outcome(self, chance: Chance) -> Outcome:
        return draw(chance, self.seed)
