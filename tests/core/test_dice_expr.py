"""Dice expressions of the dice room (core/dice_expr.py): reading, faces, keeping, totals, errors."""

from __future__ import annotations

import pytest

from dicetable.core.dice_expr import BadExpression, DiceExpr, parse


@pytest.mark.parametrize(
    "text, expr",
    [
        ("d20", DiceExpr(1, 20)),
        ("3d6", DiceExpr(3, 6)),
        ("2d10+4", DiceExpr(2, 10, modifier=4)),
        ("4d6kh3", DiceExpr(4, 6, "h", 3)),
        ("2d20kl1-1", DiceExpr(2, 20, "l", 1, -1)),
        ("4dF", DiceExpr(4, 0)),
        (" 3 D 6 + 2 ", DiceExpr(3, 6, modifier=2)),
    ],
)
def test_reads_the_forms_of_the_issue(text, expr):
    assert parse(text) == expr
    assert parse(str(expr)) == expr  # the canonical text reads back the same


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
        ("4d6kh", "say how many dice to keep"),
        ("4d6k3", "kh (highest) or kl (lowest)"),
        ("3d6+", "a number must follow '+'"),
        ("3d6*2", "cannot read '*2'"),
        ("d6+1000001", "modifier must be at most"),
    ],
)
def test_malformed_expressions_say_what_is_wrong(text, says):
    with pytest.raises(BadExpression) as error:
        parse(text)
    message = str(error.value)
    assert says in message
    assert "\n" not in message
