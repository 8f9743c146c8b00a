"""Connections, shortest routes, the scored pair and the colour contest (tricolor-line.md,
"Routes and the end of the game" and "Scoring").

A board is a mapping (x, y) -> Placed. Rules the document leaves open, decided here *(adaptation)*:
a route ends at its End Tile (it never passes through another End Tile); when one End Tile has
several shortest routes, its route is traced back from the End Tile stepping each time to the
earliest-placed tile; "the pair whose tiles were placed earliest" compares the placement numbers
of each pair's tiles, sorted, as a sequence.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from dicetable.core.tricolor_tiles import COLOURS, DEAD, END, START, STEP, TILES, edges

Pos = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Placed:
    """A tile on the table: which, how it is turned, which side is up, when it was placed."""

    tile: int
    rotation: int
    built: bool  # constructed side up (Start and End tiles always count as constructed)
    order: int  # placement number: the Start Tile is 0, then 1, 2, ...

    @property
    def constructed(self) -> bool:
        return self.built or TILES[self.tile].kind in (START, END)


@lru_cache(maxsize=16384)
def board_grid(board: tuple) -> dict[Pos, Placed]:
    """A state's board tuple `(x, y, tile, rotation, built, order), ...` as a mapping. Cached, for
    bots ask about the same boards again and again: callers must not change the mapping returned."""
    return {(x, y): Placed(t, r, b, o) for x, y, t, r, b, o in board}


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


def shortest_routes(board: Mapping[Pos, Placed]) -> dict[Pos, tuple[Pos, ...]]:
    """Each reachable End Tile's one route (its shortest; ties as in the module docstring)."""
    start = (0, 0)
    if start not in board:
        return {}
    dist = {start: 0}
    queue = deque([start])
    ends = []
    while queue:
        here = queue.popleft()
        if TILES[board[here].tile].kind == END:
            ends.append(here)
            continue  # a route stops at its End Tile
        for edge in range(4):
            there = neighbour(here, edge)
            if there in dist or there not in board or not _carries(board[there]):
                continue
            if connected(board, here, edge):
                dist[there] = dist[here] + 1
                queue.append(there)
    routes = {}
    for end in ends:
        path = [end]
        here = end
        while here != start:
            steps = [
                neighbour(here, e)
                for e in range(4)
                if dist.get(neighbour(here, e)) == dist[here] - 1 and connected(board, here, e)
                and (neighbour(here, e) == start or TILES[board[neighbour(here, e)].tile].kind != END)
            ]
            here = min(steps, key=lambda p: board[p].order)
            path.append(here)
        routes[end] = tuple(reversed(path))
    return routes


def _placement_key(board: Mapping[Pos, Placed], tiles) -> tuple[int, ...]:
    return tuple(sorted(board[p].order for p in tiles))


def best_pair(board: Mapping[Pos, Placed], routes=None) -> tuple[tuple[Pos, ...], ...] | None:
    """The two valid routes scored: disjoint but for the Start Tile, fewest tiles, then earliest."""
    routes = shortest_routes(board) if routes is None else routes
    ends = sorted(routes)
    best, best_key = None, None
    for i, a in enumerate(ends):
        tiles_a = set(routes[a][1:])
        for b in ends[i + 1 :]:
            if tiles_a.isdisjoint(routes[b][1:]):
                key = (
                    len(routes[a]) + len(routes[b]),
                    _placement_key(board, set(routes[a]) | set(routes[b])),
                )
                if best_key is None or key < best_key:
                    best, best_key = (routes[a], routes[b]), key
    return best


def best_single(board: Mapping[Pos, Placed], routes=None) -> tuple[tuple[Pos, ...], ...]:
    """At a stalemate end, the one route scored (fewest tiles, then earliest), or none."""
    routes = shortest_routes(board) if routes is None else routes
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
