"""Tricolor Line's pieces, roads and routes, scoring (tricolor-line.md: Components, Routes, Scoring)."""

from __future__ import annotations

import pytest

from dicetable.core.game import Move, Outcome
from dicetable.core.tricolor import ACT, OVER, SCORING, TricolorState
from dicetable.core.tricolor_routes import Placed, best_pair, best_single, colour_counts, connected, shortest_routes, winner_colours
from dicetable.core.tricolor_tiles import (
    CARDS,
    COLOURS,
    DEAD,
    E,
    END,
    EVENTS,
    ID_CARDS,
    N,
    ROAD,
    S,
    START,
    TILES,
    W,
    card_from_token,
    distinct_rotations,
    edges,
)


def tile_id(kind: str, shape: str = "cross", colour: str = "", skip: int = 0) -> int:
    """The identity of a tile of this kind (the `skip`-th copy)."""
    found = [t.id for t in TILES if t.kind == kind and (kind in (START, END) or (t.shape == shape and t.colour == colour))]
    return found[skip]


def grid(*entries) -> dict:
    """A board from (x, y, tile, rotation, built) entries, placed in this order after the Start Tile."""
    board = {(0, 0): Placed(0, 0, True, 0)}
    for order, (x, y, tile, rotation, built) in enumerate(entries, start=1):
        board[(x, y)] = Placed(tile, rotation, built, order)
    return board


END1, END2, END3, END4 = (tile_id(END, skip=k) for k in range(4))
RS = tile_id(ROAD, "straight", "R")  # a red straight road
YS = tile_id(ROAD, "straight", "Y")
BS = tile_id(ROAD, "straight", "B")


# -- components ----------------------------------------------------------------------------------
def test_tile_counts():
    assert len(TILES) == 67
    kinds = [t.kind for t in TILES]
    assert kinds.count(START) == 1 and kinds.count(END) == 6
    assert kinds.count(ROAD) == 36 and kinds.count(DEAD) == 24
    for shape in ("straight", "curve", "tee", "cross"):
        for colour in COLOURS:
            assert sum(t.kind == ROAD and t.shape == shape and t.colour == colour for t in TILES) == 3
            assert sum(t.kind == DEAD and t.shape == shape and t.colour == colour for t in TILES) == 2


def test_card_counts():
    assert len(CARDS) == 66
    for colour in COLOURS:
        assert sum(c.colour == colour and c.units == 1 for c in CARDS) == 15
        assert sum(c.colour == colour and c.units == 2 for c in CARDS) == 5
    assert sum(not c.colour for c in CARDS) == 6
    assert sorted(ID_CARDS) == sorted(COLOURS * 3)
    assert [n for _, n in EVENTS] == [3, 4, 4, 4, 2, 3] and sum(n for _, n in EVENTS) == 20


def test_card_tokens_name_kind_and_number():
    assert card_from_token("R2:17") == 17 and CARDS[17].token == "R2:17"
    assert card_from_token(CARDS[60].token) == 60 and CARDS[60].kind == "W"
    for bad in ("R:17", "X:1", "R", "R:99", 17):
        with pytest.raises(ValueError):
            card_from_token(bad)


@pytest.mark.parametrize(
    "shape, rotation, roads",
    [
        ("straight", 0, {N, S}), ("straight", 1, {E, W}), ("straight", 2, {N, S}),
        ("curve", 0, {N, E}), ("curve", 1, {E, S}), ("curve", 2, {S, W}), ("curve", 3, {W, N}),
        ("tee", 0, {N, E, W}), ("tee", 1, {N, E, S}), ("tee", 2, {E, S, W}), ("tee", 3, {N, S, W}),
        ("cross", 0, {N, E, S, W}), ("cross", 3, {N, E, S, W}),
    ],
)
def test_shapes_turn_clockwise(shape, rotation, roads):
    for kind in (ROAD, DEAD):
        assert edges(tile_id(kind, shape, "B"), rotation) == roads


def test_distinct_rotations():
    assert len(distinct_rotations(RS)) == 2
    assert len(distinct_rotations(tile_id(ROAD, "curve", "R"))) == 4
    assert len(distinct_rotations(tile_id(ROAD, "tee", "R"))) == 4
    assert distinct_rotations(END1) == (0,) and distinct_rotations(tile_id(ROAD, "cross", "Y")) == (0,)


def test_costs():
    assert [TILES[tile_id(ROAD, s, "R")].cost for s in ("straight", "curve", "tee", "cross")] == [2, 2, 3, 4]
    assert {TILES[tile_id(DEAD, s, "Y")].cost for s in ("straight", "curve", "tee", "cross")} == {1}


# -- connection and routes -------------------------------------------------------------------------
def test_connection_needs_both_roads_and_both_constructed():
    board = grid((1, 0, RS, 1, True))
    assert connected(board, (0, 0), E) and connected(board, (1, 0), W)
    assert not connected(grid((1, 0, RS, 0, True)), (0, 0), E)  # the straight runs north-south
    assert not connected(grid((1, 0, RS, 1, False)), (0, 0), E)  # a blueprint does not connect
    assert connected(grid((1, 0, END1, 0, False)), (0, 0), E)  # End Tiles always count as constructed


def test_route_to_an_end_tile():
    routes = shortest_routes(grid((1, 0, RS, 1, True), (2, 0, END1, 0, False)))
    assert routes == {(2, 0): ((0, 0), (1, 0), (2, 0))}
    assert shortest_routes(grid((1, 0, RS, 1, False), (2, 0, END1, 0, False))) == {}


def test_dead_end_blocks_a_route():
    dead = tile_id(DEAD, "straight", "R")
    board = grid((1, 0, dead, 1, True), (2, 0, END1, 0, False))
    assert connected(board, (0, 0), E)  # it connects to its neighbours...
    assert shortest_routes(board) == {}  # ...but never carries a route through itself


def long_way():
    """Start -> 0,1 -> 1,1 -> 2,1 -> End at 2,0: five tiles."""
    curve_r = tile_id(ROAD, "curve", "R")
    return [
        (0, 1, curve_r, 0, True),  # N and E
        (1, 1, YS, 1, True),  # E-W
        (2, 1, tile_id(ROAD, "curve", "B"), 3, True),  # W and N
        (2, 0, END1, 0, False),
    ]


def test_shortest_route_per_end_tile():
    board = grid(*long_way())
    assert shortest_routes(board)[(2, 0)] == ((0, 0), (0, 1), (1, 1), (2, 1), (2, 0))
    board = grid(*long_way(), (1, 0, RS, 1, True))  # a shorter way opens
    assert shortest_routes(board) == {(2, 0): ((0, 0), (1, 0), (2, 0))}


def test_route_does_not_pass_through_another_end_tile():
    board = grid((1, 0, END1, 0, False), (2, 0, END2, 0, False))
    assert set(shortest_routes(board)) == {(1, 0)}


def test_equal_shortest_routes_take_the_earliest_placed_tiles():
    cross_r, cross_y = tile_id(ROAD, "cross", "R"), tile_id(ROAD, "cross", "Y")
    # Two ways of three steps to the End Tile at 1,1: via 1,0 or via 0,1.
    board = grid((0, 1, cross_y, 0, True), (1, 0, cross_r, 0, True), (1, 1, END1, 0, False))
    assert shortest_routes(board)[(1, 1)] == ((0, 0), (0, 1), (1, 1))
    board = grid((1, 0, cross_r, 0, True), (0, 1, cross_y, 0, True), (1, 1, END1, 0, False))
    assert shortest_routes(board)[(1, 1)] == ((0, 0), (1, 0), (1, 1))


def test_two_valid_routes_must_be_disjoint():
    tee = tile_id(ROAD, "tee", "R")  # at 1,0 turned 0: roads N, E, W
    shared = grid((1, 0, tee, 0, True), (2, 0, END1, 0, False), (1, -1, END2, 0, False))
    assert len(shortest_routes(shared)) == 2 and best_pair(shared) is None
    apart = grid((1, 0, RS, 1, True), (2, 0, END1, 0, False), (-1, 0, YS, 1, True), (-2, 0, END2, 0, False))
    pair = best_pair(apart)
    assert pair is not None and {route[-1] for route in pair} == {(2, 0), (-2, 0)}


def test_pair_with_fewest_tiles_is_scored():
    entries = [
        (1, 0, RS, 1, True), (2, 0, END1, 0, False),  # 3 tiles east
        (-1, 0, YS, 1, True), (-2, 0, END2, 0, False),  # 3 tiles west
        (0, -1, BS, 0, True), (0, -2, tile_id(ROAD, "straight", "B", 1), 0, True), (0, -3, END3, 0, False),  # 4 north
    ]
    pair = best_pair(grid(*entries))
    assert {route[-1] for route in pair} == {(2, 0), (-2, 0)}


def test_pair_ties_go_to_the_earliest_placed():
    north = [(0, -1, BS, 0, True), (0, -2, END3, 0, False)]
    east = [(1, 0, RS, 1, True), (2, 0, END1, 0, False)]
    west = [(-1, 0, YS, 1, True), (-2, 0, END2, 0, False)]
    pair = best_pair(grid(*north, *west, *east))
    assert {route[-1] for route in pair} == {(0, -2), (-2, 0)}
    pair = best_pair(grid(*east, *north, *west))
    assert {route[-1] for route in pair} == {(2, 0), (0, -2)}


def test_single_route_at_a_stalemate():
    board = grid(*long_way(), (-1, 0, YS, 1, True), (-2, 0, END2, 0, False))
    assert best_single(board) == (((0, 0), (-1, 0), (-2, 0)),)
    assert best_single(grid((1, 0, RS, 1, False))) == ()


def test_winner_colours_and_ties():
    routes = (((0, 0), (1, 0), (2, 0)), ((0, 0), (-1, 0), (-2, 0)))
    board = grid((1, 0, RS, 1, True), (2, 0, END1, 0, False), (-1, 0, YS, 1, True), (-2, 0, END2, 0, False))
    counts = colour_counts(board, routes)
    assert counts == {"R": 1, "Y": 1, "B": 0}
    assert winner_colours(counts) == ("R", "Y")
    assert winner_colours({"R": 0, "Y": 2, "B": 1}) == ("Y",)


# -- scoring -----------------------------------------------------------------------------------
def ended(board_entries, ids, hands, ender, seats=3) -> TricolorState:
    """A state just after the end of a turn with two valid routes on the board."""
    board = ((0, 0, 0, 0, True, 0),) + tuple(
        (x, y, t, r, b, order) for order, (x, y, t, r, b) in enumerate(board_entries, start=1)
    )
    state = TricolorState(
        options=(("turn_limit", 400),), seats=seats, phase=ACT, turn=ender, seat=ender, board=board,
        placed=len(board), ids=ids, hands=hands, skips=(False,) * seats, shown=(False,) * seats,
        tops=(-1, -1, -1), sizes=(0, 0, 0), deck=1, deck_left=10, order=tuple(range(50, 60)),
    )
    state = state.apply(Move("end"))
    while state.actor == -1:
        state = state.resolve(Outcome())
    return state


def test_scoring_counts_id_colour_tiles_winner_colour_units_and_end_bonus():
    rs2 = tile_id(ROAD, "straight", "R", 1)
    entries = [
        (1, 0, RS, 1, True), (2, 0, rs2, 1, True), (3, 0, END1, 0, False),
        (-1, 0, YS, 1, True), (-2, 0, END2, 0, False),
    ]
    red_id, yellow_id, blue_id = 0, 3, 6
    hands = (
        (0, 15),  # R basic + R double: 3 units of the Winner Colour
        (20, 35, 60),  # Y, Y2: not winning; one wild: 1
        (40,),  # B basic: nothing
    )
    state = ended(entries, (red_id, yellow_id, blue_id), hands, ender=2)
    assert state.phase == OVER and state.result.reason == "two valid routes"
    # Red has 2 tiles, yellow 1: red is the Winner Colour.
    assert state.scores() == (6 + 3, 3 + 1, 0 + 1)
    assert state.result.winners == (0,)


def test_scoring_ties_share_the_win():
    entries = [(1, 0, RS, 1, True), (2, 0, END1, 0, False), (-1, 0, YS, 1, True), (-2, 0, END2, 0, False)]
    # Red and yellow tie for the Winner Colour; seat 0 (red ID) and seat 1 (yellow ID) both score 3.
    state = ended(entries, (0, 3, 6), ((), (), ()), ender=2)
    assert state.scores() == (3, 3, 1)
    assert state.result.winners == (0, 1)
    assert state.result.scores == (3.0, 3.0, 1.0)


def test_game_does_not_end_without_two_valid_routes():
    state = ended([(1, 0, RS, 1, True), (2, 0, END1, 0, False)], (0, 3, 6), ((0,), (1,), (2,)), ender=0)
    assert state.phase not in (SCORING, OVER) and state.result is None and state.turn == 1
