"""Are my dice cursed? The faces a dice room rolled, per die size, against fair dice.

Every die drawn counts — kept, dropped, rerolled or exploded alike — because each one is a uniform
draw of its size (core/dice_terms.py reserves one draw per die). Rerolls and explosions stop on a
face, but a stopping rule does not bend the faces seen: exploding d6 on 6 shows, per chain, 1/5 of a
six on average and 1/5 of each other face, so the expected counts stay equal.

The test is Pearson's chi-square against equal counts, with its p-value from the regularized upper
incomplete gamma function (below: series and continued fraction, as every statistics text gives
them). It needs about 5 expected per face; with fewer rolls `Fit.enough` is False and the room says
so instead of a number that means nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from dicetable.core.dice_terms import FUDGE, die_faces
from dicetable.core.diceroom import Roll

MIN_EXPECTED = 5  # expected count per face below which chi-square is not a fair judge


MAX_BINS = 20  # a larger die's faces are shown and tested in this many runs of faces


@dataclass(frozen=True)
class Bin:
    """A face, or a run of faces of a large die (`11-20` of a d100), and how often it came up."""

    label: str
    count: int
    expected: float


@dataclass(frozen=True)
class Fit:
    """How one die size's faces compare with fair dice."""

    sides: int
    bins: tuple[Bin, ...]
    chi_square: float
    p_value: float

    @property
    def dice(self) -> int:
        return sum(b.count for b in self.bins)

    @property
    def enough(self) -> bool:
        return min(b.expected for b in self.bins) >= MIN_EXPECTED

    @property
    def name(self) -> str:
        return "dF" if self.sides == FUDGE else f"d{self.sides}"

    def verdict(self) -> str:
        """One line a person reads: the figure and what it means, never a colour alone."""
        if not self.enough:
            needed = math.ceil(MIN_EXPECTED * self.dice / min(b.expected for b in self.bins)) if self.dice else MIN_EXPECTED * len(self.bins)
            return f"too few to judge (about {needed} {self.name} needed)"
        figure = f"chi-square {self.chi_square:.1f} on {len(self.bins) - 1} degrees of freedom, p = {self.p_value:.2f}"
        if self.p_value < 0.001:
            return f"{figure}: far from fair dice (happens by chance less than once in 1000)"
        if self.p_value < 0.05:
            return f"{figure}: unusual, but fair dice do this 1 time in {round(1 / self.p_value)}"
        return f"{figure}: what fair dice do"


def faces_rolled(rolls: Iterable[Roll], seat: int | None = None) -> dict[int, Counter]:
    """Every die drawn in `rolls` (by `seat`, or everyone's), counted by face, per die size."""
    found: dict[int, Counter] = {}
    for roll in rolls:
        if seat is not None and roll.seat != seat:
            continue
        for tally in roll.tallies:
            for die in tally.dice:
                found.setdefault(die.sides, Counter())[die.face] += 1
    return found


def fits(rolls: Iterable[Roll], seat: int | None = None) -> list[Fit]:
    """One Fit per die size rolled, smallest first (dF first)."""
    out = []
    for sides, faces in sorted(faces_rolled(rolls, seat).items()):
        bins = binned(sides, faces)
        statistic = chi_square([(b.count, b.expected) for b in bins])
        out.append(Fit(sides, bins, statistic, p_value(statistic, len(bins) - 1)))
    return out


def binned(sides: int, faces: Counter) -> tuple[Bin, ...]:
    """The faces of one die size as bins: one per face up to MAX_BINS faces, else runs of faces."""
    all_faces = list(die_faces(sides))
    total = sum(faces.values())
    width = math.ceil(len(all_faces) / MAX_BINS)
    out = []
    for start in range(0, len(all_faces), width):
        run = all_faces[start:start + width]
        label = (f"{run[0]:+d}" if sides == FUDGE else str(run[0])) if len(run) == 1 else f"{run[0]}-{run[-1]}"
        out.append(Bin(label, sum(faces[f] for f in run), total * len(run) / len(all_faces)))
    return tuple(out)


def chi_square(observed: list[tuple[int, float]]) -> float:
    """Pearson's statistic of (count, expected count) pairs."""
    return sum((count - expected) ** 2 / expected for count, expected in observed if expected > 0)


def p_value(statistic: float, degrees: int) -> float:
    """P(X >= statistic) for X chi-square with `degrees` degrees of freedom."""
    if degrees <= 0:
        return 1.0
    return upper_gamma(degrees / 2, statistic / 2)


def upper_gamma(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x), for a > 0, x >= 0."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:  # the series for P converges fast here
        term = total = 1 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= x / n
            total += term
        return max(0.0, 1 - total * math.exp(log_front))
    # Lentz's continued fraction for Q
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return min(1.0, math.exp(log_front) * h)
