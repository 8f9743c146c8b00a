"""The local table controller, headless: the engine, bots and seeded dice without a screen."""

import pytest

from dicetable.core import registry
from dicetable.core.game import CHANCE, GameError, Move
from dicetable.tui.tables.controller import LOCAL, LocalTable, Player, with_names

TRICE = registry.get("trice")


def test_two_bots_play_a_whole_game_and_log_it():
    table = LocalTable(TRICE, [Player("Ann", "greedy"), Player("Bob", "random")], seed=5)
    table.attach(None)  # no screen: bots move at once
    view = table.view()
    assert view.result is not None
    moves = [entry for entry in view.log if entry.seat != CHANCE]
    assert len(moves) >= 2
    assert all("seat " not in entry.text for entry in view.log), "names replace seat numbers"
    assert view.events[0].label == "setup roll" and view.events[0].status == LOCAL
    assert "Ann rolled" in view.events[0].outcome and "Bob rolled" in view.events[0].outcome


def test_same_seed_same_game_and_rematch_differs():
    def final_log(seed):
        table = LocalTable(TRICE, [Player("A", "greedy"), Player("B", "greedy")], seed=seed)
        table.attach(None)
        return table.view().log, table

    first, table = final_log(11)
    again, _ = final_log(11)
    assert first == again
    table.rematch()
    assert table.view().log != first


@pytest.mark.parametrize("who", ["me", "bot"])
def test_first_choice_seats_the_person_first_or_second(who):
    for seed in range(12):
        table = LocalTable(TRICE, [Player("me"), Player("bot", "random")], seed=seed, first=who)
        state = table.state
        human = next(s for s, seat in enumerate(table.view().seats) if seat.kind == "human")
        assert (human == state.first) == (who == "me"), seed
        # The first player places first: the other seat chooses the first die (trice.md).
        assert state.actor == 1 - state.first


def test_a_person_move_goes_through_the_engine():
    table = LocalTable(TRICE, [Player("Ann"), Player("Bob")], seed=2)
    chooser = table.state.actor
    die = table.state.pool[0]
    table.submit(Move("choose", (die,)))
    assert table.state.phase == "place" and table.state.chosen == die
    assert table.view().log[-1].text.startswith(("Ann chooses", "Bob chooses"))
    assert table.view().local_seats == frozenset({0, 1})
    assert table.state.actor == 1 - chooser


def test_bad_settings_are_refused_in_words():
    with pytest.raises(GameError, match="unknown bot 'nobody'"):
        LocalTable(TRICE, [Player("a"), Player("b", "nobody")])
    with pytest.raises(GameError, match="who starts"):
        LocalTable(TRICE, [Player("a"), Player("b", "random")], first="later")
    with pytest.raises(GameError, match="2 players"):
        LocalTable(TRICE, [Player("a")])


def test_with_names_replaces_only_seat_numbers():
    assert with_names("seat 0 chooses W6 for seat 1", ["Ann", "Bob"]) == "Ann chooses W6 for Bob"
    assert with_names("seats 0 and seat 7", ["Ann"]) == "seats 0 and seat 7"
