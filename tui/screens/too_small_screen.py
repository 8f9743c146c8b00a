"""Shown instead of a broken layout while the terminal is smaller than 80 × 24."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

MIN_WIDTH, MIN_HEIGHT = 80, 24


class TooSmallScreen(Screen):
    def compose(self) -> ComposeResult:
        yield Static(id="too-small-text")

    def on_mount(self) -> None:
        self.show_size()

    def on_resize(self, event) -> None:
        self.show_size(event.size)

    def show_size(self, size=None) -> None:
        width, height = size or self.app.size
        self.query_one("#too-small-text", Static).update(
            f"Please make the window larger.\n\ndicetable needs at least {MIN_WIDTH} × {MIN_HEIGHT};"
            f"\nthis terminal is {width} × {height}.\n\n(Ctrl+Q quits.)"
        )
