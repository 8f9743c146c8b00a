"""The base of the widgets drawn cell by cell (TRIAD board, Dice Breaker arena, Tricolor map)."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget


class DrawnWidget(Widget):
    """A widget whose `lines()` gives its rows as runs of (text, style).

    Strips of segments rather than one Rich Text: a redraw per key press stays cheap, and `plain()`
    gives the same picture without styles (what a screen reader or a test reads).
    """

    def lines(self) -> list[list[tuple[str, Style]]]:
        raise NotImplementedError

    def plain(self) -> str:
        return "\n".join("".join(text for text, _ in row) for row in self.lines())

    def render_line(self, y: int) -> Strip:
        rows = self.lines()
        if not 0 <= y < len(rows):
            return Strip.blank(self.size.width, self.rich_style)
        return Strip([Segment(text, style) for text, style in rows[y]]).crop(0, self.size.width)
