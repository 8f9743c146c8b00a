"""A progress bar for long commands (`selfplay`): one line on the terminal, redrawn in place.

Drawn only when its stream is a terminal: a pipe, a file or `--json` output gets nothing extra.
"""

from __future__ import annotations

import sys
import time

BAR = 24  # cells of the bar itself


class Progress:
    """`step(done)` after each unit of work; `close()` clears the line. `what` names the units;
    `quiet` (machine-readable output was asked for) draws nothing, as a stream that is no terminal."""

    def __init__(self, total: int, what: str, stream=None, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.what = total, what
        self.shown = not quiet and self.stream.isatty()
        self.start = time.monotonic()
        self._width = 0
        self.step(0)

    def step(self, done: int) -> None:
        if not self.shown:
            return
        filled = BAR * done // self.total if self.total else BAR
        line = f"{self.what} {done}/{self.total} [{'#' * filled}{'.' * (BAR - filled)}]"
        if done:
            left = (time.monotonic() - self.start) / done * (self.total - done)
            line += f" about {int(left) // 60}:{int(left) % 60:02d} left"
        else:
            line += " starting…"
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Clear the bar's line, so what is printed next starts on a clean line."""
        if self.shown and self._width:  # \x1b[K: and what the terminal echoed after the bar (a ^C)
            self.stream.write("\r" + " " * self._width + "\x1b[K\r")
            self.stream.flush()
            self._width = 0
