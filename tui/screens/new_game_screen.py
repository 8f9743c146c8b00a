"""Setting up a local game: which game, which bot, who starts (or two people at one terminal)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, RadioSet, Static

from dicetable.core import levels, registry
from dicetable.tui.screens.by_game import first_title
from dicetable.tui.widgets.choice import Choice, Choices

DEFAULT_LEVEL = "medium"
FIRST_WORDS = (("roll", "the draw decides"), ("me", "me"), ("bot", "the bot"))
MODE_WORDS = (("battle", "battle"), ("quick", "quick play"))


class NewGameScreen(Screen):
    """Answers through `app.start_local(game, bot, first)`; `bot` is "" for hot-seat."""

    BINDINGS = [
        Binding("s", "start", "start"),
        Binding("escape", "back", "back"),
    ]

    def __init__(self, games: list[str], hot_seat: bool = False) -> None:
        super().__init__()
        self.games = games
        self.hot_seat = hot_seat

    def compose(self) -> ComposeResult:
        title = "Hot-seat: people take turns at this terminal" if self.hot_seat else "Play against a bot"
        with Vertical(id="setup-box"):
            yield Static(title, id="setup-title")
            with Horizontal(id="setup-choices"):
                with Choices(id="setup-game") as games:
                    games.border_title = "Game"
                    for i, name in enumerate(self.games):
                        yield Choice(registry.get(name).title, value=i == 0, name=name)
                if not self.hot_seat:
                    with Choices(id="setup-bot") as bots:
                        bots.border_title = "Bot"
                        for name in levels.NAMES:
                            yield Choice(name, value=name == DEFAULT_LEVEL, name=name)
                    with Choices(id="setup-first") as first:
                        first.border_title = first_title(self.games[0]) or "Who starts"
                        for i, (name, words) in enumerate(FIRST_WORDS):
                            yield Choice(words, value=i == 0, name=name)
            # Games for more than two (Dice Breaker: 2-6): the number of players and the game's mode.
            if any(registry.get(name).max_seats > 2 for name in self.games):
                with Horizontal(id="setup-more"):
                    with Choices(id="setup-seats") as seats:
                        seats.border_title = "Players"
                        seats.border_subtitle = "Dice Breaker 2-6 · Tricolor Line 2-8"
                        for n in range(2, max(registry.get(name).max_seats for name in self.games) + 1):
                            yield Choice(str(n), value=n == 2, name=str(n))
                    with Choices(id="setup-mode") as modes:
                        modes.border_title = "Dice Breaker mode"
                        for name, words in MODE_WORDS:
                            yield Choice(words, value=name == "battle", name=name)
            yield Static("Tab: next choice · arrows: pick · s: start", id="setup-hint")
            with Horizontal(id="setup-buttons"):
                yield Button("Start (s)", id="start", variant="primary")
                yield Button("Back (Esc)", id="back")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#setup-game").focus()
        self._ask_first()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        if event.radio_set.id in ("setup-game", "setup-seats"):
            self._ask_first()

    def _ask_first(self) -> None:
        """Who starts is asked only where a person may choose it, in the chosen game's words."""
        if not self.query("#setup-first"):
            return
        game = self._picked("#setup-game", self.games[0])
        box = self.query_one("#setup-first", RadioSet)
        box.display = bool(first_title(game)) and self._picked("#setup-seats", "2") == "2"
        box.border_title = first_title(game)

    def _picked(self, selector: str, default: str) -> str:
        if not self.query(selector):
            return default
        button = self.query_one(selector, RadioSet).pressed_button
        return button.name if button is not None and button.name else default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_start() if event.button.id == "start" else self.action_back()

    def action_start(self) -> None:
        game = self._picked("#setup-game", self.games[0])
        bot = "" if self.hot_seat else self._picked("#setup-bot", DEFAULT_LEVEL)
        asked = self.query("#setup-first") and self.query_one("#setup-first").display
        first = self._picked("#setup-first", "roll") if asked else "roll"
        info = registry.get(game)
        seats = int(self._picked("#setup-seats", "2")) if info.max_seats > 2 else 2
        if not info.min_seats <= seats <= info.max_seats:
            self.notify(f"{info.title} is played by {info.min_seats} to {info.max_seats}.", severity="warning")
            return
        options = {"mode": self._picked("#setup-mode", "battle")} if game == "dicebreaker" else None
        self.app.start_local(game, bot, first, replace=self, seats=seats, options=options)

    def action_back(self) -> None:
        self.app.pop_screen()
