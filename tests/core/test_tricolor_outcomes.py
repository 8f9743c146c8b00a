"""Tricolor Line's random steps in plain words (GameInfo.describe_outcome): public steps name what
they showed, hidden shuffles and deals never say what they dealt."""

from __future__ import annotations

import random

from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE
from dicetable.core import registry
from dicetable.core.tricolor import tile_words
from dicetable.core.tricolor_tiles import COLOUR_NAMES, END, EVENT_TITLES, ID_CARDS, TILES

GAME = registry.get("tricolor")


def _play(seed: int, seats: int = 4):
    """Every chance step of a random-bot game: (state, chance, outcome, state after)."""
    rng = random.Random(seed)
    source = LocalSource(rng)
    bots = [GAME.bots["random"](GAME, random.Random(seed * 10 + s)) for s in range(seats)]
    state = GAME.new(seats, GAME.resolve_options({"turn_limit": 60}))
    steps = []
    while True:
        if state.result is not None:
            return steps
        if state.actor == CHANCE:
            chance = state.chance()
            outcome = source.outcome(chance)
            after = state.resolve(outcome)
            steps.append((state, chance, outcome, after))
            state = after
        else:
            state = state.apply(bots[state.actor].choose(state.view(state.actor)))


def test_every_random_step_is_told_in_words_without_leaking_hidden_cards():
    seen = set()
    for seed in (1, 2):
        for state, chance, outcome, after in _play(seed):
            words = GAME.describe_outcome(state, chance, outcome)
            assert "values" not in words and "order" not in words, words
            kind = state.pending[0][0]
            seen.add(kind)
            if chance.hidden and chance.reveal is None:
                # The full state knows the deal; the words must not.
                assert words == ("shuffled face down" if chance.shuffle else "dealt face down")
            elif kind == "top":
                pile = state.pending[0][1]
                if after.tops[pile] == -1:  # an End Tile turned up at setup goes back in
                    assert words.endswith(": shuffled back in (Setup)") and "End Tile" in words
                else:
                    assert words == f"pile {pile + 1} shows {tile_words(after.tops[pile])}"
                # A seat's view knows the same public facts, so it tells the same story.
                assert GAME.describe_outcome(state.view(0), chance, outcome) == words
            elif kind == "event":
                title = EVENT_TITLES[after.played.split(":")[0]] if after.played else ""
                assert words.startswith("event: ") and words[7:] in EVENT_TITLES.values()
                if title:
                    assert words == f"event: {title}"
            elif kind == "first":
                assert words == f"seat {after.first} goes first"
            elif kind == "reveal":
                seat = chance.reveal
                assert words.startswith(f"seat {seat} reveals a {COLOUR_NAMES[ID_CARDS[after.ids[seat]]]} ID card")
    assert {"top", "shuffle", "draw", "iddraw", "first", "event", "reveal"} <= seen


def test_tile_words_in_the_move_log():
    assert tile_words(next(t.id for t in TILES if t.kind == END)) == "an End Tile"
    red_curve = next(t.id for t in TILES if t.colour == "R" and t.shape == "curve" and t.kind == "road")
    assert tile_words(red_curve) == "a red curve"
    dead = next(t.id for t in TILES if t.colour == "B" and t.shape == "tee" and t.kind == "dead")
    assert tile_words(dead) == "a blue dead-end tee"
