"""Connections, shortest routes, the scored pair and the colour contest (tricolor-line.md,
"Routes and the end of the game" and "Scoring"), and the position notation `dicetable analyze
tricolor` reads (`parse_board`).

A board is a mapping (x, y) -> Placed. A route ends at its End Tile (it never passes through another
End Tile). When one End Tile has several shortest routes any of them may be its route, so a pair is
looked for among every choice (a tile's distance from the Start Tile is fixed, so two shortest
routes can only meet at the same distance: the search walks both routes side by side, step by
step). "Placed earliest" compares the sorted placement numbers of the tiles; among sets of equal
size that is the set with the larger sum of 2**-order, which the search maximises exactly (as
integer weights 2**(last - order)).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Mapping, NamedTuple

from dicetable.core.tricolor_tiles import COLOUR_NAMES, COLOURS, DEAD, E, END, N, ROAD, S, START, STEP, TILES, W, edges

Pos = tuple[int, int]
Route = tuple[Pos, ...]
START_POS = (0, 0)


class Placed(NamedTuple):
    """A tile on the table: which, how it is turned, which side is up, when it was placed. A named
    tuple: the bots build a grid of these for every board they weigh, over twice as quick as with a
    frozen dataclass."""

    tile: int
    rotation: int
    built: bool  # constructed side up (Start and End tiles always count as constructed)
    order: int  # placement number: the Start Tile is 0, then 1, 2, ...

    @property
    def constructed(self) -> bool:
        return self.built or TILES[self.tile].kind in (START, END)


_GRIDS: dict[tuple, dict[Pos, Placed]] = {}
_GRIDS_KEPT = 16384


def board_grid(board: tuple) -> dict[Pos, Placed]:
    """A state's board tuple `(x, y, tile, rotation, built, order), ...` as a mapping. Cached, for
    bots ask about the same boards again and again: callers must not change the mapping returned.
    A board one placement on from a cached one (a tile is placed at the end of the tuple) copies
    that grid and adds the tile, in the same order a fresh build would: bots weigh every placement
    of a turn on the same board."""
    grid = _GRIDS.get(board)
    if grid is not None:
        return grid
    parent = _GRIDS.get(board[:-1])
    if parent is None:
        grid = {(x, y): Placed(t, r, b, o) for x, y, t, r, b, o in board}
    else:
        grid = dict(parent)
        x, y, t, r, b, o = board[-1]
        grid[(x, y)] = Placed(t, r, b, o)
    if len(_GRIDS) >= _GRIDS_KEPT:
        _GRIDS.clear()  # a new start costs one build per board in use; evicting one by one cost more
    _GRIDS[board] = grid
    return grid


def neighbour(pos: Pos, edge: int) -> Pos:
    dx, dy = STEP[edge]
    return (pos[0] + dx, pos[1] + dy)


def connected(board: Mapping[Pos, Placed], a: Pos, edge: int) -> bool:
    """Whether the tile at `a` connects across `edge` (both roads meet, both constructed)."""
    b = neighbour(a, edge)
    pa, pb = board.get(a), board.get(b)
    if pa is None or pb is None or not (pa.constructed and pb.constructed):
        return False
    return edge in edges(pa.tile, pa.rotation) and (edge + 2) % 4 in edges(pb.tile, pb.rotation)


def _carries(placed: Placed) -> bool:
    """A route may pass through this tile: constructed and not a dead end."""
    return placed.constructed and TILES[placed.tile].kind != DEAD


@dataclass(frozen=True)
class _Layers:
    """Every shortest route at once: each tile's distance from the Start Tile, the tiles one step
    nearer it connects to, the End Tiles reached, and each tile's weight (earlier placed: heavier)."""

    dist: dict[Pos, int]
    nearer: dict[Pos, tuple[Pos, ...]]
    ends: tuple[Pos, ...]
    weight: dict[Pos, int]


def _layers(board: Mapping[Pos, Placed]) -> _Layers:
    dist = {START_POS: 0}
    nearer: dict[Pos, tuple[Pos, ...]] = {START_POS: ()}
    queue = deque([START_POS])
    ends = []
    while queue:
        here = queue.popleft()
        if TILES[board[here].tile].kind == END:
            ends.append(here)
            continue  # a route stops at its End Tile
        for edge in range(4):
            there = neighbour(here, edge)
            if there not in board or not _carries(board[there]) or not connected(board, here, edge):
                continue
            if there not in dist:
                dist[there] = dist[here] + 1
                nearer[there] = (here,)
                queue.append(there)
            elif dist[there] == dist[here] + 1:
                nearer[there] += (here,)
    last = max(board[p].order for p in dist)
    weight = {p: 1 << (last - board[p].order) for p in dist}
    return _Layers(dist, nearer, tuple(sorted(ends)), weight)


def _best_route(layers: _Layers, end: Pos) -> Route:
    """The shortest route to `end` whose tiles were placed earliest."""
    best: dict[Pos, tuple[int, Route]] = {}

    def walk(pos: Pos) -> tuple[int, Route]:
        if pos not in best:
            if pos == START_POS:
                best[pos] = (layers.weight[pos], (pos,))
            else:
                value, route = max(walk(q) for q in layers.nearer[pos])
                best[pos] = (value + layers.weight[pos], route + (pos,))
        return best[pos]

    return walk(end)[1]


def shortest_routes(board: Mapping[Pos, Placed]) -> dict[Pos, Route]:
    """Each reachable End Tile's shortest route; of equally short ones, the earliest placed."""
    if START_POS not in board:
        return {}
    layers = _layers(board)
    return {end: _best_route(layers, end) for end in layers.ends}


def _towards(layers: _Layers, end: Pos) -> dict[Pos, tuple[int, Pos | None]]:
    """Per tile on some shortest route to `end`: the heaviest way on from it to `end` (its weight,
    the tile included, and the next tile)."""
    tail: dict[Pos, tuple[int, Pos | None]] = {end: (layers.weight[end], None)}
    frontier = [end]
    for _ in range(layers.dist[end]):
        step = []
        for here in frontier:
            for back in layers.nearer[here]:
                value = layers.weight[back] + tail[here][0]
                if back not in tail:
                    step.append(back)
                if back not in tail or value > tail[back][0]:
                    tail[back] = (value, here)
        frontier = step
    return tail


def _pair(layers: _Layers, a: Pos, b: Pos) -> tuple[int, Route, Route] | None:
    """The heaviest pair of shortest routes to `a` and `b` sharing no tile but the Start Tile
    (its weight and the two routes), or None when every choice of routes meets."""
    short, long = (a, b) if layers.dist[a] <= layers.dist[b] else (b, a)
    to_short, to_long = _towards(layers, short), _towards(layers, long)
    # Both routes side by side: at each distance, one tile of each, never the same one.
    walked = {(START_POS, START_POS): (layers.weight[START_POS], None)}
    for distance in range(1, layers.dist[short] + 1):
        here = [p for p in to_short if layers.dist[p] == distance]
        there = [p for p in to_long if layers.dist[p] == distance]
        step = {}
        for u in here:
            for v in there:
                if u == v:
                    continue
                came = [
                    (walked[(pu, pv)][0], (pu, pv))
                    for pu in layers.nearer[u] for pv in layers.nearer[v] if (pu, pv) in walked
                ]
                if came:
                    value, back = max(came)
                    step[(u, v)] = (value + layers.weight[u] + layers.weight[v], back)
        walked.update(step)
    finished = [
        (walked[(short, v)][0] - layers.weight[v] + to_long[v][0], v)
        for v in to_long
        if (short, v) in walked
    ]
    if not finished:
        return None
    value, v = max(finished)
    route_short, route_long, at = [], [], (short, v)
    while at is not None:
        route_short.append(at[0])
        route_long.append(at[1])
        at = walked[at][1]
    route_short.reverse()
    route_long.reverse()
    while v != long:
        v = to_long[v][1]
        route_long.append(v)
    routes = (tuple(route_short), tuple(route_long))
    return (value,) + (routes if short == a else routes[::-1])


def best_pair(board: Mapping[Pos, Placed]) -> tuple[Route, Route] | None:
    """The two valid routes scored, over every choice among equally short routes: disjoint but for
    the Start Tile, fewest tiles, then earliest placed; None when no two valid routes exist."""
    if START_POS not in board:
        return None
    layers = _layers(board)
    best, best_key = None, None
    for i, a in enumerate(layers.ends):
        for b in layers.ends[i + 1 :]:
            found = _pair(layers, a, b)
            if found is None:
                continue
            key = (layers.dist[a] + layers.dist[b], -found[0])
            if best_key is None or key < best_key:
                best, best_key = found[1:], key
    return best


def _placement_key(board: Mapping[Pos, Placed], tiles) -> tuple[int, ...]:
    return tuple(sorted(board[p].order for p in tiles))


def best_single(board: Mapping[Pos, Placed]) -> tuple[Route, ...]:
    """At a stalemate end, the one route scored (fewest tiles, then earliest), or none."""
    routes = shortest_routes(board)
    if not routes:
        return ()
    end = min(routes, key=lambda e: (len(routes[e]), _placement_key(board, routes[e])))
    return (routes[end],)


def colour_counts(board: Mapping[Pos, Placed], routes) -> dict[str, int]:
    """Coloured tiles on the scored routes, per colour."""
    counts = {c: 0 for c in COLOURS}
    for tile_pos in {p for route in routes for p in route}:
        colour = TILES[board[tile_pos].tile].colour
        if colour:
            counts[colour] += 1
    return counts


def winner_colours(counts: Mapping[str, int]) -> tuple[str, ...]:
    """The colours with the most tiles; tied colours all win (Scoring 2)."""
    top = max(counts.values())
    return tuple(c for c in COLOURS if counts[c] == top)


# -- the position notation of `dicetable analyze tricolor` -----------------------------------------
# Its N faces y+1 while this module's y grows southward: N and S swap, positions stay as written.
EDGE_LETTERS = {"N": S, "E": E, "S": N, "W": W}
KIND_WORDS = {"start": START, "end": END, "road": ROAD, "deadend": DEAD}
STATES = {"built": True, "plan": False}


def _tile_for(kind: str, colour: str, wanted: frozenset[int], used: set[int]) -> tuple[int, int]:
    """The first unused copy of the tile of `kind` and `colour` whose roads, turned, are `wanted`,
    and that turn."""
    fitting = [
        t for t in TILES if t.kind == kind and t.colour == colour and wanted in (edges(t.id, r) for r in range(4))
    ]
    if not fitting:
        raise ValueError("a road tile has two, three or four roads")
    free = [t for t in fitting if t.id not in used]
    if not free:
        what = ("dead-end " if kind == DEAD else "") + fitting[0].shape
        raise ValueError(f"the game has only {len(fitting)} {COLOUR_NAMES[colour]} {what} tiles")
    return free[0].id, next(r for r in range(4) if edges(free[0].id, r) == wanted)


def parse_board(text: str) -> dict[Pos, Placed]:
    """A position in the notation of `dicetable analyze tricolor`: tiles in placement order separated
    by `;`, each `X,Y KIND [COLOUR EDGES STATE]` (KIND start, end, road or deadend; COLOUR R, Y or B;
    EDGES the letters among N E S W with a road, N facing y+1; STATE built or plan). Raises
    ValueError with one sentence for a malformed tile or a position the rules forbid."""
    board: dict[Pos, Placed] = {}
    used: set[int] = set()
    pieces = [piece.strip() for piece in text.split(";") if piece.strip()]
    for piece in pieces:
        words = piece.split()
        order = len(board) + (START_POS not in board)  # the Start Tile is 0 wherever it is listed
        try:
            x, y = (int(v) for v in words[0].split(","))
        except ValueError:
            raise ValueError(f"{words[0]!r} is not a position (write X,Y, e.g. 1,-2)") from None
        kind = KIND_WORDS.get(words[1].lower()) if len(words) > 1 else None
        if kind is None:
            raise ValueError(f"{piece!r}: the kind of tile is start, end, road or deadend")
        if (x, y) in board:
            raise ValueError(f"two tiles on {x},{y}")
        if kind in (START, END):
            if len(words) != 2:
                raise ValueError(f"{piece!r}: the Start and End Tiles take no colour, roads or state")
            tile = 0 if kind == START else next((t.id for t in TILES if t.kind == END and t.id not in used), None)
            if tile is None:
                raise ValueError("the game has only 6 End Tiles")
            if kind == START and (x, y) != START_POS:
                raise ValueError(f"the Start Tile lies on 0,0, not {x},{y}")
            board[(x, y)] = Placed(tile, 0, True, 0 if kind == START else order)
            used.add(tile)
            continue
        if len(words) != 5:
            raise ValueError(f"{piece!r}: write X,Y {words[1].lower()} COLOUR EDGES STATE, e.g. 1,0 road R EW built")
        colour, letters, state = words[2].upper(), words[3].upper(), words[4].lower()
        if colour not in COLOURS:
            raise ValueError(f"{piece!r}: the colour is R, Y or B")
        if not letters or set(letters) - set(EDGE_LETTERS) or len(set(letters)) != len(letters):
            raise ValueError(f"{piece!r}: the roads are letters among N, E, S and W, each at most once")
        if state not in STATES:
            raise ValueError(f"{piece!r}: the state is built or plan")
        try:
            tile, rotation = _tile_for(kind, colour, frozenset(EDGE_LETTERS[c] for c in letters), used)
        except ValueError as error:
            raise ValueError(f"{piece!r}: {error}") from None
        board[(x, y)] = Placed(tile, rotation, STATES[state], order)
        used.add(tile)
    if START_POS not in board or TILES[board[START_POS].tile].kind != START:
        raise ValueError("there is no Start Tile (write 0,0 start)")
    for pos, placed in board.items():
        if TILES[placed.tile].kind == END and pos in {neighbour(START_POS, e) for e in range(4)}:
            raise ValueError(f"the End Tile on {pos[0]},{pos[1]} lies next to the Start Tile, which the rules forbid")
    return board
