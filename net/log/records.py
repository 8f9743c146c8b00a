"""What the replica's log holds and what its parts hand back: an accepted frame's `Record`, the random
`Event` a record may decide, and the `Effect` of a frame checked but not yet applied
(net/log/replica.py commits it all at once)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dicetable.core.game import Chance, Move, Outcome
from dicetable.core.phrase import Phrase
from dicetable.net.log import wire


@dataclass(frozen=True)
class Event:
    """Random event `number`: each seat's reveal (None until in), then the seed and outcome."""

    number: int
    label: Phrase
    chance: Chance
    reveals: tuple[bytes | None, ...]
    seed: bytes | None = None
    outcome: Outcome | None = None

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(s for s, r in enumerate(self.reveals) if r is None)


@dataclass(frozen=True)
class Record:
    """One accepted frame at log position `index`, with what it did in words (its seats as seats)."""

    index: int
    envelope: wire.Envelope
    note: Phrase
    move: Move | None = None
    event: Event | None = None  # the event this record completed

    @property
    def frame(self) -> bytes:
        return self.envelope.frame

    @property
    def kind(self) -> str:
        return self.envelope.kind

    @property
    def seat(self) -> int:
        return self.envelope.seat


@dataclass(frozen=True)
class Effect:
    """What a checked frame does, not yet applied: `accept` sets `changes` (fields of the replica and
    of its parts, each by its owner) all at once, then logs the note, the move the frame applied and
    the event it decided."""

    changes: dict
    note: Phrase
    move: Move | None = None
    event: Event | None = None


class LogView(Sequence):
    """A read-only view of the replica's log list."""

    __slots__ = ("_records",)

    def __init__(self, records: list[Record]) -> None:
        self._records = records

    def __getitem__(self, index):
        return self._records[index]

    def __len__(self) -> int:
        return len(self._records)


# The table's phases (PROTOCOL.md §5.1).
NEW, JOINING, READY, PLAYING, OVER = "new", "joining", "ready", "playing", "over"
