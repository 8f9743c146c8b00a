"""Dice expressions of the dice room: `d20`, `3d6`, `2d10+4`, `4d6kh3`, `4dF`, `2d20kl1-1`.

    expr   := [count] "d" sides [keep] [modifier]
    count  := 1..100 (default 1)
    sides  := 2..1000 | "F" (Fudge die: -1, 0, +1)
    keep   := "kh" n | "kl" n   (keep the n highest / lowest, 1 <= n <= count)
    modifier := ("+" | "-") 0..100000

A roll asks chance for one uniform integer per die (a core Chance with `ranges`), so a dice room
roll is fair and verifiable exactly like a game's roll. Malformed text raises BadExpression with
one sentence naming what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MAX_DICE = 100
MAX_SIDES = 1000
MAX_MODIFIER = 100_000

_SHAPE = re.compile(
    r"(?P<count>\d*)d(?P<sides>\d+|f)(?:k(?P<keep>[hl])(?P<kept>\d*))?(?:(?P<sign>[+-])(?P<mod>\d*))?"
)


class BadExpression(ValueError):
    """A dice expression that cannot be rolled; the message names what is wrong."""


@dataclass(frozen=True, slots=True)
class DiceExpr:
    count: int
    sides: int  # 0 for Fudge dice
    keep: str = ""  # "h", "l" or "" (keep all)
    kept: int = 0
    modifier: int = 0

    @property
    def fudge(self) -> bool:
        return self.sides == 0

    @property
    def ranges(self) -> tuple[int, ...]:
        """One chance range per die."""
        return (3 if self.fudge else self.sides,) * self.count

    def faces(self, values: tuple[int, ...] | list[int]) -> tuple[int, ...]:
        """The faces shown by the dice for chance values (each in range of its die)."""
        if len(values) != self.count:
            raise BadExpression(f"{self}: {len(values)} values for {self.count} dice")
        return tuple(v - 1 if self.fudge else v + 1 for v in values)

    def kept_faces(self, faces: tuple[int, ...]) -> tuple[int, ...]:
        if not self.keep:
            return faces
        ordered = sorted(faces, reverse=self.keep == "h")
        return tuple(ordered[: self.kept])

    def total(self, faces: tuple[int, ...]) -> int:
        return sum(self.kept_faces(faces)) + self.modifier

    def describe(self, faces: tuple[int, ...]) -> str:
        """`<total> [<dice>]`, dropped dice in parentheses: `13 [6 4 3 (1)]`."""
        kept = list(self.kept_faces(faces))
        shown = []
        for face in faces:
            text = _face(face, self.fudge)
            if face in kept:
                kept.remove(face)
                shown.append(text)
            else:
                shown.append(f"({text})")
        return f"{self.total(faces)} [{' '.join(shown)}]"

    def __str__(self) -> str:
        text = f"{self.count}d{'F' if self.fudge else self.sides}"
        if self.keep:
            text += f"k{self.keep}{self.kept}"
        if self.modifier:
            text += f"{self.modifier:+d}"
        return text


def _face(face: int, fudge: bool) -> str:
    if fudge:
        return {-1: "-", 0: "0", 1: "+"}[face]
    return str(face)


def parse(text: str) -> DiceExpr:
    """Read a dice expression; raise BadExpression naming what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise BadExpression("an empty dice expression: write something like d20, 3d6 or 2d10+4")
    return _parse(text)


@lru_cache(maxsize=256)  # a room asks for its expression's chance on every frame; DiceExpr is frozen
def _parse(text: str) -> DiceExpr:
    source = "".join(text.split()).lower()
    match = _SHAPE.fullmatch(source)
    if match is None:
        raise BadExpression(_diagnose(source, text.strip()))
    count = int(match["count"]) if match["count"] else 1
    if not 1 <= count <= MAX_DICE:
        raise BadExpression(f"{text.strip()!r}: the number of dice must be 1 to {MAX_DICE}, not {count}")
    if match["sides"] == "f":
        sides = 0
    else:
        sides = int(match["sides"])
        if not 2 <= sides <= MAX_SIDES:
            raise BadExpression(f"{text.strip()!r}: a die has 2 to {MAX_SIDES} sides, not {sides}")
    keep, kept = match["keep"] or "", 0
    if keep:
        if not match["kept"]:
            raise BadExpression(f"{text.strip()!r}: say how many dice to keep, as in 4d6kh3")
        kept = int(match["kept"])
        if not 1 <= kept <= count:
            raise BadExpression(f"{text.strip()!r}: can keep 1 to {count} of {count} dice, not {kept}")
    modifier = 0
    if match["sign"]:
        if not match["mod"]:
            raise BadExpression(f"{text.strip()!r}: a number must follow {match['sign']!r}")
        modifier = int(match["mod"])
        if modifier > MAX_MODIFIER:
            raise BadExpression(f"{text.strip()!r}: the modifier must be at most {MAX_MODIFIER}")
        if match["sign"] == "-":
            modifier = -modifier
    return DiceExpr(count, sides, keep, kept, modifier)


def _diagnose(source: str, shown: str) -> str:
    """One sentence on why `source` is not a dice expression."""
    if "d" not in source:
        return f"{shown!r}: no 'd' — write the dice as NdS, e.g. 3d6"
    count, _, rest = source.partition("d")
    if count and not count.isdigit():
        return f"{shown!r}: {count!r} before 'd' is not a number of dice"
    sides = re.match(r"\d+|f", rest)
    if not sides:
        return f"{shown!r}: 'd' must be followed by the number of sides or F, e.g. d20 or 4dF"
    tail = rest[sides.end():]
    if tail.startswith("k") and (len(tail) < 2 or tail[1] not in "hl"):
        return f"{shown!r}: keep is written kh (highest) or kl (lowest), e.g. 4d6kh3"
    return f"{shown!r}: cannot read {tail!r} after the dice (allowed: kh N, kl N, +N, -N)"
