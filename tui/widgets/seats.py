"""The seats panel: who sits where, whose turn it is, (network) fingerprint, link and clock, and who
watches without a seat (issue 35: the seats see who is watching)."""

from __future__ import annotations

import time

from rich.text import Text
from dicetable.tui.tables.view import TableView
from dicetable.tui.widgets.text_line import TextLine, fitted


class SeatsPanel(TextLine):
    """One block per seat; `▶` marks the seat due to act (a word says it too: "to act")."""

    view: TableView | None = None

    def show(self, view: TableView) -> None:
        self.view = view
        text = Text()
        open_room = view.state is not None and view.network  # a room that runs: its free places in one line
        free = [seat for seat, info in enumerate(view.seats) if info.kind == "free"] if open_room else []  # never in view.out
        for seat, info in enumerate(view.seats):
            if seat in free:
                continue
            due = view.actor == seat and view.result is None
            you = " (you)" if seat in view.local_seats and len(view.local_seats) == 1 else ""
            you = "" if info.name.lower() == "you" else you
            text.append("\n" if seat else "")  # no blank line after the last seat: it would need a row of its own
            text.append("▶ " if due else "  ")
            text.append(f"{info.name}{you}", "bold" if due else "")
            if due:
                text.append(" · thinking…" if view.thinking == seat else " · to act")
            details = [info.detail] if seat not in view.out or not open_room else ["left the room"]
            if view.network and info.kind == "remote":
                details.append("connected" if info.connected else "DISCONNECTED")
            if info.deadline is not None:
                left = max(0, int(info.deadline - time.monotonic()))
                details.append(f"{left // 60}:{left % 60:02d} left")
            text.append(f"\n  {' · '.join(d for d in details if d)}", "dim")
            if info.fingerprint:
                text.append(f"\n  {info.fingerprint}", "dim")
        if free:
            text.append(f"\n{len(free)} free place{'s' if len(free) != 1 else ''} to join", "dim")
        if view.watching:  # last: a short panel cuts this line before any seat's
            text.append("\n" if view.seats else "")
            text.append(fitted(watchers_line(view), self.content_region.width or 25), "italic")
        self.update(text)

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        """Clocks count down between table changes."""
        if self.view is not None and any(seat.deadline is not None for seat in self.view.seats):
            self.show(self.view)


def watchers_line(view: TableView) -> str:
    """Who watches, in words: `2 watching: wendy, carl`; the names the seats were told (the first few)."""
    more = view.watching - len(view.watchers)
    names = ", ".join(view.watchers) + (f" +{more}" if view.watchers and more > 0 else "")
    return f"{view.watching} watching" + (f": {names}" if names else "")
