"""Tricolor Line played at random, many times: no game ends before anyone has built a road
(tricolor-line.md, Route planning: an End Tile is never placed next to the Start Tile)."""

from __future__ import annotations

import random

import pytest

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE
from dicetable.core.tricolor import START_SIDES
from dicetable.core.tricolor_tiles import END, TILES

GAME = registry.get("tricolor")


def until_first_construction(seats: int, seed: int):
    """A game of uniformly random moves (the engine's own legal moves, as the random bot), played
    until a tile is constructed or the game ends: whether it ends with nothing constructed is then
    decided. Returns the state and whether a tile was constructed."""
    rng = random.Random(seed)
    source = LocalSource(rng)
    state = GAME.start(seats)
    while state.actor is not None:
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
            continue
        move = rng.choice(state.legal_moves())
        state = state.apply(move)
        ends = [(x, y) for x, y, tile, *_ in state.board if TILES[tile].kind == END]
        assert not START_SIDES & set(ends), f"seed {seed}: an End Tile next to the Start Tile after {move}"
        if move.kind == "construct":
            return state, True
    return state, False


@pytest.mark.slow
def test_no_random_game_ends_with_nothing_constructed(capsys):
    latest = 0
    for seed in range(1000):
        state, constructed = until_first_construction(2 + seed % 7, seed)
        assert constructed, f"seed {seed}: the game ended ({state.reason}) with no tile constructed"
        latest = max(latest, state.turns)
    with capsys.disabled():
        print(f"\n1000 random games: each constructed a tile before it ended (the latest first, on turn {latest + 1})")
