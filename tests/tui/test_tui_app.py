"""The app through Pilot at 80 × 24: whole TRICE games against a bot by keys and by mouse,
the home screen's choices, refusals, the size guard."""

import random

import pytest

from dicetable.core import registry
from dicetable.core.bots import RandomBot
from dicetable.core.game import Move
from dicetable.tui.app import DiceTableApp
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.screens.dialogs import GameOverDialog, HelpDialog
from dicetable.tui.screens.home_screen import HomeScreen
from dicetable.tui.screens.new_game_screen import NewGameScreen
from dicetable.tui.screens.too_small_screen import TooSmallScreen
from dicetable.tui.screens.trice_screen import TriceScreen, pool_slots
from tui_pilot import click_cell, die_cell, until_shown, wait_until

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

TRICE = registry.get("trice")
SIZE = (80, 24)


def table_vs(bot="greedy", seed=1, first="roll"):
    return LocalTable(TRICE, [Player("Ann"), Player(f"{bot} bot", bot)], seed=seed, first=first, bot_delay=0)


async def my_turn_or_over(pilot, screen):
    await wait_until(pilot, lambda: screen.view is not None and (screen.view.result is not None or screen.view.my_turn()))


async def play_to_the_end(pilot, app, make_move):
    """Play the person's seat with a seeded random choice, made through `make_move`."""
    screen = app.screen
    assert isinstance(screen, TriceScreen)
    me = RandomBot(TRICE, random.Random(99))
    moves = 0
    while True:
        await my_turn_or_over(pilot, screen)
        if screen.view.result is not None:
            return screen, moves
        state, logged = screen.view.state, len(screen.view.log)
        move = me.choose(state)
        await make_move(pilot, screen, move)
        await wait_until(pilot, lambda: screen.view.state is not state)
        assert screen.view.log[logged].words(screen.view.names) == TRICE.describe(state, move).replace(
            f"seat {state.actor}", "Ann").replace(f"seat {1 - state.actor}", screen.view.names[1 - state.actor])
        moves += 1
        assert moves < 400


async def by_keys(pilot, screen, move: Move):
    arg = move.args[0]
    if move.kind == "choose":
        await pilot.press(arg[0].lower(), arg[1])  # "w6": colour then value
        assert pool_slots(screen.view.state)[screen.pool_cursor] == arg
        assert screen.area == "pool"
    else:
        await pilot.press(arg[0], arg[1])  # "b2": column then row
        assert screen.board_cursor == "abcd".index(arg[0]) + 4 * (int(arg[1]) - 1)
        assert screen.area == "board"
    await pilot.press("enter")


async def by_mouse(pilot, screen, move: Move):
    arg = move.args[0]
    if move.kind == "choose":
        slot = pool_slots(screen.view.state).index(arg)
        assert await click_cell(pilot, f"pool-{slot}")
    else:
        assert await click_cell(pilot, f"sq-{arg}")


@pytest.mark.slow
async def test_a_whole_game_against_a_bot_by_key_presses():
    app = DiceTableApp(table_vs("greedy", seed=4))
    async with app.run_test(size=SIZE) as pilot:
        screen, moves = await play_to_the_end(pilot, app, by_keys)
        assert moves >= 1
        result = screen.view.result
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
        assert app.screen.headline == result.describe(screen.view.names)
        status = str(screen.query_one("#status").render())
        assert result.describe(screen.view.names) in status
        # The deciding line is marked on the board with its condition, and named in words.
        state = screen.view.state
        if state.line:
            cells = [die_cell(screen, f"sq-{'abcd'[i % 4]}{i // 4 + 1}") for i in state.line]
            assert all(cell.mark == "line" and cell.caption[0] in "★✖" for cell in cells)
            assert "Trice (" in app.screen.detail
        # Rematch from the dialog: a new game at the same table.
        await pilot.press("r")
        await wait_until(pilot, lambda: app.screen is screen and screen.view.result is None)
        assert screen.view.state.phase in ("choose", "place")


@pytest.mark.slow
async def test_a_whole_game_against_a_bot_by_mouse_clicks():
    app = DiceTableApp(table_vs("random", seed=8))
    async with app.run_test(size=SIZE) as pilot:
        screen, moves = await play_to_the_end(pilot, app, by_mouse)
        assert moves >= 1
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
        await until_shown(pilot, "#home")
        assert await pilot.click("#home")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_a_refused_move_is_said_and_changes_nothing():
    table = LocalTable(TRICE, [Player("Ann"), Player("Bob")], seed=2, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        for move in ("choose P3", "place a1", "choose O4"):
            table.submit(Move.parse(move))
        await wait_until(pilot, lambda: screen.view.state.phase == "place")
        before = screen.view.state
        assert await click_cell(pilot, "sq-a1")  # taken by P3
        await wait_until(pilot, lambda: any("not free" in n.message for n in app._notifications))
        assert screen.view.state is before


async def test_help_and_panels_by_keys():
    app = DiceTableApp(table_vs("greedy", seed=1), home_later=True)  # as `dicetable play` opens it
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await my_turn_or_over(pilot, screen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpDialog)
        await pilot.press("x")
        assert app.screen is screen
        await pilot.press("f")
        assert screen.query_one("#panels").active == "fairness"
        await pilot.press("v")
        verdict = str(screen.query_one("#fair-verify").render())
        assert "no transcript" in verdict
        await pilot.press("m")
        assert screen.query_one("#panels").active == "moves"
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
        # The home screen under the table, built when first shown: whole, focused.
        await until_shown(pilot, "#home-menu")
        assert app.focused is app.screen.query_one("#home-menu")
        assert len(app.screen.query("FooterKey")) > 5


@pytest.mark.slow
async def test_home_reaches_every_choice():
    app = DiceTableApp(bot_delay=0, seed=6)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("r")
        assert app.screen.__class__.__name__ == "RulesScreen"
        await wait_until(pilot, lambda: app.screen.query("#rules-trice MarkdownParagraph"))
        shown = " ".join(str(paragraph.render()) for paragraph in app.screen.query("#rules-trice MarkdownParagraph"))
        assert "3 rows × 4 columns" in shown and "**" not in shown  # rendered: bold, not marked up
        await pilot.press("escape")
        await pilot.press("p")
        assert app.screen.__class__.__name__ == "ProfileScreen"
        info = str(app.screen.query_one("#profile-info").render())
        assert "Fingerprint:" in info and "-" in info
        await pilot.press("escape")
        for key in ("h", "j", "d"):
            await pilot.press(key)
            assert not isinstance(app.screen, HomeScreen)
            await pilot.press("escape")
            assert isinstance(app.screen, HomeScreen)
        # Play against a bot: the setup screen, then the table, by keys only.
        await pilot.press("b")
        assert isinstance(app.screen, NewGameScreen)
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
        view = app.screen.view
        assert [seat.kind for seat in view.seats].count("bot") == 1
        await pilot.press("escape")
        # Hot-seat: both seats at this terminal; by mouse on the menu.
        await until_shown(pilot, "#home-menu")
        assert await pilot.click("#home-menu", offset=(5, 1))
        assert isinstance(app.screen, NewGameScreen) and app.screen.hot_seat
        await until_shown(pilot, "#start")
        assert await pilot.click("#start")
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
        assert app.screen.view.local_seats == frozenset({0, 1})


async def test_a_small_terminal_asks_for_a_larger_window():
    app = DiceTableApp(table_vs())
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        text = str(app.screen.query_one("#too-small-text").render())
        assert "make the window larger" in text and "60 × 20" in text
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)


async def test_the_dice_room_alone_rolls_local_dice():
    app = DiceTableApp(bot_delay=0, seed=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "a")
        screen = app.screen
        assert screen.__class__.__name__ == "DiceRoomScreen"
        await wait_until(pilot, lambda: screen.view is not None and screen.view.my_turn())
        assert "f2" in screen.active_bindings and "f3" in screen.active_bindings  # a room in turns: pass, close
        await pilot.press(*"3d6+1", "enter")
        await wait_until(pilot, lambda: screen.view.state.rolls)
        roll = screen.view.state.rolls[-1]
        assert roll.expr == "3d6+1" and len(roll.faces) == 3 and roll.total == sum(roll.faces) + 1
        picture = str(screen.query_one("#roll-picture").render())
        assert f" {roll.total} " in picture and picture.count("●") == sum(roll.faces)
        assert screen.view.events[-1].outcome.words(screen.view.names).startswith(f"{roll.total} [")
        await pilot.press(*"2x", "enter")  # not a dice expression: said, nothing rolled
        await wait_until(pilot, lambda: any(n.title == "Not a roll" and "2x" in n.message for n in app._notifications))
        assert len(screen.view.state.rolls) == 1
        screen.set_focus(None)  # out of the expression line: the panel keys are the room's again
        await pilot.press("f")
        assert screen.query_one("#panels").active == "fairness"
        await pilot.press("v")
        assert "no transcript" in str(screen.query_one("#fair-verify").render())
        await pilot.press("m")
        assert screen.query_one("#panels").active == "moves"


async def test_the_dice_room_rolls_full_notation_with_labels_and_several_rolls():
    app = DiceTableApp(bot_delay=0, seed=5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "a")
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None and screen.view.my_turn())
        await pilot.press(*"2#3d6r1 [str], 1d20+5 [hit]", "enter")
        await wait_until(pilot, lambda: screen.view.state.rolls)
        roll = screen.view.state.rolls[-1]
        assert roll.expr == "2#3d6r1 [str], 1d20+5 [hit]" and len(roll.faces) == 2 * 3 * 2 + 1  # a reroll reserved per d6
        tallies = roll.tallies
        assert [t.label for t in tallies] == ["str", "str", "hit"]
        picture = str(screen.query_one("#roll-picture").render())
        assert all(f"{t.label}  {t.total} " in picture for t in tallies) and "●" not in picture  # a d20: no pips
        history = screen.query_one("#roll-history").shown[-1]
        assert history == f"  1. {screen.view.names[0]} rolled {roll.expr}: " + ", ".join(
            f"{t.label}: {t.total} {t.dice_text()}" for t in tallies) + "   (local dice)"


async def test_the_cell_under_the_mouse_is_lit_and_only_it():
    app = DiceTableApp(table_vs("greedy", seed=1))
    async with app.run_test(size=SIZE) as pilot:
        await my_turn_or_over(pilot, app.screen)
        board = app.screen.query_one("#board")
        grounds = lambda cell: {segment.style.bgcolor for segment in board.render_line(cell.y + 3).crop(cell.x, cell.x + 9)
                                if not segment.text.strip()}  # its caption row's blanks: the cell's own ground
        b2, c2 = die_cell(app.screen, "sq-b2"), die_cell(app.screen, "sq-c2")
        unlit = grounds(c2)
        await pilot.hover(board, offset=(b2.x + 4, b2.y + 1))
        await wait_until(pilot, lambda: board.hover is b2)
        lit = grounds(b2)
        assert lit and lit != unlit and grounds(c2) == unlit
        await pilot.hover(app.screen.query_one("#status"))
        await wait_until(pilot, lambda: board.hover is None)


@pytest.mark.parametrize("no_color", [False, True])
async def test_no_color_drops_colour_but_keeps_the_letters(monkeypatch, no_color):
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    app = DiceTableApp(table_vs("greedy", seed=1))
    async with app.run_test(size=SIZE) as pilot:
        await my_turn_or_over(pilot, app.screen)
        svg = app.export_screenshot()
        assert app.no_color is no_color
        # The orange die's colour (app.tcss) is on screen only with colour; letters are always there.
        assert ("#e8790c" in svg.lower()) is not no_color
        pool = "".join(str(die_cell(app.screen, f"pool-{i}").render()) for i in range(12))
        assert all(letter in pool for letter in "WPO")


async def test_the_dice_room_shows_each_die_size_against_fair_dice():
    app = DiceTableApp(bot_delay=0, seed=7)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "a")
        room = app.screen
        await wait_until(pilot, lambda: room.view is not None and room.view.my_turn())
        for n, expr in enumerate(("20#3d6", "20#3d6", "3d6!", "2d20"), start=1):
            await pilot.press(*expr, "enter")
            await wait_until(pilot, lambda: len(room.view.state.rolls) == n)
        await pilot.press("f5")  # local dice: no transcript to check a shared line against
        await wait_until(pilot, lambda: any("Nothing to share" in n.message for n in app._notifications))
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "DiceStatsScreen")
        stats = app.screen
        shown = str(stats.query_one("#stats-charts").render())
        sixes = sum(1 for r in room.view.state.rolls for t in r.tallies for d in t.dice if d.sides == 6)
        assert f"d6 — {sixes} dice: chi-square" in shown and "degrees of freedom, p = " in shown
        assert "d20 — 2 dice: too few to judge (about 100 d20 needed)" in shown
        assert shown.count("│ marks what fair dice give") == 2
        assert "The dice of everyone — 4 rolls" in str(stats.query_one("#stats-title").render())
        await pilot.press("right")  # the one person of a room alone: the same dice, and their rolls
        assert f"The dice of {room.view.names[0]} — 4 rolls" in str(stats.query_one("#stats-title").render())
        shown = str(stats.query_one("#stats-charts").render())
        assert f"Rolls of {room.view.names[0]}" in shown and "rolled 3d6!:" in shown
        await pilot.press("escape")
        assert app.screen is room
