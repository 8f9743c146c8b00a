"""A fixed-size piece of text that repaints without a layout pass (Static.update re-lays out the
whole screen, which costs a frame on every move)."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


def fitted(text: str, width: int) -> str:
    """`text`, cut to `width` cells with … when longer (a name in a narrow panel)."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


class TextLine(Widget):
    text: reactive[str | Text] = reactive("")

    def __init__(self, text: str | Text = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_reactive(TextLine.text, text)

    def update(self, text: str | Text) -> None:
        self.text = text

    def render(self) -> str | Text:
        return self.text
