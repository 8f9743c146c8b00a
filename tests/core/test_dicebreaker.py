"""Dice Breaker rules as ../shared/rules/dicebreaker.md states them, sentence by sentence."""

from __future__ import annotations

import collections
import itertools
import math
import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.core import bots as generic
from dicetable.core import dicebreaker as db
from dicetable.core import dicebreaker_bots
from dicetable.core import dicebreaker_hands as hands
from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, BadOption, BadOutcome, IllegalMove, Move, Outcome
from dicetable.core.match import play_out

GAME = registry.get("dicebreaker")
UNIT = db.SCORE_UNIT


# -- hands (End of a round and scoring) -----------------------------------------------------------


@pytest.mark.parametrize(
    "faces, name, points",
    [
        ("1 2 4 5 6", "nothing", 0),
        ("1 3 4 5 6", "nothing", 0),
        ("2 2 3 4 6", "one pair", 1),
        ("2 2 4 4 6", "two pairs", 2),
        ("3 3 3 1 6", "three of a kind", 3),
        ("1 2 3 4 5", "straight", 4),
        ("2 3 4 5 6", "straight", 4),
        ("5 3 1 4 2", "straight", 4),
        ("4 4 4 2 2", "full house", 5),
        ("6 6 6 6 1", "four of a kind", 6),
        ("5 5 5 5 5", "five of a kind", None),
    ],
)
def test_every_category_of_the_table(faces, name, points):
    hand = hands.parse_hand(faces)
    assert hands.category(hand) == name
    assert hands.points(hand) == points


@pytest.mark.parametrize(
    "faces, name, five",
    [
        ("3 3 5 5 5 6", "full house", (5, 5, 5, 3, 3)),
        ("1 2 3 4 5 6", "straight", (6, 5, 4, 3, 2)),
        ("1 1 2 2 3 3", "two pairs", (3, 3, 2, 2, 1)),
        ("1 1 2 2 3 3 6", "two pairs", (6, 3, 3, 2, 2)),
        ("2 2 2 4 4 4 1", "full house", (4, 4, 4, 2, 2)),
        ("2 3 4 5 6 6 6", "straight", (6, 5, 4, 3, 2)),
        ("6 6 6 6 6 6 1", "five of a kind", (6, 6, 6, 6, 6)),
        ("1 1 1 1 2 3 6", "four of a kind", (6, 1, 1, 1, 1)),
    ],
)
def test_best_five_of_six_or_seven_dice(faces, name, five):
    hand = hands.parse_hand(faces)
    assert hands.category(hand) == name
    assert hands.best_five(hand) == five
    assert hands.category(five) == name


def test_hands_of_fewer_than_five_dice():
    assert hands.category((6, 6, 6, 6)) == "four of a kind"
    assert hands.category((1, 2, 3, 4)) == "nothing"
    assert hands.category((2, 2)) == "one pair"
    assert hands.category(()) == "nothing"


@given(st.lists(st.integers(1, 6), min_size=5, max_size=9))
@settings(max_examples=200, deadline=None)
def test_category_is_the_best_of_every_five(faces):
    best = max(hands.rank(five) for five in itertools.combinations(faces, 5))
    assert hands.rank(faces) == best
    chosen = hands.best_five(faces)
    assert len(chosen) == 5 and hands.rank(chosen) == best
    assert all(chosen.count(v) <= faces.count(v) for v in set(chosen))


# -- helpers ---------------------------------------------------------------------------------------


def start(seats=2, **options):
    return GAME.start(seats, options)


def decided(seats=2, starter=0, **options):
    """A state right after the throw-off, `starter` having broken the starting die lowest."""
    state = start(seats, **options)
    values = tuple(0 if s == starter else 5 for s in range(seats))
    return state.resolve(Outcome(values))


def throw_values(state, face=3, target_face=None, out=False, caught=False, catcher=0, spinning=False):
    """The outcome of a throw's chance step, draws in the order of the module docstring."""
    o = state.option
    values = [face - 1]
    if target_face is not None:
        values.append(target_face - 1)
    values += [0 if out else o["out_den"] - 1, 0 if caught else o["caught_den"] - 1, catcher]
    if state.battle:
        values.append(0 if spinning else o["spinning_den"] - 1)
    outcome = Outcome(tuple(values))
    state.chance().check(outcome)
    return outcome


def throw(state, move, **fate):
    state = state.apply(Move.parse(move))
    assert state.actor == CHANCE
    return state.resolve(throw_values(state, **fate))


def with_trump(state, face=4):
    state = state.apply(Move("throw", (db.TRUMP,)))
    return state.resolve(Outcome((face - 1,)))


# -- start of the game -----------------------------------------------------------------------------


def test_throwoff_lowest_starts():
    state = start(3)
    assert state.actor == CHANCE and state.chance().ranges == (6, 6, 6)
    state = state.resolve(Outcome((4, 1, 3)))
    assert state.starter == 1 and state.round == 1 and state.seat == 1
    assert state.throwoff == (((0, 5), (1, 2), (2, 4)),)


def test_throwoff_ties_break_again_until_one_is_lowest():
    state = start(4).resolve(Outcome((2, 0, 0, 3)))
    assert state.phase == db.THROWOFF and state.contenders == (1, 2)
    assert state.chance().ranges == (6, 6)
    state = state.resolve(Outcome((3, 3)))  # tied again
    assert state.contenders == (1, 2)
    state = state.resolve(Outcome((5, 2)))
    assert state.starter == 2 and state.phase == db.TRUMP_THROW and state.seat == 2


def test_options_are_fractions_and_checked():
    state = start()
    assert (state.option["out_num"], state.option["out_den"]) == (1, 12)
    assert (state.option["caught_num"], state.option["caught_den"]) == (1, 2)
    assert (state.option["spinning_num"], state.option["spinning_den"]) == (1, 6)
    assert (state.option["latent_stays_num"], state.option["latent_stays_den"]) == (1, 2)
    assert state.option["mode"] == "battle" and state.option["target"] == 33
    with pytest.raises(BadOption):
        start(out_num=13)
    with pytest.raises(BadOption):
        start(mode="blitz")
    with pytest.raises(BadOption):
        GAME.start(7)


def test_each_player_has_five_dice():
    state = decided(6, starter=3, mode="quick")
    assert state.held == tuple(db.die_names(s) for s in range(6))
    assert state.held[1] == ("B1", "B2", "B3", "B4", "B5")


# -- throws ----------------------------------------------------------------------------------------


def test_a_roll_lands_with_its_face_and_the_break_refaces_the_target():
    state = decided(mode="quick")
    state = throw(state, "throw A1", face=2)
    assert state.arena == (("A1", 0, 2),)
    state = throw(state, "throw A2 A1", face=5, target_face=6)
    assert state.arena == (("A1", 0, 6), ("A2", 0, 5))
    assert state.last[:4] == ("throw", "A2", "A1", "landed")


def test_out_of_the_arena_and_not_caught():
    state = throw(decided(mode="quick"), "throw A1", out=True)
    assert state.arena == () and state.out == ("A1",)
    assert "A1" not in state.held[0] and state.extra == ((), ())


def test_caught_by_another_player_drawn_fairly():
    state = decided(4, starter=1, mode="quick")
    state = state.apply(Move.parse("throw B1"))
    assert state.chance().ranges == (6, 12, 2, 3)  # face, out, caught, one of the 3 others
    state = state.resolve(throw_values(state, out=True, caught=True, catcher=2))
    # catchers are counted from the thrower's left: seats 2, 3, 0 -> draw 2 is seat 0
    assert state.extra == (("B1",), (), (), ()) and state.out == ()
    assert state.last[3:5] == ("caught", 0)


def test_quick_play_throws_the_whole_set_then_caught_dice_in_turn_order():
    state = decided(3, starter=1, mode="quick")
    seen = []
    while state.result is None and state.round == 1:
        seen.append(state.seat)
        die = state.throwable(state.seat)[0]
        # seat 1's second throw flies out; catchers from its left are 2, 0: draw 1 is seat 0
        fate = dict(out=True, caught=True, catcher=1) if len(seen) == 2 else {}
        state = throw(state, f"throw {die}", **fate)
        if len(seen) == 7:
            assert state.extra[0] == ("B2",) and "B2" not in state.throwable(0)
    assert seen == [1] * 5 + [2] * 5 + [0] * 5 + [0]  # seat 0 throws the caught B2 last
    assert state.last[:4] == ("throw", "B2", "", "landed")
    assert state.rounds[0][2][0] == "five of a kind"  # seat 0's six dice all showed 3
    assert state.result.winners == (0, 2)  # seat 1, its B2 lost to seat 0, has four of a kind


def test_quick_play_breaks_only_own_dice():
    state = decided(mode="quick")
    for _ in range(5):
        state = throw(state, f"throw {state.throwable(0)[0]}")
    assert state.seat == 1
    assert state.targets(1) == ()
    with pytest.raises(IllegalMove):
        state.apply(Move.parse("throw B1 A1"))
    state = throw(state, "throw B1")
    assert state.targets(1) == ("B1",)
    assert Move.parse("throw B2 B1") in state.legal_moves()
    assert all(len(m.args) == 1 or m.args[1] == "B1" for m in state.legal_moves())


def test_battle_trump_first_then_one_die_at_a_time_breaking_any_die():
    state = decided(3, starter=2)
    assert state.phase == db.TRUMP_THROW and state.legal_moves() == (Move("throw", ("T",)),)
    with pytest.raises(IllegalMove):
        state.apply(Move.parse("throw C1"))
    state = with_trump(state, face=4)
    assert state.arena == (("T", db.EVERY_HAND, 4),) and state.seat == 2  # the starter throws next
    state = throw(state, "throw C1", face=1)
    assert state.seat == 0
    state = throw(state, "throw A1 T", face=2, target_face=6)  # the Trump Die is a target too
    assert state.seat == 1 and state.face("T") == 6
    assert set(state.targets(1)) == {"T", "C1", "A1"}
    state = throw(state, "throw B1 C1", face=2, target_face=5)
    assert state.arena == (("T", -1, 6), ("C1", 2, 5), ("A1", 0, 2), ("B1", 1, 2))
    assert state.hand(0) == (6, 2) and state.hand(1) == (6, 2)  # the Trump Die is in every hand


def test_trump_die_never_flies_out_nor_spins():
    # Even when every thrown die flies out and spins, the opening throw only shows a face (Battle).
    state = decided(2, starter=0, out_num=1, out_den=1, spinning_num=1, spinning_den=1)
    state = state.apply(Move("throw", (db.TRUMP,)))
    assert state.chance().ranges == (6,)
    state = state.resolve(Outcome((2,)))
    assert state.arena == (("T", db.EVERY_HAND, 3),) and state.phase == db.THROW and not state.spinning


def test_battle_caught_die_is_thrown_on_own_turn():
    state = with_trump(decided(2, starter=0))
    state = throw(state, "throw A1", out=True, caught=True)
    assert state.extra == ((), ("A1",))
    assert "A1" in state.throwable(1)
    state = throw(state, "throw A1", face=6)
    assert ("A1", 1, 6) in state.arena and state.extra == ((), ())


def test_battle_moves_are_readable_and_round_trip():
    state = with_trump(decided(2))
    for move in state.legal_moves():
        assert Move.parse(str(move)) == move
        assert Move.from_data(msgpack.unpackb(msgpack.packb(move.to_data()))) == move


# -- spinning dice and the Latent Dice (battle) ----------------------------------------------------


def spinning_state(seats=3):
    state = with_trump(decided(seats, starter=0), face=1)
    state = throw(state, "throw A1", face=2)
    state = throw(state, "throw B1", face=2)  # seat 1 has a pair with... nothing yet
    state = throw(state, "throw C1", face=5, spinning=True)
    return state


def test_a_spinning_die_opens_the_claim_step_for_every_seat():
    state = spinning_state()
    assert state.phase == db.LATENT and state.spinning == "C1" and state.last[-1] == 1
    assert state.asking_order() == (0, 1, 2)  # from the thrower's left round to the thrower
    assert state.seat == 0 and state.legal_moves() == (Move.parse("latent yes"), Move.parse("latent no"))
    state = state.apply(Move.parse("latent yes"))
    assert state.seat == 1
    assert state.view(1).answers == ("?", "", "")  # seat 0's answer is hidden from seat 1
    assert state.view(0).answers == ("yes", "", "")
    state = state.apply(Move.parse("latent no"))
    assert state.view(2).answers == ("?", "?", "")
    state = state.apply(Move.parse("latent yes"))
    assert state.answers == ("yes", "no", "yes") and state.actor == CHANCE
    assert state.chance().ranges == (2, 6, 2, 6)  # claimant, spinning face, stays, Latent face
    # Claimant draw 1 in asking order (0, 2) is seat 2; the Latent Die stays.
    state = state.resolve(Outcome((1, 2, 0, 5)))
    assert state.face("C1") == 3 and ("L1", 2, 6) in state.arena and state.latent_left == 3
    assert state.phase == db.THROW and state.seat == 0
    assert state.hand(2) == (1, 3, 6)


def test_a_latent_die_that_does_not_stay_is_lost():
    state = spinning_state()
    for answer in ("no", "yes", "no"):
        state = state.apply(Move.parse(f"latent {answer}"))
    state = state.resolve(Outcome((0, 5, 1, 0)))
    assert state.face("C1") == 6 and not any(d[0] == "L1" for d in state.arena)
    assert state.latent_left == 3 and state.last[:3] == ("latent", "L1", 1)


def test_nobody_claims_the_spinning_die():
    state = spinning_state()
    for _ in range(3):
        state = state.apply(Move.parse("latent no"))
    assert state.phase == db.THROW and state.latent_left == 4 and state.face("C1") == 5


@pytest.mark.parametrize("bot", ["random", "greedy", "search"])
def test_bots_answer_the_claim_step_from_their_view(bot):
    state = spinning_state().apply(Move.parse("latent yes"))
    chooser = GAME.bots[bot](GAME, random.Random(3), **({"playouts": 4} if bot == "search" else {}))
    assert chooser.choose(state.view(1)) in state.legal_moves()


def test_moves_in_plain_words():
    state = spinning_state()
    assert db.describe(state, Move.parse("latent yes")) == db.describe(state, Move.parse("latent no"))
    state = with_trump(decided(2, starter=0), face=3)
    state = throw(state, "throw A1", face=2)
    words = {m: db.describe(state, Move.parse(m)) for m in ("throw B1 A1", "throw B1 T")}
    assert words["throw B1 A1"] == "seat 1 (B) throws B1 to break seat 0's A1 (showing 2)"
    assert words["throw B1 T"] == "seat 1 (B) throws B1 to break the Trump Die (showing 3)"
    assert db.describe(state, Move.parse("throw B1")) == "seat 1 (B) rolls B1"


def test_no_claim_step_once_the_four_latent_dice_are_used():
    state = with_trump(decided(2, starter=0))
    for number in range(1, 5):
        state = throw(state, f"throw {state.throwable(state.seat)[0]}", spinning=True)
        state = state.apply(Move.parse("latent yes")).apply(Move.parse("latent no"))
        state = state.resolve(Outcome((0, 0, 0, 0)))
        assert state.latent_left == 4 - number
    assert [d[0] for d in state.arena if d[0].startswith("L")] == ["L1", "L2", "L3", "L4"]
    state = throw(state, f"throw {state.throwable(state.seat)[0]}", spinning=True)
    assert state.phase == db.THROW and state.last[-1] == 1


def test_quick_play_has_no_spinning_draw():
    state = decided(mode="quick").apply(Move.parse("throw A1"))
    assert state.chance().ranges == (6, 12, 2, 1)


# -- end of a round and scoring ---------------------------------------------------------------------


def last_throw(seats, arena, scores=None, starter=0, mode="quick", face=1, **options):
    """A quick-play state where seat 0 has one die (A5) left and every other die is thrown."""
    state = decided(seats, starter=starter, mode=mode, **options)
    held = [()] * seats
    held[0] = ("A5",)
    state = db.replace(
        state, arena=tuple(arena), held=tuple(held), passed=seats - 1, seat=0,
        scores=tuple(scores or (0,) * seats),
    )
    return throw(state, "throw A5", face=face)


def dice(seat, faces):
    return [(f"{db.LETTERS[seat]}{i}", seat, f) for i, f in enumerate(faces, 1)]


def test_the_highest_hand_scores_its_points_and_starts_the_next_round():
    arena = dice(0, [2, 2, 3, 4]) + dice(1, [6, 6, 6, 1, 1])
    state = last_throw(2, arena, face=5)
    assert state.scores == (0, 5 * UNIT) and state.rounds[-1][2] == ("one pair", "full house")
    assert state.round == 2 and state.starter == 1 and state.seat == 1
    assert state.held == (db.die_names(0), db.die_names(1)) and state.arena == ()


def test_shared_highest_category_splits_the_points_with_half_points():
    arena = dice(0, [2, 2, 2, 4]) + dice(1, [6, 6, 6, 1, 1]) + dice(2, [1, 2, 3, 4, 6])
    state = last_throw(3, arena, starter=1, face=4)  # seat 0: 2 2 2 4 4, full house
    assert state.scores == (UNIT * 5 // 2, UNIT * 5 // 2, 0)
    assert state.points(0) == 2.5
    # Tied winners 0 and 1: the nearest after the previous starter (seat 1) is seat 0.
    assert state.starter == 0


def test_split_three_ways_is_exact():
    arena = dice(0, [5, 5, 1, 2]) + dice(1, [3, 3, 1, 2, 6]) + dice(2, [4, 4, 6, 1, 2])
    state = last_throw(3, arena, starter=0, face=6)
    assert state.scores == (UNIT // 3,) * 3
    assert state.starter == 1  # the nearest tied winner after seat 0


def test_no_hand_reaching_one_pair_scores_nothing():
    arena = dice(0, [1, 2, 3, 4]) + dice(1, [1, 2, 3, 4, 6])
    state = last_throw(2, arena, starter=1, face=6)
    assert state.scores == (0, 0) and state.rounds[-1][3] == (0, 0)
    assert state.starter == 0


def test_caught_and_latent_dice_count_in_the_hand():
    arena = dice(0, [2, 2, 3, 4]) + [("B5", 0, 3), ("L1", 0, 3)] + dice(1, [6, 6, 1, 2])
    state = last_throw(2, arena, face=1)
    assert state.rounds[-1][2] == ("full house", "one pair")


def test_thirty_three_points_wins():
    arena = dice(0, [2, 2, 3, 4]) + dice(1, [6, 6, 1, 2, 3])
    state = last_throw(2, arena, scores=(32 * UNIT, 20 * UNIT), face=2)  # three of a kind
    assert state.result.winners == (0,) and state.result.scores == (35.0, 20.0)
    assert state.actor is None and state.legal_moves() == ()


def test_several_reach_thirty_three_the_higher_total_wins():
    arena = dice(0, [2, 2, 3, 4]) + dice(1, [6, 6, 1, 2, 3])
    state = last_throw(2, arena, scores=(30 * UNIT, 34 * UNIT), face=3)  # two pairs vs pair
    assert state.result.winners == (1,)  # 32 is below 33: seat 1 alone reached it


def test_equal_totals_over_thirty_three_share_the_win():
    arena = dice(0, [6, 6, 3, 4]) + dice(1, [6, 6, 1, 2, 3])
    state = last_throw(2, arena, scores=(32 * UNIT, 32 * UNIT), face=1)  # one pair each
    assert state.scores == (32 * UNIT + UNIT // 2, 32 * UNIT + UNIT // 2)
    assert state.result is None  # 32.5 each: not yet
    arena = dice(0, [6, 6, 6, 4]) + dice(1, [5, 5, 5, 2, 3])
    state = last_throw(2, arena, scores=(32 * UNIT, 32 * UNIT), face=1)  # three of a kind each
    assert state.result.winners == (0, 1) and state.result.scores == (33.5, 33.5)
    assert state.result.reason == "33 points"


def test_higher_of_two_totals_over_thirty_three():
    arena = dice(0, [6, 6, 6, 4]) + dice(1, [5, 5, 2, 2, 3])
    state = last_throw(2, arena, scores=(30 * UNIT, 32 * UNIT), face=4)  # full house vs two pairs
    assert state.points(0) == 35 and state.points(1) == 32
    arena = dice(0, [6, 6, 6, 4]) + dice(1, [5, 5, 5, 2, 3])
    state = last_throw(2, arena, scores=(32 * UNIT, 31 * UNIT + UNIT // 2), face=1)
    assert state.result.scores == (33.5, 33.0) and state.result.winners == (0,)


def test_five_of_a_kind_wins_at_the_end_of_its_round():
    arena = dice(0, [4, 4, 4, 4]) + dice(1, [6, 6, 6, 6, 1])
    state = last_throw(2, arena, scores=(0, 32 * UNIT), face=4)
    assert state.result.winners == (0,) and state.result.reason == "five of a kind"


def test_five_of_a_kind_by_two_players_is_shared():
    arena = dice(0, [4, 4, 4, 4]) + dice(1, [6, 6, 6, 6, 6]) + dice(2, [1, 1, 2, 2, 3])
    state = last_throw(3, arena, face=4)
    assert state.result.winners == (0, 1)


def test_the_trump_die_completes_every_hand_in_battle():
    state = with_trump(decided(2, starter=1), face=6)
    state = db.replace(
        state,
        arena=state.arena + tuple(dice(0, [6, 6, 6, 1])) + tuple(dice(1, [6, 6, 2, 2, 1])),
        held=(("A5",), ()), seat=0, thrower=1,
    )
    state = throw(state, "throw A5", face=6)
    assert state.result.winners == (0,)  # 6 6 6 6 + T 6: five of a kind; seat 1: full house


# -- plain data, properties and fairness ----------------------------------------------------------


@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 6),
    st.sampled_from(["quick", "battle"]),
)
@settings(max_examples=12, deadline=None)
def test_random_play_always_ends_and_every_state_round_trips(seed, seats, mode):
    rng = random.Random(seed)
    state = GAME.start(seats, {"mode": mode, "target": 8})
    bots = [GAME.bots["random"](GAME, random.Random(seed + s)) for s in range(seats)]
    source = LocalSource(rng)
    steps = 0
    while state.actor is not None:
        data = msgpack.unpackb(msgpack.packb(state.to_data()))
        assert db.load(data) == state
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            view = state.view(state.actor)
            move = bots[state.actor].choose(view)
            assert move in state.legal_moves()
            state = state.apply(move)
        steps += 1
        assert steps < 20000
    assert db.load(state.to_data()) == state
    assert state.result.winners
    assert max(state.result.scores) >= 8 or state.result.reason == "five of a kind"


def test_bad_outcomes_and_moves_change_nothing():
    state = decided(mode="quick").apply(Move.parse("throw A1"))
    with pytest.raises(BadOutcome):
        state.resolve(Outcome((6, 0, 0, 0)))
    with pytest.raises(BadOutcome):
        state.resolve(Outcome((1,)))
    with pytest.raises(IllegalMove):
        state.apply(Move.parse("throw A2"))
    thrown = decided(mode="quick")
    with pytest.raises(IllegalMove):
        thrown.apply(Move.parse("throw B1"))
    with pytest.raises(IllegalMove):
        thrown.apply(Move.parse("latent yes"))


def binomial_ok(hits, trials, p, z=4.0):
    """Within z standard deviations of the expected count (two-sided, about 6e-5 at z = 4)."""
    return abs(hits - trials * p) <= z * math.sqrt(trials * p * (1 - p))


def count_fates(seed, throws_wanted, **options):
    throws = outs = caught = landed = spinning = 0
    rng = random.Random(seed)
    while throws < throws_wanted:
        state = GAME.start(2, options)
        bots = [GAME.bots["random"](GAME, random.Random(rng.random())) for _ in range(2)]
        source = LocalSource(random.Random(rng.random()))
        while state.actor is not None:
            if state.actor == CHANCE:
                rolling = state.phase == db.ROLLING and state.throw != (db.TRUMP,)
                state = state.resolve(source.outcome(state.chance()))
                if rolling:
                    throws += 1
                    fate = state.last[3]
                    outs += fate in ("out", "caught")
                    caught += fate == "caught"
                    landed += fate == "landed"
                    spinning += state.last[-1]
            else:
                state = state.apply(bots[state.actor].choose(state.view(state.actor)))
    return throws, outs, caught, landed, spinning


@pytest.mark.slow
def test_out_of_arena_and_spinning_frequencies_match_the_defaults():
    throws, outs, caught, landed, spinning = count_fates(7, 12000)
    assert binomial_ok(outs, throws, 1 / 12)
    assert binomial_ok(caught, outs, 1 / 2)
    assert binomial_ok(spinning, landed, 1 / 6)
    # The same test notices a different probability: it is not blind.
    assert not binomial_ok(outs, throws, 1 / 10) and not binomial_ok(spinning, landed, 1 / 5)


def test_probability_options_change_the_frequencies():
    throws, outs, _, landed, spinning = count_fates(3, 2000, out_num=1, out_den=2, spinning_num=0)
    assert binomial_ok(outs, throws, 1 / 2) and spinning == 0


# -- bots ------------------------------------------------------------------------------------------


def test_game_is_registered_with_its_bots_and_levels():
    assert registry.get("dicebreaker") is GAME
    assert set(GAME.bots) == {"random", "greedy", "search", "lookahead", "easy", "medium", "hard"}


def test_greedy_breaks_the_leaders_best_die_in_battle():
    state = with_trump(decided(2, starter=0), face=1)
    state = db.replace(
        state, arena=state.arena + (("B1", 1, 6), ("B2", 1, 6), ("B3", 1, 6), ("A1", 0, 2)),
        held=(("A2", "A3", "A4", "A5"), ("B4", "B5")), seat=0, thrower=1,
    )
    move = GAME.bots["greedy"](GAME, random.Random(1)).choose(state.view(0))
    assert move.args[0] == "A2" and move.args[1] in ("B1", "B2", "B3")


def test_greedy_in_quick_play_rerolls_its_lone_die():
    state = decided(mode="quick")
    arena = (("A1", 0, 4), ("A2", 0, 4), ("A3", 0, 1))
    state = db.replace(state, arena=arena, held=(("A4", "A5"), db.die_names(1)))
    move = GAME.bots["greedy"](GAME, random.Random(1)).choose(state.view(0))
    assert move == Move.parse("throw A4 A3")


def test_search_is_deterministic_per_seed_and_legal():
    state = with_trump(decided(2, starter=0))
    state = throw(state, "throw A1", face=5)
    state = throw(state, "throw B1", face=5)
    picks = {GAME.bots["search"](GAME, random.Random(4), playouts=6).choose(state.view(0)) for _ in range(2)}
    assert len(picks) == 1 and picks.pop() in state.legal_moves()


@pytest.mark.slow
def test_search_beats_random_and_four_players_finish():
    search, wins = GAME.bots["search"], 0
    for number in range(6):  # a light search, to a short target: the full measure is in the report
        me = number % 2
        bots = [None, None]
        bots[me] = search(GAME, random.Random(number), playouts=4, candidates=3)
        bots[1 - me] = GAME.bots["random"](GAME, random.Random(100 + number))
        final, _ = play_out(GAME.start(2, {"target": 8}), bots, LocalSource(random.Random(number)))
        wins += me in final.result.winners
    assert wins >= 5
    names = ["greedy", "random", "search", "random"]
    light = {"search": {"playouts": 4}}
    bots = [GAME.bots[n](GAME, random.Random(s), **light.get(n, {})) for s, n in enumerate(names)]
    final, _ = play_out(GAME.start(4, {"target": 8}), bots, LocalSource(random.Random(2)))
    assert final.result is not None and final.result.winners


def test_lookahead_on_the_last_throw_breaks_the_better_hand():
    # A's last die ends the round: B's three 6s beat A's pair of 5s unless A breaks a 6.
    state = with_trump(decided(2, starter=1), face=1)
    state = db.replace(
        state, arena=state.arena + (("B1", 1, 6), ("B2", 1, 6), ("B3", 1, 6), ("A1", 0, 5), ("A2", 0, 5)),
        held=(("A5",), ()), seat=0, thrower=1,
    )
    move = GAME.bots["lookahead"](GAME, random.Random(1)).choose(state.view(0))
    assert move.args[0] == "A5" and move.args[1] in ("B1", "B2", "B3")


def test_lookahead_claims_its_own_spinning_pair_die_that_the_other_seat_would_claim():
    # A's 3 spins beside its other 3. Left alone the pair stands, but B gains by breaking it (greedy
    # claims), and one claimant is drawn: claiming too keeps half the draw and may keep a Latent Die.
    state = with_trump(decided(2, starter=0), face=6)
    state = throw(state, "throw A1", face=3)
    state = throw(state, "throw B1", face=3)
    state = throw(state, "throw A2", face=3, spinning=True)
    assert state.phase == db.LATENT and state.spinning == "A2" and state.seat == 1
    greedy = GAME.bots["greedy"](GAME, random.Random(1)).choose(state.view(1))
    assert greedy == Move.parse("latent yes")
    state = state.apply(greedy)
    move = GAME.bots["lookahead"](GAME, random.Random(1)).choose(state.view(0))
    assert move == Move.parse("latent yes")


def test_lookahead_rank_chances_are_exact():
    # A pair of 3s and one more die: a third 3 (1/6) makes three of a kind, else it stays a pair.
    chances = dicebreaker_bots.rank_chances((3, 3), 0, 1)
    assert chances[hands.RANK["three of a kind"]] == pytest.approx(1 / 6)
    assert chances[hands.RANK["one pair"]] == pytest.approx(5 / 6) and sum(chances) == pytest.approx(1)


@given(
    st.lists(st.integers(1, 6), max_size=6).map(lambda f: tuple(sorted(f))),
    st.lists(st.integers(1, 6), max_size=6).map(lambda f: tuple(sorted(f))),
    st.integers(0, 6),
)
@settings(max_examples=60, deadline=None)
def test_lookahead_throw_outcomes_are_every_face_drawn_and_merged(mine, theirs, trump):
    # Each throw's outcomes against a plain count of its 6 (roll) or 36 (break) equally likely faces.
    def count(hands_of):
        seen = collections.Counter(hands_of)
        return {outcome: n / sum(seen.values()) for outcome, n in seen.items()}

    def land(faces, *more):
        return tuple(sorted(faces + more))

    def drop(faces, face):
        rest = list(faces)
        rest.remove(face)
        return tuple(rest)

    expected = {None: count((land(mine, f), theirs, trump) for f in range(1, 7))}
    pairs = list(itertools.product(range(1, 7), repeat=2))
    for x in sorted(set(mine)):
        expected[("own", x)] = count((land(drop(mine, x), g, f), theirs, trump) for g, f in pairs)
    for x in sorted(set(theirs)):
        expected[("other", x)] = count((land(mine, f), land(drop(theirs, x), g), trump) for g, f in pairs)
    if trump:
        expected[("trump", trump)] = count((land(mine, f), theirs, g) for g, f in pairs)
    found = dicebreaker_bots._throws(mine, theirs, trump)
    assert {target: dict(outcomes) for target, outcomes in found} == expected  # n / 6 or n / 36: exact
    assert [target for target, _ in found] == list(expected)  # the roll, own dice, theirs, the Trump Die


def test_lookahead_outlook_is_the_mean_round_over_every_die_still_to_come():
    mine, theirs, trump = (2, 5), (4, 4, 1), 5
    total = 0.0
    for rolled in itertools.product(range(1, 7), repeat=3):  # two dice of mine still to come, one of theirs
        a = hands.rank(mine + rolled[:2] + (trump,))
        b = hands.rank(theirs + rolled[2:] + (trump,))
        total += dicebreaker_bots.round_points(a, b) / 6**3
    assert dicebreaker_bots.outlook(mine, theirs, trump, 2, 1) == pytest.approx(total)


def test_lookahead_plays_whole_games_legally_and_by_its_seed():
    def game(seed):
        bots = [GAME.bots["lookahead"](GAME, random.Random(seed)), GAME.bots["greedy"](GAME, random.Random(seed + 1))]
        final, steps = play_out(GAME.start(2, {"target": 6}), bots, LocalSource(random.Random(seed)))
        return [step.move for step in steps]  # play_out applies each move: an illegal one raises

    assert game(3) == game(3) and game(3) != game(4)


def test_lookahead_in_quick_play_keeps_to_its_own_dice():
    # B has thrown its set (three 6s): in battle A would break one; quick play allows only its own.
    state = decided(starter=1, mode="quick")
    arena = (("B1", 1, 6), ("B2", 1, 6), ("B3", 1, 6), ("B4", 1, 2), ("B5", 1, 1), ("A1", 0, 4))
    state = db.replace(state, arena=arena, held=(("A2", "A3", "A4", "A5"), ()), seat=0, passed=1)
    move = GAME.bots["lookahead"](GAME, random.Random(1)).choose(state.view(0))
    assert move in state.legal_moves()


def test_lookahead_searches_deeper_within_its_nodes_and_a_hurried_one_plays_its_deepest_finished_search():
    state = with_trump(decided(2, starter=1), face=1)
    state = db.replace(state, arena=state.arena + (("B1", 1, 6), ("B2", 1, 6), ("A1", 0, 5)),
                       held=(("A2", "A3", "A4", "A5"), ("B3", "B4", "B5")), seat=0, thrower=1)
    view = state.view(0)
    lookahead = GAME.bots["lookahead"]
    # A budget of one position stops the search past `depth`: the move is depth 1's.
    bounded = lookahead(GAME, random.Random(1), depth=1, deepest=3, nodes=1)
    assert bounded.choose(view) == lookahead(GAME, random.Random(1), depth=1).choose(view)
    hurried = lookahead(GAME, random.Random(1), depth=1, deepest=9)  # unbounded: minutes of search
    hurried.hurry.set()  # asked to move now: the depth finished before the first check stands
    assert hurried.choose(view) == lookahead(GAME, random.Random(1), depth=1).choose(view)
    assert generic.hurry(hurried) and not generic.hurry(GAME.bots["greedy"](GAME, random.Random(1)))
