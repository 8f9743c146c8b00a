"""What the seat at the keyboard may do in a Tricolor Line position, square by square: the legal moves
of core/tricolor.py sorted the way the table screen (tui/screens/tricolor_screen.py) asks for them.

No Textual here: the screen makes a `TricolorChoices` from its state, cursor pile and turn, and the
tests (tests/tui/test_tricolor_model.py) check it without starting the app. Rules:
../shared/rules/tricolor-line.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

from dicetable.core.game import Move
from dicetable.core.phrase import Phrase
from dicetable.core.tricolor import ACT, EVENT, PLAN, SETUP, parse_pos, pos_text
from dicetable.core.tricolor_tiles import PILES, distinct_rotations
from dicetable.tui.tables.view import Decided, LogEntry

Pos = tuple[int, int]
EVENT_DRAW = Phrase(("draw an event card",))  # the label of core/tricolor.py's chance that draws one


@dataclass(frozen=True)
class TricolorChoices:
    """The moves open to the keyboard's seat, by square, pile and rotation."""

    seen: Any  # the TricolorState as that seat may see it
    acting: bool  # that seat is due and holds the keyboard
    pile: int = 1  # the pile whose top tile is being placed
    turned: int = 0  # an index into that tile's distinct rotations (counts up with each turn key)

    @cached_property
    def legal(self) -> tuple[Move, ...]:
        return self.seen.legal_moves() if self.acting else ()

    def placing(self) -> bool:
        """A pile's top tile is to be placed: setup, route planning, or the Survey event."""
        s = self.seen
        return self.acting and (s.phase in (SETUP, PLAN) or (s.phase == EVENT and s.event == "survey"))

    def place_moves(self) -> list[Move]:
        return [m for m in self.legal if m.kind in ("place", "survey")]

    def piles(self) -> list[int]:
        """The piles a tile may be placed from now."""
        return sorted({m.args[0] for m in self.place_moves()})

    def rotations(self) -> tuple[int, ...]:
        tile = self.seen.tops[self.pile - 1] if self.pile in range(1, PILES + 1) else -1
        return distinct_rotations(tile) if tile != -1 else (0,)

    def rotation(self) -> int:
        turns = self.rotations()
        return turns[self.turned % len(turns)]

    def free_cells(self) -> set[Pos]:
        """Where the chosen pile's top tile may go."""
        return {parse_pos(m.args[1]) for m in self.place_moves() if m.args[0] == self.pile}

    def placement(self, pos: Pos) -> Move | None:
        """The move placing the chosen pile's top tile, turned, on `pos`; None when `pos` is not free."""
        if not self.placing() or pos not in self.free_cells():
            return None
        kind = "survey" if self.seen.phase == EVENT else "place"
        return Move(kind, (self.pile, pos_text(pos), self.rotation()))

    def moves_at(self, pos: Pos, kind: str | None = None) -> list[Move]:
        """The legal moves on the tile at `pos` (of `kind`, or any)."""
        here = pos_text(pos)
        return [m for m in self.legal if (kind is None or m.kind == kind) and m.args and m.args[0] == here]

    def moves_of(self, kind: str) -> list[Move]:
        return [m for m in self.legal if m.kind == kind]

    def targets(self) -> set[Pos]:
        """Squares where acting does something now: free squares, event targets, payable blueprints."""
        if not self.acting:
            return set()
        s = self.seen
        if self.placing():
            return self.free_cells()
        if s.phase == EVENT:
            return {parse_pos(m.args[0]) for m in self.legal}
        if s.phase == ACT:
            return {parse_pos(m.args[0]) for m in self.moves_of("construct")}
        return set()


def event_drawn(entries: Sequence[LogEntry]) -> bool:
    """One of these move log entries is an event card drawn."""
    return any(isinstance(entry, Decided) and entry.label == EVENT_DRAW for entry in entries)
