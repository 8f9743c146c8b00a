"""The move log: every move and random event in plain words, newest at the bottom."""

from __future__ import annotations

from typing import Sequence

from textual.widgets import RichLog

from dicetable.core.game import CHANCE
from dicetable.tui.tables.view import LogEntry


class MoveLog(RichLog):
    def __init__(self, **kwargs) -> None:
        # RichLog renders every line at least 78 cells wide (min_width), wider than this panel:
        # lines were cut and a horizontal scrollbar appeared. 1: wrap at the panel's own width.
        super().__init__(wrap=True, min_width=1, markup=False, highlight=False, auto_scroll=True, **kwargs)
        self._shown: tuple[tuple[int, str], ...] = ()  # (seat, line) as written

    def show(self, entries: Sequence[LogEntry], names: Sequence[str]) -> None:
        """Write the entries not yet shown, with the seats' names; start over when the lines already
        written changed (a rematch, a seat that took its name)."""
        lines = tuple((entry.seat, entry.words(names)) for entry in entries)
        if lines[: len(self._shown)] != self._shown:
            self.clear()
            self._shown = ()
        number = sum(1 for seat, _ in self._shown if seat != CHANCE)
        for seat, line in lines[len(self._shown):]:
            if seat == CHANCE:
                self.write(f" ~  {line}")
            else:
                number += 1
                self.write(f"{number:>2}. {line}")
        self._shown = lines
