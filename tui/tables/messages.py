"""What a table controller tells the screen that shows it.

Controllers post these to the screen with `post_message`, which Textual makes safe from any thread:
a network controller posts them from its workers, the local one from the UI thread or a bot worker.
Each message carries a snapshot (tui/tables/view.py `TableView`), never a live object, so the screen
never reads state that another thread is changing; what a message says of seats is a `Phrase`, drawn
with the seats' names by the screen.
"""

from __future__ import annotations

from textual.message import Message

from dicetable.core.phrase import Phrase
from dicetable.tui.tables.view import TableView


class TableChanged(Message):
    """The table moved on: a move, a random event, a seat joining or leaving, the game ending."""

    def __init__(self, view: TableView) -> None:
        super().__init__()
        self.view = view


class MoveRefused(Message):
    """A move made at this terminal was not accepted; `reason` is one sentence for the player."""

    def __init__(self, reason: Phrase) -> None:
        super().__init__()
        self.reason = reason


class ChatArrived(Message):
    """A chat line from a seat (network tables)."""

    def __init__(self, seat: int, name: str, text: str) -> None:
        super().__init__()
        self.seat = seat
        self.name = name
        self.text = text


class Banner(Message):
    """A notice for everyone at the table: a peer dropped or came back, a default claim, a fault.

    `level` is "info", "warning" or "error".
    """

    def __init__(self, what: Phrase, level: str = "info") -> None:
        super().__init__()
        self.what = what
        self.level = level


class TableClosed(Message):
    """The table is gone (the host left, the connection cannot be restored); `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
