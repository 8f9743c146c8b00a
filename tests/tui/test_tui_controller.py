"""The local table controller, headless: the engine, bots and seeded dice without a screen."""

import pytest

from dicetable.core import registry
from dicetable.core.game import CHANCE, GameError, Move, Outcome, Result
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.tui.tables.view import LOCAL, Decided, Moved, SatDown, result_words

TRICE = registry.get("trice")
TRIAD = registry.get("triad")


def test_two_bots_play_a_whole_game_and_log_it():
    table = LocalTable(TRICE, [Player("Ann", "greedy"), Player("Bob", "random")], seed=5)
    table.attach(None)  # no screen: bots move at once
    view = table.view()
    assert view.result is not None
    moves = [entry for entry in view.log if entry.seat != CHANCE]
    assert len(moves) >= 2
    assert all(isinstance(entry, (Moved, Decided)) for entry in view.log)
    assert all("seat " not in entry.words(view.names) for entry in view.log), "names replace seat numbers"
    assert all(Seat(entry.seat) in entry.what.parts for entry in moves), "the mover stays a seat"
    assert view.events[0].label == Phrase(("setup roll",)) and view.events[0].status == LOCAL
    outcome = view.events[0].outcome.words(view.names)
    assert "Ann rolled" in outcome and "Bob rolled" in outcome


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


@pytest.mark.parametrize("first", ["roll", "me", "bot"])
def test_triad_rematches_keep_the_colours_and_alternate_who_starts(first):
    for seed in range(6):
        table = LocalTable(TRIAD, [Player("me"), Player("bot", "random")], seed=seed, first=first)
        black = table.names[table.state.black]
        starters = []
        for game in range(3):
            state = table.state
            assert table.names[state.black] == black, (seed, game)  # the colours stay
            starters.append(table.names[state.first])
            table.rematch()
        assert starters[0] != starters[1] and starters[1] != starters[2], (seed, starters)
        if first != "roll":
            assert starters[0] == ("me" if first == "me" else "bot")


def test_other_games_rematch_as_the_first_game_was_made():
    table = LocalTable(TRICE, [Player("me"), Player("bot", "random")], seed=3, first="me")
    for _ in range(3):
        human = next(s for s, seat in enumerate(table.view().seats) if seat.kind == "human")
        assert human == table.state.first  # the person starts every game, as chosen
        table.rematch()
    assert table.first == "me" and table.options == TRICE.resolve_options()


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
    assert table.view().log[-1].words(table.names).startswith(("Ann chooses", "Bob chooses"))
    assert table.view().local_seats == frozenset({0, 1})
    assert table.state.actor == 1 - chooser


def test_bad_settings_are_refused_in_words():
    with pytest.raises(GameError, match="unknown bot 'nobody'"):
        LocalTable(TRICE, [Player("a"), Player("b", "nobody")])
    with pytest.raises(GameError, match="who starts"):
        LocalTable(TRICE, [Player("a"), Player("b", "random")], first="later")
    with pytest.raises(GameError, match="2 players"):
        LocalTable(TRICE, [Player("a")])


def test_a_phrase_keeps_seats_as_seats_until_drawn_with_names():
    state = TRICE.start(2).resolve(Outcome((5,) * 6 + (0,) * 6))  # seat 0 rolls higher: no tie
    chose = TRICE.describe(state, Move("choose", ("W6",)))
    mover, other = Seat(state.actor), Seat(1 - state.actor)
    assert chose.parts == (mover, " chooses white 6 (W6) for ", other)
    assert chose == f"{mover} chooses white 6 (W6) for {other}"  # its plain words
    assert chose.words(["Ann", "Bob"]).endswith("chooses white 6 (W6) for " + ["Ann", "Bob"][other.number])
    assert phrase("seats 0 and ", Seat(7)).words(["Ann"]) == "seats 0 and seat 7"  # no name: stays a seat
    resigns = phrase(Seat(1, "Bob"), " resigns")  # the replica's `seat N (name)`
    assert resigns == "seat 1 (Bob) resigns" and resigns.words(["Ann", "Robert"]) == "Robert resigns"
    assert Phrase.read("seat 1 (Bob) resigns").parts == resigns.parts  # words read back from a file or a peer
    assert SatDown(1, "bob", "ab12").words(["Ann", "Bob (seat 1)"]) == "Bob (seat 1) sits down (bob, key ab12)"


def test_a_result_is_drawn_with_names_once():
    names = ["Ann", "Bob (seat 1)"]  # a name that says its seat is not read again
    assert result_words(Result((1,), (0.0, 1.0), phrase(Seat(0), " resigned")), names) == "Bob (seat 1) wins (Ann resigned)"
    stored = Result.from_data({"winners": [1], "scores": [0.0, 1.0], "reason": "seat 0 resigned"})  # a transcript's
    assert result_words(stored, names) == "Bob (seat 1) wins (Ann resigned)"
    assert result_words(Result((), (0.5, 0.5), "threefold repetition"), names) == "draw (threefold repetition)"
