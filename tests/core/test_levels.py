"""Bot levels (core/levels.py): every game has easy, medium and hard, built on its algorithm bots."""

import random

import pytest

from dicetable.core import levels, registry
from dicetable.core.bots import hurry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Bot
from dicetable.core.match import advance, play_out

GAMES = [name for name in registry.names() if name in levels.LEVELS]


def test_every_game_with_bots_has_the_three_levels():
    assert set(GAMES) == {"trice", "triad", "dicebreaker", "tricolor"}
    for name in GAMES:
        game = registry.get(name)
        assert set(levels.NAMES) <= set(game.bots), name
        for level, (algorithm, _, slip) in levels.LEVELS[name].items():
            assert algorithm in game.bots and algorithm not in levels.NAMES and 0 <= slip < 1, (name, level)


def moves_of(game, names, seed):
    bots = [game.bots[name](game, random.Random(seed + s)) for s, name in enumerate(names)]
    _, steps = play_out(game.new(2, game.resolve_options(None)), bots, LocalSource(random.Random(seed)))
    return [step.move for step in steps]


@pytest.mark.parametrize("name", ["trice", "triad", "dicebreaker"])
def test_a_level_plays_a_game_and_its_seed_decides_every_move(name):
    game = registry.get(name)
    first = moves_of(game, ["easy", "medium"], 11)
    assert first == moves_of(game, ["easy", "medium"], 11)
    assert first != moves_of(game, ["easy", "medium"], 12)


def test_a_level_is_its_algorithm_with_the_table_settings():
    game = registry.get("trice")
    bot = game.bots["hard"](game, random.Random(1))
    assert bot.name == "search" and bot.budget == levels.LEVELS["trice"]["hard"][1]["nodes"]


def test_slipping_plays_its_share_at_random_from_the_given_rng():
    game = registry.get("trice")

    class Never(Bot):
        name = "never"

        def choose(self, view):
            raise AssertionError("asked although slipping every move")

    state, source = game.start(2), LocalSource(random.Random(3))
    while state.actor == CHANCE:
        state = state.resolve(source.outcome(state.chance()))
    view = state.view(state.actor)
    rng = random.Random(5)
    picks = [levels.Slipping(Never(), rng, 1.0).choose(view) for _ in range(3)]
    again = random.Random(5)
    assert picks == [levels.Slipping(Never(), again, 1.0).choose(view) for _ in range(3)]
    assert levels.Slipping(game.bots["greedy"](game, random.Random(1)), random.Random(1), 0.0).choose(view) in view.legal_moves()


@pytest.mark.parametrize("name", GAMES)
def test_a_hard_level_asked_to_move_now_plays_legal_moves_of_its_own(name):
    game = registry.get(name)
    seats = 2
    bots = [game.bots["hard"](game, random.Random(7 + s)) for s in range(seats)]
    assert all(hurry(bot) for bot in bots)  # every hard level searches, so each can be hurried
    state, source = game.new(seats, game.resolve_options(None)), LocalSource(random.Random(7))
    for _ in range(40):  # a hurried bot's move is still one of the legal moves (advance applies it)
        if state.actor is None:
            break
        state, _ = advance(state, bots, source)
