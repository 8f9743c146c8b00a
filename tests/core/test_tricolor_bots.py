"""Tricolor Line bots (random, greedy, search) playing from their views, and the hidden-step Chance
extension of core/game.py they rely on."""

from __future__ import annotations

import random

import pytest

from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, NOBODY, BadOutcome, Chance, Outcome
from dicetable.core.match import play_out
from dicetable.core import registry
from dicetable.core.tricolor import replace
from dicetable.core.tricolor_bots import determinize, value
from dicetable.core.tricolor_tiles import CARDS, ID_CARDS, UNKNOWN, edges

GAME = registry.get("tricolor")


def play_until(seats: int, seed: int, stop) -> object:
    state = GAME.start(seats)
    source = LocalSource(random.Random(seed))
    bots = [GAME.bots["random"](GAME, random.Random(seed + s)) for s in range(seats)]
    while state.result is None and not stop(state):
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            state = state.apply(bots[state.actor].choose(state.view(state.actor)))
    return state


# -- the hidden-step Chance (core/game.py) ---------------------------------------------------------
def test_hidden_chance_steps_accept_an_empty_outcome():
    shuffle = Chance("shuffle", shuffle=5, private=NOBODY, deck="d", cards=(0, 1, 2, 3, 4))
    draw = Chance("draw", private=1, deck="d", positions=(0, 1))
    reveal = Chance("reveal", deck="reveal", reveal=1)
    for chance in (shuffle, draw, reveal):
        assert chance.hidden
        chance.check(Outcome())
    shuffle.check(Outcome((), (4, 3, 2, 1, 0)))
    draw.check(Outcome((7, 9)))
    with pytest.raises(BadOutcome):
        shuffle.check(Outcome((1,)))  # nobody learns a value from a hidden shuffle
    with pytest.raises(BadOutcome):
        shuffle.check(Outcome((), (0, 0, 1, 2, 3)))
    with pytest.raises(BadOutcome):
        draw.check(Outcome((7,)))  # one card for two positions
    with pytest.raises(BadOutcome):
        draw.check(Outcome((-1, 3)))
    assert not Chance("roll", ranges=(6,)).hidden
    with pytest.raises(BadOutcome):
        Chance("roll", ranges=(6,)).check(Outcome())  # public chances are unchanged


def test_local_source_shuffles_hidden_decks_and_leaves_private_draws_to_the_state():
    source = LocalSource(random.Random(1))
    shuffled = source.outcome(Chance("shuffle", shuffle=6, private=NOBODY, deck="d", cards=tuple(range(6))))
    assert sorted(shuffled.permutation) == list(range(6)) and shuffled.values == ()
    assert source.outcome(Chance("draw", private=0, deck="d", positions=(0, 1))) == Outcome()


# -- determinization -----------------------------------------------------------------------------
def test_determinize_fills_hidden_cards_consistently_with_the_view():
    state = play_until(4, 11, lambda s: s.turns >= 6 and s.actor not in (None, CHANCE))
    me = state.actor
    view = state.view(me)
    world = determinize(view, me, random.Random(3))
    assert world.view(me) == view
    cards = [c for h in world.hands for c in h] + list(world.discards) + list(world.order[world.drawn :])
    assert UNKNOWN not in cards and sorted(cards) == list(range(len(CARDS)))
    assert UNKNOWN not in world.ids and len(set(world.ids)) == 4
    # The sampled world plays on to the end with every hidden step resolved from it.
    bots = [GAME.bots["random"](GAME, random.Random(s)) for s in range(4)]
    final, _ = play_out(world, bots, LocalSource(random.Random(5)))
    assert final.result is not None


def test_determinize_leans_each_seat_away_from_the_colour_it_discards():
    state = play_until(4, 11, lambda s: s.turns >= 6 and s.actor not in (None, CHANCE))
    me = state.actor
    view = state.view(me)
    other = (me + 1) % 4
    mine = ID_CARDS[view.ids[me]]
    thrown = next(c for c in "RYB" if c != mine)
    shed = tuple((0, 0, 0) if s != other else tuple(5 if c == thrown else 0 for c in "RYB") for s in range(4))
    clued, unclued = replace(view, shed=shed), replace(view, shed=((0, 0, 0),) * 4)
    rng = random.Random(4)
    colours = lambda v: [ID_CARDS[determinize(v, me, rng).ids[other]] for _ in range(300)]  # noqa: E731
    # Without clues the colour follows the ID cards left (two of mine, three of each other colour).
    assert colours(unclued).count(thrown) > 70
    # Five units thrown away: that colour is all but ruled out (e^-7 against the other colours).
    assert colours(clued).count(thrown) <= 2
    world = determinize(clued, me, random.Random(5))
    assert world.view(me) == clued  # still consistent with everything the seat sees


def test_determinize_fills_hidden_hands_with_what_their_holders_keep():
    state = play_until(4, 11, lambda s: s.turns >= 6 and s.actor not in (None, CHANCE))
    me = state.actor
    view = state.view(me)
    rng = random.Random(6)
    held, left = [], []
    for _ in range(200):
        world = determinize(view, me, rng)
        for seat in range(4):
            if seat != me:
                colour = ID_CARDS[world.ids[seat]]
                held += [CARDS[c].colour == colour for c in world.hands[seat]]
                left += [CARDS[c].colour == colour for c in world.order[world.drawn :]]
    # A builder's hand is mostly its own colour (KEEP_CLUE, measured on greedy games: about 0.65 of
    # it), though only about a third of the unseen cards are.
    assert sum(held) / len(held) > 0.55
    assert sum(left) / len(left) < 0.4


# -- the bots ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["random", "greedy", "search"])
def test_bots_play_whole_games_from_their_views(name):
    seats = 3
    bots = [GAME.bots[name](GAME, random.Random(s)) for s in range(seats)]
    if name == "search":
        bots = [GAME.bots["search"](GAME, random.Random(0), samples=2, width=2)] + [
            GAME.bots["greedy"](GAME, random.Random(s)) for s in range(1, seats)
        ]
    final, steps = play_out(GAME.start(seats, {"turn_limit": 60}), bots, LocalSource(random.Random(7)))
    assert final.result is not None and any(step.move for step in steps)


def test_greedy_values_its_own_colour():
    state = play_until(3, 4, lambda s: s.phase == "act" and s.actor not in (None, CHANCE))
    me = state.actor
    view = state.view(me)
    # A hand of its own colour's doubles is worth more than the same units in another colour.
    colour_index = "RYB".index("RRRYYYBBB"[view.ids[me]])
    other_index = (colour_index + 1) % 3
    own = tuple(range(colour_index * 20 + 15, colour_index * 20 + 18))
    other = tuple(range(other_index * 20 + 15, other_index * 20 + 18))
    with_hand = lambda hand: replace(view, hands=tuple(hand if s == me else h for s, h in enumerate(view.hands)))  # noqa: E731
    assert value(with_hand(own), me) > value(with_hand(other), me)


@pytest.mark.slow
def test_greedy_beats_random_bots():
    wins = 0.0
    games = 5
    for n in range(games):
        names = ["greedy", "random", "random", "random"]
        order = [names[(s - n) % 4] for s in range(4)]
        bots = [GAME.bots[b](GAME, random.Random(100 * n + s)) for s, b in enumerate(order)]
        final, _ = play_out(GAME.start(4), bots, LocalSource(random.Random(n)))
        seat = order.index("greedy")
        if seat in final.result.winners:
            wins += 1 / len(final.result.winners)
    assert wins >= 3, wins


def test_search_is_deterministic_for_a_seed():
    state = play_until(3, 21, lambda s: s.phase == "act" and s.actor not in (None, CHANCE) and s.turns >= 3)
    view = state.view(state.actor)
    pick = lambda: GAME.bots["search"](GAME, random.Random(9), samples=2, width=2).choose(view)  # noqa: E731
    move = pick()
    assert move == pick()
    state.apply(move)  # legal in the real game


def test_greedy_without_far_placements_tries_only_open_road_ends():
    state = play_until(4, 5, lambda s: s.phase == "plan" and s.actor not in (None, CHANCE) and s.turns >= 4)
    view = state.view(state.actor)
    wide = GAME.bots["greedy"](GAME, random.Random(1)).candidates(view, view.actor)
    near = GAME.bots["greedy"](GAME, random.Random(1), far=0).candidates(view, view.actor)
    assert near and set(near) < set(wide)
    grid = view.grid
    for move in near:
        x, y = map(int, move.args[1].split(","))
        # Each kept cell touches a placed tile whose road points at it.
        assert any(
            grid.get((x - dx, y - dy)) is not None and e in edges(grid[(x - dx, y - dy)].tile, grid[(x - dx, y - dy)].rotation)
            for e, (dx, dy) in enumerate(((0, -1), (1, 0), (0, 1), (-1, 0)))
        ), move


def test_the_grid_is_a_fresh_copy_each_time():
    state = play_until(3, 2, lambda s: s.turns >= 3)
    grid = state.grid
    grid.clear()  # a caller changing its grid must not change the state's (the board's grid is cached)
    assert state.grid and len(state.grid) == len(state.board)


def test_search_weighs_the_end_of_turn_discard_by_rollouts():
    search = GAME.bots["search"]

    class Counted(search):
        rollouts = 0

        def _rollout(self, state, me, rng):
            Counted.rollouts += 1
            return super()._rollout(state, me, rng)

    def close_calls(state) -> int:
        # Discard choices within the search's margin of greedy's best (more than one: rollouts decide).
        if state.phase != "discard" or state.actor in (None, CHANCE):
            return 0
        ranked = GAME.bots["greedy"](GAME, random.Random(0)).ranked(state.view(state.actor), 3)
        return sum(score >= ranked[0][0] - 3.0 for score, _ in ranked)

    state = play_until(3, 11, lambda s: close_calls(s) > 1)
    weighed = close_calls(state)
    assert weighed > 1
    move = Counted(GAME, random.Random(9), samples=2).choose(state.view(state.actor))
    assert Counted.rollouts == 2 * weighed  # two sampled worlds for each choice weighed
    state.apply(move)  # legal in the real game
