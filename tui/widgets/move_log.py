"""The move log: every move and random event in plain words, newest at the bottom."""

from __future__ import annotations

from textual.widgets import RichLog

from core.game import CHANCE
from tui.controller import LogEntry


class MoveLog(RichLog):
    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=True, **kwargs)
        self._shown: tuple[LogEntry, ...] = ()

    def show(self, entries: tuple[LogEntry, ...]) -> None:
        """Write the entries not yet shown; start over when the log was replaced (rematch)."""
        if entries[: len(self._shown)] != self._shown:
            self.clear()
            self._shown = ()
        number = sum(1 for entry in self._shown if entry.seat != CHANCE)
        for entry in entries[len(self._shown):]:
            if entry.seat == CHANCE:
                self.write(f" ~  {entry.text}")
            else:
                number += 1
                self.write(f"{number:>2}. {entry.text}")
        self._shown = entries
