"""Modal dialogs: help for the table, and the end of a game (with rematch)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

TRICE_HELP = """\
[b]Playing TRICE[/b]
Take turns: one player [b]chooses[/b] a die from the pool, the other [b]places[/b] it.
A full line of three (row, column, diagonal) meeting exactly one condition
- same colour, same value, or ordered values - is a [b]Trice[/b]: the placer wins.
Two conditions at once is a [b]Double Trice[/b]: the placer loses.
Board full: [b]indicate[/b] a die; the other player [b]swaps[/b] it with a neighbour
(marked ↔) and adds 1 to one of the two ([b]increment[/b], 6 becomes 1).

[b]Keys[/b]  arrows or h j k l move · Enter or Space acts · mouse: click a die
a-d and 1-3 jump to a square (b2) · w p o and 1-6 jump to a pool die (w6)
f fairness · m moves · r rematch (game over) · Esc leaves the table
Dice show colour [b]and[/b] letter: W white, P purple, O orange; value bottom-left.
Marks: ▶◀ cursor · • last move · ▲ indicated · ↔ swap target
       ★ deciding line"""

CLOSING = "\n\n[b]r[/b] the full rules of {title} · any other key closes this help"


class HelpDialog(ModalScreen[None]):
    """A table's help (each game's screen passes its own text); `r` opens the game's full rules."""

    BINDINGS = [Binding("escape", "dismiss_help", "close")]

    def __init__(self, text: str = TRICE_HELP, game: str = "trice") -> None:
        super().__init__()
        self.text = text
        self.game = game

    def compose(self) -> ComposeResult:
        from dicetable.core import registry

        yield Static(self.text + CLOSING.format(title=registry.get(self.game).title), id="help-text")

    def on_key(self, event) -> None:
        event.stop()
        self.dismiss(None)
        if event.key == "r":
            from dicetable.tui.screens.rules_screen import RulesScreen

            self.app.push_screen(RulesScreen(self.game))

    def on_click(self) -> None:
        self.dismiss(None)

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


class GameOverDialog(ModalScreen[str]):
    """Says how the game ended; answers "rematch", "home" or "look" (back to the board), and at a
    network table where another seat offered a rematch also "decline" (`offer` keeps it current).
    `said`: the network rematch in words (an offer, a refusal, a table gone), under the buttons."""

    BINDINGS = [
        Binding("r", "answer('rematch')", "rematch"),
        Binding("n", "answer('decline')", "decline"),
        Binding("h", "answer('home')", "home"),
        Binding("escape", "answer('look')", "look at the board"),
    ]

    def __init__(self, headline: str, detail: str, can_rematch: bool = True, said: str = "",
                 offered: bool = False) -> None:
        super().__init__()
        self.headline = headline
        self.detail = detail
        self.can_rematch = can_rematch
        self.said = said
        self.offered = offered  # another seat offered a rematch: r accepts it, n declines
        self._mounted = False  # `offer` before the mount only remembers: on_mount shows it

    def compose(self) -> ComposeResult:
        with Vertical(id="over-box"):
            yield Static(self.headline, id="over-headline")
            yield Static(self.detail, id="over-detail")
            with Horizontal(id="over-buttons"):
                yield Button("Rematch (r)", id="rematch", variant="primary")
                yield Button("Decline (n)", id="decline")
                yield Button("Home (h)", id="home")
                yield Button("Board (Esc)", id="look")
            yield Static(self.said, id="over-offer")  # below the buttons: the one spare line of the box

    def on_mount(self) -> None:
        self._mounted = True
        self.offer(self.said, self.can_rematch, self.offered)
        for look in self.query("#look").results(Button):  # a blind Enter goes back to the final board, never into a new game
            look.focus()

    def offer(self, said: str, can_rematch: bool, offered: bool) -> None:
        """Show the network rematch in words, whether one may be agreed, and whether another seat offered it."""
        self.said, self.can_rematch, self.offered = said, can_rematch, offered
        if not self._mounted:
            return
        for line in self.query("#over-offer").results(Static):  # a subclass's own compose may lack these
            line.update(said)
        for rematch in self.query("#rematch").results(Button):
            rematch.label = "Accept (r)" if offered else "Rematch (r)"
            rematch.display = can_rematch
        for decline in self.query("#decline").results(Button):
            decline.display = offered and can_rematch
        self.refresh_bindings()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "answer" and parameters and parameters[0] in ("rematch", "decline"):
            return self.can_rematch and (parameters[0] == "rematch" or bool(self.offered))
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)

    def action_answer(self, answer: str) -> None:
        if not self.check_action("answer", (answer,)):
            return
        self.dismiss(answer)


class LeaveDialog(ModalScreen[str]):
    """Asked before a network game in play is left or resigned (Esc, or the resign key): stay; leave
    and come back (the seat waits for the grace time; Resume on the home screen); or resign (the
    others win at once). Nothing is decided by a blind key: the focus starts on Stay."""

    BINDINGS = [
        Binding("escape,s", "answer('stay')", "stay"),
        Binding("l", "answer('leave')", "leave, come back later"),
        Binding("r", "answer('resign')", "resign"),
    ]

    def __init__(self, winners: str, grace: float, leaving: bool = True) -> None:
        super().__init__()
        self.winners, self.grace, self.leaving = winners, grace, leaving

    def compose(self) -> ComposeResult:
        with Vertical(id="over-box"):
            yield Static("[b]Leave the game?[/b]" if self.leaving else "[b]Resign the game?[/b]", id="over-title")
            later = (f"Leave (l): your seat waits {self.grace:g} s for you; the game goes on from Resume "
                     "(c on the home screen). ") if self.leaving else ""
            yield Static(f"{later}Resign (r): {self.winners} at once, and the game ends for you.", id="over-detail")
            with Horizontal(id="over-buttons"):
                yield Button("Stay (Esc)", id="stay", variant="primary")
                if self.leaving:
                    yield Button("Leave (l)", id="leave")
                yield Button("Resign (r)", id="resign", variant="error")

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    def check_action(self, action: str, parameters) -> bool | None:
        return self.leaving or parameters != ("leave",)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)
