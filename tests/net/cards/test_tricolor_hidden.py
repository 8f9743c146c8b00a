"""Tricolor Line's hidden cards: views never leak, peers that know only their own cards stay in step
with the full game, states round-trip, and selfplay always ends (hypothesis)."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, NOBODY, BadOutcome, IllegalMove, Move, Outcome
from dicetable.core.match import play_out
from dicetable.core import registry
from dicetable.core.tricolor import OVER, load
from dicetable.core.tricolor_tiles import UNKNOWN

GAME = registry.get("tricolor")


def random_bots(seats: int, seed: int):
    return [GAME.bots["random"](GAME, random.Random(seed * 31 + s)) for s in range(seats)]


def peer_outcome(full_before, full_after, chance, outcome: Outcome, seat: int) -> Outcome:
    """What the network gives `seat` for this chance step (FAIRNESS.md §2)."""
    if not chance.hidden:
        return outcome
    if chance.private == NOBODY:
        return Outcome()  # nobody learns a hidden shuffle
    if chance.reveal is not None:
        s = chance.reveal
        return Outcome((full_before.ids[s],) + full_before.hands[s])
    if chance.private != seat:
        return Outcome()
    if chance.deck == "id":
        return Outcome((full_after.ids[seat],))
    count = len(chance.positions)
    return Outcome(full_after.hands[seat][-count:])


def lockstep(seats: int, seed: int, check_every_step: bool = True):
    """Play a full game while every seat runs its own state fed only what it may learn."""
    full = GAME.start(seats)
    peers = [GAME.start(seats) for _ in range(seats)]
    bots = random_bots(seats, seed)
    source = LocalSource(random.Random(seed))
    steps = 0
    while full.actor is not None:
        if full.actor == CHANCE:
            chance = full.chance()
            assert all(p.chance() == chance for p in peers)
            outcome = source.outcome(chance)
            after = full.resolve(outcome)
            peers = [p.resolve(peer_outcome(full, after, chance, outcome, s)) for s, p in enumerate(peers)]
            full = after
        else:
            actor = full.actor
            move = bots[actor].choose(peers[actor])  # the bot sees only what its seat knows
            full = full.apply(move)
            peers = [p.apply(move) for p in peers]
        steps += 1
        if check_every_step or full.actor is None:
            for s, peer in enumerate(peers):
                assert peer == full.view(s), f"seat {s} out of step after {steps} steps"
    return full, peers


def test_peers_knowing_only_their_own_cards_stay_in_step():
    full, peers = lockstep(4, seed=5)
    assert full.result is not None
    # After scoring every card is shown: all peers agree with the full state on the result.
    assert all(p.result == full.result for p in peers)
    assert all(p.hands == full.hands and p.ids == full.ids for p in peers)


@pytest.mark.slow
def test_lockstep_with_eight_seats():
    full, peers = lockstep(8, seed=2, check_every_step=False)
    assert all(p.result == full.result for p in peers)


def test_view_never_reveals_another_seats_hand_or_id_before_scoring():
    state = GAME.start(4)
    source = LocalSource(random.Random(9))
    bots = random_bots(4, 9)
    seen = 0
    while state.result is None:
        for seat in range(4):
            view = state.view(seat)
            data = view.to_data()
            assert data["order"] == [] and data["id_order"] == []
            for other in range(4):
                if other != seat and not state.shown[other]:
                    assert data["ids"][other] == UNKNOWN
                    assert set(data["hands"][other]) <= {UNKNOWN}
                    assert len(data["hands"][other]) == len(state.hands[other])  # counts are public
            assert data["ids"][seat] == state.ids[seat] and data["hands"][seat] == list(state.hands[seat])
            seen += 1
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            state = state.apply(bots[state.actor].choose(state.view(state.actor)))
    assert seen > 100


def test_views_of_deals_that_differ_only_in_hidden_cards_are_equal():
    """Two games whose only difference is seats 1 and 2's hidden cards look the same to seat 0."""
    a = b = GAME.start(3)
    source = LocalSource(random.Random(6))
    while a.actor == CHANCE:
        chance = a.chance()
        outcome = source.outcome(chance)
        if chance.private == NOBODY:
            # Swap what seats 1 and 2 are dealt: ID positions 1 and 2, resource positions 4 and 8.
            i, j = (1, 2) if chance.deck == "id" else (4, 8)
            perm = list(outcome.permutation)
            perm[i], perm[j] = perm[j], perm[i]
            a, b = a.resolve(outcome), b.resolve(Outcome((), tuple(perm)))
        else:
            a, b = a.resolve(outcome), b.resolve(outcome)
    assert a.hands[1] != b.hands[1] and a.ids[1] != b.ids[1]
    assert a.view(0) == b.view(0)
    assert a.view(1) != b.view(1)


def test_peer_without_the_cards_accepts_other_seats_payments_by_name():
    state = GAME.start(2)
    source = LocalSource(random.Random(4))
    while state.actor == CHANCE:
        state = state.resolve(source.outcome(state.chance()))
    mover = state.seat
    other = 1 - mover
    peer = state.view(other)
    assert set(peer.hands[mover]) == {UNKNOWN}
    # Setup placements, then the mover's turn; whatever it pays is named and so revealed to the peer.
    bots = random_bots(2, 4)
    for _ in range(400):
        if state.actor == CHANCE:
            chance = state.chance()
            outcome = source.outcome(chance)
            after = state.resolve(outcome)
            peer = peer.resolve(peer_outcome(state, after, chance, outcome, other))
            state = after
            continue
        if state.actor is None:
            break
        move = bots[state.actor].choose(state.view(state.actor))
        state, peer = state.apply(move), peer.apply(move)
        if move.kind in ("construct", "attack", "discard", "modify") and state.actor != other:
            assert set(peer.discards) == set(state.discards)
    # A card the peer itself holds can never be claimed by the other seat.
    if state.result is None and peer.hands[other] and peer.hands[mover]:
        mine = next(c for c in peer.hands[other] if c != UNKNOWN)
        with pytest.raises(IllegalMove):
            peer._take(mover, (mine,))


def test_bad_hidden_outcomes_are_refused():
    state = GAME.start(2)
    source = LocalSource(random.Random(1))
    while state.chance().deck != "id" or state.chance().private == NOBODY:
        state = state.resolve(source.outcome(state.chance()))
    peer = GAME.start(2)
    source = LocalSource(random.Random(1))
    while peer.chance().deck != "id" or peer.chance().private == NOBODY:
        chance = peer.chance()
        peer = peer.resolve(source.outcome(chance) if not chance.hidden else Outcome())
    with pytest.raises(BadOutcome):
        peer.resolve(Outcome((9,)))  # there are 9 ID cards, numbered 0-8
    with pytest.raises(BadOutcome):
        state.resolve(Outcome(((state.id_order[0] + 1) % 9,)))  # not the card at that position
    with pytest.raises(BadOutcome):
        peer.resolve(Outcome((1, 2)))  # two cards for one position


def test_reveal_must_match_what_was_dealt():
    state = GAME.start(2, {"turn_limit": 10})
    source = LocalSource(random.Random(3))
    bots = random_bots(2, 3)
    while state.actor != CHANCE or state.chance().reveal is None:
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            state = state.apply(bots[state.actor].choose(state.view(state.actor)))
    assert state.chance().reveal == 0
    peer = state.view(1)
    with pytest.raises(BadOutcome):
        peer.resolve(Outcome())  # a peer that does not know seat 0's cards needs them listed
    true = (state.ids[0],) + state.hands[0]
    with pytest.raises(BadOutcome):
        peer.resolve(Outcome(true[:-1] if len(true) > 1 else true + (65,)))  # one card short or over
    if peer.hands[1]:
        with pytest.raises(BadOutcome):
            peer.resolve(Outcome((true[0], peer.hands[1][0]) + true[2:]))  # a card seat 1 holds itself
    with pytest.raises(BadOutcome):
        state.resolve(Outcome(((true[0] + 1) % 9,) + true[1:]))  # not the ID card dealt
    shown = peer.resolve(Outcome(true))
    assert shown.ids[0] == state.ids[0] and shown.view(1).hands[0] == state.hands[0]


# -- plain data and the end of every game ----------------------------------------------------------
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seats=st.integers(2, 8), seed=st.integers(0, 10_000))
def test_state_round_trips_through_msgpack(seats, seed):
    state = GAME.start(seats, {"turn_limit": 30})
    source = LocalSource(random.Random(seed))
    bots = random_bots(seats, seed)
    count = 0
    while state.actor is not None:
        if count % 7 == 0:
            data = msgpack.unpackb(msgpack.packb(state.to_data()))
            assert load(data) == state
            assert load(state.view(1).to_data()) == state.view(1)
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            state = state.apply(bots[state.actor].choose(state.view(state.actor)))
        count += 1
    assert load(msgpack.unpackb(msgpack.packb(state.to_data()))) == state


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seats=st.integers(2, 8), seed=st.integers(0, 10_000))
def test_selfplay_always_ends(seats, seed):
    final, steps = play_out(GAME.start(seats, {"turn_limit": 120}), random_bots(seats, seed), LocalSource(random.Random(seed)))
    assert final.phase == OVER and final.result is not None
    assert len(final.result.scores) == seats and final.result.winners
    assert max(final.result.scores) == final.result.scores[final.result.winners[0]]
    assert all(final.shown)


def test_illegal_moves_are_refused_and_change_nothing():
    state = GAME.start(2)
    source = LocalSource(random.Random(8))
    while state.actor == CHANCE:
        state = state.resolve(source.outcome(state.chance()))
    before = state.to_data()
    for bad in (Move("draw", (2,)), Move("place", (1, "9,9", 0)), Move("place", (4, "1,0", 0)), Move("end"), Move("place", ("x",))):
        with pytest.raises(IllegalMove):
            state.apply(bad)
    assert state.to_data() == before
