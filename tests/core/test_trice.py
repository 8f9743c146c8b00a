"""TRICE rules as ../shared/rules/trice.md states them."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.core import registry
from dicetable.core import trice
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, BadOutcome, IllegalMove, Move, Outcome
from dicetable.core.match import play_out
from dicetable.core.trice import DOUBLE, ORDERED, SAME_COLOUR, SAME_VALUE, TriceState

GAME = registry.get("trice")


def lines_of(text):
    board = trice.parse_board(text)
    return {
        "-".join(trice.SQUARES[i] for i in line): condition
        for line, condition in trice.board_lines(board)
    }


# -- the rulebook examples (trice.md, "Rulebook examples") ----------------------------------------


def test_example_same_colour_diagonal():
    board = trice.parse_board("W6 P4 -- -- / -- W2 O6 O4 / -- -- W5 --")
    assert lines_of("W6 P4 -- -- / -- W2 O6 O4 / -- -- W5 --") == {
        "b2-c2-d2": None,
        "a1-b2-c3": SAME_COLOUR,
    }
    assert trice.verdict(board) == ("trice", (0, 5, 10))


def test_example_same_value_row():
    found = lines_of("O4 P4 O4 W5 / -- -- O6 -- / W6 -- W2 --")
    assert found["a1-b1-c1"] == SAME_VALUE
    assert found["b1-c1-d1"] is None
    assert trice.verdict(trice.parse_board("O4 P4 O4 W5 / -- -- O6 -- / W6 -- W2 --"))[0] == "trice"


def test_example_ordered_column():
    found = lines_of("-- W2 -- -- / -- W3 P6 -- / -- O4 -- O6")
    assert found["b1-b2-b3"] == ORDERED
    assert trice.verdict(trice.parse_board("-- W2 -- -- / -- W3 P6 -- / -- O4 -- O6")) == (
        "trice",
        (1, 5, 9),
    )


def test_example_double_trice_diagonal():
    board = trice.parse_board("O6 P1 -- W4 / -- O4 W3 -- / -- W2 -- P2")
    assert lines_of("O6 P1 -- W4 / -- O4 W3 -- / -- W2 -- P2")["d1-c2-b3"] == DOUBLE
    assert trice.verdict(board) == ("double", (3, 6, 9))


# -- lines and conditions -------------------------------------------------------------------------


def test_fourteen_lines():
    names = sorted("-".join(trice.SQUARES[i] for i in line) for line in trice.LINES)
    assert names == sorted(
        [
            "a1-b1-c1", "b1-c1-d1", "a2-b2-c2", "b2-c2-d2", "a3-b3-c3", "b3-c3-d3",  # rows
            "a1-a2-a3", "b1-b2-b3", "c1-c2-c3", "d1-d2-d3",  # columns
            "a1-b2-c3", "b1-c2-d3",  # diagonals down-right
            "c1-b2-a3", "d1-c2-b3",  # diagonals down-left
        ]
    )


@pytest.mark.parametrize("line", trice.LINES, ids=lambda l: "-".join(trice.SQUARES[i] for i in l))
def test_each_line_wins_when_completed(line):
    """Fill exactly one line with a same-value, mixed-colour, unordered-colour set: a Trice there."""
    board = [""] * 12
    for square, die in zip(line, ("W3", "P3", "O3")):
        board[square] = die
    assert trice.verdict(tuple(board)) == ("trice", line)
    # With one die missing the line does not count.
    board[line[1]] = ""
    assert trice.verdict(tuple(board)) == ("none", None)


@pytest.mark.parametrize(
    "dice, condition",
    [
        (("W2", "P3", "O4"), ORDERED),
        (("W4", "P3", "O2"), ORDERED),  # descending in line order
        (("W5", "P6", "O1"), None),  # 6 and 1 are not consecutive
        (("W2", "P4", "O3"), None),  # 2-4-3 is not ordered
        (("W1", "W1", "W1"), DOUBLE),  # colour + value
        (("P1", "P2", "P3"), DOUBLE),  # colour + ordered
        (("O1", "O5", "O2"), SAME_COLOUR),
        (("W6", "O6", "P6"), SAME_VALUE),
        (("W1", "O2", "P4"), None),
    ],
)
def test_line_conditions(dice, condition):
    assert trice.line_condition(*dice) == condition


@pytest.mark.parametrize(
    "dice, met",
    [
        (("W1", "W1", "W1"), (SAME_COLOUR, SAME_VALUE)),
        (("P1", "P2", "P3"), (SAME_COLOUR, ORDERED)),
        (("O3", "W2", "P1"), (ORDERED,)),
        (("W1", "O2", "P4"), ()),
    ],
)
def test_every_condition_a_line_meets_is_named(dice, met):
    """What a Double Trice is made of, as the table's verdict names it (trice.md, Conditions of a full line)."""
    assert trice.line_conditions(*dice) == met


# -- a game driven move by move -------------------------------------------------------------------


def rolled(values_seat0, values_seat1):
    """The state right after the setup roll with the given values (W, W, P, P, O, O each)."""
    outcome = Outcome(tuple(v - 1 for v in values_seat0 + values_seat1))
    return GAME.start().resolve(outcome)


def test_setup_more_sixes_starts_and_second_player_chooses():
    state = rolled((6, 1, 2, 3, 4, 5), (5, 5, 4, 3, 2, 1))
    assert state.first == 0
    assert state.actor == 1 and state.phase == "choose"  # the second player chooses first
    assert sorted(state.pool) == sorted(
        ["W6", "W1", "P2", "P3", "O4", "O5", "W5", "W5", "P4", "P3", "O2", "O1"]
    )


def test_setup_tie_breaks_on_fives_then_rerolls_on_equal_multisets():
    state = rolled((6, 5, 1, 1, 1, 1), (6, 4, 4, 4, 4, 4))
    assert state.first == 0
    state = GAME.start().resolve(Outcome((0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0)))
    assert state.actor == CHANCE and state.rerolls == 1 and state.chance().label == "setup re-roll 1"


def test_bad_outcome_refused():
    with pytest.raises(BadOutcome):
        GAME.start().resolve(Outcome((6,) * 12))  # values are in range(6)
    with pytest.raises(BadOutcome):
        GAME.start().resolve(Outcome((1,) * 11))


def place_all(state, plan):
    """Play (die, square) pairs through choose/place."""
    for die, square in plan:
        state = state.apply(Move("choose", (die,)))
        state = state.apply(Move("place", (square,)))
    return state


def test_trice_wins_for_placer_and_roles_swap():
    state = rolled((6, 6, 1, 1, 2, 2), (1, 1, 3, 3, 4, 4))
    assert state.first == 0
    state = state.apply(Move("choose", ("W6",)))
    assert state.actor == 0 and state.phase == "place"
    state = state.apply(Move("place", ("a1",)))
    assert state.actor == 0 and state.phase == "choose"  # the placer now chooses for the other
    state = state.apply(Move("choose", ("W6",)))
    assert state.actor == 1
    state = state.apply(Move("place", ("b1",)))
    state = state.apply(Move("choose", ("P1",)))
    state = state.apply(Move("place", ("c1",)))  # W6 W6 P1: nothing
    assert state.result is None
    state = state.apply(Move("choose", ("W1",)))
    state = state.apply(Move("place", ("a2",)))
    state = state.apply(Move("choose", ("W1",)))
    before = state.actor
    state = state.apply(Move("place", ("a3",)))  # a1-a2-a3: W6 W1 W1 same colour
    assert state.result.winners == (before,) and state.result.reason == "Trice"
    assert state.line == (0, 4, 8)
    assert state.actor is None and state.legal_moves() == ()


def test_double_trice_beats_a_simultaneous_trice():
    # After placing P3 on b2: b1-b2-b3 is P2-P3-P4 (colour + ordered = Double Trice)
    # and a2-b2-c2 is O3-P3-W3 (same value Trice). The Double Trice decides: the placer loses.
    state = rolled((3, 1, 2, 3, 4, 1), (6, 6, 6, 6, 1, 3))
    assert state.first == 1
    board = list(state.board)
    for square, die in (("b1", "P2"), ("b3", "P4"), ("a2", "O3"), ("c2", "W3")):
        board[trice.INDEX[square]] = die
    state = TriceState(
        options=state.options, phase="place", seat=0, board=tuple(board), pool=("P3", "W1"),
        first=1, chosen="P3",
    )
    after = state.apply(Move("place", ("b2",)))
    assert after.result.winners == (1,) and after.result.reason == "Double Trice"


def test_illegal_moves_refused_and_state_unchanged():
    state = rolled((6, 6, 1, 1, 2, 2), (1, 1, 3, 3, 4, 4))
    for move in (Move("place", ("a1",)), Move("choose", ("W5",)), Move("choose", ()), Move("swap", ("a1",))):
        with pytest.raises(IllegalMove):
            state.apply(move)
    state2 = state.apply(Move("choose", ("W6",))).apply(Move("place", ("a1",)))
    state3 = state2.apply(Move("choose", ("W6",)))
    for bad in ("a1", "z9", 5):
        with pytest.raises(IllegalMove):
            state3.apply(Move("place", (bad,)))
    assert state3.board[0] == "W6" and state3.phase == "place"


# -- the swap phase -------------------------------------------------------------------------------

# A full board with no Trice anywhere; a1..d3 row by row.
QUIET = "P3 P3 W6 O3 / P1 W6 P6 W1 / O4 O6 W3 O4"


def swap_state(board_text=QUIET, seat=0):
    board = trice.parse_board(board_text)
    assert trice.verdict(board)[0] == "none"
    return TriceState(
        options=tuple(sorted(GAME.resolve_options().items())), phase="indicate", seat=seat,
        board=board, pool=(), first=0,
    )


def test_quiet_board_is_quiet():
    assert all(c is None for _, c in trice.board_lines(trice.parse_board(QUIET)))


def test_board_completion_leads_to_indicate_by_last_placer():
    board = list(trice.parse_board(QUIET))
    last = board[11]
    board[11] = ""
    state = TriceState(
        options=tuple(sorted(GAME.resolve_options().items())), phase="place", seat=1,
        board=tuple(board), pool=(last,), first=0, chosen=last,
    )
    state = state.apply(Move("place", ("d3",)))
    assert state.phase == "indicate" and state.actor == 1 and state.pool == ()


def test_swap_only_orthogonal_neighbours():
    state = swap_state().apply(Move("indicate", ("b2",)))
    assert state.actor == 1 and state.phase == "swap"
    assert sorted(str(m) for m in state.legal_moves()) == ["swap a2", "swap b1", "swap b3", "swap c2"]
    for diagonal in ("a1", "c3", "c1", "a3", "d2"):
        with pytest.raises(IllegalMove):
            state.apply(Move("swap", (diagonal,)))
    corner = swap_state().apply(Move("indicate", ("d3",)))
    assert sorted(str(m) for m in corner.legal_moves()) == ["swap c3", "swap d2"]


def test_increment_wraps_and_only_swapped_dice():
    state = swap_state().apply(Move("indicate", ("b2",)))  # b2 is W6, b1 is P3
    state = state.apply(Move("swap", ("b1",)))  # b1 <-> b2: b1=W6, b2=P3
    assert state.board[trice.INDEX["b1"]] == "W6" and state.board[trice.INDEX["b2"]] == "P3"
    assert state.result is None and state.phase == "increment"
    with pytest.raises(IllegalMove):
        state.apply(Move("increment", ("c3",)))
    after = state.apply(Move("increment", ("b1",)))
    assert after.board[trice.INDEX["b1"]] == "W1"  # 6 becomes 1
    assert after.swap_turns == 1


def swap_turn(board, indicate, swap, increment, seat=0):
    state = swap_state(board, seat=seat).apply(Move("indicate", (indicate,)))
    state = state.apply(Move("swap", (swap,)))
    return state, state.apply(Move("increment", (increment,)))


def test_lines_checked_only_after_the_increment():
    # The swap alone makes a Trice (d1 P5 <-> c1 P6 gives row 1 P2 W4 P5 P6 ...), the increment
    # of d1 breaks it: no result, the game goes on.
    board = "P2 W4 P6 P5 / O5 O3 W6 O1 / O4 W6 W2 O5"
    swapped, after = swap_turn(board, "d1", "c1", "d1")
    assert trice.verdict(swapped.board)[0] == "trice" and swapped.result is None
    assert trice.verdict(after.board)[0] == "none"
    assert after.result is None and after.phase == "indicate" and after.actor == 1
    # The swap alone makes a Double Trice, the increment turns it into a Trice: the swapper wins.
    board = "P6 W2 P4 W6 / W3 P4 W2 W1 / O1 P4 W1 P3"
    swapped, after = swap_turn(board, "b2", "a2", "b2")
    assert trice.verdict(swapped.board)[0] == "double" and swapped.result is None
    assert after.result.winners == (1,) and after.result.reason == "Trice"


def test_swap_trice_wins_and_double_trice_loses_for_the_swapper():
    _, after = swap_turn("P1 W5 W1 O3 / W1 O6 P2 O4 / W6 O6 W1 P2", "c1", "b1", "c1")
    assert after.result.winners == (1,) and after.result.reason == "Trice"
    _, after = swap_turn("P6 O5 W6 P4 / O5 O2 W1 O2 / P5 P5 O3 P4", "d3", "c3", "c3", seat=1)
    assert after.result.winners == (1,) and after.result.reason == "Double Trice"  # swapper 0 loses


def test_swap_phase_outcomes_follow_verdict_for_swapper():
    """Over many random swap turns, the result always matches the verdict for the swapper."""
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        state = swap_state(seat=rng.randrange(2))
        while state.result is None and checked < 2000:
            move = rng.choice(state.legal_moves())
            swapper = state.actor
            after = state.apply(move)
            if move.kind == "increment":
                found, _ = trice.verdict(after.board)
                checked += 1
                if found == "trice":
                    assert after.result.winners == (swapper,)
                elif found == "double":
                    assert after.result.winners == (1 - swapper,)
                elif after.result is None:
                    assert after.actor == swapper and after.phase == "indicate"
            state = after
    assert checked > 100


def test_draw_after_swap_limit():
    state = swap_state()
    state = TriceState(**{**_fields(state), "options": tuple(sorted(GAME.resolve_options({"swap_limit": 3}).items()))})
    turns = 0
    # Swap a die with itself back and forth while avoiding trices is hard to force; play randomly
    # but only count games that reach the limit.
    rng = random.Random(3)
    reached = False
    for _ in range(200):
        s = state
        while s.result is None:
            s = s.apply(rng.choice(s.legal_moves()))
        if s.result.winners == ():
            assert s.result.reason == "3 swap turns without a result" and s.swap_turns == 3
            reached = True
            break
    assert reached


def test_draw_by_threefold_repetition():
    # Indicating the same square with the same board and the same player to act three times draws.
    state = swap_state()
    options = tuple(sorted(GAME.resolve_options({"swap_limit": 100}).items()))
    state = TriceState(**{**_fields(state), "options": options})
    key_state = state
    a = state.apply(Move("indicate", ("a1",)))
    assert a.result is None
    # Rebuild the same position (same board, same indicated square, same player to act) by hand,
    # carrying the history, as if a cycle of swaps had returned the board to it.
    again = TriceState(**{**_fields(key_state), "seen": a.seen})
    b = again.apply(Move("indicate", ("a1",)))
    assert b.result is None
    again = TriceState(**{**_fields(key_state), "seen": b.seen})
    c = again.apply(Move("indicate", ("a1",)))
    assert c.result is not None and c.result.winners == () and "third time" in c.result.reason
    # With the option at 4, the third occurrence is not yet a draw.
    four = tuple(sorted(GAME.resolve_options({"repetitions": 4}).items()))
    d = TriceState(**{**_fields(key_state), "seen": b.seen, "options": four}).apply(Move("indicate", ("a1",)))
    assert d.result is None


def _fields(state):
    return {name: getattr(state, name) for name in TriceState.__dataclass_fields__}


# -- properties -----------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_play_ends_legally_and_round_trips(seed):
    rng = random.Random(seed)
    source = LocalSource(rng)
    state = GAME.start()
    steps = 0
    while state.actor is not None:
        data = state.to_data()
        assert trice.load(msgpack.unpackb(msgpack.packb(data))) == state
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            moves = state.legal_moves()
            assert moves, "a seat to act always has a legal move"
            state = state.apply(rng.choice(moves))
        # Never an illegal state: after setup the board and the pool hold the 12 dice between them.
        if state.phase != "setup":
            assert sum(1 for d in state.board if d) + len(state.pool) == 12
            assert sorted(c for c, _ in (d for d in state.board + state.pool if d)) == sorted("WWWWPPPPOOOO")
        steps += 1
        assert steps < 2000
    assert trice.load(state.to_data()) == state
    assert state.result.scores in ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5))


def test_bots_play_to_the_end_with_every_pairing():
    for a in GAME.bots:
        for b in GAME.bots:
            bots = [GAME.bots[a](GAME, random.Random(1), nodes=2000), GAME.bots[b](GAME, random.Random(2), nodes=2000)]
            final, steps = play_out(GAME.start(), bots, LocalSource(random.Random(5)))
            assert final.result is not None


def test_greedy_takes_a_win_and_never_hands_an_immediate_win():
    rng = random.Random(0)
    greedy = GAME.bots["greedy"](GAME, random.Random(1))
    checked_win = checked_choice = 0
    for _ in range(120):
        state = GAME.start()
        source = LocalSource(rng)
        while state.actor is not None:
            if state.actor == CHANCE:
                state = state.resolve(source.outcome(state.chance()))
                continue
            moves = state.legal_moves()
            if state.phase == "place":
                wins = [m for m in moves if (lambda s: s.result and s.result.winners == (state.actor,))(state.apply(m))]
                if wins:
                    assert greedy.choose(state) in wins
                    checked_win += 1
            if state.phase == "choose":
                def hands_win(m):
                    s = state.apply(m)
                    return any(s.apply(r).result and s.apply(r).result.winners == (s.actor,) for r in s.legal_moves())
                safe = [m for m in moves if not hands_win(m)]
                if safe and len(safe) < len(moves):
                    assert not hands_win(greedy.choose(state))
                    checked_choice += 1
            state = state.apply(rng.choice(moves))
    assert checked_win > 10 and checked_choice > 10


def test_search_is_deterministic_for_a_seed():
    state = GAME.start().resolve(Outcome((5, 0, 1, 2, 3, 4, 0, 0, 2, 2, 3, 3)))
    for _ in range(5):
        state = state.apply(random.Random(len(state.board)).choice(state.legal_moves()))
    picks = {str(GAME.bots["search"](GAME, random.Random(42), nodes=3000).choose(state)) for _ in range(3)}
    assert len(picks) == 1


def test_options_checked():
    from dicetable.core.game import BadOption

    with pytest.raises(BadOption):
        GAME.resolve_options({"swap_limit": 0})
    with pytest.raises(BadOption):
        GAME.resolve_options({"nope": 1})
    assert GAME.resolve_options({"swap_limit": "30"})["swap_limit"] == 30
    with pytest.raises(BadOption):
        GAME.start(seats=3)
