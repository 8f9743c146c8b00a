"""TRIAD rules as ../shared/rules/triad.md states them, its bots, and `dicetable analyze triad`."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.core import registry, triad, triad_bots
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, BadOutcome, IllegalMove, Move, Outcome
from dicetable.core.match import play_out
from dicetable.core.triad import OVER, REMOVE, TURN, TriadState

GAME = registry.get("triad")


def board_text(**cells: str) -> str:
    """A board in analyze notation with the given cells (`c3="B2"`), all others empty."""
    board = [""] * 36
    for name, die in cells.items():
        board[triad.INDEX[name]] = die
    return triad.format_board(tuple(board))


def position(text: str, to_move: str = "black", black: int = 0, **options) -> TriadState:
    """A state in the middle of a game: `to_move` is about to turn and move a die."""
    resolved = GAME.resolve_options(options)
    board = triad.parse_board(text)
    seat = black if to_move == "black" else 1 - black
    return TriadState(
        options=tuple(sorted(resolved.items())), phase=TURN, seat=seat, black=black,
        board=board, seen=((board, seat),),
    )


def moves_of(state: TriadState) -> set[str]:
    return {str(m) for m in state.legal_moves()}


def play(state: TriadState, *moves: str) -> TriadState:
    for text in moves:
        state = state.apply(Move.parse(text))
    return state


# -- components and setup (triad.md, Components and Setup) ---------------------------------------


def test_board_is_six_by_six_with_eighty_lines():
    assert len(triad.SQUARES) == 36 and triad.SQUARES[0] == "a1" and triad.SQUARES[-1] == "f6"
    assert len(triad.LINES) == 24 + 24 + 16 + 16
    assert all(list(line) == sorted(line) for line in triad.LINES)


def test_colours_are_drawn_then_dice_rolled_through_chance():
    state = GAME.start()
    assert state.actor == CHANCE and state.chance().ranges == (2,)
    with pytest.raises(IllegalMove):
        state.apply(Move("pass"))
    state = state.resolve(Outcome((1,)))
    assert state.black == 1 and state.colour(1) == "B" and state.colour(0) == "W"
    chance = state.chance()
    assert chance.label == "setup roll" and chance.ranges == (3,) * 12
    with pytest.raises(BadOutcome):
        state.resolve(Outcome((3,) * 12))  # faces are 1-3: values 0-2 only
    with pytest.raises(BadOutcome):
        state.resolve(Outcome((0,) * 11))


def test_start_rows_ascend_from_each_players_left_and_black_moves_first():
    state = GAME.start(options={"black": "seat1"})
    assert state.phase == "setup" and state.black == 1  # no draw when the colours are fixed
    black_roll = (2, 0, 1, 2, 0, 1)  # values 3 1 2 3 1 2
    white_roll = (0, 2, 2, 1, 0, 0)  # values 1 3 3 2 1 1
    state = state.resolve(Outcome(black_roll + white_roll))
    row1 = [state.board[triad.INDEX[f"{c}1"]] for c in "abcdef"]
    row6_from_f = [state.board[triad.INDEX[f"{c}6"]] for c in "fedcba"]
    assert row1 == ["B1", "B1", "B2", "B2", "B3", "B3"]
    assert row6_from_f == ["W1", "W1", "W1", "W2", "W3", "W3"]
    assert all(not d for d in state.board[6:30])
    assert state.actor == 1 and state.phase == TURN  # Black (seat 1) moves first


def test_first_option_lets_white_start():
    state = GAME.start(options={"black": "seat0", "first": "white"})
    state = state.resolve(Outcome((0,) * 12))
    assert state.actor == 1 and state.colour(1) == "W"


def test_a_rematch_keeps_the_colours_and_the_other_player_starts():
    state = GAME.start()
    state = state.resolve(Outcome((1,))).resolve(Outcome((0,) * 12))  # seat 1 drew Black and starts
    assert state.first == 1
    following = state.rematch_options()
    assert following["black"] == "seat1" and following["first"] == "white"
    state = GAME.start(options=following).resolve(Outcome((0,) * 12))
    assert state.black == 1 and state.actor == 0 and state.first == 0  # White (seat 0) starts now
    third = GAME.start(options=state.rematch_options()).resolve(Outcome((0,) * 12))
    assert third.black == 1 and third.actor == 1  # and back again
    assert GAME.start().rematch_options() == GAME.resolve_options()  # no colours drawn yet: as the first


# -- a turn: choose, turn, move (triad.md, A turn) ------------------------------------------------


def test_a_die_may_go_in_all_eight_directions_where_the_board_allows():
    state = position(board_text(c3="B2", f6="W1"))
    own = {m for m in moves_of(state) if m.startswith("move c3")}
    # one cell: all eight; three cells: only n and e (ne ends on f6, the rest leave the board)
    assert own == {f"move c3 1 {d}" for d in triad.DIRECTION_NAMES} | {"move c3 3 n", "move c3 3 e"}


def test_value_must_change():
    state = position(board_text(c3="B2", f6="W1"))
    assert not any(m.startswith("move c3 2") for m in moves_of(state))
    with pytest.raises(IllegalMove, match="other than the 2"):
        state.apply(Move("move", ("c3", 2, "n")))


def test_move_goes_exactly_value_cells_and_shows_the_new_value():
    state = position(board_text(c3="B2", f6="W1"))
    after = state.apply(Move.parse("move c3 3 n"))
    assert after.board[triad.INDEX["c6"]] == "B3" and not after.board[triad.INDEX["c3"]]
    after = state.apply(Move.parse("move c3 1 sw"))
    assert after.board[triad.INDEX["b2"]] == "B1"
    assert after.actor == 1 and after.phase == TURN


def test_board_edges_cut_moves_off():
    state = position(board_text(a1="B1", f6="W3"))
    assert {m for m in moves_of(state) if m.startswith("move a1")} == {
        f"move a1 {v} {d}" for v in (2, 3) for d in ("n", "ne", "e")
    }
    near_edge = position(board_text(e5="B1", a1="W3"))
    # two or three cells north or east leave the board; diagonally towards f6 too
    assert not any(
        m.startswith(("move e5 2 n", "move e5 3 n", "move e5 2 e", "move e5 3 e", "move e5 2 ne"))
        for m in moves_of(near_edge)
    )
    assert "move e5 2 s" in moves_of(near_edge) and "move e5 3 sw" in moves_of(near_edge)
    with pytest.raises(IllegalMove):
        near_edge.apply(Move.parse("move e5 2 n"))


def test_no_passing_over_dice_and_destination_must_be_empty():
    state = position(board_text(a1="B1", a3="W2", c3="B3", c1="W1", f6="W3"))
    moves = moves_of(state)
    assert "move a1 2 n" not in moves  # lands on a3
    assert "move a1 3 n" not in moves  # passes over a3
    assert "move a1 2 ne" not in moves  # lands on c3 (own die)
    assert "move a1 3 e" not in moves  # passes over c1
    assert "move a1 2 e" not in moves
    with pytest.raises(IllegalMove, match="passes over a die"):
        state.apply(Move.parse("move a1 3 n"))


def test_only_own_dice_can_be_chosen():
    state = position(board_text(a1="B1", d4="W1"))
    assert not any(m.startswith("move d4") for m in moves_of(state))
    with pytest.raises(IllegalMove, match="does not hold one of your dice"):
        state.apply(Move.parse("move d4 2 n"))


def test_fallback_turn_when_no_normal_move_exists():
    # Black's only die is boxed in: every first step is occupied.
    state = position(board_text(a1="B1", a2="W2", b2="W3", b1="W1"))
    assert moves_of(state) == {"turn a1 2", "turn a1 3"}
    after = state.apply(Move.parse("turn a1 3"))
    assert after.board[triad.INDEX["a1"]] == "B3" and after.actor == 1


def test_fallback_shift_moves_by_the_value_shown():
    # B1 on a1 can go one cell but never two or three (c1, a3, c3 are taken).
    state = position(board_text(a1="B1", c1="W1", a3="W1", c3="W3"))
    assert moves_of(state) == {
        "turn a1 2", "turn a1 3", "shift a1 n", "shift a1 ne", "shift a1 e",
    }
    after = state.apply(Move.parse("shift a1 ne"))
    assert after.board[triad.INDEX["b2"]] == "B1" and not after.board[triad.INDEX["a1"]]


def test_fallbacks_are_not_offered_while_a_normal_move_exists():
    state = position(board_text(a1="B1", a2="W2", b2="W3", b1="W1", d4="B2"))
    kinds = {m.kind for m in state.legal_moves()}
    assert kinds == {"move"}
    with pytest.raises(IllegalMove, match="turn is not allowed now"):
        state.apply(Move.parse("turn a1 2"))


def test_pass_when_even_the_fallbacks_are_impossible():
    state = position(board_text(c3="W2", d4="W1"))  # Black has no die to turn or move
    assert state.legal_moves() == (Move("pass"),)
    after = state.apply(Move("pass"))
    assert after.actor == 1 and after.board == state.board and after.quiet == 1


# -- Triads (triad.md, Triads) --------------------------------------------------------------------


@pytest.mark.parametrize(
    "dice, expected",
    [
        (("B1", "W1", "B1"), True),
        (("W3", "W3", "B3"), True),
        (("B1", "W2", "W3"), True),
        (("W3", "B1", "B2"), True),
        (("B2", "W2", "W1"), False),  # neither equal nor 1-2-3
        (("B2", "B2", "B2"), False),  # one player only
        (("W1", "W2", "W3"), False),
        (("B1", "", "W1"), False),
    ],
)
def test_triad_condition(dice, expected):
    assert triad.is_triad(*dice) is expected


def test_triads_on_the_board_in_every_direction():
    board = triad.parse_board(
        board_text(a1="B1", b2="W2", c3="B3", d1="W2", d2="B2", d3="W2", f4="B1", f5="W1", f6="W1")
    )
    found = {"-".join(triad.SQUARES[i] for i in line) for line in triad.triads_on(board)}
    assert found == {"a1-b2-c3", "d1-d2-d3", "f4-f5-f6"}
    # an anti-diagonal is listed in board order (lowest row first)
    anti = triad.parse_board(board_text(c1="B3", b2="W3", a3="W3"))
    named = [[triad.SQUARES[i] for i in line] for line in triad.triads_on(anti)]
    assert named == [["c1", "b2", "a3"]]


# -- scoring (triad.md, Scoring a Triad) ----------------------------------------------------------


def test_new_triad_with_the_moved_die_scores_and_the_scorer_removes_an_own_die():
    state = position(board_text(a3="W2", b3="B2", f1="B1", a6="W1"))
    after = state.apply(Move.parse("move f1 2 nw"))  # d3 B2, but c3 is empty: no Triad
    assert after.phase == TURN
    after = state.apply(Move.parse("move f1 2 n"))  # f3 B2: nowhere near
    assert after.phase == TURN
    scoring = position(board_text(a3="W2", b3="B2", e1="B3", a6="W1"))
    after = scoring.apply(Move.parse("move e1 2 nw"))  # e1 -> c3 showing 2: a3-b3-c3 = W2 B2 B2
    assert after.phase == REMOVE and after.actor == scoring.actor
    assert moves_of(after) == {"remove b3", "remove c3"}  # own dice only, not W2 on a3
    assert GAME.describe(scoring, Move.parse("move e1 2 nw")) == (
        "seat 0 (Black) turns e1 from 3 to 2 and moves it north-west to c3: Triad a3-b3-c3"
    )
    assert GAME.describe(after, Move.parse("remove b3")) == "seat 0 (Black) takes B2 off b3"
    with pytest.raises(IllegalMove, match="remove one of your dice"):
        after.apply(Move.parse("remove a3"))
    done = after.apply(Move.parse("remove b3"))
    assert done.removed == (1, 0) and not done.board[triad.INDEX["b3"]]
    assert done.actor == 1 and done.phase == TURN and done.quiet == 0


def test_turn_fallback_can_score():
    state = position(board_text(a1="B1", a2="W2", b2="W3", b1="W1", c1="W2"))
    after = state.apply(Move.parse("turn a1 2"))  # a1-b1-c1 = B2 W1 W2: no Triad
    assert after.phase == TURN
    after = state.apply(Move.parse("turn a1 3"))  # a1-b1-c1 = B3 W1 W2: 1-2-3
    assert after.phase == REMOVE and moves_of(after) == {"remove a1"}


def test_pre_existing_triad_gives_nothing():
    # a3-b3-c3 (B2 W2 B2) already stands; Black moves another die next to it.
    state = position(board_text(a3="B2", b3="W2", c3="B2", f1="B1", a6="W1"))
    assert triad.triads_on(state.board)
    after = state.apply(Move.parse("move f1 2 n"))  # f3: makes no new Triad
    assert after.phase == TURN and after.removed == (0, 0)
    after = state.apply(Move.parse("move f1 2 nw"))  # d3 B2: b3-c3-d3 = W2 B2 B2, new
    assert after.phase == REMOVE  # the old Triad is still there, but this one is new
    assert {"-".join(triad.SQUARES[i] for i in t) for t in after.triads} == {"b3-c3-d3"}


def test_moving_a_die_of_a_standing_triad_away_gives_nothing():
    state = position(board_text(a3="B2", b3="W2", c3="B2", a6="W1"))
    after = state.apply(Move.parse("move c3 1 e"))  # d3 B1: a3-b3 left behind, nothing new
    assert after.phase == TURN and after.removed == (0, 0)


def test_triad_inside_a_line_of_four_counts():
    state = position(board_text(a2="W1", b2="W1", c2="B2", d5="B1", f6="W3"))
    after = state.apply(Move.parse("move d5 3 s"))  # d2 B3: a2..d2 full; b2-c2-d2 = W1 B2 B3
    assert all(after.board[triad.INDEX[s]] for s in ("a2", "b2", "c2", "d2"))
    assert [[triad.SQUARES[i] for i in t] for t in after.triads] == [["b2", "c2", "d2"]]
    assert moves_of(after) == {"remove c2", "remove d2"}


def test_several_triads_remove_only_one_die():
    # d4 gets B2: row b4-c4-d4 (W2 B2 B2) and column d2-d3-d4 (W2 W2 B2) are both new.
    state = position(board_text(b4="W2", c4="B2", d2="W2", d3="W2", f6="B1", a6="W3"))
    after = state.apply(Move.parse("move f6 2 sw"))
    assert len(after.triads) == 2
    assert moves_of(after) == {"remove c4", "remove d4"}
    done = after.apply(Move.parse("remove d4"))
    assert done.removed == (1, 0) and done.actor == 1 and done.phase == TURN


# -- end (triad.md, End) --------------------------------------------------------------------------


def test_third_removed_die_wins():
    state = position(board_text(a3="W2", b3="B2", e1="B3", a6="W1"), black=1)
    state = TriadState(**{**_fields(state), "removed": (1, 2)})  # Black (seat 1) has taken off 2
    after = play(state, "move e1 2 nw", "remove c3")
    assert after.actor is None and after.phase == OVER
    assert after.result.winners == (1,) and after.result.scores == (0.0, 1.0)
    assert "third die" in after.result.reason
    assert after.legal_moves() == ()
    with pytest.raises(IllegalMove):
        after.apply(Move("pass"))


def test_draw_after_consecutive_turns_without_a_removal():
    state = position(board_text(a1="B1", f6="W1"), quiet_turns=4)
    after = play(state, "move a1 2 n", "move f6 2 s", "move a3 1 e")
    assert after.result is None and after.quiet == 3
    after = play(after, "move f4 1 w")
    assert after.result.winners == () and "4 turns without a die removed" in after.result.reason


def test_default_is_one_hundred_quiet_turns_and_a_removal_resets_the_count():
    state = position(board_text(a1="B1", f6="W1"))
    state = TriadState(**{**_fields(state), "quiet": 98})
    assert play(state, "move a1 2 n").result is None
    assert play(state, "move a1 2 n", "move f6 2 s").result.winners == ()
    scoring = position(board_text(a3="W2", b3="B2", e1="B3", a6="W1"))
    scoring = TriadState(**{**_fields(scoring), "quiet": 99})
    after = play(scoring, "move e1 2 nw", "remove c3")
    assert after.result is None and after.quiet == 0


CYCLE = ("move a1 2 n", "move f6 2 s", "move a3 1 e", "move f4 1 w",
         "move b3 2 s", "move e4 2 n", "move b1 1 w", "move e6 1 e")


def test_draw_on_the_third_occurrence_of_a_position():
    state = position(board_text(a1="B1", f6="W1"))
    once = play(state, *CYCLE)
    assert once.board == state.board and once.actor == state.actor and once.result is None
    almost = play(once, *CYCLE[:-1])
    assert almost.result is None
    twice = almost.apply(Move.parse(CYCLE[-1]))
    assert twice.result.winners == () and "third time" in twice.result.reason
    assert play(state, *CYCLE, *CYCLE[:4]).result is None


def test_repetition_counts_the_player_to_move_too():
    # Black has no dice and passes; White's cycle brings the board back with Black to move first.
    state = position(board_text(f6="W1", c3="W2"), to_move="white", repetitions=2)
    white = [m for m in CYCLE if m.split()[1][0] in "ef"]
    moves = [m for w in white for m in (w, "pass")]
    back = play(state, *moves[:7])
    assert back.board == state.board and back.actor != state.actor and back.result is None
    assert play(back, "pass").result.winners == ()


def _fields(state: TriadState) -> dict:
    return {name: getattr(state, name) for name in TriadState.__slots__}


# -- plain data and whole games -------------------------------------------------------------------


def _random_game(seed: int, options=None):
    game_rng = random.Random(seed)
    bots = [GAME.bots["random"](GAME, random.Random(seed + s + 1)) for s in (0, 1)]
    return play_out(GAME.start(options=options), bots, LocalSource(game_rng), max_steps=5000)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_play_always_ends_with_a_lawful_result(seed):
    final, steps = _random_game(seed)
    assert final.actor is None and final.result is not None
    assert steps[0].seat == CHANCE and steps[1].seat == CHANCE
    if final.result.winners:
        (winner,) = final.result.winners
        assert final.removed[winner] == 3 and final.removed[1 - winner] < 3
    for colour in "BW":
        seat = final.seat_of(colour)
        on_board = sum(1 for d in final.board if d and d[0] == colour)
        assert on_board + final.removed[seat] == 6


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60))
def test_states_round_trip_through_plain_data_and_msgpack(seed, cut):
    rng = random.Random(seed)
    source = LocalSource(rng)
    state = GAME.start()
    for _ in range(cut):
        if state.actor is None:
            break
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            state = state.apply(rng.choice(state.legal_moves()))
        data = state.to_data()
        assert triad.load(data) == state
        assert triad.load(msgpack.unpackb(msgpack.packb(data))) == state
        assert GAME.load(msgpack.unpackb(msgpack.packb(data))).legal_moves() == state.legal_moves()


def test_moves_round_trip_as_data_and_text_and_are_described():
    final, steps = _random_game(7)
    state = GAME.start()
    for step in steps:
        if step.move is None:
            state = state.resolve(step.outcome)
            continue
        assert Move.from_data(msgpack.unpackb(msgpack.packb(step.move.to_data()))) == step.move
        assert Move.parse(str(step.move)) == step.move
        words = GAME.describe(state, step.move)
        assert words.startswith(f"seat {state.seat} (")
        state = state.apply(step.move)
    assert state == final


def test_registered_with_its_options():
    assert registry.get("triad") is GAME
    assert GAME.resolve_options() == {
        "quiet_turns": 100, "repetitions": 3, "black": "draw", "first": "black",
    }
    assert set(GAME.bots) == {"random", "greedy", "search", "easy", "medium", "hard"}


# -- bots -----------------------------------------------------------------------------------------


def test_greedy_scores_when_it_can():
    state = position(board_text(a3="W2", b3="B2", e1="B3", a6="W1", f2="B1"))
    for seed in range(5):
        bot = GAME.bots["greedy"](GAME, random.Random(seed))
        move = bot.choose(state)
        assert state.apply(move).phase == REMOVE


def test_greedy_avoids_handing_the_opponent_a_triad():
    # White threatens c6 -> c4 showing 2 (a4-b4-c4 = W2 B2 W2); greedy must parry it.
    state = position(board_text(a4="W2", b4="B2", c6="W3", f1="B1", f2="B3"))
    unsafe = [m for m in state.legal_moves() if _lets_opponent_score(state.apply(m))]
    assert unsafe and len(unsafe) < len(state.legal_moves())
    for seed in range(8):
        move = GAME.bots["greedy"](GAME, random.Random(seed)).choose(state)
        after = state.apply(move)
        if after.phase == REMOVE:
            continue
        assert not _lets_opponent_score(after), move


def _lets_opponent_score(state: TriadState) -> bool:
    return any(state.apply(reply).phase == REMOVE for reply in state.legal_moves())


def test_search_takes_a_winning_triad_and_is_deterministic_per_seed():
    state = position(board_text(a3="W2", b3="B2", e1="B3", a6="W1", f2="B1", d6="W3"))
    state = TriadState(**{**_fields(state), "removed": (2, 0)})
    bot = GAME.bots["search"](GAME, random.Random(3))
    after = state.apply(bot.choose(state))
    after = after.apply(bot.choose(after))
    assert after.result.winners == (0,)
    start = GAME.start(options={"black": "seat0"}).resolve(Outcome((1, 0, 2) * 4))
    for seed in (1, 2):
        bots = [GAME.bots["search"](GAME, random.Random(seed)) for _ in range(2)]
        assert len({str(bot.choose(start)) for bot in bots}) == 1


def test_bot_board_agrees_with_the_engine_on_scoring():
    """The bots' compact board scores exactly the turns the engine scores."""
    checked = 0
    for seed in range(6):
        final, steps = _random_game(seed)
        state = GAME.start()
        for step in steps:
            if state.phase == TURN:
                board, side, _ = triad_bots._position(state)
                mine: dict[str, list[int]] = {}
                for (_, _, _, move), removal in triad_bots._turns(board, side):
                    mine.setdefault(str(move), []).append(removal)
                for move in state.legal_moves():
                    after = state.apply(move)
                    expected = list(after.candidates) if after.phase == REMOVE else [-1]
                    assert sorted(mine[str(move)]) == expected
                checked += 1
            state = state.resolve(step.outcome) if step.move is None else state.apply(step.move)
    assert checked > 50
