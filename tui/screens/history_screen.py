"""Game history: every game this player has played, newest first (tui/tables/history.py reads them).

Enter (or a click) opens a game: its move log in words, and for a network game the verdict of the
same check as `dicetable verify`, run in a thread so a long game does not hold the screen. p replays a
network game step by step in its own table screen (tui/screens/replay_screen.py).
"""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static

from dicetable.tui.screens.game_list_screen import GameListScreen
from dicetable.tui.tables.history import Played, past_games
from dicetable.tui.widgets.move_log import MoveLog

EMPTY = "No games yet: the games you finish against bots or at this terminal, and your network games, are kept here."


class HistoryScreen(GameListScreen):
    CSS_PATH = "history_screen.tcss"
    PREFIX = "history"
    HEADING = "Game history"
    HELP = "Newest first; Enter or a click shows a game's moves (and checks a network game); p replays a network game."
    EMPTY = EMPTY
    BINDINGS = [Binding("p", "replay", "replay")]

    def __init__(self) -> None:
        super().__init__()
        self.games: list[Played] = []

    def chosen(self) -> Played | None:
        """The game highlighted in the list."""
        if not self.loaded:
            return None
        at = self.query_one(OptionList).highlighted
        return self.games[at] if at is not None and at < len(self.games) else None

    def action_replay(self) -> None:
        game = self.chosen()
        if game is not None and game.network:
            from dicetable.tui.screens.replay_screen import open_replay

            open_replay(self, game.path)
        elif game is not None:
            self.notify("A local game keeps no transcript to replay: Enter shows its moves.", timeout=4)

    def load(self) -> tuple[list[str], list[str]]:
        from dicetable.net.identity import ProfileError, home, load

        try:
            profile = load()
        except ProfileError:
            profile = None
        self.games, unreadable = past_games(home(), profile.public_key if profile is not None else None)
        return [game.words() for game in self.games], unreadable

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.app.push_screen(GameRecordScreen(self.games[int(event.option.id)]))


class GameRecordScreen(Screen):
    """One past game: what it was, its move log, and (network) the transcript's verdict."""

    CSS_PATH = "history_screen.tcss"
    BINDINGS = [Binding("escape", "back", "back"), Binding("p", "replay", "replay")]

    def __init__(self, game: Played) -> None:
        super().__init__()
        self.game = game
        self.verdict = ""  # the network verdict line, once checked
        self._left = False  # the person went back before the check ended

    def compose(self) -> ComposeResult:
        with Vertical(id="record-box"):
            yield Static(escape(self.game.words()), id="record-title")
            yield Static(id="record-verdict")
            yield MoveLog(id="record-log")
        yield Footer()

    def on_mount(self) -> None:
        game = self.game
        if not game.network:
            self._show("a local game: its dice came from this computer's random numbers (no transcript)", game.log,
                       game.names)
            return
        self.query_one("#record-verdict", Static).update(f"Checking {escape(str(game.path))}…")
        self.run_worker(self._check, thread=True, group="verify", exit_on_error=False)

    def _check(self) -> None:
        """In a thread: replay the transcript as `dicetable verify` does; its log in words."""
        from dicetable.net.log.verify import verify
        from dicetable.tui.tables.net_table import fair_events, replica_log, seat_names

        verdict = verify(self.game.path)
        log, names = (), self.game.names
        if verdict.replica is not None and verdict.replica.game is not None:
            names = seat_names(verdict.replica)
            log = tuple(replica_log(verdict.replica, fair_events(verdict.replica)))
        self.app.call_from_thread(self._show, f"{verdict.line()}\n{self.game.path}", log, names)

    def on_unmount(self) -> None:
        self._left = True

    def _show(self, verdict: str, log, names) -> None:
        if self._left:
            return
        self.verdict = verdict
        self.query_one("#record-verdict", Static).update(escape(verdict))
        moves = self.query_one(MoveLog)
        moves.auto_scroll = False  # a game is read from its first move; arrows and PgDn scroll
        moves.show(tuple(log), names)
        moves.focus()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_replay(self) -> None:
        from dicetable.tui.screens.replay_screen import open_replay

        open_replay(self, self.game.path)

    def check_action(self, action: str, parameters) -> bool | None:
        return self.game.network if action == "replay" else True
