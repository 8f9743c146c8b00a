"""What got in a newcomer's way in their first hour (issue 20), each fixed and proved here: names at
the table, the rules rendered, the fairness verdict seen at 80 × 24, typed TRIAD squares, Dice
Breaker's words, who starts asked only where it matters, Tricolor's End Tiles without a cost, a
dice room a guest leaves while it goes on, and a clipboard that says what it did.
(Everything fitting 80 × 24: test_fit_80x24.py; selfplay's progress: test_cli.py; scripts/play's
first run: tests/system/test_bootstrap.py.)"""

import functools
import os

import pytest
from textual.widgets import Input

from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.net_screens import HostScreen
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from tui_pilot import paste_invite, until_shown
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

SIZE = (80, 24)
wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # two apps and a network session


# -- 10. a guest who leaves the dice room is gone from it; the room goes on (issue 33) --------------------
@pytest.mark.slow
async def test_a_guest_leaving_the_dice_room_leaves_it_the_host_rolls_on_and_both_transcripts_verify(tmp_path, monkeypatch):
    """Once (issue 20) a guest's Esc closed the room for everyone; a room now stays (issue 33): the guest
    is gone, home at once, and the host rolls on until its own Esc closes the room."""
    from dicetable.tui.screens.home_screen import HomeScreen

    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host_app = DiceTableApp(profile_dir=tmp_path / "ann")
    join_app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with host_app.run_test(size=SIZE) as host, join_app.run_test(size=SIZE) as join:
        pilots = (host, join)
        await host.press("d", "h")
        assert isinstance(host_app.screen, HostScreen)
        await until_shown(host, "#open")
        assert await host.click("#open")
        await wait_until(pilots, lambda: isinstance(host_app.screen, WaitingRoomScreen) and host_app.screen.table.invite)
        await paste_invite(join, join_app, host_app.screen.table.invite)
        await wait_until(pilots, lambda: all(app.screen.__class__.__name__ == "DiceRoomScreen" for app in (host_app, join_app)))
        room, guest = host_app.screen, join_app.screen
        await wait_until(pilots, lambda: guest.view is not None and not guest.query_one("#roll-input", Input).disabled)
        await join.press(*"d20", "enter")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 1)
        paths = [screen.controller.session.transcript_path for screen in (room, guest)]
        # The guest leaves: it is home at once, and out of the room for the host, who rolls on.
        await join.press("escape")
        await wait_until(pilots, lambda: isinstance(join_app.screen, HomeScreen))
        await wait_until(pilots, lambda: room.view.out == {1})
        assert room.view.result is None
        status = str(room.query_one("#status").render())
        assert room.view.names[1] in status and "left the room" in status, status
        await host.press(*"2d6", "enter")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 2)
        # The host's Esc closes the room; its copy says who left.
        await host.press("escape")
        await wait_until(pilots, lambda: isinstance(host_app.screen, HomeScreen))
        await wait_until(pilots, lambda: read(paths[0]).result is not None)
    verdict = verify(paths[0])
    assert verdict.line().startswith("valid: dice room (rolls: "), verdict.line()
    assert "left" in verdict.line() and "closed the room after 2 rolls" in verdict.line(), verdict.line()
    guest_copy = verify(paths[1])  # the guest's copy ends where it left: a table still open, checked so far
    assert guest_copy.fault_kind in (None, "unfinished"), guest_copy.line()


# -- 1. names: asked on the first run, told apart at a table, never "player" ---------------------------
async def test_the_first_run_asks_the_name_and_the_table_uses_it(home, monkeypatch):
    from dicetable.net import identity
    from dicetable.tui.screens.home_screen import HomeScreen
    from dicetable.tui.screens.trice_screen import TriceScreen
    from dicetable.tui.screens.welcome_screen import WelcomeScreen

    no_login_name(monkeypatch)  # no login name to suggest: the person types one
    app = DiceTableApp(ask_name=True, bot_delay=0, seed=1)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, WelcomeScreen)
        assert app.screen.query_one("#welcome-name", Input).value == ""
        await pilot.press("enter")  # no name: asked again, nothing made
        assert isinstance(app.screen, WelcomeScreen) and identity.load() is None
        await pilot.press("b")  # typed into the name, not taken as the home screen's key
        await pilot.press("escape")  # and the question stays until it is answered
        assert isinstance(app.screen, WelcomeScreen)
        await pilot.press("backspace", "B", "e", "a", "enter")
        assert isinstance(app.screen, HomeScreen)
        assert identity.load().name == "Bea"
        await pilot.press("b", "s")  # a TRICE game against the medium bot (greedy)
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
        assert "Bea" in app.screen.view.names and "player" not in app.screen.view.names


async def test_with_a_profile_the_app_asks_nothing(home):
    from dicetable.net.identity import Profile
    from dicetable.tui.screens.home_screen import HomeScreen

    Profile.generate("Cy").save(home)
    app = DiceTableApp(ask_name=True)
    async with app.run_test(size=SIZE):
        assert isinstance(app.screen, HomeScreen)


def test_without_a_profile_or_login_name_a_local_seat_is_you(monkeypatch):
    from dicetable.tui.app import player_name

    no_login_name(monkeypatch)
    assert player_name() == "You"


def no_login_name(monkeypatch) -> None:
    """Nowhere to learn a login name from: no $USER, nothing for getpass (no variable, and a uid the
    password database does not know)."""
    import getpass

    def unknown():
        raise KeyError("getpwuid(): uid not found")  # what getpass.getuser() raises then (3.11)

    monkeypatch.delenv("USER", raising=False)
    monkeypatch.setattr(getpass, "getuser", unknown)


async def test_without_USER_the_login_name_is_offered(home, monkeypatch):
    """$USER unset (a bare `env -i` shell, some containers): the name comes from getpass.getuser(),
    here from the password database, on the welcome screen, for a local seat and for a new profile."""
    import pwd

    from dicetable.net import identity
    from dicetable.tui.app import player_name
    from dicetable.tui.screens.welcome_screen import WelcomeScreen

    for variable in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(variable, raising=False)
    login = pwd.getpwuid(os.getuid()).pw_name
    app = DiceTableApp(ask_name=True)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, WelcomeScreen)
        assert app.screen.query_one("#welcome-name", Input).value == login
        assert player_name() == login
        await pilot.press("enter")  # Enter takes it
        await wait_until(pilot, lambda: identity.load() is not None)
    assert identity.load().name == login
    assert identity.load_or_create(directory=home.parent / "other").name == login


def test_two_people_with_one_name_are_told_apart_by_their_keys(tmp_path):
    import random as rnd

    from dicetable.core import registry
    from dicetable.core.bots import RandomBot
    from dicetable.net.table.local_seats import play_table
    from dicetable.tui.tables.history import network_games
    from dicetable.tui.tables.view import told_apart

    assert told_apart(["Ann", "Bob"], ["AAAA-1111", "BBBB-2222"]) == ("Ann", "Bob")
    assert told_apart(["Ann", "Ann"], ["AAAA-1111", "BBBB-2222"]) == ("Ann (AAAA)", "Ann (BBBB)")
    assert told_apart(["Ann", "Ann", "Bo"], ["AAAA-1111", "AAAA-2222", ""]) == ("Ann (AAAA-1111)", "Ann (AAAA-2222)", "Bo")
    # A finished network game of two people both called Ann: the history says which Ann won.
    trice = registry.get("trice")
    bots = [RandomBot(trice, rnd.Random(s)) for s in range(2)]
    table = play_table(trice, {}, bots, ["Ann", "Ann"], rnd.Random(4), transcript=tmp_path / "t" / "game.dtt")
    (game,), unreadable = network_games(tmp_path / "t")
    assert not unreadable
    first, second = game.names
    assert first != second and first.startswith("Ann (") and second.startswith("Ann (")
    assert game.result.startswith((f"{first} wins", f"{second} wins", "draw"))
    assert "seat" not in game.words()
    # Read by the second Ann: her seat is named as hers.
    (game,), _ = network_games(tmp_path / "t", key=table.seats[1].profile.public_key)
    assert game.names == (first, f"{second} (you)")


# -- 2. the rules screen renders the Markdown, in the setup screens' order, opened at the game ------
async def test_the_rules_render_as_markdown_in_the_games_order():
    from textual.widgets import Markdown, TabbedContent

    from dicetable.core import registry
    from dicetable.tui.screens.rules_screen import RulesScreen

    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        titles = [str(tab.label) for tab in screen.query("ContentTab")]
        assert titles == [registry.get(name).title for name in registry.board_games()]
        for name in registry.board_games():
            screen.query_one(TabbedContent).active = f"rules-{name}"
            await wait_until(pilot, lambda: screen.query(f"#rules-{name} Markdown"))
            document = screen.query_one(f"#rules-{name} Markdown", Markdown)
            await wait_until(pilot, lambda: len(document.children) > 3)
            shown = "\n".join(str(block.render()) for block in document.query("MarkdownBlock") if not block.children)
            assert registry.get(name).title.split()[0] in shown
            assert "**" not in shown and "\n# " not in shown and not shown.startswith("# "), name
            sections = lambda: [str(node.label) for node in screen.query_one(f"#rules-{name} Tree").root.children]
            # the table of contents: filled a moment after the document (it is built from it)
            await wait_until(pilot, lambda: any(section.startswith("Components") for section in sections()))


async def test_the_table_help_opens_the_rules_of_the_game_being_played():
    from dicetable.core import registry
    from dicetable.tui.screens.dialogs import HelpDialog
    from dicetable.tui.screens.rules_screen import RulesScreen
    from dicetable.tui.screens.triad_screen import TriadScreen
    from dicetable.tui.tables.controller import LocalTable, Player

    table = LocalTable(registry.get("triad"), [Player("Ann"), Player("Bob")], seed=3, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen))
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpDialog)
        assert "the full rules of TRIAD" in str(app.screen.query_one("#help-text").render())
        await pilot.press("r")
        assert isinstance(app.screen, RulesScreen) and app.screen.query_one("TabbedContent").active == "rules-triad"
        await pilot.press("escape")
        assert isinstance(app.screen, TriadScreen)


# -- issue 34, item 8: t at a local table says there is no chat there, instead of nothing --------------
@pytest.mark.parametrize("game", ["trice", "triad", "dicebreaker"])  # Tricolor opens on a dialog: its keys are the dialog's
async def test_t_at_a_local_table_says_chat_is_for_network_tables(game):
    from textual.widgets import TabbedContent

    from dicetable.core import registry
    from dicetable.tui.tables.controller import LocalTable, Player

    table = LocalTable(registry.get(game), [Player("Ann"), Player("Bob")], seed=3, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None)
        screen, tabs = app.screen, app.screen.query_one(TabbedContent)
        shown = tabs.active
        assert "chat" not in [str(key.description) for key in screen.query("FooterKey")]  # not offered here
        await pilot.press("t")
        await wait_until(pilot, lambda: [n.message for n in app._notifications]
                         == ["Chat is for network tables."])
        assert app.screen is screen and tabs.active == shown  # nothing else moved


# -- 4. the fairness panel's verdict is seen at 80 × 24 ------------------------------------------------
async def test_verify_shows_its_verdict_on_screen_however_many_events():
    from dicetable.core import registry
    from dicetable.tui.tables.controller import LocalTable, Player

    info = registry.get("dicebreaker")
    table = LocalTable(info, [Player("Ann"), Player("Bob")], seed=2, bot_delay=0)
    bot = info.bots["greedy"](info, __import__("random").Random(2))
    while len(table.events) < 30:  # a panel of events far taller than the screen
        table.submit(bot.choose(table.state.view(table.state.actor)))
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None)
        screen = app.screen
        await pilot.press("f")
        panel, verdict = screen.query_one("FairnessPanel"), screen.query_one("#fair-verify")
        for scrolled in (False, True):  # as the panel opens; after reading down to the last event
            if scrolled:
                panel.scroll_end(animate=False)
                await pilot.pause()
            await pilot.press("v")
            await pilot.pause()
            assert "verify: a local game" in str(verdict.render())
            assert panel.scrollable_content_region.contains_region(verdict.region), "the verdict is in view"


# -- 5. TRIAD takes a typed square ---------------------------------------------------------------------
async def test_triad_takes_a_typed_square_as_the_readme_says():
    from textual.widgets import TabbedContent

    from dicetable.core import registry
    from dicetable.core.triad import INDEX, SQUARES
    from dicetable.tui.screens.triad_screen import TriadScreen, movable
    from dicetable.tui.tables.controller import LocalTable, Player

    table = LocalTable(registry.get("triad"), [Player("Ann"), Player("Bob")], seed=3, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen) and app.screen.view is not None)
        screen = app.screen
        state = screen.view.state
        away = next(i for i in movable(state) if i != screen.cursor)  # one of the dice to move, not under the cursor
        await pilot.press(*SQUARES[away], "enter")
        assert screen.chosen == away, f"typing {SQUARES[away]} and Enter chose {SQUARES[screen.chosen]}"
        await pilot.press("escape")  # un-choose
        # f is column f and the fairness panel's key: typed with a row, the square wins and the panel stays.
        await pilot.press("f", "4")
        assert screen.cursor == INDEX["f4"] and screen.query_one(TabbedContent).active == "moves"
        await pilot.press("f")  # alone, it still shows the fairness panel
        assert screen.query_one(TabbedContent).active == "fairness"


# -- 6. Dice Breaker says what a break did, and whose a caught die was ------------------------------------
def test_the_last_throw_keeps_the_broken_dies_new_face_past_the_rounds_end():
    from dicetable.core import registry
    from dicetable.core.chance import LocalSource
    from dicetable.tui.screens.dicebreaker_screen import last_words

    info = registry.get("dicebreaker")
    state = info.new(2, info.resolve_options({"mode": "quick"}))
    source = LocalSource(__import__("random").Random(1))
    broke_last = None
    while state.result is None and broke_last is None:
        if state.actor < 0:
            rounds = len(state.rounds)
            state = state.resolve(source.outcome(state.chance()))
            if len(state.rounds) > rounds and state.last[0] == "throw" and state.last[2]:
                broke_last = state  # the round ended on a break: its target has left the arena
            continue
        moves = state.legal_moves()
        breaks = [m for m in moves if len(m.args) == 2]
        state = state.apply((breaks or moves)[0])
    said = last_words(broke_last, ["Ann", "Bob"])
    assert "(now ?)" not in said and f"(now {broke_last.last[6]})" in said, said


async def test_a_caught_die_is_named_as_caught_in_the_prompt():
    from dicetable.core import registry
    from dicetable.tui.screens.dicebreaker_screen import DiceBreakerScreen
    from dicetable.tui.tables.controller import LocalTable, Player

    info = registry.get("dicebreaker")
    often_caught = {"mode": "quick", "out_num": 1, "out_den": 2, "caught_num": 1, "caught_den": 1}
    table = LocalTable(info, [Player("Ann"), Player("Bob")], seed=5, bot_delay=0, options=often_caught)
    bot = info.bots["greedy"](info, __import__("random").Random(5))
    for _ in range(200):  # until a seat is to throw while it holds a die it caught
        state = table.state
        if state.held and state.phase == "throw" and set(state.extra[state.actor]) & set(state.throwable(state.actor)):
            break
        table.submit(bot.choose(state.view(state.actor)))
    seat = table.state.actor
    assert table.state.extra[seat]
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DiceBreakerScreen) and app.screen.view is not None)
        screen = app.screen
        for _ in range(len(screen.throwable())):
            if screen.next_die() in table.state.extra[seat]:
                break
            await pilot.press("tab")
        caught = screen.next_die()
        assert caught[0] != "AB"[seat]  # it keeps the thrower's letter...
        assert f"r rolls {caught} (caught)" in str(screen.query_one("#status").render())  # ...and says so
        assert f"+{caught}" in screen.query_one("#db-hand").plain()


# -- 7. who starts is asked only where a person may choose it, in the game's words ----------------------
async def test_who_starts_is_asked_only_where_it_matters():
    from textual.widgets import RadioSet

    from dicetable.tui.screens.new_game_screen import NewGameScreen

    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        screen = app.screen
        assert isinstance(screen, NewGameScreen)
        first = screen.query_one("#setup-first", RadioSet)
        asked = {}
        for index, game in enumerate(("trice", "triad", "dicebreaker", "tricolor")):
            screen.query_one("#setup-game", RadioSet).query("RadioButton")[index].value = True
            await pilot.pause()
            asked[game] = first.border_title if first.display else None
        assert asked == {"trice": "Who places first", "triad": "Who moves first", "dicebreaker": None,
                         "tricolor": "Who plays first"}
        screen.query_one("#setup-seats", RadioSet).query("RadioButton")[1].value = True  # three players
        await pilot.pause()
        assert not first.display  # Tricolor Line for three: nobody is seated first or second by choice


# -- 8. Tricolor: End Tiles show no cost ---------------------------------------------------------------
async def test_an_end_tile_on_a_pile_shows_no_cost():
    from dataclasses import replace

    from dicetable.core import registry
    from dicetable.core.tricolor_tiles import END, TILES
    from dicetable.tui.screens.tricolor_screen import TricolorScreen, tile_cost
    from dicetable.tui.tables.controller import LocalTable, Player

    end = next(t.id for t in TILES if t.kind == END)
    road = next(t.id for t in TILES if t.kind == "road" and t.shape == "cross")
    assert tile_cost(end) == 0 and tile_cost(road) == TILES[road].cost == 4
    table = LocalTable(registry.get("tricolor"), [Player("Ann"), Player("bot", "greedy")], seed=3, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TricolorScreen) and app.screen.seen is not None)
        screen = app.screen
        screen.seen = replace(screen.seen, tops=(end, road, road))
        piles = screen.pile_text().plain.splitlines()
        assert "End" in piles[1] and "cost" not in piles[1], piles
        assert "cost 4" in piles[2]


# -- 11. the clipboard: what was done, said as it is ------------------------------------------------------
class _App:
    def __init__(self) -> None:
        self.asked = []

    def copy_to_clipboard(self, text: str) -> None:
        self.asked.append(text)


def _tool(directory, name: str, status: int) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n/bin/cat > \"${{0%/*}}/{name}.got\"\nexit {status}\n")
    path.chmod(0o755)


def test_copying_says_what_was_done(tmp_path, monkeypatch):
    from dicetable.tui.clipboard import copy

    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", str(tools))
    for name in ("TMUX", "DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_TTY"):
        monkeypatch.delenv(name, raising=False)
    app = _App()
    # Nothing to check with: the terminal was asked, and the words do not claim more.
    said = copy(app, "dt1-abc", "the invite")
    assert app.asked == ["dt1-abc"] and "Asked the terminal" in said and "Copied" not in said
    # Inside tmux whose set-clipboard ignores applications: tmux's own buffer holds it, and that is said.
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    _tool(tools, "tmux", 0)
    said = copy(app, "dt1-abc", "the invite")
    assert "tmux's paste buffer" in said and (tools / "tmux.got").read_text() == "dt1-abc"
    # A desktop clipboard of this machine that takes it: copied, for sure.
    monkeypatch.setenv("DISPLAY", ":0")
    _tool(tools, "xclip", 0)
    assert copy(app, "dt1-abc", "the invite") == "Copied the invite to the clipboard."
    # Over SSH this machine's clipboard is not the player's: not used.
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.1 5000 10.0.0.2 22")
    assert "Copied" not in copy(app, "dt1-abc", "the invite")
    # A tool that fails is not taken for a copy.
    monkeypatch.delenv("SSH_CONNECTION")
    _tool(tools, "xclip", 1)
    assert "Copied" not in copy(app, "dt1-abc", "the invite")
