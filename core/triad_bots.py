"""TRIAD's bots: random (generic), greedy and search.

A TRIAD turn is a move followed, when it scores, by the scorer's own removal, and scoring is worth
far more than anything a slow generic search reaches in time; so greedy and search here work on a
compact board (one small int per cell) and think in whole turns: (move, removal) pairs.

Cell codes: 0 empty, 1..3 a Black die showing 1..3, 4..6 a White die showing 1..3.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from dicetable.core import bots as generic
from dicetable.core.game import Bot, GameInfo, Move
from dicetable.core.triad import (
    BLACK,
    DIRECTION_NAMES,
    LINES_THROUGH,
    RAYS,
    REMOVALS_TO_WIN,
    REMOVE,
    SQUARES,
    is_triad,
)

_CODE_DIE = ("",) + tuple(f"{c}{v}" for c in "BW" for v in (1, 2, 3))
_DIE_CODE = {die: code for code, die in enumerate(_CODE_DIE)}
# TRIAD[a * 49 + b * 7 + c]: cell codes a, b, c form a Triad (order does not matter).
TRIAD = tuple(
    is_triad(_CODE_DIE[n // 49], _CODE_DIE[n // 7 % 7], _CODE_DIE[n % 7]) for n in range(343)
)
# Per square: the other two squares of every line through it, and the line itself.
PAIRS = tuple(
    tuple((tuple(x for x in line if x != sq), line) for line in LINES_THROUGH[sq])
    for sq in range(36)
)
RAY_LIST = tuple(tuple(RAYS[sq][name] for name in DIRECTION_NAMES) for sq in range(36))

# An action: (source square, target square, new cell code, Move). A turn: (action, removal or -1).
WIN = 100.0
_REMOVAL = (-1, -1, 0, None)  # the action part of a turn that is only the removal left to make


def _owner(code: int) -> int:
    """0 for Black, 1 for White."""
    return 0 if code <= 3 else 1


def _actions(board: list[int], side: int) -> list[tuple[int, int, int, Move]]:
    """All legal actions of colour `side` (0 Black, 1 White), fallbacks and pass included."""
    base = 3 * side
    out = []
    for src in range(36):
        code = board[src]
        if not code or _owner(code) != side:
            continue
        shown = code - base
        for d, ray in enumerate(RAY_LIST[src]):
            for k, cell in enumerate(ray, 1):
                if board[cell]:
                    break
                if k != shown:
                    move = Move("move", (SQUARES[src], k, DIRECTION_NAMES[d]))
                    out.append((src, cell, base + k, move))
    if out:
        return out
    for src in range(36):
        code = board[src]
        if code and _owner(code) == side:
            shown = code - base
            for v in (1, 2, 3):
                if v != shown:
                    out.append((src, src, base + v, Move("turn", (SQUARES[src], v))))
    for src in range(36):
        code = board[src]
        if code and _owner(code) == side:
            shown = code - base
            for d, ray in enumerate(RAY_LIST[src]):
                if len(ray) >= shown and not any(board[c] for c in ray[:shown]):
                    move = Move("shift", (SQUARES[src], DIRECTION_NAMES[d]))
                    out.append((src, ray[shown - 1], code, move))
    return out or [(-1, -1, 0, Move("pass"))]


def _scoring_dice(board: list[int], target: int, side: int) -> list[int]:
    """Own dice of `side` in the Triads through the die just put on `target` (empty: no score)."""
    found = set()
    for (p, q), line in PAIRS[target]:
        if TRIAD[board[p] * 49 + board[q] * 7 + board[target]]:
            found.update(x for x in line if _owner(board[x]) == side)
    return sorted(found)


def _turns(board: list[int], side: int) -> list[tuple[tuple[int, int, int, Move], int]]:
    """Whole turns of `side`: each action with each removal it allows (-1: no score)."""
    out = []
    for action in _actions(board, side):
        src, target, code, _ = action
        if src < 0:
            out.append((action, -1))
            continue
        old = board[src]
        board[src] = 0
        board[target] = code
        removals = _scoring_dice(board, target, side)
        board[target] = 0
        board[src] = old
        if removals:
            out.extend((action, r) for r in removals)
        else:
            out.append((action, -1))
    return out


def can_score(board: list[int], side: int) -> bool:
    """Whether `side` has a normal move that makes a Triad (fallbacks are ignored: rare)."""
    base = 3 * side
    for src in range(36):
        code = board[src]
        if not code or _owner(code) != side:
            continue
        shown = code - base
        board[src] = 0
        try:
            for ray in RAY_LIST[src]:
                for k, cell in enumerate(ray, 1):
                    if board[cell]:
                        break
                    if k != shown:
                        placed = base + k
                        for (p, q), _ in PAIRS[cell]:
                            if TRIAD[board[p] * 49 + board[q] * 7 + placed]:
                                return True
        finally:
            board[src] = code
    return False


def _position(view: Any) -> tuple[list[int], int, list[int]]:
    """The compact board, the side to move (0 Black, 1 White) and removals per side."""
    board = [_DIE_CODE[d] for d in view.board]
    side = 0 if view.colour(view.seat) == BLACK else 1
    removed = [0, 0]
    for seat in (0, 1):
        removed[0 if view.colour(seat) == BLACK else 1] = view.removed[seat]
    return board, side, removed


class GreedyBot(Bot):
    """Scores when it can; otherwise avoids moves after which the opponent can score at once.

    When scoring, it prefers a removal that leaves the opponent no Triad; ties go to the seeded rng.
    """

    name = "greedy"

    def __init__(self, game: GameInfo, rng: random.Random, **settings: Any) -> None:
        self.rng = rng

    def choose(self, view: Any) -> Move:
        board, side, removed = _position(view)
        if view.phase == REMOVE:
            return self._removal(view, board, side)
        turns = _turns(board, side)
        scoring = [t for t in turns if t[1] >= 0]
        pool = scoring or turns
        safe = [t for t in pool if not self._opponent_scores(board, t, side)]
        return self.rng.choice(safe or pool)[0][3]

    def _opponent_scores(self, board: list[int], turn, side: int) -> bool:
        (src, target, code, _), removal = turn
        if src < 0:
            return can_score(board, 1 - side)
        old = board[src]
        gone = board[removal] if removal >= 0 and removal != target else code
        board[src] = 0
        board[target] = code
        if removal >= 0:
            board[removal] = 0
        try:
            return can_score(board, 1 - side)
        finally:
            if removal >= 0:
                board[removal] = gone
            board[target] = 0
            board[src] = old

    def _removal(self, view: Any, board: list[int], side: int) -> Move:
        moves = list(view.legal_moves())
        safe = []
        for move in moves:
            sq = SQUARES.index(move.args[0])
            code = board[sq]
            board[sq] = 0
            if not can_score(board, 1 - side):
                safe.append(move)
            board[sq] = code
        return self.rng.choice(safe or moves)


class SearchBot(Bot):
    """Alpha-beta over whole turns with iterative deepening inside a node budget.

    A leaf is scored for the side to move: removals ahead, plus most of a removal when that side
    can score at once, minus a little when the other side threatens to. The node budget (not a
    clock) bounds the work, so a seed always gives the same moves.
    """

    name = "search"

    def __init__(self, game: GameInfo, rng: random.Random, nodes: int = 1500, **settings: Any):
        self.rng = rng
        self.budget = nodes
        self.hurry = threading.Event()  # set: the deepest search finished so far decides (core/bots.py `hurry`)

    def choose(self, view: Any) -> Move:
        board, side, removed = _position(view)
        if view.phase == REMOVE:
            # The acted die already stands; what is left of the turn is the removal.
            roots = [(_REMOVAL, SQUARES.index(m.args[0])) for m in view.legal_moves()]
        else:
            roots = _turns(board, side)
        if len(roots) == 1:
            return self._move(roots[0], view)
        self.rng.shuffle(roots)
        # Scoring turns first: they are usually best and make the cut-offs come early.
        roots.sort(key=lambda t: t[1] < 0)
        self.nodes = 0
        best = roots[0]
        for depth in (1, 2, 3, 4):
            try:
                scored = []
                alpha = -WIN * 2
                for turn in roots:
                    value = self._after(board, side, removed, turn, depth, -WIN * 2, -alpha)
                    scored.append((value, turn))
                    alpha = max(alpha, value)
            except _OutOfNodes:
                break
            top = max(v for v, _ in scored)
            best = next(t for v, t in scored if v == top)
            order = {id(t): v for v, t in scored}
            roots.sort(key=lambda t: -order[id(t)])
            if top >= WIN / 2:
                break
        return self._move(best, view)

    @staticmethod
    def _move(turn, view) -> Move:
        if turn[0] is _REMOVAL:
            return Move("remove", (SQUARES[turn[1]],))
        return turn[0][3]

    def _after(self, board, side, removed, turn, depth, alpha, beta) -> float:
        """Value for `side` of playing `turn`, searching `depth - 1` more turns."""
        self.nodes += 1
        if self.nodes > self.budget or (self.nodes & 63 == 0 and self.hurry.is_set()):
            raise _OutOfNodes
        action, removal = turn
        if action is _REMOVAL:
            src = -1
        else:
            src, target, code, _ = action
        saved_src = saved_rm = 0
        if src >= 0:
            saved_src = board[src]
            board[src] = 0
            board[target] = code
        if removal >= 0:
            saved_rm = board[removal]
            board[removal] = 0
            removed[side] += 1
        try:
            if removal >= 0 and removed[side] >= REMOVALS_TO_WIN:
                return WIN + depth
            return -self._value(board, 1 - side, removed, depth - 1, -beta, -alpha)
        finally:
            if removal >= 0:
                removed[side] -= 1
                board[removal] = saved_rm
            if src >= 0:
                board[target] = 0
                board[src] = saved_src

    def _value(self, board, side, removed, depth, alpha, beta) -> float:
        if depth <= 0:
            return self._leaf(board, side, removed)
        turns = _turns(board, side)
        turns.sort(key=lambda t: t[1] < 0)
        best = -WIN * 2
        for turn in turns:
            value = self._after(board, side, removed, turn, depth, alpha, beta)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        return best

    @staticmethod
    def _leaf(board, side, removed) -> float:
        value = removed[side] - removed[1 - side]
        if can_score(board, side):
            value += 0.9
        elif can_score(board, 1 - side):
            value -= 0.2
        return value


class _OutOfNodes(Exception):
    pass


BOTS = {"random": generic.RandomBot, "greedy": GreedyBot, "search": SearchBot}
HEURISTIC = None  # the rules module's own evaluation stands (core/registry.py)
