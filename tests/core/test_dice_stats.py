"""The dice room's statistics: faces counted per die size, chi-square against fair dice, from fixed
seeds so a run never fails at random."""

from __future__ import annotations

import math
import random

import pytest

from dicetable.core.dice_expr import parse
from dicetable.core.dice_stats import MIN_EXPECTED, chi_square, fits, p_value, upper_gamma
from dicetable.core.diceroom import Roll


def rolled(expr: str, times: int, seed: int, seat: int = 0, loaded: int | None = None) -> list[Roll]:
    """`expr` rolled `times` from a seeded generator (one uniform value per draw, as chance gives);
    `loaded` makes every other draw of that value's face instead."""
    rng, line, out = random.Random(seed), parse(expr), []
    for _ in range(times):
        values = [rng.randrange(r) for r in line.ranges]
        if loaded is not None:
            values = [loaded if i % 2 else v for i, v in enumerate(values)]
        out.append(Roll(seat, expr, line.faces(values)))
    return out


@pytest.mark.parametrize(("statistic", "degrees", "p"), [
    (3.8415, 1, 0.05), (11.0705, 5, 0.05), (18.307, 10, 0.05), (30.1435, 19, 0.05), (0.1, 2, math.exp(-0.05)),
    (6.6349, 1, 0.01), (36.191, 19, 0.01),  # the textbook table's values
])
def test_p_values_match_the_chi_square_table(statistic, degrees, p):
    assert p_value(statistic, degrees) == pytest.approx(p, rel=1e-3)


def test_upper_gamma_is_one_at_zero_and_falls():
    assert upper_gamma(2.5, 0) == 1.0
    values = [upper_gamma(2.5, x) for x in (0.5, 1, 2, 5, 10, 50)]
    assert values == sorted(values, reverse=True) and 0 < values[-1] < 1e-15


@pytest.mark.parametrize("seed", range(5))
def test_fair_dice_look_fair(seed):
    rolls = rolled("3d6", 400, seed) + rolled("d20", 400, seed + 100) + rolled("d100", 300, seed + 200)
    found = {fit.name: fit for fit in fits(rolls)}
    assert set(found) == {"d6", "d20", "d100"}
    assert found["d6"].dice == 1200 and len(found["d6"].bins) == 6
    assert len(found["d100"].bins) == 20 and found["d100"].bins[1].label == "6-10"  # runs of faces
    for fit in found.values():
        assert fit.enough and fit.p_value > 0.001, fit.verdict()


def test_loaded_dice_are_named():
    fit = fits(rolled("3d6", 300, 7, loaded=5))[0]  # the middle die of each roll shows a six
    assert fit.p_value < 1e-6 and "far from fair dice" in fit.verdict()
    assert dict((b.label, b.count) for b in fit.bins)["6"] > 350  # 300 loaded and about 100 fair sixes


def test_every_die_drawn_counts_and_each_person_apart():
    rolls = rolled("4d6kh3", 10, 1, seat=0) + rolled("2d6r1", 10, 2, seat=1) + rolled("3d6!", 10, 3, seat=1)
    everyone, ann, bob = fits(rolls)[0], fits(rolls, seat=0)[0], fits(rolls, seat=1)[0]
    assert ann.dice == 40  # the dropped die too
    assert everyone.dice == ann.dice + bob.dice
    assert bob.dice == sum(len(t.dice) for r in rolls if r.seat == 1 for t in r.tallies)  # rerolled and exploded too
    assert fits(rolls, seat=2) == []


def test_too_few_dice_say_so_instead_of_a_number():
    fit = fits(rolled("d20", 30, 1))[0]
    assert not fit.enough and fit.verdict() == f"too few to judge (about {MIN_EXPECTED * 20} d20 needed)"


def test_fudge_dice_have_three_faces():
    fit = fits(rolled("4dF", 50, 1))[0]
    assert fit.name == "dF" and [b.label for b in fit.bins] == ["-1", "+0", "+1"]


def test_chi_square_of_equal_counts_is_zero():
    assert chi_square([(10, 10.0)] * 6) == 0.0
    assert chi_square([(12, 10.0), (8, 10.0)]) == pytest.approx(0.8)
