"""The home screen: every way to sit down at a table, each reachable by a key or a click."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

# (action, key, footer word, menu words) in the order the menu shows them.
CHOICES = (
    ("play_bot", "b", "bot", "Play against a bot"),
    ("hot_seat", "s", "hot-seat", "Hot-seat: two people, one terminal"),
    ("host", "h", "host", "Host a table (get an invite, or a code, to share)"),
    ("join", "j", "join", "Join a table (type a code, or paste an invite)"),
    ("resume", "c", "resume", "Resume a game that stopped (after a crash)"),
    ("history", "g", "history", "Game history: past games, their moves, verified"),
    ("lan", "l", "LAN", "LAN tables: open tables near you"),
    ("dice_room", "d", "dice", "Dice room: fair rolls with friends"),
    ("rules", "r", "rules", "Rules of the games"),
    ("profile", "p", "profile", "Profile: your name and key fingerprint"),
    ("quit", "q", "quit", "Quit"),
)
# Served over SSH (tui/screens/lobby_screen.py): the lobby heads the menu, and its key is in the footer.
LOBBY = ("lobby", "o", "lobby", "Lobby: who is connected now, invitations")


def served() -> bool:
    from dicetable.tui.tables.lobby import served_lobby

    return served_lobby() is not None


def choices() -> tuple[tuple[str, str, str, str], ...]:
    """The menu's lines, in order."""
    return ((LOBBY,) if served() else ()) + CHOICES

BANNER = """\
 ╔═╗  dicetable
 ║●║  dice games at the terminal: against bots, or peer to peer
 ╚═╝  with every roll verifiably fair"""


def menu_line(key: str, words: str, highlighted: bool) -> str:
    """A menu line; `›` marks the highlighted one, which is otherwise told by colour alone."""
    return f"{'›' if highlighted else ' '} [b]{key}[/b]  {words}"


class HomeScreen(Screen):
    # The footer is full at 80 columns: resume's and history's keys are told by their menu lines alone,
    # and served, the lobby's key takes hot-seat's place there (`check_action`: s still works).
    BINDINGS = [Binding(LOBBY[1], "lobby", LOBBY[2])] + [
        Binding(key, f"choose('{action}')", word, show=action not in ("resume", "history"))
        for action, key, word, _ in CHOICES] + [Binding("s", "served_hot_seat", "hot-seat", show=False)]

    def __init__(self, behind: bool = False) -> None:
        super().__init__()
        # Under a table (`dicetable play`) or the served lobby from the start: built when first shown, so the table's
        # first frame waits for no menu (and no footer recomposed three times while hidden).
        self.behind = behind
        self._covered = False  # a screen has been over it: its next resume is the menu's first showing

    def compose(self) -> ComposeResult:
        if self.behind:
            return
        with Vertical(id="home-box"):
            yield Static(BANNER, id="home-banner")
            yield OptionList(
                *(Option(menu_line(key, words, i == 0), id=action) for i, (action, key, _, words) in enumerate(choices())),
                id="home-menu",
            )
        yield Footer()

    def on_mount(self) -> None:
        if not self.behind:
            self.query_one("#home-menu").focus()

    def on_screen_suspend(self) -> None:
        self._covered = True

    async def on_screen_resume(self) -> None:
        # Its first resume (pushed, with the table or the lobby pushed on top right after) builds
        # nothing: only once the screen on top has gone is the menu shown, for the first time.
        if self.behind and self._covered and self.is_active:
            self.behind = False
            await self.recompose()
            self.query_one("#home-menu").focus()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "lobby":
            return served()
        if action == "choose" and parameters == ("hot_seat",):
            return not served()  # served: the hidden binding below takes s
        if action == "served_hot_seat":
            return served()
        return True

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        for action, key, _, words in choices():
            event.option_list.replace_option_prompt(action, menu_line(key, words, action == event.option.id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_choose(event.option.id)

    def action_choose(self, action: str) -> None:
        if action == "lobby":
            self.action_lobby()
        else:
            self.app.open(action)

    def action_served_hot_seat(self) -> None:
        self.app.open("hot_seat")

    def action_lobby(self) -> None:
        from dicetable.tui.screens.lobby_screen import open_lobby

        open_lobby(self.app)  # only a served app has a lobby
