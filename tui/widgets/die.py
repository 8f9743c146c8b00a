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


# What a cell is on screen: 9 columns by 4 rows (three of the die, one of caption).
CELL_WIDTH, CELL_HEIGHT = 9, 4


class DieCell:
    """One square of the board or one place in the pool, drawn by its DiceArea: 9 × 4 cells, the
    last row a caption. Its colours come from the area's component classes (see app.tcss)."""

    class Pressed(Message):
        """The cell was clicked."""

        def __init__(self, cell: "DieCell") -> None:
            super().__init__()
            self.cell = cell

        @property
        def control(self) -> "DiceArea":
            return self.cell.area

    def __init__(self, area: "DiceArea", x: int, y: int, name_on_empty: str = "", *, id: str) -> None:
        self.area = area
        self.x, self.y = x, y  # its top left corner in the area
        self.id = id
        self.name_on_empty = name_on_empty  # a board square shows its name while empty
        self.face, self.cursor, self.mark, self.caption = "", False, "", ""

    def show(self, face: str, cursor: bool = False, mark: str = "", caption: str = "") -> None:
        if (face, cursor, mark, caption) != (self.face, self.cursor, self.mark, self.caption):
            self.face, self.cursor, self.mark, self.caption = face, cursor, mark, caption
            self.area.refresh()

    def _style(self, name: str) -> Style:
        return self.area.get_component_rich_style(name, partial=True)

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
        """The cell as text, as its area draws it."""
        return Text("\n").join(Text.assemble(*row) for row in self.rows(self.area.cell_style(self)))


class DiceArea(Widget):
    """A grid of dice cells with their names, drawn as one widget (Textual's line API): a widget per
    die and per name was 33 widgets to mount, style, lay out and draw before the table's first
    frame. A subclass places its `cells` and `names` when it is made."""

    COMPONENT_CLASSES = DIE_STYLES | {"area--name", "cell--hover"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cells: list[DieCell] = []
        self.names: list[tuple[int, int, str]] = []  # (x, y, words) in the names' colour
        self.hover: DieCell | None = None  # the cell under the mouse, on a lighter ground

    def cell_by_id(self, cell_id: str) -> DieCell | None:
        return next((cell for cell in self.cells if cell.id == cell_id), None)

    def cell_at(self, x: int, y: int) -> DieCell | None:
        return next((cell for cell in self.cells
                     if cell.x <= x < cell.x + CELL_WIDTH and cell.y <= y < cell.y + CELL_HEIGHT), None)

    def cell_style(self, cell: DieCell) -> Style:
        """A cell's own ground: the area's, lighter under the mouse (`cell--hover`)."""
        style = self.visual_style.rich_style
        if cell is self.hover:
            _, background = self.background_colors
            background += self.get_component_styles("cell--hover").background
            style += Style.from_color(None, background.rich_color)
        return style

    def name_style(self) -> Style:
        """The names' colour (`area--name`) on the area's ground, as a widget of that colour has it."""
        _, background = self.background_colors
        color = self.get_component_styles("area--name").color
        return self.visual_style.rich_style + Style.from_color((background + color).rich_color)

    def render_line(self, y: int) -> Strip:
        base = self.visual_style.rich_style
        pieces: list[tuple[int, str, Style]] = [(x, words, self.name_style()) for x, row, words in self.names if row == y]
        for cell in self.cells:
            if cell.y <= y < cell.y + CELL_HEIGHT:
                x = cell.x
                for text, style in cell.rows(self.cell_style(cell))[y - cell.y]:
                    pieces.append((x, text, style))
                    x += len(text)
        ground = Style.from_color(None, base.bgcolor)  # between the cells and names: the area's background alone
        segments, at = [], 0
        for x, text, style in sorted(pieces, key=lambda piece: piece[0]):
            if x > at:
                segments.append(Segment(" " * (x - at), ground))
            segments.append(Segment(text, style))
            at = x + len(text)
        return Strip(segments).adjust_cell_length(self.size.width, ground).apply_offsets(0, y)  # offsets: text selection

    def on_mouse_move(self, event) -> None:
        cell = self.cell_at(event.x, event.y)
        if cell is not self.hover:
            self.hover = cell
            self.refresh()

    def on_leave(self) -> None:
        if self.hover is not None:
            self.hover = None
            self.refresh()

    def on_click(self, event) -> None:
        cell = self.cell_at(event.x, event.y)
        if cell is not None:
            self.post_message(DieCell.Pressed(cell))
