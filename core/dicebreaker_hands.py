"""Dice Breaker hands: the category of a hand of dice and its points (dicebreaker.md, "End of a
round and scoring").

A hand is any number of faces 1-6. With more than five dice the hand is the best five of them;
because the categories only ask whether some five dice show a pattern, the best category is read
straight from the counts of each face, and `best_five` picks five dice that show it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

# In rank order, lowest first (the rules table, plus "nothing" below one pair).
CATEGORIES = (
    "nothing",
    "one pair",
    "two pairs",
    "three of a kind",
    "straight",
    "full house",
    "four of a kind",
    "five of a kind",
)
RANK = {name: rank for rank, name in enumerate(CATEGORIES)}
FIVE_OF_A_KIND = RANK["five of a kind"]
# Points per category; five of a kind wins the game instead of scoring (None).
POINTS: tuple[int | None, ...] = (0, 1, 2, 3, 4, 5, 6, None)
STRAIGHTS = ((2, 3, 4, 5, 6), (1, 2, 3, 4, 5))  # the higher first, so best_five prefers it


@lru_cache(maxsize=4096)
def _rank_of_sorted(faces: tuple[int, ...]) -> int:
    counts = sorted((faces.count(v) for v in set(faces)), reverse=True)
    top = counts[0] if counts else 0
    second = counts[1] if len(counts) > 1 else 0
    present = set(faces)
    if top >= 5:
        return RANK["five of a kind"]
    if top >= 4:
        return RANK["four of a kind"]
    if top >= 3 and second >= 2:
        return RANK["full house"]
    if any(present.issuperset(s) for s in STRAIGHTS):
        return RANK["straight"]
    if top >= 3:
        return RANK["three of a kind"]
    if top >= 2 and second >= 2:
        return RANK["two pairs"]
    if top >= 2:
        return RANK["one pair"]
    return RANK["nothing"]


def rank(faces: Iterable[int]) -> int:
    """The rank (index into CATEGORIES) of the best five of `faces`."""
    return _rank_of_sorted(tuple(sorted(faces)))


def category(faces: Iterable[int]) -> str:
    """The category name of the best five of `faces`, as the rules table names it."""
    return CATEGORIES[rank(faces)]


def points(faces: Iterable[int]) -> int | None:
    """The points of the hand: 0 below one pair, None for five of a kind (it wins the game)."""
    return POINTS[rank(faces)]


def best_five(faces: Iterable[int]) -> tuple[int, ...]:
    """Five dice of `faces` (all of them when there are five or fewer) showing its best category."""
    faces = sorted(faces, reverse=True)
    if len(faces) <= 5:
        return tuple(faces)
    name = category(faces)
    if name == "straight":
        chosen = next(list(s) for s in STRAIGHTS if set(faces).issuperset(s))
    else:
        # Groups of the category: the largest groups, highest faces first.
        sizes = {
            "five of a kind": (5,),
            "four of a kind": (4,),
            "full house": (3, 2),
            "three of a kind": (3,),
            "two pairs": (2, 2),
            "one pair": (2,),
            "nothing": (),
        }[name]
        chosen, used = [], set()
        for size in sizes:
            value = max(v for v in set(faces) if v not in used and faces.count(v) >= size)
            used.add(value)
            chosen += [value] * size
    rest = list(faces)
    for value in chosen:
        rest.remove(value)
    chosen += rest[: 5 - len(chosen)]  # the highest dice left fill the hand
    return tuple(sorted(chosen, reverse=True))


def parse_hand(text: str) -> tuple[int, ...]:
    """Read a hand written as faces 1-6 separated by spaces or commas, e.g. "3 3 5 5 5 6"."""
    words = text.replace(",", " ").split()
    if not words:
        raise ValueError("a hand is one or more faces 1-6, e.g. \"3 3 5 5 5 6\"")
    for word in words:
        if word not in ("1", "2", "3", "4", "5", "6"):
            raise ValueError(f"{word!r} is not a die face: write faces 1-6 separated by spaces")
    return tuple(int(w) for w in words)
