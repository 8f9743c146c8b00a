"""Words for people that name seats: a `Phrase` keeps each seat it names as a `Seat`, not as text.

Every layer that says something about a seat (the games' describe hooks, chance labels and
results, the replica's log notes, a table's events) builds a Phrase. A Phrase is its plain words,
`seat 1` (or `seat 1 (bob)` when the log gave the seat a name), for transcripts, `verify` and the
command line; `words(names)` draws it with the names a screen shows. So the app never reads seats
out of words; only what can only be text (a file, a peer's words, a free-text reason) is read, once,
by `Phrase.read`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

# `seat N` or `seat N (name)`, as `Seat` writes it: only `Phrase.read` looks for it
_WRITTEN_SEAT = re.compile(r"\bseat (\d+)\b(?: \(([^)]+)\))?")


@dataclass(frozen=True)
class Seat:
    """A seat named in a sentence; `name`, what plain words add after its number: the name the log
    knows it by, or its side in the game (`seat 0 (white)`); a screen shows its own names instead."""

    number: int
    name: str = ""

    def __str__(self) -> str:
        return f"seat {self.number} ({self.name})" if self.name else f"seat {self.number}"


class Phrase(str):
    """Plain words (a `str`: `seat 1`, `seat 1 (bob)`) that keep each seat they name as a `Seat` in
    `parts`, so that a screen can draw them with names. Parts are kept merged (no empty words, no two
    words side by side); phrases compare as their words."""

    parts: tuple[str | Seat, ...]

    def __new__(cls, parts: Iterable[str | Seat] = ()) -> "Phrase":
        merged: list[str | Seat] = []
        for part in parts:
            if isinstance(part, str) and merged and isinstance(merged[-1], str):
                merged[-1] = str(merged[-1]) + part
            elif part != "":
                merged.append(part if isinstance(part, Seat) else str(part))
        self = super().__new__(cls, "".join(str(part) for part in merged))
        self.parts = tuple(merged)
        return self

    @classmethod
    def read(cls, text: str) -> "Phrase":
        """Words that can only be text, their seats read as `Seat` writes them (the words stay `text`):
        what comes back from a file or another peer (a transcript's result, a claim's reason, a host's
        refusal) and a refusal's free-text reason (net/refusals.py). Words made about seats elsewhere
        are built as phrases."""
        parts: list[str | Seat] = []
        at = 0
        for found in _WRITTEN_SEAT.finditer(text):
            parts += [text[at:found.start()], Seat(int(found.group(1)), found.group(2) or "")]
            at = found.end()
        return cls((*parts, text[at:]))

    def words(self, names: Sequence[str]) -> str:
        """The phrase drawn with the seats' names (a seat without a name there stays `seat N`)."""
        return "".join(part if isinstance(part, str) else seat_name(part.number, names) for part in self.parts)

    def __add__(self, other: "Phrase | Seat | str") -> "Phrase":
        return phrase(self, other)

    def __radd__(self, other: str) -> "Phrase":
        return phrase(other, self)

    def __repr__(self) -> str:
        return f"Phrase({self.parts!r})"


def phrase(*parts: "Phrase | Seat | str") -> Phrase:
    """One phrase from words, seats and phrases, in order."""
    return Phrase(p for part in parts for p in (part.parts if isinstance(part, Phrase) else (part,)))


def listing(items: Iterable["Phrase | Seat | str"], sep: str = ", ") -> Phrase:
    """Items one after another with `sep` between them: `seat 1, seat 2`."""
    out: list[Phrase | Seat | str] = []
    for item in items:
        out += [sep, item] if out else [item]
    return phrase(*out)


def seat_name(seat: int, names: Sequence[str]) -> str:
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"
