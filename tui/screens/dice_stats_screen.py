"""The dice at a glance (the dice room's F4): for everyone or one person, each die size's faces as a
chart against fair dice with a goodness-of-fit figure (core/dice_stats.py), and that person's rolls.
←/→ choose the person; the screen follows the room while it is open."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from dicetable.core.dice_stats import fits
from dicetable.tui.tables.view import TableView
from dicetable.tui.widgets.dice_chart import chart
from dicetable.tui.widgets.text_line import TextLine


class DiceStatsScreen(Screen):
    DEFAULT_CSS = """
    DiceStatsScreen #stats-title { height: 1; padding: 0 1; }
    DiceStatsScreen #stats-body { height: 1fr; padding: 0 1; }
    DiceStatsScreen #stats-charts { height: auto; }
    """
    BINDINGS = [
        Binding("left", "person(-1)", "another person", key_display="←→", priority=True),
        Binding("right", "person(1)", "another person", show=False, priority=True),
        Binding("escape,f4", "app.pop_screen", "back to the room"),
    ]

    def __init__(self, view: TableView, history) -> None:
        super().__init__()
        self.view = view
        self.history = history  # the room's history_lines(view, seat)
        self.person: int | None = None  # None: everyone

    def compose(self) -> ComposeResult:
        yield TextLine("", id="stats-title")
        with VerticalScroll(id="stats-body"):
            yield Static("", id="stats-charts")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#stats-body").focus()
        self.show(self.view)

    def show(self, view: TableView) -> None:
        self.view = view
        names, rolls = view.names, view.state.rolls
        who = "everyone" if self.person is None else names[self.person]
        mine = [r for r in rolls if self.person is None or r.seat == self.person]
        title = Text(f"The dice of {who}", "bold")
        title.append(f" — {len(mine)} roll{'s' * (len(mine) != 1)}")
        self.query_one("#stats-title", TextLine).update(title)
        body = Text()
        found = fits(rolls, self.person)
        if not found:
            body.append(f"No dice rolled by {who} yet.\n")
        for fit in found:
            body.append_text(chart(fit))
            body.append("\n")
        if self.person is not None and mine:
            body.append(f"Rolls of {who}\n", "bold")
            for line in self.history(view, self.person):
                body.append_text(line)
                body.append("\n")
        self.query_one("#stats-charts", Static).update(body)

    def action_person(self, step: int) -> None:
        people = [None, *range(len(self.view.names))]
        self.person = people[(people.index(self.person) + step) % len(people)]
        self.show(self.view)
