"""The TRICE board (3 × 4 squares with row and column names) and the pool of dice."""

from __future__ import annotations

from textual.app import ComposeResult

from dicetable.core.trice import COLS, ROWS, SQUARES
from dicetable.tui.widgets.die import DiceArea, DieCell
from dicetable.tui.widgets.text_line import TextLine


class BoardGrid(DiceArea):
    """The board: column letters on top, row numbers on the left, a DieCell `#sq-<name>` each."""

    def compose(self) -> ComposeResult:
        # The names are TextLines of a fixed size (app.tcss): a Label measures its words and draws
        # three times; eight of them cost the table's first frame about 4%.
        yield TextLine("", classes="corner")
        for c in range(COLS):
            yield TextLine("abcd"[c], classes="col-name")
        for r in range(ROWS):
            yield TextLine(str(r + 1), classes="row-name")
            for c in range(COLS):
                name = SQUARES[r * COLS + c]
                yield DieCell(name, id=f"sq-{name}", classes="square")

    def cell(self, index: int) -> DieCell:
        return self.query_one(f"#sq-{SQUARES[index]}", DieCell)


class PoolTray(DiceArea):
    """The pool: twelve places `#pool-<i>` that keep their dice where they were rolled."""

    SLOTS = 12

    def compose(self) -> ComposeResult:
        yield TextLine("Pool", id="pool-title")
        for i in range(self.SLOTS):
            yield DieCell(id=f"pool-{i}", classes="pool-die")

    def cell(self, index: int) -> DieCell:
        return self.query_one(f"#pool-{index}", DieCell)

    def set_title(self, text: str) -> None:
        self.query_one("#pool-title", TextLine).update(text)
