"""Dice expressions of the dice room (core/dice_expr.py): reading, faces, keeping, totals, errors; the
notation of Foundry VTT and Roll20 (rerolls, explosions, successes, labels, several rolls, repeats),
checked against a brute-force reference roller, by properties and by chi-square on fixed seeds."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings, strategies as st

from dicetable.core.chance import LocalSource
from dicetable.core.dice_expr import (
    FUDGE, MAX_DICE, MAX_DRAWS, MAX_LENGTH, MAX_NESTING, MAX_REPEAT, MAX_ROLLS, MAX_SIDES, MAX_TEXT, BadExpression,
    parse,
)
from dicetable.core.game import Chance


# -- the forms of before, and the canonical text -------------------------------------------------
@pytest.mark.parametrize(
    "text, written",
    [
        ("d20", "1d20"),
        ("3d6", "3d6"),
        ("2d10+4", "2d10+4"),
        ("4d6kh3", "4d6kh3"),
        ("2d20kl1-1", "2d20kl1-1"),
        ("4dF", "4dF"),
        (" 3 D 6 + 2 ", "3d6+2"),
    ],
)
def test_reads_the_forms_of_the_issue(text, written):
    assert str(parse(text)) == written
    assert parse(written) == parse(text)  # the canonical text reads back the same


def test_one_chance_range_per_die():
    assert parse("3d6").ranges == (6, 6, 6)
    assert parse("4dF").ranges == (3, 3, 3, 3)
    assert parse("d20").ranges == (20,)


def test_faces_totals_and_kept_dice():
    expr = parse("4d6kh3")
    faces = expr.faces([5, 0, 3, 2])  # chance values 0-based: faces 6 1 4 3
    assert faces == (6, 1, 4, 3)
    assert expr.kept_faces(faces) == (6, 4, 3)
    assert expr.total(faces) == 13
    assert expr.describe(faces) == "13 [6 (1) 4 3]"
    low = parse("2d20kl1-1")
    assert low.total(low.faces([14, 2])) == 2  # keeps the 3, minus 1


def test_fudge_dice_run_from_minus_one_to_plus_one():
    expr = parse("4dF")
    faces = expr.faces([0, 1, 2, 2])
    assert faces == (-1, 0, 1, 1)
    assert expr.total(faces) == 1
    assert expr.describe(faces) == "1 [- 0 + +]"


def test_modifier_adds_to_the_total():
    expr = parse("2d10+4")
    assert expr.total(expr.faces([9, 0])) == 15


def test_wrong_number_of_values_is_refused():
    with pytest.raises(BadExpression, match="2 values for 3 dice"):
        parse("3d6").faces([0, 1])
    with pytest.raises(BadExpression, match="2 values for 4 draws"):
        parse("2d6r1").faces([0, 1])


# -- every notation item, rolled from chosen faces ---------------------------------------------------
def roll(text: str, *dice, fill: int | None = None):
    """The line `text` rolled with these dice, in order: a face, or the faces a die draws one after
    another (its rerolls and explosions); the draws each die leaves unread hold `fill`."""
    expr = parse(text)
    blocks = [(term.sides, term.draws) for formula in expr.formulas for _ in range(formula.repeat)
              for term in formula.term.dice_terms() for _ in range(term.count)]
    full = []
    for n, (sides, draws) in enumerate(blocks):
        given = dice[n] if n < len(dice) else ()
        given = (given,) if isinstance(given, int) else tuple(given)
        full += given + (fill if fill is not None else (-1 if sides == FUDGE else 1),) * (draws - len(given))
    full = tuple(full)
    assert expr.faces([f + 1 if s == FUDGE else f - 1 for f, s in zip(full, expr.sizes)]) == full
    return expr, full


@pytest.mark.parametrize(
    "text, faces, totals, shown",
    [
        # sums, differences, several dice sizes, arithmetic, brackets; "/" rounds down
        ("1d20+5+1d4", (12, 3), (20,), "20 [12] [3]"),
        ("2d6+1d8+3", (2, 5, 8), (18,), "18 [2 5] [8]"),
        ("1d20-1d4", (3, 4), (-1,), "-1 [3] [4]"),
        ("(1d8+2)*2", (7,), (18,), "18 [7]"),
        ("1d8*2+1d4*3", (8, 1), (19,), "19 [8] [1]"),
        ("1d6/2", (5,), (2,), "2 [5]"),
        ("-1d6/2", (5,), (-3,), "-3 [5]"),
        ("(2d6+3)/2", (1, 1), (2,), "2 [1 1]"),
        ("2d6/(1+1)*3", (6, 5), (15,), "15 [6 5]"),
        ("-(1d4)+10", (4,), (6,), "6 [4]"),
        ("d%", (100,), (100,), "100 [100]"),
        ("2d%+1", (7, 93), (101,), "101 [7 93]"),
        # keep and drop (k = kh, d = dl, a count of 1 by default)
        ("4d6dl1", (3, 1, 5, 1), (9,), "9 [3 1 5 (1)]"),
        ("4d6dh1", (3, 1, 5, 1), (5,), "5 [3 1 (5) 1]"),
        ("4d6k3", (6, 1, 4, 3), (13,), "13 [6 (1) 4 3]"),
        ("2d20kh", (4, 17), (17,), "17 [(4) 17]"),
        ("2d20kl", (4, 17), (4,), "4 [4 (17)]"),
        ("4d6d", (2, 2, 6, 2), (10,), "10 [2 2 6 (2)]"),
        # rerolls: r and ro once, rr again and again; bare r rerolls 1s
        ("2d6r1", ((1, 1), 4), (5,), "5 [~1~ 1 4]"),
        ("2d6r", ((1, 3), 4), (7,), "7 [~1~ 3 4]"),
        ("2d6ro<3", ((2, 2), 6), (8,), "8 [~2~ 2 6]"),
        ("1d6rr<3", ((2, 1, 1, 5),), (5,), "5 [~2~ ~1~ ~1~ 5]"),
        ("1d6rr=1", ((1, 1, 6),), (6,), "6 [~1~ ~1~ 6]"),
        ("1d20r>18", ((19, 20),), (20,), "20 [~19~ 20]"),
        ("2d6r<=2", (3, 4), (7,), "7 [3 4]"),
        # explosions: ! and x again and again on the highest face or a condition, xo once
        ("3d6!", ((6, 6, 2), 3, 4), (21,), "21 [6! 6! 2 3 4]"),
        ("1d10x", ((10, 1),), (11,), "11 [10! 1]"),
        ("2d6!>5", (5, (6, 6, 1)), (18,), "18 [5 6! 6! 1]"),
        ("2d6!>4", ((5, 2), (6, 6, 1)), (20,), "20 [5! 2 6! 6! 1]"),
        ("1d6x=6", ((6, 6, 6, 1),), (19,), "19 [6! 6! 6! 1]"),
        ("1d6xo", ((6, 6),), (12,), "12 [6! 6]"),
        ("1d6!>=5", ((5, 6, 1),), (12,), "12 [5! 6! 1]"),
        # rerolls first, then explosions, then keep
        ("2d6r1!", ((1, 6, 2), 3), (11,), "11 [~1~ 6! 2 3]"),
        ("4d6!kh3", ((6, 1), 2, 3, 4), (13,), "13 [6! (1) (2) 3 4]"),
        # successes (and failures, which take one off each)
        ("10d10>=8", (8, 9, 10, 1, 2, 3, 4, 5, 6, 7), (3,), "3 [8* 9* 10* 1 2 3 4 5 6 7]"),
        ("5d6<3", (1, 2, 3, 4, 5), (2,), "2 [1* 2* 3 4 5]"),
        ("4d6=6", (6, 6, 1, 6), (3,), "3 [6* 6* 1 6*]"),
        ("12d6>5", (6,) * 4 + (1,) * 8, (4,), "4 [" + "6* " * 4 + "1 " * 7 + "1]"),
        ("4d10>=8f1", (10, 1, 1, 5), (-1,), "-1 [10* 1f 1f 5]"),
        ("4d10>=8f<3", (10, 2, 1, 9), (0,), "0 [10* 2f 1f 9*]"),
        ("3d10!cs>=8", ((10, 8), 1, 5), (2,), "2 [10!* 8* 1 5]"),
        ("4d6kh2>=5", (6, 5, 5, 1), (2,), "2 [6* 5* (5) (1)]"),
        ("4d6>=5+2", (6, 1, 1, 1), (3,), "3 [6* 1 1 1]"),
        # Fudge dice with rerolls and explosions
        ("4dFr=-1", ((-1, 0), 1, 1, (-1, -1)), (1,), "1 [~-~ 0 + + ~-~ -]"),
        ("2dF!", ((1, 1, 0), -1), (1,), "1 [+! +! 0 -]"),
    ],
)
def test_each_notation_item_rolls_from_the_faces_it_is_given(text, faces, totals, shown):
    expr, full = roll(text, *faces)
    assert expr.totals(full) == totals
    assert expr.describe(full) == shown
    assert parse(str(expr)) == expr  # and its canonical text reads back the same


def test_unread_draws_change_nothing():
    for text, faces in (("3d6!", ((6, 2), 3, 4)), ("1d6rr<3", ((1, 5),)), ("2d6r1!", ((1, 6, 2), 3))):
        low, high = roll(text, *faces, fill=1), roll(text, *faces, fill=6)
        assert low[0].describe(low[1]) == high[0].describe(high[1])


def test_labels_name_the_roll_and_its_terms():
    expr, full = roll("1d20+5 [attack]", 12)
    assert expr.describe(full) == "attack: 17 [12]" and str(expr) == "1d20+5 [attack]"
    assert [t.label for t in expr.tallies(full)] == ["attack"]
    expr, full = roll("2d6[Fire] + 1d8[cold] [Damage of the Dragon]", 1, 5, 5)
    assert expr.describe(full) == "Damage of the Dragon: 11 [1 5] Fire [5] cold"  # labels keep their case
    assert str(expr) == "2d6[Fire]+1d8[cold] [Damage of the Dragon]"
    assert str(parse("1d20[hit]")) == "1d20 [hit]"  # a label ending the roll is the roll's
    assert str(parse("1d20+5[prof]+1d4 [bless, 1st]")) == "1d20+5[prof]+1d4 [bless, 1st]"


def test_several_rolls_in_one_line_and_repeats():
    expr, full = roll("8d6, 4d6kh3", 1, 2, 3, 4, 5, 6, 1, 2, 6, 1, 4, 3)
    assert expr.totals(full) == (24, 13)
    assert expr.describe(full) == "24 [1 2 3 4 5 6 1 2], 13 [6 (1) 4 3]"
    assert expr.total(full) == 37  # the line's rolls summed; totals() gives each
    stats, full = roll("6#4d6kh3", *([6, 5, 4, 1] * 3 + [2, 2, 2, 2] * 3))
    assert stats.totals(full) == (15, 15, 15, 6, 6, 6) and len(stats.tallies(full)) == 6
    assert str(stats) == "6#4d6kh3" and len(stats.ranges) == 24
    both, full = roll("2#1d20+5 [attack], 1d8+3 [damage]", 20, 3, 8)
    assert both.describe(full) == "attack: 25 [20], attack: 8 [3], damage: 11 [8]"


def test_case_and_spaces_do_not_matter():
    assert parse(" 4 D 6 K H 3 ") == parse("4d6kh3") == parse("4D6KH3")
    assert parse("2d6 R 1 !") == parse("2d6r1!")
    assert parse("10 d 10 > = 8") == parse("10d10>=8")
    assert parse("3DF") == parse("3df") == parse("3dF")


def test_modifiers_apply_in_one_order_whatever_order_they_are_written_in():
    assert parse("4d6kh3r1") == parse("4d6r1kh3") and str(parse("4d6kh3r1")) == "4d6r1kh3"
    assert parse("10d10>=8!") == parse("10d10!cs>=8")
    assert str(parse("10d10kh5!>=8")) == "10d10!>=8kh5"  # after "!" a comparison is the explosion's


def test_the_dice_of_each_size_are_every_die_rolled():
    expr, full = roll("2d6r1!+1d20+1dF", (1, 6, 2), 3, 17, -1)
    assert expr.dice(full) == ((6, 1), (6, 6), (6, 2), (6, 3), (20, 17), (FUDGE, -1))  # rerolled and exploded too
    assert len(full) == len(expr.ranges) > 6  # the draws left unread are no dice


def test_draws_are_reserved_per_die_from_the_text_alone():
    assert len(parse("2d6r1").ranges) == 2 * 2
    assert len(parse("3d6!").ranges) == 3 * (1 + 8)  # (1/6)**8 <= 2**-20 < (1/6)**7
    assert len(parse("1d2!").ranges) == 1 + 20
    assert len(parse("1d6rr<3").ranges) == 1 + 13  # (1/3)**13 <= 2**-20
    assert len(parse("1d6xo").ranges) == 2 and len(parse("2d6r7").ranges) == 2  # r7 never rerolls a d6
    assert parse("1d20+2d6").ranges == (20, 6, 6)


# -- a brute-force reference: the rules as a person reads them, dice drawn one at a time --------------
@dataclass(frozen=True)
class Spec:
    """One dice term as data, its notation written by the test itself."""

    count: int
    sides: int
    reroll: tuple[str, int, bool] | None = None  # (op, value, again and again)
    explode: tuple[str, int, bool] | None = None
    keep: tuple[str, int] | None = None
    success: tuple[str, int] | None = None
    failure: tuple[str, int] | None = None

    def text(self) -> str:
        text = f"{self.count}d{'F' if self.sides == FUDGE else self.sides}"
        if self.reroll:
            text += ("rr" if self.reroll[2] else "ro") + f"{self.reroll[0]}{self.reroll[1]}"
        if self.explode:
            text += ("x" if self.explode[2] else "xo") + f"{self.explode[0]}{self.explode[1]}"
        if self.keep:
            text += f"{self.keep[0]}{self.keep[1]}"
        if self.success:
            text += f"cs{self.success[0]}{self.success[1]}"
        if self.failure:
            text += f"f{self.failure[0]}{self.failure[1]}"
        return text

    @property
    def faces(self) -> list[int]:
        return [-1, 0, 1] if self.sides == FUDGE else list(range(1, self.sides + 1))


def holds(op: str, face: int, value: int) -> bool:
    return {"=": face == value, "<": face < value, ">": face > value, "<=": face <= value, ">=": face >= value}[op]


def cap(spec: Spec, rule) -> int:
    """Draws the rule may take again for one die: 1 once; again and again, the fewest k with
    P(going on)**k <= 2**-20 (core/dice_terms.py's promise, counted here with fractions)."""
    if rule is None:
        return 0
    going_on = Fraction(sum(holds(rule[0], f, rule[1]) for f in spec.faces), len(spec.faces))
    if going_on == 0:
        return 0
    if not rule[2]:
        return 1
    return next(k for k in itertools.count(1) if going_on**k <= Fraction(1, 2**20))


class NeedMore(Exception):
    pass


def one_die(spec: Spec, draws) -> list[tuple[int, str]]:
    """One die, drawing as it goes: [(face, "rerolled" | "exploded" | "")]."""
    out = []
    face = next(draws)
    for rule, mark in ((spec.reroll, "rerolled"), (spec.explode, "exploded")):
        for _ in range(cap(spec, rule)):
            if not holds(rule[0], face, rule[1]):
                break
            out.append((face, mark))
            face = next(draws)
    return out + [(face, "")]


def settle(spec: Spec, dice: list[tuple[int, str]]) -> tuple[int, list[tuple[int, str, bool]]]:
    """Keep/drop then count: the total and [(face, mark, counted)]."""
    standing = [i for i, (_, mark) in enumerate(dice) if mark != "rerolled"]
    kept = set(standing)
    if spec.keep:
        how, n = spec.keep
        size = {"kh": n, "kl": n, "dh": len(standing) - n, "dl": len(standing) - n}[how]
        low = how in ("kl", "dh")
        kept = set(sorted(standing, key=lambda i: ((dice[i][0] if low else -dice[i][0]), i))[:size])
    out = [(face, mark, i in kept) for i, (face, mark) in enumerate(dice)]
    counted = [face for face, _, c in out if c]
    if spec.success:
        total = sum(holds(spec.success[0], f, spec.success[1]) for f in counted)
        total -= sum(holds(spec.failure[0], f, spec.failure[1]) for f in counted) if spec.failure else 0
        return total, out
    return sum(counted), out


def die_paths(spec: Spec, prefix=()):
    """Every way one die can go: (faces drawn, result), drawing one face at a time."""
    def draws():
        yield from prefix
        raise NeedMore

    try:
        result = one_die(spec, draws())
    except NeedMore:
        for face in spec.faces:
            yield from die_paths(spec, prefix + (face,))
        return
    yield prefix, result


def exact(spec: Spec) -> dict[int, Fraction]:
    """The exact distribution of the total, by enumerating every path of every die (without keep or
    drop the dice add up one by one, so their distributions are convolved instead)."""
    per_die = list(die_paths(spec))
    weight = lambda drawn: Fraction(1, len(spec.faces) ** len(drawn))  # noqa: E731
    if spec.keep is None:
        one: Counter = Counter()
        for drawn, result in per_die:
            one[settle(spec, result)[0]] += weight(drawn)
        dist = Counter({0: Fraction(1)})
        for _ in range(spec.count):
            after: Counter = Counter()
            for total, p in dist.items():
                for value, q in one.items():
                    after[total + value] += p * q
            dist = after
        return dist
    dist = Counter()
    for combo in itertools.product(per_die, repeat=spec.count):
        p = Fraction(1)
        for drawn, _ in combo:
            p *= weight(drawn)
        dist[settle(spec, [d for _, result in combo for d in result])[0]] += p
    return dist


CROSS_CHECKED = [  # small enough to walk every path of every die
    Spec(2, 6, reroll=("=", 1, False)),
    Spec(2, 6, reroll=("<", 3, False)),
    Spec(1, 8, reroll=("<", 3, True)),
    Spec(2, 4, reroll=("=", 1, True)),
    Spec(2, 6, explode=("=", 6, True)),
    Spec(1, 10, explode=(">", 8, True)),
    Spec(2, 6, explode=("=", 6, False)),
    Spec(2, 4, reroll=("=", 1, False), explode=("=", 4, True), keep=("kh", 2)),
    Spec(2, 6, explode=("=", 6, True), keep=("dl", 1)),
    Spec(3, 4, success=(">=", 3), failure=("=", 1)),
    Spec(2, 6, reroll=("<", 3, False), explode=(">", 5, True), keep=("kl", 1)),
    Spec(2, FUDGE, explode=("=", 1, True)),
    Spec(3, FUDGE, reroll=("<", 0, False)),
    Spec(2, 10, explode=("=", 10, True), success=(">=", 8), failure=("<=", 2)),
]


@pytest.mark.parametrize("spec", CROSS_CHECKED, ids=lambda s: s.text())
def test_rerolls_and_explosions_match_the_reference_on_every_path(spec):
    """For every way the dice can fall, the expression reads the same dice, marks and total as the
    reference roller, whatever the draws it leaves unread hold; so its distribution is exact."""
    expr = parse(spec.text())
    draws = 1 + cap(spec, spec.reroll) + cap(spec, spec.explode)
    assert len(expr.ranges) == spec.count * draws
    per_die = list(die_paths(spec))
    assert sum(Fraction(1, len(spec.faces) ** len(drawn)) for drawn, _ in per_die) == 1
    for combo in itertools.product(per_die, repeat=spec.count):
        total, dice = settle(spec, [d for _, result in combo for d in result])
        for fill in (spec.faces[0], spec.faces[-1]):
            faces = tuple(f for drawn, _ in combo for f in drawn + (fill,) * (draws - len(drawn)))
            (tally,) = expr.tallies(faces)
            assert tally.total == total
            assert [(d.face, "rerolled" if d.rerolled else "exploded" if d.exploded else "", d.counted)
                    for d in tally.dice] == dice


# -- properties ----------------------------------------------------------------------------------
_SIDES = st.sampled_from([2, 3, 4, 6, 8, 10, 12, 20, 100, FUDGE])
_OPS = st.sampled_from(["=", "<", ">", "<=", ">="])


@st.composite
def specs(draw) -> tuple[Spec, int]:
    sides = draw(_SIDES)
    count = draw(st.integers(1, 8))
    value = st.integers(-1, 1) if sides == FUDGE else st.integers(1, sides)
    maybe = lambda s: draw(st.one_of(st.none(), s))  # noqa: E731
    reroll = maybe(st.tuples(_OPS, value, st.booleans()))
    explode = maybe(st.tuples(_OPS, value, st.booleans()))
    keep = maybe(st.tuples(st.sampled_from(["kh", "kl", "dh", "dl"]), st.integers(1, count)))
    assume(keep is None or keep[0].startswith("k") or keep[1] < count)
    success = maybe(st.tuples(_OPS, value))
    failure = maybe(st.tuples(_OPS, value)) if success else None
    return Spec(count, sides, reroll, explode, keep, success, failure), draw(st.integers(-20, 20))


@settings(max_examples=300, deadline=None)
@given(specs(), st.data())
def test_totals_stay_in_range_and_match_the_reference(spec_and_modifier, data):
    spec, modifier = spec_and_modifier
    text = spec.text() + (f"{modifier:+d}" if modifier else "")
    try:
        expr = parse(text)
    except BadExpression as error:
        assume("never stop" not in str(error) and "too often" not in str(error) and "draws of the dice" not in str(error))
        raise
    values = [data.draw(st.integers(0, n - 1)) for n in expr.ranges]
    faces = expr.faces(values)
    (tally,) = expr.tallies(faces)
    # the reference reads each die's block from its start, as the module promises
    draws_per_die = len(faces) // spec.count
    blocks = [iter(faces[n * draws_per_die:(n + 1) * draws_per_die]) for n in range(spec.count)]
    total, dice = settle(spec, [d for block in blocks for d in one_die(spec, block)])
    assert tally.total == total + modifier
    low, high = spec.faces[0], spec.faces[-1]
    standing = len([d for d in dice if d[1] != "rerolled"])
    counted = len([d for d in dice if d[2]])
    assert spec.count <= standing <= spec.count * (1 + cap(spec, spec.explode))
    if spec.success:
        assert -counted <= tally.total - modifier <= counted
    else:
        assert min(low * counted, high * counted) <= tally.total - modifier <= max(low * counted, high * counted)
    assert all(low <= face <= high for _, face in expr.dice(faces))
    assert "\n" not in expr.describe(faces) and parse(str(expr)) == expr


_NOTATION = st.text(alphabet="0123456789dDfFkKhlrRxXocs!%+-*/()[]<>=,# .\taé²٣", max_size=30)


@settings(max_examples=1000, deadline=None)
@given(_NOTATION)
def test_any_text_reads_or_is_refused_in_one_line(text):
    try:
        expr = parse(text)
    except BadExpression as error:
        assert "\n" not in str(error) and str(error)
        return
    written = str(expr)
    assert parse(written) == expr and len(written) <= MAX_LENGTH
    assert 1 <= len(expr.ranges) <= MAX_DRAWS and all(n >= 2 for n in expr.ranges)
    faces = expr.faces([n - 1 for n in expr.ranges])
    assert len(expr.totals(faces)) == len(expr.tallies(faces)) <= MAX_ROLLS


# -- distributions: many local rolls from fixed seeds (they cannot fail at random) -----------------
# Upper 0.001 points of chi-square (NIST/SEMATECH e-Handbook 1.3.6.7.4), by degrees of freedom.
CHI2_999 = {1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515, 6: 22.458, 7: 24.322, 8: 26.124, 9: 27.877,
            10: 29.588, 11: 31.264, 12: 32.909, 13: 34.528, 14: 36.123, 15: 37.697, 16: 39.252, 17: 40.790,
            18: 42.312, 19: 43.820, 20: 45.315, 21: 46.797, 22: 48.268, 23: 49.728, 24: 51.179, 25: 52.620,
            26: 54.052, 27: 55.476, 28: 56.892, 29: 58.301, 30: 59.703}


def chi_square(observed: Counter, dist: dict[int, Fraction], n: int) -> tuple[float, int]:
    """Chi-square of `observed` against `dist`, neighbouring outcomes pooled until each expects 20."""
    stat, bins, held_o, held_e = 0.0, 0, 0, 0.0
    keys = sorted(set(dist) | set(observed))
    for i, key in enumerate(keys):
        held_o += observed.get(key, 0)
        held_e += float(dist.get(key, 0)) * n
        if held_e >= 20 and sum(float(dist.get(k, 0)) for k in keys[i + 1:]) * n >= 20 or i == len(keys) - 1:
            stat += (held_o - held_e) ** 2 / held_e
            bins, held_o, held_e = bins + 1, 0, 0.0
    return stat, bins - 1


def local_totals(text: str, rolls: int, seed: int) -> Counter:
    expr, source = parse(text), LocalSource(random.Random(seed))
    chance = Chance(text, expr.ranges)
    return Counter(expr.total(expr.faces(source.outcome(chance).values)) for _ in range(rolls))


@pytest.mark.slow
@pytest.mark.parametrize("spec", [
    Spec(4, 6, keep=("kh", 3)),
    Spec(2, 6, reroll=("=", 1, False)),
    Spec(1, 8, reroll=("<", 3, True)),
    Spec(2, 6, explode=("=", 6, True)),
    Spec(10, 10, success=(">=", 8)),
    Spec(2, 4, reroll=("=", 1, False), explode=("=", 4, True), keep=("kh", 2)),
    Spec(4, FUDGE),
], ids=lambda s: s.text())
def test_local_rolls_follow_the_exact_distribution(spec):
    dist = exact(spec)
    assert sum(dist.values()) == 1
    stat, df = chi_square(local_totals(spec.text(), 20_000, seed=33), dist, 20_000)
    assert 2 <= df <= 30 and stat < CHI2_999[df], (stat, df)


@pytest.mark.slow
def test_the_chi_square_sees_a_roller_that_forgets_its_rerolls():
    """Negative control: 2d6r1 rolled as plain 2d6 is caught by the same test."""
    stat, df = chi_square(local_totals("2d6", 20_000, seed=33), exact(Spec(2, 6, reroll=("=", 1, False))), 20_000)
    assert stat > CHI2_999[df]


def test_d100_faces_are_uniform():
    expr, source = parse("d%"), LocalSource(random.Random(100))
    faces = Counter(expr.faces(source.outcome(Chance("d%", expr.ranges)).values)[0] for _ in range(20_000))
    stat, df = chi_square(faces, {f: Fraction(1, 100) for f in range(1, 101)}, 20_000)
    assert set(faces) == set(range(1, 101)) and df == 99 and stat < 148.23  # upper 0.001 point, 99 df


# -- errors: one sentence, naming what is wrong and where ----------------------------------------------
@pytest.mark.parametrize(
    "text, says",
    [
        ("", "empty dice expression"),
        ("3x6", "no 'd'"),
        ("ad6", "'a' before 'd' is not a number of dice"),
        ("d", "number of sides or F"),
        ("0d6", "number of dice must be 1 to 100, not 0"),
        ("101d6", "not 101"),
        ("d1", "2 to 1000 sides, not 1"),
        ("4d6kh5", "can keep 1 to 4 of 4 dice, not 5"),
        ("4d6kx3", "kh (highest) or kl (lowest)"),
        ("3d6+", "a number must follow '+'"),
        ("d6+1000001", "modifier must be at most"),
        # the notation of now
        ("1d20+0d6", "at character 6: the number of dice must be 1 to 100, not 0"),
        ("4d6dl4", "at character 4: can drop 1 to 3 of 4 dice, not 4"),
        ("1d6dl1", "cannot drop the only die"),
        ("1d6,,2d6", "at character 5: an empty roll"),
        ("1d6,", "at the end: an empty roll"),
        ("(1d6", "at character 1: '(' is never closed"),
        ("1d6)", "at character 4: ')' has no '(' before it"),
        ("1d6]", "']' has no '[' before it"),
        ("1d6 [attack", "at character 5: '[' is never closed"),
        ("1d6 []", "an empty label"),
        ("1d6 [a]x[b] [c]", "'x' cannot follow"),
        ("1d20 [a] [b] [c]", "at character 14: a label goes after dice"),
        ("2d6/1d2", "at character 4: divide by a number, not by dice"),
        ("2d6/(3-3)", "a division by 0"),
        ("#d6", "'#' repeats a roll: write how many times first"),
        ("d6#2", "at character 3: '#' repeats a whole roll: write it first"),
        ("1.5d6", "at character 2: whole numbers only"),
        ("2d6r<", "at character 5: '<' must be followed by a number"),
        ("1d6cs", "at the end: give the condition"),
        ("1d6rr<7", "'rr<7' rerolls every face of a d6, so it would never stop"),
        ("1d6!>0", "'!>0' explodes every face of a d6"),
        ("1d6!!", "compounding (!!) is not rolled here"),
        ("4d6kh3kl1", "at character 7: a second keep/drop 'kl1'"),
        ("3d6r1r2", "a second reroll 'r2'"),
        ("10d10f1", "failures count only beside successes"),
        ("1d20zz3", "at character 5: 'zz' is not a modifier"),
        ("1d6+2>=3", "at character 6: '>=' belongs right after dice"),
        ("5+3", "no 'd'"),
        ("5 [dodge]", "no 'd'"),
        ("2d6*(", "a number must follow '('"),
        ("1d6+ +", "a number must follow '+'"),
    ],
)
def test_malformed_expressions_say_what_is_wrong(text, says):
    with pytest.raises(BadExpression) as error:
        parse(text)
    message = str(error.value)
    assert says in message
    assert "\n" not in message
    assert text.strip() == "" or message.startswith(repr(text.strip()))  # it names the expression


def test_the_caps_keep_a_roll_small():
    """Every cap, just inside and just outside."""
    parse(f"{MAX_DICE}d{MAX_SIDES}")
    with pytest.raises(BadExpression, match=f"1 to {MAX_DICE}, not {MAX_DICE + 1}"):
        parse(f"{MAX_DICE + 1}d6")
    with pytest.raises(BadExpression, match=f"2 to {MAX_SIDES} sides, not {MAX_SIDES + 1}"):
        parse(f"d{MAX_SIDES + 1}")
    # draws: 100d6! reserves 9 per die, 900 in all; two of them ask too much
    assert len(parse("100d6!").ranges) == 900
    with pytest.raises(BadExpression, match=f"1800 draws of the dice, at most {MAX_DRAWS} .100d6! takes 900"):
        parse("100d6!, 100d6!")
    with pytest.raises(BadExpression, match="7800 draws"):
        parse("100d6rr<6")
    # how long a chain may be: a d10 may explode on 8 faces of 10, not 9
    assert len(parse("1d10!>2").ranges) == 1 + 63
    with pytest.raises(BadExpression, match="explodes on 9 of 10 faces, too often .* at most 8 of a d10's faces"):
        parse("1d10!>1")
    # rolls, repeats, nesting, length
    assert len(parse(f"{MAX_REPEAT}#d6").tallies(tuple([1] * MAX_REPEAT))) == MAX_REPEAT
    with pytest.raises(BadExpression, match=f"repeats 1 to {MAX_REPEAT} times, not {MAX_REPEAT + 1}"):
        parse(f"{MAX_REPEAT + 1}#d6")
    with pytest.raises(BadExpression, match=f"21 rolls in one line, at most {MAX_ROLLS}"):
        parse("20#d6, d6")
    parse("(" * MAX_NESTING + "1d6" + ")" * MAX_NESTING)
    with pytest.raises(BadExpression, match=f"nested more than {MAX_NESTING} deep"):
        parse("(" * (MAX_NESTING + 1) + "1d6" + ")" * (MAX_NESTING + 1))
    with pytest.raises(BadExpression, match=f"at most {MAX_TEXT}"):
        parse("1d6" + " " * MAX_TEXT)
    with pytest.raises(BadExpression, match=f"characters written out, at most {MAX_LENGTH}"):
        parse("+".join(["1d6"] * 17))  # 67 characters: more than a move's text holds on the wire
    with pytest.raises(BadExpression, match="a label is at most 32 printable characters"):
        parse("1d6 [" + "x" * 33 + "]")
    with pytest.raises(BadExpression, match="printable"):
        parse("1d6 [a\x1bc]")  # no terminal escapes in a label
