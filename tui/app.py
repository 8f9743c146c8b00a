"""The dicetable app: the home screen, local tables (bots, hot-seat, dice room), network tables
(host / join → waiting room → the game's screen, tui/tables/net_table.py), and the screens around them.

`run_app()` opens the home screen (`dicetable` with no arguments); `run_table(controller)` opens
straight into a game (`dicetable play`). The app keeps a "make the window larger" screen on top
while the terminal is smaller than 80 × 24. NO_COLOR is honoured by Textual itself (a monochrome
filter), and nothing on screen is told by colour alone.
"""

from __future__ import annotations

import gc
import os
import time

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.notifications import Notify
from textual.screen import Screen

from dicetable.core import registry
from dicetable.tui.commands.args import INTERRUPTED
from dicetable.tui.tables.controller import LocalTable, Player, TableController
from dicetable.tui.tables.history import history_path
from dicetable.tui.tables.local_save import kept_table, new_save_path
from dicetable.tui.screens.by_game import screen_for
from dicetable.tui.screens.too_small_screen import MIN_HEIGHT, MIN_WIDTH, TooSmallScreen


def player_name(directory=None) -> str:
    """The profile's name when there is one, else the login name, else "You" (no key is made to
    play a bot; the app asks for a name on its first run)."""
    from dicetable.net import identity

    try:
        name = identity.saved_name(directory)
    except Exception:  # a damaged profile must not stop an offline game
        name = None
    return name or identity.login_name() or "You"


def leave_on_hangup(app: App) -> None:
    """On SIGTERM, SIGHUP or SIGINT exit through Textual, which switches mouse mode and the alternate
    screen off; Python's default would end the process with the user's terminal still in them. (Ctrl+C
    typed in the app is a key, which Textual answers with "ctrl+q quits"; SIGINT comes from a kill.)"""
    import asyncio
    import signal

    if app.is_headless:
        return
    loop = asyncio.get_running_loop()
    for sig, status in ((signal.SIGTERM, 0), (signal.SIGHUP, 0), (signal.SIGINT, INTERRUPTED)):
        try:
            loop.add_signal_handler(sig, app.exit, None, status)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # no signals here (not the main thread, or not a POSIX system)


class DiceTableApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "dicetable"
    BINDINGS = [Binding("ctrl+q", "quit", "quit", show=False, priority=True)]
    browse_lan = True  # False: the LAN list opens no mDNS socket and shows what it is given (tests)

    def __init__(self, table: TableController | None = None, bot_delay: float = 0.5,
                 seed: int | None = None, profile_dir=None, ask_name: bool = False,
                 home_later: bool = False) -> None:
        super().__init__()
        self.first_table = table
        self.bot_delay = bot_delay
        self.seed = seed  # for local games opened from the home screen (tests); None: from the clock
        self.profile_dir = profile_dir  # where the profile lives; None: the data directory
        self.ask_name = ask_name  # the first run (no profile yet) asks for the name first (`dicetable`)
        # `dicetable play`: the home screen under the table is built when first shown (the table's
        # first frame waits for no menu)
        self.home_later = home_later and table is not None

    def serves_lobby(self) -> bool:
        """Served over SSH (`dicetable serve-ssh`): the lobby first."""
        return self.first_table is None and bool(os.environ.get("DICETABLE_SERVED"))

    def get_default_screen(self) -> Screen:
        """The home screen is the app's first screen (rather than on top of Textual's empty one,
        which was styled, laid out and drawn before every first frame too)."""
        from dicetable.tui.screens.home_screen import HomeScreen

        # Under the lobby or a table from the start, the home screen is built when first shown: a
        # served app idles in the lobby without the menu's widgets (memory held per session), and
        # the table's first frame waits for no menu.
        return HomeScreen(behind=self.home_later or self.serves_lobby())

    def on_mount(self) -> None:
        served = self.serves_lobby()
        if served:  # served over SSH: the lobby first
            from dicetable.tui.screens.lobby_screen import open_served

            open_served(self, lambda: player_name(self.profile_dir))
        if self.home_later:
            # `dicetable play`: the table once the app's mount is over. Textual holds repaints back
            # while it mounts the app, and a screen pushed meanwhile is rendered whole and that render
            # thrown away, then rendered again (a tenth of the first frame)
            self.call_later(self._open_first_table)
        elif self.first_table is not None:
            self.open_table(self.first_table)
            self._check_size()
        else:
            if self.needs_name():
                self.ask_for_name()
            self._check_size()
        leave_on_hangup(self)  # a kill or a dropped SSH connection still leaves the terminal clean
        if not self.home_later:
            self.call_after_refresh(gc.enable)  # `run` held the collector off until the first frame

    def _open_first_table(self) -> None:
        self.open_table(self.first_table)
        self._check_size()  # the size guard on top of the table
        self.call_after_refresh(gc.enable)  # `run` held the collector off until the table's first frame

    # -- notices --------------------------------------------------------------------------------
    def on_notify(self, event: Notify) -> None:
        """Runs before Textual adds the new notice: the oldest give way, so that no more are shown
        than the screen's toast rack holds whole (its `TOASTS_KEPT`, else 3). A rack clips what does
        not fit it, and what it would cut is the newest."""
        kept = getattr(self.screen, "TOASTS_KEPT", 3) - 1
        shown = list(self._notifications)  # oldest first
        for old in shown[: max(0, len(shown) - kept)]:
            self._unnotify(old, refresh=False)  # Textual's own removal; the new notice refreshes the rack

    # -- the home screen's choices --------------------------------------------------------------
    def open(self, action: str) -> None:
        if action == "quit":
            self.exit(0)
        elif action in ("play_bot", "hot_seat"):
            from dicetable.tui.screens.new_game_screen import NewGameScreen

            self.push_screen(NewGameScreen(registry.board_games(), hot_seat=action == "hot_seat"))
        elif action == "rules":
            from dicetable.tui.screens.rules_screen import RulesScreen

            self.push_screen(RulesScreen())
        elif action == "profile":
            from dicetable.tui.screens.profile_screen import ProfileScreen

            self.push_screen(ProfileScreen())
        elif action == "lan":
            from dicetable.tui.screens.lan_screen import LanScreen  # tables announced nearby (net/reach/lan.py)

            self.push_screen(LanScreen(browse=self.browse_lan))
        elif action == "history":
            from dicetable.tui.screens.history_screen import HistoryScreen  # past games, local and network

            self.push_screen(HistoryScreen())
        elif action == "resume":
            from dicetable.tui.screens.resume_screen import ResumeScreen  # unfinished network games, reopened

            self.push_screen(ResumeScreen())
        elif action in ("host", "join", "dice_room"):
            from dicetable.tui.screens.net_screens import net_screen

            self.push_screen(net_screen(action))

    def start_local(self, game: str, bot: str, first: str = "roll", replace=None, seats: int = 2,
                    options=None) -> None:
        """A local table: one person against `seats - 1` bots `bot`, or `seats` people when `bot` is ""."""
        info = registry.get(game)
        me = player_name(self.profile_dir)
        if bot:
            players = [Player(me), Player(f"{bot} bot", bot)] if seats == 2 else (
                [Player(me)] + [Player(f"{bot} {n}", bot) for n in range(2, seats + 1)])
        else:
            players = [Player(f"Player {n}") for n in range(1, seats + 1)]
            first = "roll"
        seed = self.seed if self.seed is not None else time.time_ns() % 2**63
        table = kept_table(info, players, save=new_save_path(game), history=history_path(), seed=seed, first=first,
                           bot_delay=self.bot_delay, options=options)
        if replace is not None:
            self.pop_screen()
        self.open_table(table)

    def open_table(self, table: TableController) -> None:
        if table.replayed:
            from dicetable.tui.screens.replay_screen import replay_screen

            self.push_screen(replay_screen(table.game.name)(table))
        else:
            self.push_screen(screen_for(table.game.name)(table))

    def start_dice_room(self) -> None:
        """A dice room for one person at this terminal, with local dice."""
        me = player_name(self.profile_dir)
        seed = self.seed if self.seed is not None else time.time_ns() % 2**63
        self.open_table(LocalTable(registry.get("diceroom"), [Player(me)], seed=seed, bot_delay=self.bot_delay))

    # -- the profile ---------------------------------------------------------------------------
    def needs_name(self) -> bool:
        """This app asks for the first name and there is no profile yet (a damaged one is told when
        a table needs it)."""
        from dicetable.net import identity

        try:
            return self.ask_name and identity.load(self.profile_dir) is None
        except identity.ProfileError:
            return False

    def ask_for_name(self) -> None:
        from dicetable.tui.screens.welcome_screen import WelcomeScreen

        self.push_screen(WelcomeScreen(self.profile_dir))

    def profile(self):
        """This player's profile, or None after telling why there is none: a network table needs one,
        so the first name is asked for here when the app has not asked yet (made on first use with
        the login name when the app asks no names: tests, scripts)."""
        from dicetable.net import identity

        if self.needs_name():
            self.ask_for_name()
            self.notify("Choose your name first: the other players see it at the table.", title="Profile")
            return None
        try:
            return identity.load_or_create(directory=self.profile_dir)
        except identity.ProfileError as error:
            self.notify(str(error), title="Profile", severity="error")
            return None

    def open_waiting_room(self, table, replace=None) -> None:
        from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen

        if replace is not None:
            self.pop_screen()
        self.push_screen(WaitingRoomScreen(table))

    def start_network_game(self, table, room) -> None:
        """The table is full: the waiting room gives way to the game's screen."""
        screen = screen_for(table.game.name)
        if screen is None:
            room.query_one("#room-status").update(f"This app has no screen for {table.game.title} yet.")
            return
        if isinstance(self.screen, TooSmallScreen):  # keep the size guard on top of the new screen
            self.pop_screen()
            self.switch_screen(screen(table))
            self._check_size()
            return
        self.switch_screen(screen(table))

    # -- the size guard ------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        await super().on_event(event)
        if isinstance(event, events.Resize):  # the app stops Resize in its own handler
            self._check_size(event.size)

    def _check_size(self, size=None) -> None:
        width, height = size or self.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        on_top = isinstance(self.screen, TooSmallScreen)
        if small and not on_top:
            self.push_screen(TooSmallScreen())
        elif not small and on_top:
            self.pop_screen()


def run(app: DiceTableApp) -> int:
    # What is loaded by now (modules, classes) lives as long as the app: the garbage collector's full
    # passes need not walk it again (one such pass cost the first frame about 15 ms). Until the first
    # frame is painted (DiceTableApp.on_mount) the collector stays off: mounting creates thousands of
    # objects that live on, and the young passes over them cost the first frame about 10 ms.
    gc.freeze()
    gc.disable()
    try:
        app.run()
    finally:
        gc.enable()
    if app.return_code == INTERRUPTED:
        raise KeyboardInterrupt  # the terminal is clean again: the CLI says it in one line, as for every command
    return 0


def run_app() -> int:
    return run(DiceTableApp(ask_name=True))


def run_table(table: TableController) -> int:
    return run(DiceTableApp(table, ask_name=True, home_later=True))
