"""Setup screens take what the person sees marked, and no blind Enter opens or restarts a table
(issue 34): the host form starts on its first choice and opens only when Open is asked for; the
waiting room names the game; an arrow on a setup screen picks the choice it moves to; the game-over
dialog's Enter goes back to the final board."""

import random

import pytest
from textual.widgets import Input, RadioSet, Static

from dicetable.core import registry
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.screens.net_screens import HostScreen
from dicetable.tui.screens.new_game_screen import NewGameScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.screens.triad_screen import TriadScreen
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from dicetable.tui.tables.controller import LocalTable, Player
from tui_pilot import wait_until

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

SIZE = (80, 24)


def picked(screen, selector: str) -> str:
    return screen.query_one(selector, RadioSet).pressed_button.name


async def test_the_host_form_starts_on_the_game_and_opens_only_when_asked(tmp_path):
    app = DiceTableApp(profile_dir=tmp_path / "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        form = app.screen
        assert isinstance(form, HostScreen)
        assert app.focused is form.query_one("#host-game")
        await pilot.press("down")  # TRIAD, picked as the cursor reaches it
        assert picked(form, "#host-game") == "triad"
        await pilot.press("enter")  # meant for the choice: no table opens
        assert app.screen is form and picked(form, "#host-game") == "triad"
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, WaitingRoomScreen) and app.screen.table.invite)
        room = app.screen
        try:
            assert room.table.session.game_name == "triad"
            await wait_until(pilot, lambda: "TRIAD" in str(room.query_one("#room-title", Static).render()))
            assert str(room.query_one("#room-title", Static).render()) == "Waiting room: TRIAD, 2 seats"
        finally:
            room.table.close()


async def test_the_dice_room_form_starts_on_its_seats(tmp_path):
    app = DiceTableApp(profile_dir=tmp_path / "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", "h")
        assert isinstance(app.screen, HostScreen) and app.screen.game == "diceroom"
        assert app.focused is app.screen.query_one("#host-seats", Input)


async def test_down_then_s_starts_the_game_and_bot_the_cursor_is_on():
    app = DiceTableApp(bot_delay=0, seed=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        setup = app.screen
        assert isinstance(setup, NewGameScreen) and picked(setup, "#setup-bot") == "medium"
        await pilot.press("down", "tab", "down")  # TRIAD; then the bot: from medium (the cursor starts there) to hard
        assert picked(setup, "#setup-game") == "triad" and picked(setup, "#setup-bot") == "hard"
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen) and app.screen.view is not None)
        assert app.screen.view.names[1] == "hard bot"


async def test_hot_seat_down_then_s_starts_the_game_the_cursor_is_on():
    app = DiceTableApp(bot_delay=0, seed=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s", "down", "s")
        await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen) and app.screen.view is not None)


def finished_trice() -> LocalTable:
    """A TRICE table whose game is over: Ann's moves chosen by a greedy bot, against a greedy bot."""
    trice = registry.get("trice")
    table = LocalTable(trice, [Player("Ann"), Player("greedy bot", "greedy")], seed=5, bot_delay=0)
    table.attach(None)  # no screen: the bot answers at once
    chooser = trice.bots["greedy"](trice, random.Random(5))
    while table.state.result is None:
        assert table.state.actor == 0
        table.submit(chooser.choose(table.state.view(0)))
    return table


async def test_a_blind_enter_at_the_game_over_dialog_goes_back_to_the_final_board():
    table = finished_trice()
    final = table.state
    app = DiceTableApp(table, bot_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
        dialog = app.screen
        assert app.focused is dialog.query_one("#look")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen))
        assert app.screen.view.state is final and app.screen.view.result is not None  # no new game
