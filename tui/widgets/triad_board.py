"""The TRIAD board: 6 × 6 squares drawn as one widget, columns a–f on top, row 6 at the top.

Each square is 7 × 3 cells. A die tells its owner three ways besides colour: the letter (B or W), the
frame (Black heavy ┏━┓, White rounded ╭─╮) and the colour; its value is written I, II or III.
Marks are symbols, never colour alone: ▶◀ cursor, ◆ chosen die, →II a square the chosen die
reaches when turned to II, ✖ a die you may take off, ★ a die in the new Triad, • the last move.
Colours live in the component classes below (tui/screens/triad.tcss).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from textual import events
from textual.message import Message
from textual.reactive import reactive

from dicetable.core.triad import COLUMNS, SIZE, SQUARES
from dicetable.tui.widgets.drawn import DrawnWidget

ROMAN = {1: "I", 2: "II", 3: "III"}
CELL_WIDTH, CELL_HEIGHT = 7, 3
LABEL_WIDTH = 2  # the row numbers on the left
# (top-left, top, top-right, side, bottom-left, bottom, bottom-right) of each owner's frame.
FRAMES = {"B": "┏━┓┃┗━┛", "W": "╭─╮│╰─╯"}
# Marks on a die, shown in its bottom edge, strongest first.
DIE_MARKS = {"take": "✖", "triad": "★", "chosen": "◆", "last": "•"}


@dataclass(frozen=True)
class SquareLook:
    """What one square shows: its die (`B2`, or ""), a mark, a reachable value, the cursor."""

    die: str = ""
    mark: str = ""  # one of DIE_MARKS, or "last" on an emptied square
    reach: int = 0  # the value the chosen die is turned to to land here (0: not a destination)
    cursor: bool = False


def square_at(x: int, y: int) -> int | None:
    """The square index under widget offset (x, y), or None on the coordinates."""
    if x < LABEL_WIDTH or y < 1:
        return None
    col, band = (x - LABEL_WIDTH) // CELL_WIDTH, (y - 1) // CELL_HEIGHT
    if not (0 <= col < SIZE and 0 <= band < SIZE):
        return None
    return (SIZE - 1 - band) * SIZE + col


def square_offset(index: int) -> tuple[int, int]:
    """The widget offset of the middle of square `index` (for clicks in tests and tools)."""
    row, col = divmod(index, SIZE)
    return LABEL_WIDTH + col * CELL_WIDTH + CELL_WIDTH // 2, 1 + (SIZE - 1 - row) * CELL_HEIGHT + 1


def square_rows(index: int, look: SquareLook) -> list[tuple[str, str, str]]:
    """Three rows of (left margin, 5-cell body, right margin) for a square; the text only."""
    name = SQUARES[index]
    if look.die:
        owner, value = look.die[0], int(look.die[1])
        tl, top, tr, side, bl, bottom, br = FRAMES[owner]
        sign = DIE_MARKS.get(look.mark, "")
        lower = f"{bottom}{sign}{bottom * 3}" if sign else bottom * 5
        rows = [(tl, top * 5, tr), (side, f"{owner} {ROMAN[value]:<3}", side), (bl, lower, br)]
    elif look.reach:
        rows = [(" ", f"{name:<5}", " "), (" ", f"→{ROMAN[look.reach]:<4}", " "), (" ", " " * 5, " ")]
    elif look.mark == "last":
        rows = [(" ", " " * 5, " "), (" ", f" •{name:<3}", " "), (" ", " " * 5, " ")]
    else:
        rows = [(" ", " " * 5, " "), (" ", f"  {name:<3}", " "), (" ", " " * 5, " ")]
    if look.cursor:
        rows = [("┌", rows[0][1], "┐"), ("▶", rows[1][1], "◀"), ("└", rows[2][1], "┘")]
    return rows


class TriadBoard(DrawnWidget):
    """The whole board in one widget: one render instead of 36 widgets keeps a move's redraw cheap."""

    COMPONENT_CLASSES = {
        "board--coord",
        "board--black",
        "board--white",
        "board--empty",
        "board--empty-alt",
        "board--reach",
        "board--cursor",
        "board--mark",
        "board--take",
        "board--hover",
    }

    looks: reactive[tuple[SquareLook, ...]] = reactive((SquareLook(),) * (SIZE * SIZE))
    hover: reactive[int | None] = reactive(None)

    class Pressed(Message):
        """A square was clicked."""

        def __init__(self, board: "TriadBoard", square: int) -> None:
            super().__init__()
            self.board = board
            self.square = square

        @property
        def control(self) -> "TriadBoard":
            return self.board

    def show(self, looks: tuple[SquareLook, ...]) -> None:
        self.looks = looks

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def watch_looks(self) -> None:
        self._lines = None

    def watch_hover(self) -> None:
        self._lines = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines = None  # a theme change recolours the board

    def lines(self) -> list[list[tuple[str, Style]]]:
        """The board's 19 rows as (text, style) pieces: the column letters, then 3 rows per board row."""
        if getattr(self, "_lines", None) is not None:
            return self._lines
        base, styles = self.rich_style, {}

        def style(name: str) -> Style:  # each class once per drawing: looking one up is slow
            if name not in styles:
                styles[name] = base + self._style(name)
            return styles[name]

        coord = style("board--coord")
        rows = [[("  ", coord), *((f"{COLUMNS[c]:^{CELL_WIDTH}}", coord) for c in range(SIZE))]]
        for band in range(SIZE):
            r = SIZE - 1 - band
            drawn = [self._square(r * SIZE + c, style) for c in range(SIZE)]
            for line in range(CELL_HEIGHT):
                rows.append([(f"{r + 1} " if line == 1 else "  ", coord), *(p for parts in drawn for p in parts[line])])
        self._lines = rows
        return rows

    def _square(self, index: int, style) -> list[list[tuple[str, Style]]]:
        """A square's three rows of (text, style); `style(name)` is the base plus that class."""
        look = self.looks[index]
        row, col = divmod(index, SIZE)
        if look.die:
            body = style("board--black" if look.die[0] == "B" else "board--white")
        else:
            body = style("board--empty" if (row + col) % 2 else "board--empty-alt")
            if look.reach:
                body = body + style("board--reach")
            elif look.mark:
                body = body + style("board--mark")
        if self.hover == index:
            body = body + style("board--hover")
        edge = style("board--cursor") if look.cursor else body
        drawn = []
        for number, (left, middle, right) in enumerate(square_rows(index, look)):
            middle_style = body
            if look.die and number == 2 and look.mark in DIE_MARKS:
                middle_style = body + style("board--take" if look.mark == "take" else "board--mark")
            drawn.append([(left, edge), (middle, middle_style), (right, edge)])
        return drawn

    def on_click(self, event: events.Click) -> None:
        square = square_at(event.x, event.y)
        if square is not None:
            self.post_message(self.Pressed(self, square))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hover = square_at(event.x, event.y)

    def on_leave(self, event: events.Leave) -> None:
        self.hover = None
