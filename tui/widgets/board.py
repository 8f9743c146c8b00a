"""The TRICE board (3 × 4 squares with row and column names) and the pool of dice, each drawn as
one DiceArea (tui/widgets/die.py)."""

from __future__ import annotations

from dicetable.core.trice import COLS, ROWS, SQUARES
from dicetable.tui.widgets.die import CELL_HEIGHT, CELL_WIDTH, DiceArea, DieCell

NAMES_WIDTH = 2  # the row numbers' column left of the squares


class BoardGrid(DiceArea):
    """The board: column letters on top, row numbers on the left, a cell `sq-<name>` each."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        for c in range(COLS):  # each letter centred over its column
            self.names.append((NAMES_WIDTH + c * CELL_WIDTH, 0, f"{'abcd'[c]:^{CELL_WIDTH}}"))
        for r in range(ROWS):  # each number one row down its squares' side, as wide as a number
            top = 1 + r * CELL_HEIGHT
            self.names += [(0, top + n, str(r + 1) if n == 1 else " ") for n in range(1, CELL_HEIGHT)]
            for c in range(COLS):
                name = SQUARES[r * COLS + c]
                self.cells.append(DieCell(self, NAMES_WIDTH + c * CELL_WIDTH, 1 + r * CELL_HEIGHT, name, id=f"sq-{name}"))

    def cell(self, index: int) -> DieCell:
        return self.cells[index]


class PoolTray(DiceArea):
    """The pool: twelve places `pool-<i>` that keep their dice where they were rolled, under its title."""

    SLOTS = 12

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.names.append((0, 0, "Pool"))
        for i in range(self.SLOTS):
            self.cells.append(DieCell(self, (i % 4) * CELL_WIDTH, 1 + (i // 4) * CELL_HEIGHT, id=f"pool-{i}"))

    def cell(self, index: int) -> DieCell:
        return self.cells[index]

    def set_title(self, text: str) -> None:
        text = text[: 4 * CELL_WIDTH]  # within the pool's width
        if self.names[0][2] != text:
            self.names[0] = (0, 0, text)
            self.refresh()
