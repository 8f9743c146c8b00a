"""A die drawn with pips, its colour letter and value, in a cell that can carry a cursor and a mark.

Nothing depends on colour alone (ARCHITECTURE.md, tui): each die shows its colour letter (W/P/O) in
the top-left corner and its value in the bottom-left, and every mark has a word in the caption.
Colours live in app.tcss through the component classes below.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.containers import Grid
from textual.strip import Strip
from textual.widget import Widget

# Pip positions (row, column) on a 3 × 3 grid for each face.
PIPS = {
    1: {(1, 1)},
    2: {(0, 2), (2, 0)},
    3: {(0, 2), (1, 1), (2, 0)},
    4: {(0, 0), (0, 2), (2, 0), (2, 2)},
    5: {(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)},
    6: {(0, 0), (1, 0), (2, 0), (0, 2), (1, 2), (2, 2)},
}
COLOUR_CLASS = {"W": "die--white", "P": "die--purple", "O": "die--orange"}

# Marks a cell can carry, each with the caption that says it in words.
MARKS = ("last", "target", "indicated", "swapped", "line", "chosen")


def face_rows(face: str) -> list[str]:
    """The three 7-character rows of a die `face` like "W5": letter, pips, value."""
    letter, value = face[0], int(face[1])
    pips = PIPS[value]
    rows = []
    for r in range(3):
        lead = letter if r == 0 else str(value) if r == 2 else " "
        cells = " ".join("●" if (r, c) in pips else " " for c in range(3))
        rows.append(f"{lead} {cells}")
    return rows


DIE_STYLES = {
    "die--white",
    "die--purple",
    "die--orange",
    "die--empty",
    "cell--cursor",
    "cell--caption",
    *(f"cell--{mark}" for mark in MARKS),
}


class DiceArea(Grid):
    """A grid of DieCells that holds their styles: one set of component classes per area, not
    per die, which keeps opening a table fast (styles are resolved 2 times instead of 24)."""

    COMPONENT_CLASSES = DIE_STYLES


class DieCell(Widget):
    """One square of the board or one place in the pool: 9 × 4 cells, the last row a caption.

    Its colours come from the component classes of the DiceArea it sits in (see app.tcss).
    """

    face: reactive[str] = reactive("")
    cursor: reactive[bool] = reactive(False)
    mark: reactive[str] = reactive("")
    caption: reactive[str] = reactive("")

    class Pressed(Message):
        """The cell was clicked."""

        def __init__(self, cell: "DieCell") -> None:
            super().__init__()
            self.cell = cell

        @property
        def control(self) -> "DieCell":
            return self.cell

    def __init__(self, name_on_empty: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.name_on_empty = name_on_empty  # a board square shows its name while empty
        self._strips: tuple[tuple, list[Strip]] = ((), [])  # (what they show, the rows drawn)

    def show(self, face: str, cursor: bool = False, mark: str = "", caption: str = "") -> None:
        self.face, self.cursor, self.mark, self.caption = face, cursor, mark, caption

    def _style(self, name: str) -> Style:
        return self.parent.get_component_rich_style(name, partial=True)

    def rows(self, style: Style) -> list[list[tuple[str, Style]]]:
        """The cell's four rows as (text, style) pieces on the cell's own `style`: three rows of the
        die (or the empty square) between their edges, then the caption."""
        body_style = style
        if self.face:
            rows = face_rows(self.face)
            body_style = style + self._style(COLOUR_CLASS[self.face[0]])
        elif self.name_on_empty:
            rows = ["       ", f"  {self.name_on_empty:<5}", "       "]
            body_style = style + self._style("die--empty")
        else:
            rows = ["       "] * 3
        edge = style
        if self.mark:
            edge = style + self._style(f"cell--{self.mark}")
        if self.cursor:
            edge = style + self._style("cell--cursor")
            margins = (("┌", "┐"), ("▶", "◀"), ("└", "┘"))
        elif self.mark:
            margins = (("▕", "▏"),) * 3
        else:
            margins = ((" ", " "),) * 3
        drawn = [[(left, edge), (row, body_style), (right, edge)] for (left, right), row in zip(margins, rows)]
        caption_style = style + self._style("cell--caption")
        if self.mark:
            caption_style = caption_style + self._style(f"cell--{self.mark}")
        drawn.append([(f"{self.caption:^9.9}", caption_style if self.caption else style)])
        return drawn

    def render(self) -> Text:
        """The cell as text (what `render_line` draws)."""
        return Text("\n").join(Text.assemble(*row) for row in self.rows(self.rich_style))

    def render_line(self, y: int) -> Strip:
        """A row of the cell, drawn straight from its pieces (Textual's line API): Textual's way to
        draw a text measures, wraps and aligns it, and did so for 24 dice in the table's first frame
        (a fifth of it) for rows that always fit the cell as they are."""
        style, width = self.rich_style, self.size.width
        key = (self.face, self.cursor, self.mark, self.caption, style, width)
        if self._strips[0] != key:
            self._strips = (key, [Strip([Segment(text, part) for text, part in row]).adjust_cell_length(width, style)
                                  .apply_offsets(0, n) for n, row in enumerate(self.rows(style))])  # offsets: text selection
        strips = self._strips[1]
        return strips[y] if y < len(strips) else Strip.blank(width, style)

    def on_click(self) -> None:
        self.post_message(self.Pressed(self))
