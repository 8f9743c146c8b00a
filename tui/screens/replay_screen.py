"""A replay in its game's own screen: the live table's screen (tui/screens/by_game.py `screen_for`)
with the replay's keys mixed in, driven by a `Replay` (tui/tables/replay.py).

← → step one entry (a move or a chance step), Home and End go to the first and the last; the line
at the bottom, where the footer was, says where the replay stands and what happened there. The
screen's own keys that would act (place, roll, rematch, move the cursor) are switched off through
`check_action`; what only shows something (help, the panels, verify, Tricolor's scores, the dice
room's charts) stays. A move made anyway (a click on the board) is refused by the Replay.
"""

from __future__ import annotations

from functools import cache

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer

from dicetable.tui.screens.by_game import screen_for
from dicetable.tui.tables.messages import TableChanged
from dicetable.tui.tables.view import result_words

# The replay's keys, the fullest first: the first that leaves room for what happened is shown.
KEYS = ("←→ step · Home/End · ? help · Esc leave", "←→ Home End · Esc", "←→ · Esc")

# What a person may still do in a replay: step, and look (the actions of the screens' own keys).
STEPPING = frozenset({"step", "first", "last"})
LOOKING = frozenset({"help", "panel", "verify", "leave", "scores", "dice_stats"})


class ReplayBar(Widget):
    """The replay's place, what happened there, and its keys: one line, the place always whole."""

    said: reactive[tuple[str, str, bool]] = reactive(("", "", False))

    def show(self, where: str, what: str, stopped: bool) -> None:
        self.said = (where, what, stopped)

    def render(self) -> Text:
        where, what, stopped = self.said
        width = self.size.width or 80
        text = Text.assemble(  # ◀ and ▶ step back and on for the mouse
            (" ◀ ", Style(reverse=True, bold=True, meta={"@click": "screen.step(-1)"})),
            (where, "reverse bold"),
            (" ▶ ", Style(reverse=True, bold=True, meta={"@click": "screen.step(1)"})),
        )
        if stopped:
            text.append(" ✗ the transcript is refused here (v: why) ", "bold")
        keys = next((k for k in KEYS if text.cell_len + len(what) + len(k) + 3 <= width), KEYS[-1])
        room = width - text.cell_len - len(keys) - 2
        if room > 3 and what:
            text.append(" " + (what if len(what) <= room else what[: room - 1] + "…"))
        text.append(" " * max(1, width - text.cell_len - len(keys)))
        text.append(keys, "dim")
        return text


class ReplayKeys:
    """Mixed in before a game's screen class (`replay_screen`): the replay's keys and line. Not a
    Textual class itself, so its BINDINGS are given to the class `replay_screen` makes."""

    BINDINGS = [
        Binding("left", "step(-1)", "back", key_display="←"),
        Binding("right", "step(1)", "forward", key_display="→"),
        Binding("home", "first", "first"),
        Binding("end", "last", "last"),
    ]

    def compose(self):
        for widget in super().compose():  # the game's own screen, its footer given way to the replay's line
            yield ReplayBar(id="replay-bar") if isinstance(widget, Footer) else widget

    def on_table_changed(self, message: TableChanged) -> None:
        """Runs before the game screen's own handler (Textual calls each class's in the MRO)."""
        replay = self.controller
        step = replay.place_of(message.view)  # the step this message shows (the person may be further on)
        stopped = replay.stopped and step == replay.last
        self.query_one(ReplayBar).show(replay.where(step), replay.what(step), stopped)
        if stopped and not getattr(self, "_fault_told", False):
            self._fault_told = True
            self.notify(replay.verdict.line(), title="The replay stops here", severity="error", timeout=12)

    def action_step(self, by: int) -> None:
        self.controller.step(by)

    def action_first(self) -> None:
        self.controller.go(0)

    def action_last(self) -> None:
        self.controller.go(self.controller.last)

    def check_action(self, action: str, parameters) -> bool | None:
        if action in STEPPING:  # the replay's own, whatever the game's screen would allow now
            return True
        if action not in LOOKING or (action == "panel" and parameters and parameters[0] == "chat"):
            return False
        return super().check_action(action, parameters)

    # -- the table screen's hooks (tui/screens/table_screen.py) --------------------------------------
    def show_game_over(self) -> None:
        """The end is told, not asked about: no rematch, and the arrows stay with the replay."""
        view = self.view
        self.notify(result_words(view.result, view.names), title="Game over", timeout=6)

    def _ready(self, quiet: bool = False) -> bool:
        if not quiet:
            self.notify("A replay: nothing can be played here; ← → step through the game.", timeout=3)
        return False


@cache
def replay_screen(game: str):
    """The screen class that replays a table of `game`: its live screen with the replay's keys."""
    shown = screen_for(game)
    if shown is None:
        return None
    css = shown.CSS_PATH if isinstance(shown.CSS_PATH, list) else [shown.CSS_PATH] if shown.CSS_PATH else []
    return type(f"Replay{shown.__name__}", (ReplayKeys, shown), {
        "BINDINGS": ReplayKeys.BINDINGS, "CSS_PATH": [*css, "replay.tcss"], "__module__": __name__})


def open_replay(screen, path) -> None:
    """Replay the transcript at `path` from `screen` (the game history): read and checked in a thread,
    since a long game takes a second or two; then its table screen opens, or one line says why not."""

    def read() -> None:
        from dicetable.tui.tables.replay import Replay, ReplayError

        try:
            replay = Replay.open(path)
        except ReplayError as error:
            screen.app.call_from_thread(screen.notify, str(error), title="Cannot replay", severity="error")
            return
        if screen.is_attached:
            screen.app.call_from_thread(screen.app.open_table, replay)

    screen.notify(f"Replaying {path}…", timeout=2)
    screen.run_worker(read, thread=True, group="replay", exit_on_error=False)
