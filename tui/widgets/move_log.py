"""The move log: every move and random event in plain words, newest at the bottom."""

from __future__ import annotations

from textual.widgets import RichLog

from dicetable.core.game import CHANCE
from dicetable.tui.tables.controller import LogEntry


class MoveLog(RichLog):
    def __init__(self, **kwargs) -> None:
        # RichLog renders every line at least 78 cells wide (min_width), wider than this panel:
        # lines were cut and a horizontal scrollbar appeared. 1: wrap at the panel's own width.
        super().__init__(wrap=True, min_width=1, markup=False, highlight=False, auto_scroll=True, **kwargs)
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
