"""The chat panel of a network table: what was said, and a line to say something."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, RichLog


class ChatPanel(Vertical):
    class Sent(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def compose(self) -> ComposeResult:
        yield RichLog(wrap=True, min_width=1, markup=False, id="chat-log")  # wrap at the panel's width
        yield Input(placeholder="say something, Enter sends", id="chat-input", max_length=200)

    def add(self, name: str, text: str) -> None:
        self.query_one("#chat-log", RichLog).write(f"{name}: {text}")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        event.input.clear()
        if text:
            self.post_message(self.Sent(text))
