"""The Tricolor Line table's own dialogs: a choice among legal moves (which cards pay, whom to attack,
what to discard), the hot-seat "pass the keyboard" screen that hides the previous player's hand, and
the scoring screen with every ID card and hand revealed (tricolor-line.md, Scoring)."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, OptionList, Static

from dicetable.tui.screens.dialogs import GameOverDialog


class ChoiceDialog(ModalScreen[int | None]):
    """Pick one of `labels` (arrows and Enter, a digit, or a click); Esc answers None."""

    CSS_PATH = "tricolor.tcss"
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, title: str, labels: list[str]) -> None:
        super().__init__()
        self.title_text = title
        self.labels = labels

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            yield Static(self.title_text, id="choice-title")
            numbered = [f"{i + 1:>2}  {label}" if i < 9 else f"    {label}" for i, label in enumerate(self.labels)]
            yield OptionList(*numbered, id="choice-list")
            yield Static("↑↓ Enter: choose · 1-9: that one · Esc: cancel", id="choice-hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)

    def on_key(self, event: events.Key) -> None:
        char = event.character or ""
        if char.isdigit() and 1 <= int(char) <= min(9, len(self.labels)):
            event.stop()
            self.dismiss(int(char) - 1)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PassKeyboardScreen(Screen[None]):
    """Hot-seat: covers the whole table so the next player cannot see the hand just played."""

    CSS_PATH = "tricolor.tcss"

    def __init__(self, name: str, previous: str = "") -> None:
        super().__init__()
        self.next_name = name
        self.previous = previous

    def compose(self) -> ComposeResult:
        hidden = f"{self.previous}'s hand and ID are hidden.\n\n" if self.previous else ""
        with Vertical(id="pass-box"):
            yield Static(f"Pass the keyboard to {self.next_name}", id="pass-title")
            yield Static(f"{hidden}{self.next_name}: press any key (or click) when only you can see "
                         "the screen.", id="pass-text")

    def on_key(self, event: events.Key) -> None:
        if event.key == "ctrl+q":
            return  # the app's quit still works
        event.stop()
        self.dismiss(None)

    def on_click(self) -> None:
        self.dismiss(None)


class ScoreDialog(GameOverDialog):
    """The end of a Tricolor Line game: the colour contest, then per seat its revealed ID and hand
    and how its points were made. Answers like GameOverDialog: "rematch", "home" or "look"."""

    CSS_PATH = "tricolor.tcss"

    def __init__(self, headline: str, detail: str, table: str, can_rematch: bool = True) -> None:
        super().__init__(headline, detail, can_rematch)
        self.table = table

    def compose(self) -> ComposeResult:
        with Vertical(id="score-box"):
            yield Static(self.headline, id="over-headline")
            yield Static(self.detail, id="score-detail")
            yield Static(self.table, id="score-table")
            with Horizontal(id="over-buttons"):
                if self.can_rematch:
                    yield Button("Rematch (r)", id="rematch", variant="primary")
                yield Button("Home (h)", id="home")
                yield Button("Board (Esc)", id="look")
