"""Local games survive a crash (tui/tables/local_save.py): a table saves after every move, and a save
replays to exactly the position it was made in, for every game; a damaged save is one line and
changes nothing; the app's resume screen reopens a local game where it stood.
"""

from __future__ import annotations

import random

import pytest

from dicetable.core import registry
from dicetable.tui.tables import local_save
from dicetable.tui.app import DiceTableApp
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.tables.history import history_path, local_games
from dicetable.tui.screens.resume_screen import ResumeScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from test_tui_app import by_keys
from tui_pilot import wait_until

GAMES = [("trice", 2, {}), ("triad", 2, {}), ("dicebreaker", 3, {"mode": "battle"}), ("tricolor", 3, {})]


def person_plays(table: LocalTable, me, stop) -> None:
    """Seat 0 is a person whose moves come from `me` (a seeded bot on its own view), until `stop`."""
    table.attach(None)  # no screen: the bots answer at once
    while table.state.result is None and not stop(table):
        table.submit(me.choose(table.state.view(table.state.actor)))


@pytest.mark.parametrize("name,seats,options", GAMES)
def test_a_save_replays_to_the_very_position_and_the_game_ends_in_the_history(name, seats, options):
    game = registry.get(name)
    path = local_save.new_save_path(name)
    players = [Player("Ann")] + [Player(f"bot {n}", "greedy") for n in range(1, seats)]
    table = local_save.kept_table(game, players, save=path, history=history_path(), seed=11, options=options)
    me = game.bots["random"](game, random.Random(3))
    person_plays(table, me, lambda t: len(t.moves) >= 12 and t.state.actor == 0)
    assert table.state.result is None and path.exists()
    again = local_save.resume(path, history=history_path())
    assert again.state == table.state  # dice, cards and tiles included: the same chances, in order
    assert again.log == table.log and again.moves == table.moves and again.names == table.names
    assert [e.outcome for e in again.events] == [e.outcome for e in table.events]
    person_plays(again, me, lambda t: False)
    assert again.state.result is not None and not path.exists()  # over: the save goes...
    (kept,) = local_games(history_path())[0]  # ...and the history has the game
    assert kept.names == tuple(again.names) and kept.moves == len(again.moves)


def test_a_triad_rematch_replays_from_its_save_with_the_same_colours_and_starter():
    game = registry.get("triad")
    path = local_save.new_save_path("triad")
    table = local_save.kept_table(game, [Player("Ann"), Player("bot", "greedy")], save=path, seed=4, first="bot")
    first_black = table.names[table.state.black]
    table.rematch()  # the other player (Ann) starts the rematch, with the same colours
    assert table.names[table.state.first] == "Ann" and table.names[table.state.black] == first_black
    me = game.bots["random"](game, random.Random(5))
    person_plays(table, me, lambda t: len(t.moves) >= 6 and t.state.actor == t.names.index("Ann"))
    again = local_save.resume(path)
    assert again.state == table.state and again.names == table.names and again.log == table.log


def test_a_damaged_save_is_one_line_changes_nothing_and_others_still_resume(tmp_path):
    trice = registry.get("trice")
    good = local_save.new_save_path("trice")
    table = local_save.kept_table(trice, [Player("Ann"), Player("greedy bot", "greedy")], save=good, seed=2)
    person_plays(table, trice.bots["random"](trice, random.Random(1)), lambda t: len(t.moves) >= 4)
    bad = good.with_name("20260101-000000-trice-bad.json")
    bad.write_text(good.read_text()[:40])  # a crash before the rename never leaves this; a disk fault might
    data = local_save.read(good)
    data_moves = [[s, m.to_data()] for s, m in data["moves"]]
    wrong = good.with_name("20260101-000000-trice-wrong.json")
    wrong.write_text(good.read_text().replace(str(data_moves[1][1]).replace("'", '"'), '["place", "z9"]'))
    before = {p: p.read_bytes() for p in (bad, wrong)}
    games, unreadable = local_save.saved_games(bad.parent.parent)
    assert [g.path for g in games] == [good, wrong]
    assert unreadable == [f"{bad.name}: unreadable (JSONDecodeError)"]
    with pytest.raises(ValueError, match="its moves do not replay"):
        local_save.resume(wrong)
    with pytest.raises(ValueError, match="unreadable"):
        local_save.resume(bad)
    assert {p: p.read_bytes() for p in (bad, wrong)} == before
    assert local_save.resume(good).state == table.state


async def test_the_app_resumes_a_local_game_left_by_a_crash(monkeypatch):
    monkeypatch.setenv("USER", "Ann")
    app = DiceTableApp(bot_delay=0, seed=4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("b", "s")  # TRICE against the medium bot (greedy)
        screen = app.screen
        assert isinstance(screen, TriceScreen)
        me = registry.get("trice").bots["random"](registry.get("trice"), random.Random(5))
        for _ in range(3):
            await wait_until(pilot, lambda: screen.view is not None and screen.view.my_turn())
            state = screen.view.state
            await by_keys(pilot, screen, me.choose(state))
            await wait_until(pilot, lambda: screen.view.state is not state)
        await wait_until(pilot, lambda: screen.view.my_turn())
        left = screen.view.state
    # The app is gone (as after a kill or a dropped SSH connection); a new one picks the game up.
    app = DiceTableApp(bot_delay=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen) and app.screen.loaded)
        line = str(app.screen.query_one("#resume-list").get_option_at_index(0).prompt)
        assert line.startswith("TRICE (local): Ann vs medium bot, ")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
        assert app.screen.view.state == left and app.screen.view.my_turn()


async def test_leaving_says_the_game_is_saved_and_x_forgets_it(monkeypatch):
    monkeypatch.setenv("USER", "Ann")
    app = DiceTableApp(bot_delay=0, seed=6)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("b", "s")
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None and screen.view.my_turn())
        me = registry.get("trice").bots["random"](registry.get("trice"), random.Random(5))
        state = screen.view.state
        await by_keys(pilot, screen, me.choose(state))
        await wait_until(pilot, lambda: screen.view.state is not state)
        await pilot.press("escape")
        await wait_until(pilot, lambda: any("Your game is saved" in n.message for n in app._notifications))
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeScreen) and app.screen.loaded)
        (save,) = [g.path for g in app.screen.games]
        assert save.exists()
        await pilot.press("x")
        assert not save.exists() and app.screen.games == []
        assert "Forgot TRICE (local): Ann vs medium bot" in str(app.screen.query_one("#resume-note").render())
