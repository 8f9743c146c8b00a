"""Bot levels (easy, medium, hard) are taken wherever a bot name is: `play --vs`, `selfplay --bots`,
the app's setup screen and a network host's bot; a bad level is one line and exit 2."""

from __future__ import annotations

import json

import pytest

from dicetable import tui
from dicetable.core import levels, registry
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.tui.app import DiceTableApp
from dicetable.tui.cli import main
from dicetable.tui.screens.new_game_screen import NewGameScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from tui_pilot import wait_until


def test_selfplay_takes_levels(capsys):
    assert main(["selfplay", "triad", "--games", "2", "--seed", "1", "--bots", "hard,medium", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["wins"]) == {"hard", "medium"} and sum(summary["wins"].values()) + summary["draws"] == 2


@pytest.mark.parametrize("argv", [
    ["selfplay", "trice", "--bots", "expert,medium"],
    ["play", "trice", "--vs", "expert"],
])
def test_a_bad_level_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "unknown bot 'expert' for TRICE (bots: easy, medium, hard, random, greedy, search" in err
    assert err.count("\n") == 1


def test_play_seats_the_chosen_level(monkeypatch):
    tables = []
    monkeypatch.setattr(tui.app, "run_table", lambda table: tables.append(table) or 0)
    assert main(["play", "triad", "--vs", "hard", "--seed", "3", "--name", "Ann"]) == 0
    assert [(p.name, p.bot) for p in tables[0].players] == [("Ann", ""), ("hard bot", "hard")]


async def test_the_setup_screen_offers_the_levels_and_starts_the_chosen_one(monkeypatch):
    monkeypatch.setenv("USER", "Ann")
    app = DiceTableApp(bot_delay=0, seed=4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, NewGameScreen))
        choices = app.screen.query_one("#setup-bot").query("RadioButton")
        assert [c.name for c in choices] == list(levels.NAMES)
        assert [c.name for c in choices if c.value] == ["medium"]
        next(c for c in choices if c.name == "hard").value = True
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen))
        assert [p.bot for p in app.screen.controller.players] == ["", "hard"]


def test_a_network_host_plays_a_level():
    game = registry.get("dicebreaker")
    assert callable(bot_chooser(game, "hard", seed=1))
    with pytest.raises(SessionError, match="unknown bot 'expert' for Dice Breaker"):
        bot_chooser(game, "expert", seed=1)
