"""The Dice Breaker table through Pilot at 80 × 24: a whole quick-play game against bots by keys and
mouse, the Latent Dice claim by keys, hot-seat for three from the home screen, six players on one
screen, and a snapshot.

Update the snapshot after a deliberate change of the look:
`pytest tests/test_tui_dicebreaker.py --snapshot-update`.
"""

from __future__ import annotations

import functools
import random

import pytest
from textual.widgets import TabbedContent
from textual.widgets._footer import FooterKey

from dicetable.core import registry
from dicetable.core.dicebreaker import LATENT, LETTERS, THROW
from dicetable.core.game import Move
from dicetable.tui.app import DiceTableApp
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.screens.dialogs import GameOverDialog, HelpDialog
from dicetable.tui.screens.dicebreaker_screen import DiceBreakerScreen, round_lines
from dicetable.tui.screens.new_game_screen import NewGameScreen
from dicetable.tui.widgets.arena import ArenaView
from dicetable.tui.widgets.move_log import MoveLog
from tui_pilot import assert_log_wraps
from tui_pilot import wait_until as wait_a_while

wait_until = functools.partial(wait_a_while, timeout=20.0)  # whole bot games

GAME = registry.get("dicebreaker")
SIZE = (80, 24)


def people(count: int, **options) -> LocalTable:
    players = [Player(f"P{n}") for n in range(1, count + 1)]
    return LocalTable(GAME, players, seed=11, options=options, bot_delay=0)


def arena_text(screen) -> str:
    return screen.query_one(ArenaView).plain()


@pytest.mark.slow
async def test_a_whole_quick_play_game_against_two_bots_by_keys_and_mouse():
    players = [Player("Ann"), Player("greedy bot", "greedy"), Player("random bot", "random")]
    table = LocalTable(GAME, players, seed=5, options={"mode": "quick", "target": 20}, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, DiceBreakerScreen)
        throws = breaks = clicks = 0
        while True:
            await wait_until(pilot, lambda: screen.view.result is not None or screen.view.my_turn())
            if screen.view.result is not None:
                break
            state = screen.view.state
            assert state.phase == THROW and state.seat == 0
            mine = sum(1 for entry in screen.view.log if entry.seat == 0)
            targets = state.targets(0)
            assert all(name.startswith("A") for name in targets)  # quick play: only your own dice
            if targets and throws % 3 == 1:
                # Keys: the cursor to the last target, Enter breaks it.
                want = targets[-1]
                for _ in range(len(state.arena)):
                    if screen.cursor == want:
                        break
                    await pilot.press("right")
                assert screen.cursor == want
                await pilot.press("enter")
                breaks += 1
            elif targets and throws % 3 == 2:
                # Mouse: click the target die in the arena.
                arena = screen.query_one(ArenaView)
                await pilot.click(ArenaView, offset=arena.die_offset(targets[0]))
                clicks += 1
            else:
                await pilot.press("r")
            await wait_until(pilot, lambda: screen.view.state is not state)
            assert sum(1 for entry in screen.view.log if entry.seat == 0) == mine + 1  # one throw each time
            throws += 1
            assert throws < 300
        result = screen.view.result
        state = screen.view.state
        assert result.reason in ("20 points", "five of a kind")
        assert all(state.points(s) >= 20 for s in result.winners) or result.reason == "five of a kind"
        assert breaks and clicks and len(state.rounds) >= 2
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
        await pilot.press("escape")
        # The score board and the round summaries say what happened, in words.
        scores = screen.query_one("#db-scores").plain()
        assert "Ann" in scores and "greedy bot" in scores and "To 20 · quick play" in scores
        rounds = str(screen.query_one("#db-rounds").render())
        assert " ".join(rounds.split()).startswith(" ".join(round_lines(state, screen.view.names)[0].split()))
        assert f"R{len(state.rounds)} " in rounds


async def test_the_latent_dice_claim_by_keys_in_hot_seat():
    # Every landed die spins: the first throw opens the claim step.
    table = people(2, mode="battle", spinning_num=1, spinning_den=1, out_num=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None and screen.view.state.round == 1)
        starter = screen.view.state.seat
        await pilot.press("r")  # the Trump Die
        await wait_until(pilot, lambda: screen.view.state.phase == THROW)
        assert "T" in arena_text(screen)
        await pilot.press("r")  # the starter's first die lands, spinning
        await wait_until(pilot, lambda: screen.view.state.phase == LATENT)
        state = screen.view.state
        assert state.spinning and "◎" in arena_text(screen)
        assert f"Latent Die at {state.spinning}" in screen.query_one("#db-hand").plain()
        other = 1 - starter
        assert state.seat == other  # asked from the thrower's left
        await pilot.press("n")
        await wait_until(pilot, lambda: screen.view.state.seat == starter)
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.view.state.phase != LATENT)
        after = screen.view.state
        assert after.latent_left == 3 and after.last[0] == "latent" and after.last[2] == starter
        assert "Latent Die broke it to" in screen.query_one("#db-hand").plain()


async def test_hot_seat_for_three_people_from_the_home_screen():
    app = DiceTableApp(bot_delay=0, seed=4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        assert isinstance(app.screen, NewGameScreen) and app.screen.hot_seat
        await pilot.press("down", "down", "enter")  # Dice Breaker, the third game
        assert app.screen.query_one("#setup-game").pressed_button.name == "dicebreaker"
        await pilot.press("tab", "right", "enter")  # 3 players
        await pilot.press("tab", "down", "enter")  # quick play
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, DiceBreakerScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None and screen.view.state.round == 1)
        assert screen.view.local_seats == frozenset({0, 1, 2})
        assert not screen.view.state.battle
        first = screen.view.state.seat
        assert str(screen.query_one("#status").render()).startswith(f"Round 1 · Player {first + 1} ({LETTERS[first]})")
        await pilot.press("r")
        await wait_until(pilot, lambda: len(screen.view.state.held[first]) == 4)


async def test_six_players_fit_80_by_24_with_every_die_and_its_owner():
    table = people(6, mode="battle", out_num=0)
    while len(table.state.arena) < 25:  # a busy arena: everyone has thrown four dice
        state = table.state
        move = Move("throw", (state.throwable(state.seat)[0],)) if state.phase == THROW else state.legal_moves()[-1]
        table.submit(move)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        await pilot.pause()
        text = arena_text(screen)
        for name, owner, face in table.state.arena:
            letter = "T" if owner < 0 else LETTERS[owner]
            assert name in text  # its name in the caption row
        # Each die shows its owner's letter (top-left) and its value (bottom-left): count them.
        for seat in range(6):
            mine = sum(1 for _, owner, _ in table.state.arena if owner == seat)
            assert text.count(f" {LETTERS[seat]}") >= mine
        scores = screen.query_one("#db-scores").plain()
        assert all(f" {LETTERS[s]}  P{s + 1}" in scores for s in range(6))
        assert screen.query_one("#db-scores").region.bottom <= 23


def test_snapshot_a_four_player_battle(snap_compare):
    table = people(4, mode="battle")
    for _ in range(9):
        state = table.state
        legal = state.legal_moves()
        table.submit(legal[-1] if state.phase == THROW else legal[0])  # breaks where it can
    assert table.state.arena
    assert snap_compare(DiceTableApp(table), terminal_size=SIZE)


@pytest.mark.parametrize("no_color", [False, True])
async def test_no_color_drops_the_seat_colours_but_keeps_the_letters(monkeypatch, no_color):
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    table = people(2, mode="quick", out_num=0)
    table.submit(Move("throw", (table.state.throwable(table.state.seat)[0],)))
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.screen.view is not None)
        await pilot.pause()
        svg = app.export_screenshot().lower()
        assert app.no_color is no_color
        seat = table.state.arena[0][1]
        colour = ("#b3261e", "#1f5fbf")[seat]  # the seat's colour (tui/screens/dicebreaker.tcss)
        assert (colour in svg) is not no_color
        assert f" {LETTERS[seat]}" in arena_text(app.screen)  # the owner's letter, colour or not


async def test_the_panels_keep_off_the_keys_and_the_move_log_wraps_in_its_narrow_pane():
    table = people(3, mode="battle")
    for _ in range(6):  # a few throws, so the log has entries longer than its pane is wide
        table.submit(table.state.legal_moves()[0])
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, DiceBreakerScreen)
        await wait_until(pilot, lambda: screen.view is not None)
        assert app.focused is None  # no panel (tabs, log) took the focus
        await pilot.press("m")
        assert screen.query_one(TabbedContent).active == "moves"
        log = screen.query_one(MoveLog)
        await wait_until(pilot, lambda: log.lines and log.scrollable_content_region.width)
        longest = max((entry.words(table.names) for entry in table.view().log), key=len)
        assert len(longest) > assert_log_wraps(log, longest)  # it had to wrap
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpDialog)
        await pilot.press("x")
        assert app.screen is screen and app.focused is None  # back from a dialog: still the arena's
        await pilot.press("escape")
        assert app.screen is not screen


def footer_words(screen) -> list[str]:
    return [key.description for key in screen.query(FooterKey) if key.display]


async def test_move_now_makes_a_thinking_bot_play_its_best_move_so_far():
    # A lookahead searching to the round's end with no bound would think for minutes: g (shown in
    # the footer only while it thinks) makes it play the move of its deepest search finished.
    table = LocalTable(GAME, [Player("Ann"), Player("deep bot", "hard")], seed=11, bot_delay=0)
    table.bots[1] = GAME.bots["lookahead"](GAME, random.Random(1), depth=1, deepest=10, nodes=10**9)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen

        def bot_throws() -> int:
            return sum(1 for entry in screen.view.log if entry.seat == 1)

        hurried = 0
        while hurried < 2:
            await wait_until(pilot, lambda: screen.view.my_turn() or (
                screen.view.thinking == 1 and screen.view.state.phase == THROW))
            if screen.view.my_turn():
                await wait_until(pilot, lambda: "move now" not in footer_words(screen))
                state = screen.view.state
                await pilot.press("n" if state.phase == LATENT else "r")
                await wait_until(pilot, lambda: screen.view.state is not state)
                continue
            await wait_until(pilot, lambda: "move now" in footer_words(screen))
            thrown = bot_throws()
            await pilot.press("g")
            await wait_until(pilot, lambda: bot_throws() == thrown + 1)
            hurried += 1
