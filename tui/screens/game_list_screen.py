"""The shape of the screens that list games (resume, history): one box with a title, a line of
help, the games, the files that could not be listed, and a note.

Reading the games means reading every transcript (`scripts/bench_history.py`: about 2 ms per
four-seat Tricolor game), so it runs in a thread; `loaded` turns true once the list is shown.
"""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option


class GameListScreen(Screen):
    """A bordered list of games: a title, a line of help, the games (Enter or a click picks one),
    the files that could not be listed, and a note. Ids are `{PREFIX}-box`, `-title`, `-help`,
    `-list`, `-unreadable`, `-note` (the subclass's `.tcss` styles them)."""

    BINDINGS = [Binding("escape", "back", "back")]
    PREFIX = ""
    HEADING = ""
    HELP = ""
    EMPTY = ""  # the note when there is no game to list

    loaded = False

    def load(self) -> tuple[list[str], list[str]]:
        """In a thread: read the games (kept by the subclass); their lines and the files not listed."""
        raise NotImplementedError

    def on_mount(self) -> None:
        self.unreadable: list[str] = []  # the files not listed, as last shown
        self.query_one(f"#{self.PREFIX}-list", OptionList).display = False
        self.note("Reading your games…")
        self.run_worker(self._read, thread=True, group="list", exit_on_error=False)

    def _read(self) -> None:
        lines, unreadable = self.load()
        self.app.call_from_thread(self.list_games, lines, unreadable)

    def compose(self) -> ComposeResult:
        p = self.PREFIX
        with Vertical(id=f"{p}-box"):
            yield Static(self.HEADING, id=f"{p}-title")
            yield Static(self.HELP, id=f"{p}-help")
            yield OptionList(id=f"{p}-list")
            yield Static(id=f"{p}-unreadable")
            yield Static(id=f"{p}-note")
        yield Footer()

    def list_games(self, lines: list[str], unreadable: list[str]) -> None:
        """Show `lines` (the newest first, highlighted), `unreadable` dimmed, or EMPTY when none."""
        if not self.is_attached:  # the person went back while the games were read
            return
        self.unreadable = unreadable
        menu = self.query_one(f"#{self.PREFIX}-list", OptionList)
        menu.add_options([Option(escape(line), id=str(i)) for i, line in enumerate(lines)])
        menu.display = bool(lines)
        self.note("" if lines else self.EMPTY)
        if lines:
            menu.highlighted = 0  # Enter takes the newest at once
        shown = self.query_one(f"#{self.PREFIX}-unreadable", Static)
        shown.display = bool(unreadable)
        if unreadable:
            shown.update("[dim]" + "\n".join(f"Not listed: {escape(line)}" for line in unreadable) + "[/dim]")
        menu.focus()
        self.loaded = True

    def note(self, text: str) -> None:
        self.query_one(f"#{self.PREFIX}-note", Static).update(text)

    def action_back(self) -> None:
        self.app.pop_screen()
