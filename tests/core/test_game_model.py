"""The shared game model: moves, chance, outcomes, options, registry, local source."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dicetable.core import registry
from dicetable.core.chance import LocalSource, permutation
from dicetable.core.game import BadOption, BadOutcome, Chance, IllegalMove, Move, Outcome, Result


def test_move_notation_and_data_round_trip():
    move = Move("place", ("b2",))
    assert str(move) == "place b2"
    assert Move.parse("place b2") == move
    assert Move.from_data(move.to_data()) == move
    assert Move.parse("move a1 3 ne") == Move("move", ("a1", 3, "ne"))
    for bad in ([], "place", [1, 2], ["x", 1.5], ["x", None]):
        with pytest.raises(IllegalMove):
            Move.from_data(bad)


def test_chance_checks_outcomes():
    chance = Chance("roll", ranges=(6, 6), shuffle=3)
    chance.check(Outcome((0, 5), (2, 0, 1)))
    for bad in (Outcome((0,), (0, 1, 2)), Outcome((0, 6), (0, 1, 2)), Outcome((0, 1), (0, 0, 1)), Outcome((0, 1), ())):
        with pytest.raises(BadOutcome):
            chance.check(bad)
    assert Outcome.from_data(Outcome((1, 2), (0,)).to_data()) == Outcome((1, 2), (0,))


def test_local_source_is_seeded_and_uniform_enough():
    a = LocalSource(random.Random(1)).outcome(Chance("x", (6,) * 10, 5))
    b = LocalSource(random.Random(1)).outcome(Chance("x", (6,) * 10, 5))
    assert a == b
    counts = Counter(permutation(3, random.Random(s).randrange) for s in range(6000))
    assert len(counts) == 6 and min(counts.values()) > 850  # all 6 orders, none starved


def test_result_words():
    assert Result((0,), (1, 0), "Trice").describe() == "seat 0 wins (Trice)"
    assert Result((), (0.5, 0.5), "repetition").describe() == "draw (repetition)"
    assert Result((0, 2), (1, 0, 1), "33 points").describe(["ann", "bo", "cy"]) == "ann, cy share the win (33 points)"


def test_registry_and_options():
    game = registry.get("trice")
    assert game.name == "trice" and "trice" in registry.names()
    assert set(game.bots) >= {"random", "greedy", "search"}
    with pytest.raises(registry.UnknownGame):
        registry.get("nope")
    with pytest.raises(BadOption):
        game.resolve_options({"repetitions": True})
    for name in registry.names():
        info = registry.get(name)
        assert set(info.bots) >= {"random", "greedy", "search"}, name
        state = info.start()
        assert info.load(state.to_data()) == state
