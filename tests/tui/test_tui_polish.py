"""The app's polish through Pilot at 80 × 24: the board keeps the keys, the move log fits its
panel, nothing is told by colour alone, the rules screen shows every word of the rules files, the home
screen reaches the LAN list, and each game words its random outcomes itself."""

import re
from pathlib import Path

import pytest
from textual.widgets import RadioButton, TabbedContent

from dicetable.core import registry
from dicetable.core.game import Chance, Outcome
from dicetable.core.phrase import Seat
from dicetable.tui.app import DiceTableApp
from dicetable.tui.tables.controller import LocalTable, Player, outcome_words
from dicetable.tui.screens.dialogs import HelpDialog
from dicetable.tui.screens.rules_screen import RulesScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.screens.triad_screen import TriadScreen
from dicetable.tui.widgets.move_log import MoveLog
from tui_pilot import assert_log_wraps, wait_until

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

SIZE = (80, 24)
RULES = Path(__file__).resolve().parents[2] / "tui" / "rules"


# -- 1. the board keeps the keys; the move log wraps in its panel ---------------------------------
@pytest.mark.parametrize("game, screen_class", [("trice", TriceScreen), ("triad", TriadScreen)])
async def test_arrows_reach_the_board_and_the_log_fits_its_panel(game, screen_class):
    table = LocalTable(registry.get(game), [Player("Ann"), Player("Bob")], seed=3, bot_delay=0)
    for _ in range(4):  # a few moves, so the log has lines longer than its panel is wide
        table.submit(table.state.legal_moves()[0])
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, screen_class)
        await wait_until(pilot, lambda: screen.view is not None)
        assert app.focused is None  # no panel (tabs, log) took the focus
        where = lambda: (screen.area, screen.pool_cursor, screen.board_cursor) if game == "trice" else screen.cursor
        before = where()
        await pilot.press("right")
        assert where() != before, "the arrow moved the cursor"
        assert screen.query_one(TabbedContent).active == "moves", "the arrow did not switch tabs"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpDialog)
        await pilot.press("x")
        assert app.screen is screen and app.focused is None  # back from a dialog: still the board's
        log = screen.query_one(MoveLog)
        await pilot.pause()
        assert_log_wraps(log, table.view().log[-1].words(table.names))  # the longest entry


# -- 5. the rules screen shows every word of the rules files, rendered as Markdown ----------------
def words(text: str) -> list[str]:
    """The words of a text, without the marks around them (Markdown's, or punctuation)."""
    return [word for word in (re.sub(r"[^\w]", "", word) for word in text.split()) if word]


async def test_the_rules_screen_shows_every_word_of_each_rules_file():
    from textual.widgets import Markdown

    games = [name for name in registry.names() if registry.get(name).rules_file]
    assert sorted(games) == sorted(registry.board_games())
    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        for name in registry.board_games():
            screen.query_one(TabbedContent).active = f"rules-{name}"
            await wait_until(pilot, lambda: screen.query(f"#rules-{name} Markdown"))
            document = screen.query_one(f"#rules-{name} Markdown", Markdown)
            await wait_until(pilot, lambda: len(document.children) > 3)
            await pilot.pause()
            # Each paragraph, heading, bullet and table cell as drawn: the file's words, in order.
            drawn = [str(block.render()) for block in document.walk_children()
                     if not block.children and type(block).__name__ != "MarkdownTableContent"]
            text = (RULES / registry.get(name).rules_file).read_text(encoding="utf-8")
            assert words("\n".join(drawn)) == words(text), name
            assert not any(line.startswith("#") or "**" in line for line in drawn), name


# -- 4. each game words its own random outcomes -----------------------------------------------------
def test_each_game_words_its_outcomes_through_its_own_hook():
    names = ["Ann", "Bob"]
    trice = registry.get("trice")
    values = (5, 5, 0, 0, 0, 0) + (0,) * 6  # Ann: W6 W6 P1 P1 O1 O1; Bob: all ones
    said = outcome_words(trice, Chance("setup roll", (6,) * 12), Outcome(values), trice.start())
    assert said.words(names) == "Ann rolled W6 W6 P1 P1 O1 O1; Bob rolled W1 W1 P1 P1 O1 O1: Ann places first"
    tie = outcome_words(trice, Chance("setup roll", (6,) * 12), Outcome((0,) * 12), None)
    assert tie.words(names).endswith(": a tie, both roll again")
    triad = registry.get("triad")
    drawn = outcome_words(triad, Chance("draw for Black", (2,)), Outcome((1,)), None)
    assert drawn.parts == (Seat(1), " plays Black") and drawn.words(names) == "Bob plays Black"
    roll = outcome_words(triad, Chance("setup roll", (3,) * 12), Outcome((0,) * 6 + (2,) * 6), None)
    assert roll.words(names) == "Black rolled I I I I I I; White rolled III III III III III III"
    room = registry.get("diceroom")
    assert outcome_words(room, Chance("seat 1 rolls 3d6", (6,) * 3), Outcome((5, 3, 0)), None).words(names) == "11 [6 4 1]"
    # A game without its own words (or an outcome the hook does not know) gets the raw values.
    assert outcome_words(room, Chance("something else", (6,)), Outcome((4,)), None).words(names) == "values 4"
    for name in registry.names():
        assert callable(registry.get(name).describe_outcome)


# -- 3. the LAN list from the home screen, with join --lan's opening check --------------------------
@pytest.mark.slow
async def test_home_opens_the_lan_list_and_a_join_checks_the_opening_key(tmp_path):
    import threading
    from dataclasses import replace

    from dicetable.net.reach import announcement, lan
    from dicetable.net.table.host import HostSession
    from dicetable.net.identity import Profile
    from dicetable.net.table.session import bot_chooser
    from textual.widgets import DataTable
    from dicetable.tui.screens.lan_screen import LanScreen
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen

    def announced(profile, host):
        port, table = host.socket.port, host.replica.table
        return announcement.parse(f"{profile.name} trice {table.hex()[:8]}.{lan.SERVICE_TYPE}",
                               announcement.properties(profile, "trice", 1, 2, table, port), port, ["127.0.0.1"])

    def hosting(profile):
        host = HostSession(profile, "trice", 2, bind="127.0.0.1", port=0,
                           chooser=bot_chooser(registry.get("trice"), "random", 1))
        host.open()
        thread = threading.Thread(target=host.run, daemon=True)
        thread.start()
        return host, thread

    ann, cy = Profile.generate("Ann"), Profile.generate("Cy")
    # Eve signs an announcement of Ann's table with her own key: the handshake (Ann's curve key)
    # succeeds, but the table is opened by Ann's key, not the announced one.
    eve = replace(Profile.generate("Eve"), curve_secret=ann.curve_secret, curve_public=ann.curve_public)
    hosts = [hosting(ann), hosting(cy)]
    lie, honest = announced(eve, hosts[0][0]), announced(cy, hosts[1][0])
    bob = tmp_path / "bob"
    app = DiceTableApp(profile_dir=bob)
    app.browse_lan = False  # no mDNS socket in a test: the list is fed the announcements
    try:
        async with app.run_test(size=SIZE) as pilot:
            assert "LAN tables" in str(app.screen.query_one("#home-menu").get_option("lan").prompt)
            await pilot.press("l")
            screen = app.screen
            assert isinstance(screen, LanScreen)
            screen.show([lie])
            await pilot.pause()
            assert str(screen.query_one(DataTable).get_row_at(0)[0]) == announcement.UNVERIFIED
            await pilot.press("enter")
            room = app.screen
            assert isinstance(room, WaitingRoomScreen)
            await wait_until(pilot, lambda: "not opened by the key" in str(room.query_one("#room-status").render()))
            assert eve.fingerprint in str(room.query_one("#room-status").render())
            assert not (bob / announcement.KNOWN_HOSTS).exists(), "a host failing the check is not pinned"
            await pilot.press("escape", "l")
            screen = app.screen
            screen.show([honest])
            await pilot.pause()
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen))
            assert list(announcement.KnownHosts(bob).hosts) == [cy.public_key]  # met and checked: pinned
            await pilot.press("ctrl+q")
    finally:
        for host, thread in hosts:
            host.stop()
            thread.join(10)


# -- 2. nothing told by colour alone ----------------------------------------------------------------
async def test_choices_and_the_menu_cursor_read_without_colour(monkeypatch):
    """With NO_COLOR every radio set shows which choice is picked (● vs ○) and where the keyboard
    is (›), and the home menu marks its highlighted line."""
    from textual.widgets import RadioSet

    from dicetable.tui.screens.net_screens import HostScreen
    from dicetable.tui.screens.new_game_screen import NewGameScreen

    monkeypatch.setenv("NO_COLOR", "1")

    def plain(widget) -> str:
        return widget.render().plain

    def check_sets(screen) -> None:
        sets = list(screen.query(RadioSet))
        assert sets
        for radio_set in sets:
            buttons = list(radio_set.query(RadioButton))
            assert sum(b.value for b in buttons) == 1
            for button in buttons:
                glyph = plain(button)[1]
                assert glyph == ("●" if button.value else "○"), (radio_set.id, plain(button))
            at_cursor = [b for b in buttons if plain(b).startswith("›")]
            assert len(at_cursor) == (1 if radio_set.has_focus else 0), radio_set.id

    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        assert app.no_color
        menu = app.screen.query_one("#home-menu")
        lines = lambda: [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert [line[0] for line in lines()][:2] == ["›", " "]
        await pilot.press("down")
        assert [line[0] for line in lines()][:3] == [" ", "›", " "]
        for key in ("b", "s"):  # against a bot, hot-seat
            await pilot.press(key)
            screen = app.screen
            assert isinstance(screen, NewGameScreen)
            check_sets(screen)
            await pilot.press("down", "enter")  # pick the second game: the marks follow the choice
            game = screen.query_one("#setup-game", RadioSet)
            assert game.pressed_index == 1
            check_sets(screen)
            await pilot.press("tab")  # the keyboard's mark moves to the next set
            check_sets(screen)
            await pilot.press("escape")
        await pilot.press("h")
        assert isinstance(app.screen, HostScreen)
        check_sets(app.screen)
