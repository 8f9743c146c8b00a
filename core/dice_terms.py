"""The terms of a dice expression and how each one rolls from chance's faces.

The grammar and its reader are in core/dice_notation.py; core/dice_expr.py is the face the dice room
uses. A roll is one fair event whose chance ranges follow from the text alone (FAIRNESS.md §1), so
every die of a `Dice` term reserves a fixed block of draws (`Dice.draws`): 1 for its first roll,
then its reroll chain's `reserved`, then its explosion chain's. A die reads its block from the
start, one face per draw whatever the draw is for — its first face, each reroll's, then each die its
explosions add (those are not rerolled) — and leaves the rest unread. A recursive chain reserves
enough draws that running out has a chance of at most 2**-CUT_BITS (`chain_length`); if it does
run out, the last face drawn stands. A once-only chain reserves 1 (0 if no face can start it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

FUDGE = 0  # the sides of a Fudge die (faces -1, 0, +1) wherever a die's size is a number

MAX_DICE = 100  # dice in one term
MAX_SIDES = 1000
MAX_NUMBER = 100_000  # a number written in an expression
MAX_CHAIN = 100  # draws a recursive reroll or explosion may reserve per die
CUT_BITS = 20  # a chain is cut short with a chance of at most 2**-20 (about one in a million)

_FUDGE_TEXT = {-1: "-", 0: "0", 1: "+"}


class BadExpression(ValueError):
    """A dice expression that cannot be rolled; the message names what is wrong."""


def die_faces(sides: int) -> range:
    return range(-1, 2) if sides == FUDGE else range(1, sides + 1)


def chain_length(matching: int, sides: int) -> int | None:
    """Draws to reserve for a chain that goes on with chance `matching`/`sides` at each step: the
    fewest k with (matching/sides)**k <= 2**-CUT_BITS, in whole numbers so every implementation
    agrees; None when that is more than MAX_CHAIN."""
    if matching == 0:
        return 0
    for k in range(1, MAX_CHAIN + 1):
        if matching**k << CUT_BITS <= sides**k:
            return k
    return None


@dataclass(frozen=True, slots=True)
class Condition:
    op: str  # "=", "<", ">", "<=" or ">="
    value: int

    def holds(self, face: int) -> bool:
        v = self.value
        return {"=": face == v, "<": face < v, ">": face > v, "<=": face <= v, ">=": face >= v}[self.op]

    def matching(self, sides: int) -> int:
        return sum(1 for face in die_faces(sides) if self.holds(face))

    def text(self, bare: bool = True) -> str:
        """`5` for "= 5" where a bare number means equality (after r, !, f), else `>=5`."""
        if bare and self.op == "=" and self.value >= 0:
            return str(self.value)
        return f"{self.op}{self.value}"


@dataclass(frozen=True, slots=True)
class Chain:
    """A reroll or an explosion: the die draws again while `condition` holds."""

    condition: Condition
    recursive: bool  # rr / ! : again and again; r / xo : once
    reserved: int  # draws reserved per die for this chain (1 for once)


@dataclass(frozen=True, slots=True)
class Die:
    """One face drawn, and what became of it."""

    sides: int
    face: int
    rerolled: bool = False  # replaced by a reroll: never counted
    exploded: bool = False  # added the die after it
    dropped: bool = False  # not kept
    success: bool = False
    failure: bool = False

    @property
    def counted(self) -> bool:
        return not self.rerolled and not self.dropped

    def text(self) -> str:
        """`6`, `6!` exploded, `9*` a success, `1f` a failure, `(1)` dropped, `~1~` rerolled."""
        text = _FUDGE_TEXT[self.face] if self.sides == FUDGE else str(self.face)
        text += "!" * self.exploded + "*" * self.success + "f" * self.failure
        if self.rerolled:
            return f"~{text}~"
        return f"({text})" if self.dropped else text


class Tray:
    """The faces of one roll (one per reserved draw) as the terms read them, left to right."""

    def __init__(self, faces: tuple[int, ...]) -> None:
        self.faces, self.at = faces, 0
        self.groups: list[tuple[str, tuple[Die, ...]]] = []  # each dice term's dice and label

    def take(self, n: int) -> tuple[int, ...]:
        block = self.faces[self.at:self.at + n]
        self.at += n
        return block


@dataclass(frozen=True, slots=True)
class Dice:
    """`NdS` with its modifiers, applied in this order whatever order they were written in:
    rerolls, explosions, keep/drop, successes and failures."""

    count: int
    sides: int
    reroll: Chain | None = None
    explode: Chain | None = None
    keep: str = ""  # "kh", "kl", "dh", "dl" or "" (all count)
    kept: int = 0  # how many dice `keep` keeps or drops
    success: Condition | None = None  # the term counts successes instead of adding faces
    failure: Condition | None = None  # ...minus failures
    label: str = ""

    @property
    def draws(self) -> int:
        """Draws reserved for each die."""
        return 1 + sum(chain.reserved for chain in (self.reroll, self.explode) if chain is not None)

    def dice_terms(self):
        yield self

    def constant(self) -> int | None:
        return None

    def total(self, tray: Tray) -> int:
        dice = self.roll(tray.take(self.count * self.draws))
        tray.groups.append((self.label, dice))
        if self.success is not None:
            return sum(d.success for d in dice if d.counted) - sum(d.failure for d in dice if d.counted)
        return sum(d.face for d in dice if d.counted)

    def roll(self, faces: tuple[int, ...]) -> tuple[Die, ...]:
        dice: list[Die] = []
        for n in range(self.count):
            dice += self._one(faces[n * self.draws:(n + 1) * self.draws])
        dice = self._kept(dice)
        if self.success is None:
            return tuple(dice)
        return tuple(
            Die(d.sides, d.face, d.rerolled, d.exploded, d.dropped,
                success=d.counted and self.success.holds(d.face),
                failure=d.counted and self.failure is not None and self.failure.holds(d.face))
            for d in dice
        )

    def _one(self, block: tuple[int, ...]) -> list[Die]:
        """One die from its block: its first face, its rerolls, then the dice it explodes into."""
        out, face, at = [], block[0], 1
        for chain, mark in ((self.reroll, "rerolled"), (self.explode, "exploded")):
            left = chain.reserved if chain is not None else 0
            while left and chain.condition.holds(face):
                out.append(Die(self.sides, face, **{mark: True}))
                face, at, left = block[at], at + 1, left - 1
        out.append(Die(self.sides, face))
        return out

    def _kept(self, dice: list[Die]) -> list[Die]:
        """Mark the dice `keep` leaves out; among equal faces the earlier die is kept."""
        if not self.keep:
            return dice
        rolled = [i for i, d in enumerate(dice) if not d.rerolled]
        keep = self.kept if self.keep.startswith("k") else len(rolled) - self.kept  # drop n lowest = keep the rest highest
        low = self.keep in ("kl", "dh")
        order = sorted(rolled, key=lambda i: (dice[i].face if low else -dice[i].face, i))
        kept = set(order[:keep])
        return [Die(d.sides, d.face, d.rerolled, d.exploded, dropped=not d.rerolled and i not in kept)
                for i, d in enumerate(dice)]

    def text(self) -> str:
        text = f"{self.count}d{'F' if self.sides == FUDGE else self.sides}"
        if self.reroll is not None:
            text += ("rr" if self.reroll.recursive else "r") + self.reroll.condition.text()
        bare_explode = False  # a lone "!": its default, the highest face
        if self.explode is not None:
            bare_explode = self.explode.recursive and self.explode.condition == default_explosion(self.sides)
            text += "!" if self.explode.recursive else "xo"  # "xo" keeps its number: "xokh1" would be one word
            text += "" if bare_explode else self.explode.condition.text()
        if self.keep:
            text += f"{self.keep}{self.kept}"
        if self.success is not None:
            # `10d10!>=8` would read as "explode on 8 or more": `cs` says the count follows.
            text += ("cs" if bare_explode and not self.keep else "") + self.success.text(bare=False)
        if self.failure is not None:
            text += "f" + self.failure.text()
        return text + (f"[{self.label}]" if self.label else "")


def default_explosion(sides: int) -> Condition:
    """`!` alone explodes on the highest face."""
    return Condition("=", 1 if sides == FUDGE else sides)


def default_reroll(sides: int) -> Condition:
    """`r` alone rerolls the lowest face."""
    return Condition("=", -1 if sides == FUDGE else 1)


@dataclass(frozen=True, slots=True)
class Number:
    value: int
    label: str = ""

    def dice_terms(self):
        return iter(())

    def constant(self) -> int | None:
        return self.value

    def total(self, tray: Tray) -> int:
        return self.value

    def text(self) -> str:
        return str(self.value) + (f"[{self.label}]" if self.label else "")


@dataclass(frozen=True, slots=True)
class Group:
    """A bracketed part, `(1d8+2)`."""

    inner: "Term"

    def dice_terms(self):
        return self.inner.dice_terms()

    def constant(self) -> int | None:
        return self.inner.constant()

    def total(self, tray: Tray) -> int:
        return self.inner.total(tray)

    def text(self) -> str:
        return f"({self.inner.text()})"


@dataclass(frozen=True, slots=True)
class Negative:
    inner: "Term"

    def dice_terms(self):
        return self.inner.dice_terms()

    def constant(self) -> int | None:
        value = self.inner.constant()
        return None if value is None else -value

    def total(self, tray: Tray) -> int:
        return -self.inner.total(tray)

    def text(self) -> str:
        return f"-{self.inner.text()}"


def _divide(a: int, b: int) -> int:
    return a // b  # rounds down, toward minus infinity: 7/2 = 3, -7/2 = -4 (D&D's "round down")


_OPERATIONS = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__, "/": _divide}


@dataclass(frozen=True, slots=True)
class Operation:
    op: str  # + - * /  (the reader refuses a divisor that is not a constant other than 0)
    left: "Term"
    right: "Term"

    def dice_terms(self):
        yield from self.left.dice_terms()
        yield from self.right.dice_terms()

    def constant(self) -> int | None:
        left, right = self.left.constant(), self.right.constant()
        return None if left is None or right is None else _OPERATIONS[self.op](left, right)

    def total(self, tray: Tray) -> int:
        left = self.left.total(tray)  # left first: the dice read the tray in the order written
        return _OPERATIONS[self.op](left, self.right.total(tray))

    def text(self) -> str:
        return f"{self.left.text()}{self.op}{self.right.text()}"


Term = Union[Dice, Number, Group, Negative, Operation]


@dataclass(frozen=True, slots=True)
class Tally:
    """One roll of a line, rolled: its label, total and dice (each dice term's dice and label)."""

    label: str
    total: int
    groups: tuple[tuple[str, tuple[Die, ...]], ...]

    @property
    def dice(self) -> tuple[Die, ...]:
        return tuple(d for _, dice in self.groups for d in dice)

    def dice_text(self) -> str:
        """`[6 4 3 (1)]`; labelled dice terms `[3 4] fire [5] cold`."""
        return " ".join(f"[{' '.join(d.text() for d in dice)}]" + (f" {label}" if label else "")
                        for label, dice in self.groups)

    def text(self) -> str:
        """`13 [6 4 3 (1)]`; a labelled roll `attack: 17 [12]`."""
        return (f"{self.label}: " if self.label else "") + f"{self.total} {self.dice_text()}"


@dataclass(frozen=True, slots=True)
class Formula:
    """One roll of a line (the parts between commas): `[N#] term [label]`."""

    term: Term
    label: str = ""
    repeat: int = 1  # `6#4d6kh3`: rolled six times, six totals

    @property
    def draws(self) -> int:
        return sum(d.count * d.draws for d in self.term.dice_terms())

    def roll(self, faces: tuple[int, ...]) -> Tally:
        """The roll from exactly `self.draws` faces."""
        tray = Tray(faces)
        total = self.term.total(tray)
        return Tally(self.label, total, tuple(tray.groups))

    def text(self) -> str:
        repeat = f"{self.repeat}#" if self.repeat != 1 else ""
        return repeat + self.term.text() + (f" [{self.label}]" if self.label else "")
