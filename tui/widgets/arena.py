"""The Dice Breaker arena: every die that lies in it, drawn as one widget, wrapped in rows.

Each die is 6 × 3 cells (plus a caption row when there is room): the owner's letter top-left (A-F,
`T` for the Trump Die that belongs to every hand), the value as pips on a 3 × 3 grid, the value as a
digit bottom-left, on the owner's colour. So a die tells its owner by letter and colour, and its
value by pips and digit: never by colour alone. Marks are symbols in the caption (or, when the arena
is too full for captions, in the bottom-right corner): ▶◀ cursor, × a die you may break,
◎ spinning, • the last throw landed here, ✱ broken by the last throw, ✚ a Latent Die.
Colours live in the component classes below (tui/screens/dicebreaker.tcss).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from dicetable.tui.widgets.die import PIPS
from dicetable.tui.widgets.drawn import DrawnWidget

CELL_WIDTH = 6  # margin, letter, three pips, margin
BODY_HEIGHT = 3
SIGNS = {"target": "×", "spin": "◎", "landed": "•", "broken": "✱", "latent": "✚"}
SEAT_CLASSES = tuple(f"arena--seat{s}" for s in range(6))


@dataclass(frozen=True)
class DieLook:
    """One die as the arena shows it."""

    name: str  # "A3", "T", "L2"
    letter: str  # the owner's letter; "T" for the Trump Die
    owner: int  # seat, or -1 for the Trump Die
    face: int
    marks: tuple[str, ...] = ()  # keys of SIGNS, strongest first
    cursor: bool = False


def body_rows(look: DieLook) -> list[str]:
    """The die's three 4-character rows: letter, pips, digit."""
    pips = PIPS[look.face]
    rows = []
    for r in range(3):
        lead = look.letter if r == 0 else str(look.face) if r == 2 else " "
        rows.append(lead + "".join("●" if (r, c) in pips else " " for c in range(3)))
    return rows


def caption(look: DieLook) -> str:
    signs = "".join(SIGNS[m] for m in look.marks if m in SIGNS)
    return f"{look.name}{signs}"[:CELL_WIDTH].center(CELL_WIDTH)


class ArenaView(DrawnWidget):
    """All dice of the arena in one render; `Pressed` names the die clicked."""

    COMPONENT_CLASSES = {
        *SEAT_CLASSES,
        "arena--trump",
        "arena--cursor",
        "arena--caption",
        "arena--mark",
        "arena--empty",
        "arena--hover",
    }

    looks: reactive[tuple[DieLook, ...]] = reactive(())
    hover: reactive[int | None] = reactive(None)

    class Pressed(Message):
        def __init__(self, arena: "ArenaView", die: str) -> None:
            super().__init__()
            self.arena = arena
            self.die = die

        @property
        def control(self) -> "ArenaView":
            return self.arena

    def show(self, looks: tuple[DieLook, ...]) -> None:
        self.looks = looks

    # -- layout --------------------------------------------------------------------------------
    def per_line(self) -> int:
        return max(1, self.size.width // CELL_WIDTH)

    def row_height(self) -> int:
        """4 with a caption row under each die, 3 when the arena is too full for captions."""
        rows = -(-len(self.looks) // self.per_line())
        return BODY_HEIGHT + 1 if rows * (BODY_HEIGHT + 1) <= max(self.size.height, 1) else BODY_HEIGHT

    def die_at(self, x: int, y: int) -> int | None:
        """Index into `looks` of the die under widget offset (x, y)."""
        col, row = x // CELL_WIDTH, y // self.row_height()
        if col >= self.per_line():
            return None
        index = row * self.per_line() + col
        return index if 0 <= index < len(self.looks) else None

    def die_offset(self, name: str) -> tuple[int, int]:
        """The widget offset of the middle of die `name` (for clicks in tests and tools)."""
        index = next(i for i, look in enumerate(self.looks) if look.name == name)
        row, col = divmod(index, self.per_line())
        return col * CELL_WIDTH + CELL_WIDTH // 2, row * self.row_height() + 1

    # -- drawing -------------------------------------------------------------------------------
    def watch_looks(self) -> None:
        self._lines = None

    def watch_hover(self) -> None:
        self._lines = None

    def on_resize(self) -> None:
        self._lines = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines = None

    def lines(self) -> list[list[tuple[str, Style]]]:
        if getattr(self, "_lines", None) is not None:
            return self._lines
        base, styles = self.rich_style, {}

        def style(name: str) -> Style:
            if name not in styles:
                styles[name] = base + self.get_component_rich_style(name, partial=True)
            return styles[name]

        if not self.looks:
            self._lines = [[("", base)], [("  The arena is empty: nobody has thrown yet.", style("arena--empty"))]]
            return self._lines
        per, height = self.per_line(), self.row_height()
        lines: list[list[tuple[str, Style]]] = []
        for start in range(0, len(self.looks), per):
            band = [[] for _ in range(height)]
            for offset, look in enumerate(self.looks[start:start + per]):
                index = start + offset
                body = style("arena--trump" if look.owner < 0 else SEAT_CLASSES[look.owner % 6])
                if self.hover == index:
                    body = body + style("arena--hover")
                edge = style("arena--cursor") if look.cursor else base
                margins = (("┌", "┐"), ("▶", "◀"), ("└", "┘")) if look.cursor else ((" ", " "),) * 3
                rows = body_rows(look)
                for r in range(BODY_HEIGHT):
                    left, right = margins[r]
                    if r == 2 and not look.cursor and height == BODY_HEIGHT and look.marks:
                        right = SIGNS.get(look.marks[0], " ")  # no caption row: the strongest mark
                    band[r] += [(left, edge), (rows[r], body), (right, style("arena--mark") if right in SIGNS.values() else edge)]
                if height > BODY_HEIGHT:
                    marked = bool(look.marks) or look.cursor
                    band[3].append((caption(look), style("arena--mark") if marked else style("arena--caption")))
            lines.extend(band)
        self._lines = lines
        return lines

    def on_click(self, event: events.Click) -> None:
        index = self.die_at(event.x, event.y)
        if index is not None:
            self.post_message(self.Pressed(self, self.looks[index].name))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hover = self.die_at(event.x, event.y)

    def on_leave(self, event: events.Leave) -> None:
        self.hover = None


class ActionLine(Widget):
    """A line of words where some pieces are clickable: `pieces` are (text, action or "", style class).

    A click on a piece with an action posts `Clicked(action)`; the keys say the same in words.
    """

    COMPONENT_CLASSES = {*SEAT_CLASSES, "arena--trump", "arena--key", "arena--muted", "arena--chosen"}
    DEFAULT_CSS = "ActionLine { text-wrap: nowrap; }"  # its lines are never wrapped: each must fit

    pieces: reactive[tuple[tuple[str, str, str], ...]] = reactive(())

    class Clicked(Message):
        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    def show(self, pieces: tuple[tuple[str, str, str], ...]) -> None:
        self.pieces = pieces

    def plain(self) -> str:
        return "".join(text for text, _, _ in self.pieces)

    def get_content_height(self, container, viewport, width: int) -> int:
        return self.plain().count("\n") + 1

    def get_content_width(self, container, viewport) -> int:
        return max(cell_len(line) for line in self.plain().split("\n"))

    def watch_pieces(self, old, new) -> None:
        if sum(t.count("\n") for t, _, _ in old) != sum(t.count("\n") for t, _, _ in new):
            self.refresh(layout=True)  # the score board grows or shrinks with the seats shown

    def render_line(self, y: int) -> Strip:
        base = self.rich_style
        segments, line = [], 0
        for text, _, name in self.pieces:
            parts = text.split("\n")
            for i, part in enumerate(parts):
                if i:
                    line += 1
                if line == y and part:
                    style = base + self.get_component_rich_style(name, partial=True) if name else base
                    segments.append(Segment(part, style))
        if not segments:
            return Strip.blank(self.size.width, base)
        return Strip(segments).crop(0, self.size.width)

    def action_at(self, x: int, y: int) -> str:
        line, column = 0, 0
        for text, action, _ in self.pieces:
            for i, part in enumerate(text.split("\n")):
                if i:
                    line, column = line + 1, 0
                if line == y and column <= x < column + len(part):
                    return action
                column += len(part)
        return ""

    def on_click(self, event: events.Click) -> None:
        action = self.action_at(event.x, event.y)
        if action:
            self.post_message(self.Clicked(action))
