"""Dice expressions of the dice room: `d20`, `4d6kh3`, `1d20+5 [attack]`, `2d6r1`, `3d6!`, `10d10>=8`,
`(1d8+2)*2`, `8d6, 4d6kh3`, `6#4d6kh3` — Foundry VTT's and Roll20's notation, read by hand.

    line      = roll { "," roll } ;
    roll      = [ repeat "#" ] sum [ label ] ;              (a label ending a roll names the roll)
    sum       = product { ( "+" | "-" ) product } ;
    product   = unary { ( "*" | "/" ) unary } ;             ("/" divides by a constant, rounding down)
    unary     = { "+" | "-" } atom ;
    atom      = number [ label ] | dice [ label ] | "(" sum ")" ;
    dice      = [ count ] "d" ( sides | "%" | "F" ) { modifier } ;
    modifier  = ( "r" | "ro" | "rr" ) [ condition ]         (reroll once / once / again and again;
                                                             alone: the lowest face)
              | ( "!" | "x" | "xo" ) [ condition ]          (explode again and again / once;
                                                             alone: the highest face)
              | ( "k" | "kh" | "kl" | "d" | "dh" | "dl" ) [ number ]   (keep / drop; k = kh, d = dl, 1)
              | [ "cs" ] compare                            (count successes instead of adding)
              | "f" condition ;                             (minus one per failure)
    condition = compare | number ;                          (a bare number means "=")
    compare   = ( "=" | "<" | ">" | "<=" | ">=" ) [ "-" ] number ;
    label     = "[" printable text without brackets "]" ;

Spaces are allowed anywhere outside labels and letters may be of either case; `d%` is a d100 and
`dF` a Fudge die (-1, 0, +1). A modifier's letters run to the next non-letter, as in Foundry, so each
modifier keeps its number: `4d6r1kh3`, not `4d6rkh3`. Each kind of modifier appears once per dice
term and they apply in one order, whatever order they were written in: rerolls, explosions (each
adds a die, itself not rerolled), keep/drop (over every die left, explosion dice included),
successes/failures. After `!`, a comparison is the explosion's (`10d10!>=8` explodes on 8+);
`10d10!cs>=8` counts successes. Comparisons are strict (`r<3` rerolls 1 and 2), as in Foundry.
`/` divides by a constant other than 0 and rounds down (toward minus infinity: -7/2 = -4).

A roll is one fair event: `ranges` (one uniform integer per entry, core/game.py Chance) follows from
the text alone. The line's rolls, each repeat and each dice term in the order written, take
consecutive draws; each die of a term takes `Dice.draws` of them (core/dice_terms.py says how it
reads them). Caps keep a roll small: MAX_DICE per term, MAX_SIDES, MAX_CHAIN draws per chain,
MAX_DRAWS per line, MAX_ROLLS per line, MAX_NESTING brackets, MAX_TEXT characters typed and
MAX_LENGTH written out. A bad expression raises BadExpression: one sentence, naming where.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from dicetable.core.dice_notation import MAX_LABEL, MAX_NESTING, MAX_REPEAT, read
from dicetable.core.dice_terms import FUDGE, MAX_CHAIN, MAX_DICE, MAX_NUMBER, MAX_SIDES, BadExpression, Formula, Tally

__all__ = [
    "BadExpression", "DiceExpr", "FUDGE", "MAX_CHAIN", "MAX_DICE", "MAX_DRAWS", "MAX_LABEL", "MAX_LENGTH", "MAX_NESTING",
    "MAX_NUMBER", "MAX_REPEAT", "MAX_ROLLS", "MAX_SIDES", "MAX_TEXT", "Tally", "parse",
]

MAX_DRAWS = 1000  # values one roll asks of chance, reserved rerolls and explosions included
MAX_ROLLS = 20  # rolls in one line, repeats counted
MAX_TEXT = 200  # characters typed
MAX_LENGTH = 64  # characters written out: a move's text argument on the wire holds 64 (net/log/wire.py)


@dataclass(frozen=True, slots=True)
class DiceExpr:
    """A line of rolls. Faces come one per entry of `ranges`: `faces(values)` turns chance's values
    into them, and every other question is answered from those faces."""

    formulas: tuple[Formula, ...]

    @property
    def sizes(self) -> tuple[int, ...]:
        """The die size (FUDGE for Fudge dice) of each draw, in draw order."""
        return tuple(
            term.sides
            for formula in self.formulas
            for _ in range(formula.repeat)
            for term in formula.term.dice_terms()
            for _ in range(term.count * term.draws)
        )

    @property
    def ranges(self) -> tuple[int, ...]:
        """One chance range per draw: the die's sides (3 for a Fudge die)."""
        return tuple(3 if sides == FUDGE else sides for sides in self.sizes)

    def faces(self, values: tuple[int, ...] | list[int]) -> tuple[int, ...]:
        """The face of each draw for chance values (each in range of its draw)."""
        sizes = self.sizes
        if len(values) != len(sizes):
            dice = sum(t.count for f in self.formulas for t in f.term.dice_terms() for _ in range(f.repeat))
            what = "dice" if dice == len(sizes) else "draws"
            raise BadExpression(f"{self}: {len(values)} values for {len(sizes)} {what}")
        return tuple(v - 1 if sides == FUDGE else v + 1 for v, sides in zip(values, sizes))

    def tallies(self, faces: tuple[int, ...]) -> tuple[Tally, ...]:
        """Each roll of the line (a repeated roll once per repeat), rolled from `faces`."""
        tallies, at = [], 0
        for formula in self.formulas:
            for _ in range(formula.repeat):
                tallies.append(formula.roll(tuple(faces[at:at + formula.draws])))
                at += formula.draws
        return tuple(tallies)

    def totals(self, faces: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(t.total for t in self.tallies(faces))

    def total(self, faces: tuple[int, ...]) -> int:
        """The roll's total; for a line of several rolls, their sum (`totals` gives each)."""
        return sum(self.totals(faces))

    def dice(self, faces: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """(sides, face) of every die rolled, kept, dropped or rerolled alike (draws left unread are
        not dice): what a count of faces per die size is made of."""
        return tuple((d.sides, d.face) for t in self.tallies(faces) for d in t.dice)

    def kept_faces(self, faces: tuple[int, ...]) -> tuple[int, ...]:
        """The faces of the dice that count (not dropped, not rerolled), in the order rolled."""
        return tuple(d.face for t in self.tallies(faces) for d in t.dice if d.counted)

    def describe(self, faces: tuple[int, ...]) -> str:
        """`<total> [<dice>]` per roll, dropped dice in parentheses: `13 [6 4 3 (1)]`; several rolls
        joined by commas; marks in core/dice_terms.py's Die.text."""
        return ", ".join(t.text() for t in self.tallies(faces))

    def __str__(self) -> str:
        return ", ".join(f.text() for f in self.formulas)


def parse(text: str) -> DiceExpr:
    """Read a dice expression; raise BadExpression naming what is wrong and where."""
    if not isinstance(text, str) or not text.strip():
        raise BadExpression("an empty dice expression: write something like d20, 3d6 or 2d10+4")
    if len(text) > MAX_TEXT:
        raise BadExpression(f"a dice expression of {len(text)} characters: at most {MAX_TEXT}")
    return _parse(text)


@lru_cache(maxsize=256)  # a room asks for its expression's chance on every frame; DiceExpr is frozen
def _parse(text: str) -> DiceExpr:
    shown = text.strip()
    expr = DiceExpr(read(text))
    rolls = sum(f.repeat for f in expr.formulas)
    if rolls > MAX_ROLLS:
        raise BadExpression(f"{shown!r}: {rolls} rolls in one line, at most {MAX_ROLLS}")
    draws = sum(f.draws * f.repeat for f in expr.formulas)
    if draws > MAX_DRAWS:
        terms = [t for f in expr.formulas for t in f.term.dice_terms()]
        big = max(terms, key=lambda t: t.count * t.draws)
        raise BadExpression(
            f"{shown!r}: {draws} draws of the dice, at most {MAX_DRAWS}"
            f" ({big.text()} takes {big.count * big.draws}: a die reserves draws for its rerolls and explosions)"
        )
    written = str(expr)
    if len(written) > MAX_LENGTH:
        raise BadExpression(f"{shown!r}: {len(written)} characters written out, at most {MAX_LENGTH}: roll it in two lines")
    return expr
