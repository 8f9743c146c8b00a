"""The one random-source interface, and the local source for offline play.

A source turns a `Chance` into an `Outcome`. The network's fair source (net/chance/outcomes.py) has the same
shape, so the engines, bots and app never know which one feeds them.
"""

from __future__ import annotations

import random
from typing import Protocol

from dicetable.core.game import Chance, Outcome


class RandomSource(Protocol):
    def outcome(self, chance: Chance) -> Outcome: ...


def permutation(n: int, below) -> tuple[int, ...]:
    """Fisher–Yates over range(n) driven by `below(k)`, a uniform integer in range(k).

    The swap partner of position i is drawn from range(i + 1), i.e. positions 0..i inclusive;
    drawing from range(i) instead is the classic off-by-one that biases the shuffle.
    """
    items = list(range(n))
    for i in range(n - 1, 0, -1):
        j = below(i + 1)
        items[i], items[j] = items[j], items[i]
    return tuple(items)


class LocalSource:
    """Outcomes from an explicit, seeded `random.Random` (offline play, bots, selfplay)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def outcome(self, chance: Chance) -> Outcome:
        values = tuple(self.rng.randrange(n) for n in chance.ranges)
        return Outcome(values, permutation(chance.shuffle, self.rng.randrange))
