"""Tricolor Line's shortest routes and the pair scored, over every choice among equally short routes
(tricolor-line.md, "Routes and the end of the game"), checked against a brute-force route finder."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.core.tricolor_routes import best_pair, best_single, shortest_routes
from dicetable.core.tricolor_tiles import DEAD, END, ROAD, START, STEP, TILES, edges
from test_tricolor_rules import grid, tile_id


END1, END2 = tile_id(END), tile_id(END, skip=1)
RX, YX = tile_id(ROAD, "cross", "R"), tile_id(ROAD, "cross", "Y")


# -- a brute-force route finder: every simple path, then every pair --------------------------------
def _joined(board, a, edge) -> bool:
    dx, dy = STEP[edge]
    b = (a[0] + dx, a[1] + dy)
    if b not in board:
        return False
    up = [p.built or TILES[p.tile].kind in (START, END) for p in (board[a], board[b])]
    meet = edge in edges(board[a].tile, board[a].rotation) and (edge + 2) % 4 in edges(board[b].tile, board[b].rotation)
    return all(up) and meet


def _steps(board, here):
    """The tiles a route may go on to from `here` (never from an End Tile, never into a dead end)."""
    if here != (0, 0) and TILES[board[here].tile].kind == END:
        return []
    out = []
    for edge in range(4):
        dx, dy = STEP[edge]
        there = (here[0] + dx, here[1] + dy)
        if _joined(board, here, edge) and TILES[board[there].tile].kind != DEAD:
            out.append(there)
    return out


def brute_shortest(board) -> dict:
    """Per End Tile, every route of the fewest tiles: every simple path is walked, cut short only
    where it is already longer than the fewest steps to its tile (so it cannot be a shortest one)."""
    fewest, frontier = {(0, 0): 0}, [(0, 0)]
    while frontier:
        later = []
        for here in frontier:
            for there in _steps(board, here):
                if there not in fewest:
                    fewest[there] = fewest[here] + 1
                    later.append(there)
        frontier = later
    found: dict = {}

    def walk(path):
        here = path[-1]
        if len(path) - 1 > fewest[here]:
            return
        if here != (0, 0) and TILES[board[here].tile].kind == END:
            found.setdefault(here, []).append(tuple(path))
        for there in _steps(board, here):
            if there not in path:
                walk(path + [there])

    walk([(0, 0)])
    return found


def brute_pair(board):
    """The scored pair as the rules say it: every choice of shortest routes, the fewest tiles, then
    the sorted placement numbers earliest first. Returns (key, set of tiles, End Tiles) or None."""
    shortest = brute_shortest(board)
    best = None
    ends = sorted(shortest)
    for i, a in enumerate(ends):
        for b in ends[i + 1 :]:
            for ra in shortest[a]:
                for rb in shortest[b]:
                    if set(ra[1:]) & set(rb[1:]):
                        continue
                    tiles = set(ra) | set(rb)
                    key = (len(ra) + len(rb), sorted(board[p].order for p in tiles))
                    if best is None or key < best[0]:
                        best = (key, tiles, {a, b})
    return best


# -- the placement-order case ------------------------------------------------------------------------
def order_case(cross_first: bool) -> dict:
    """End Tile A at 1,1 has two equally short routes, via 1,0 or via 0,1; End Tile B at 2,0 has
    only the one via 1,0. A valid pair exists (A via 0,1, B via 1,0) whichever cross came first."""
    via_east, via_south = (1, 0, RX, 0, True), (0, 1, YX, 0, True)
    first = [via_east, via_south] if cross_first else [via_south, via_east]
    return grid(*first, (1, 1, END1, 0, False), (2, 0, END2, 0, False))


def test_placement_order_never_decides_that_two_valid_routes_exist():
    for cross_first in (True, False):
        pair = best_pair(order_case(cross_first))
        assert pair == (((0, 0), (0, 1), (1, 1)), ((0, 0), (1, 0), (2, 0))), cross_first


def test_placement_order_breaks_ties_between_equally_short_routes():
    # The one route of an End Tile alone: of two equally short ones, the earlier placed.
    board = grid((1, 0, RX, 0, True), (0, 1, YX, 0, True), (1, 1, END1, 0, False))
    assert shortest_routes(board)[(1, 1)] == ((0, 0), (1, 0), (1, 1))
    assert best_single(board) == (((0, 0), (1, 0), (1, 1)),)
    board = grid((0, 1, YX, 0, True), (1, 0, RX, 0, True), (1, 1, END1, 0, False))
    assert shortest_routes(board)[(1, 1)] == ((0, 0), (0, 1), (1, 1))


def test_pairs_of_equal_length_go_to_the_earliest_placed_tiles():
    # End Tile A at 1,1 is reached via 1,0 or via 0,1; End Tile B at -2,0 via -1,0. Both pairs are
    # valid and equally long: the scored one takes whichever cross was placed earlier.
    west = [(-1, 0, tile_id(ROAD, "cross", "B"), 0, True), (-2, 0, END2, 0, False)]
    east, south = (1, 0, RX, 0, True), (0, 1, YX, 0, True)
    for first, second, via in ((east, south, (1, 0)), (south, east, (0, 1))):
        board = grid(first, second, (1, 1, END1, 0, False), *west)
        assert best_pair(board) == (((0, 0), (-1, 0), (-2, 0)), ((0, 0), via, (1, 1)))
        assert brute_pair(board)[1] == {(0, 0), (-1, 0), (-2, 0), via, (1, 1)}


# -- random boards against the brute force -------------------------------------------------------
ENDS = [tile_id(END, skip=k) for k in range(6)]
# Crosses and tees come up most, so that routes branch, meet and tie often.
KINDS = (
    [tile_id(ROAD, "cross", c) for c in "RYB"] * 4
    + [tile_id(ROAD, "tee", c) for c in "RYB"] * 2
    + [tile_id(ROAD, shape, c) for shape in ("straight", "curve") for c in "RYB"]
    + [tile_id(DEAD, shape, c) for shape in ("straight", "cross") for c in "RYB"]
    + ENDS * 2
)
SQUARES = [(x, y) for x in range(-2, 3) for y in range(-2, 3) if (x, y) != (0, 0)]
EMPTY = -1  # a square left empty
PIECE = st.tuples(st.sampled_from(KINDS + [EMPTY] * 10), st.integers(0, 3), st.sampled_from([True] * 4 + [False]))
BOARDS = st.tuples(st.permutations(SQUARES), st.lists(PIECE, min_size=len(SQUARES), max_size=len(SQUARES)))


@settings(max_examples=1000, deadline=None)
@given(BOARDS)
def test_routes_match_a_brute_force_finder(drawn):
    """A 5 x 5 table, its squares filled in a random placement order, some left empty."""
    order, pieces = drawn
    board = grid(*((x, y, *piece) for (x, y), piece in zip(order, pieces) if piece[0] != EMPTY))
    shortest = brute_shortest(board)
    routes = shortest_routes(board)
    assert set(routes) == set(shortest)
    for end, route in routes.items():
        assert route in shortest[end]
        earliest = min(shortest[end], key=lambda r: sorted(board[p].order for p in r))
        assert route == earliest
    expected = brute_pair(board)
    pair = best_pair(board)
    if expected is None:
        assert pair is None
        return
    assert pair is not None
    (ra, rb) = pair
    assert ra in shortest[ra[-1]] and rb in shortest[rb[-1]] and not set(ra[1:]) & set(rb[1:])
    assert set(ra) | set(rb) == expected[1] and {ra[-1], rb[-1]} == expected[2]
    assert ra[-1] < rb[-1]



def test_every_board_of_random_games_reads_as_its_fresh_grid():
    """board_grid builds a board one placement on from a cached one by copying that grid: over whole
    random games (placements, constructions, turns, Storm removals) every board reads exactly as a
    grid built from scratch, in the same order."""
    import random

    from dicetable.core import registry
    from dicetable.core.chance import LocalSource
    from dicetable.core.game import CHANCE
    from dicetable.core.tricolor_routes import Placed, board_grid

    game = registry.get("tricolor")
    boards = set()
    for seed in range(6):
        rng = random.Random(seed)
        source, state = LocalSource(rng), game.start(2 + seed % 3)
        while state.actor is not None:
            state = state.resolve(source.outcome(state.chance())) if state.actor == CHANCE else state.apply(
                rng.choice(state.legal_moves()))
            fresh = [((x, y), Placed(t, r, b, o)) for x, y, t, r, b, o in state.board]
            assert list(board_grid(state.board).items()) == fresh
            boards.add(state.board)
    assert len(boards) > 300  # many boards, most of them one placement on from the last
