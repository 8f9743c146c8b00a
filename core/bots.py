"""The generic bots: random, greedy and search. They see only their seat's view.

Every bot is built as `Bot(game, rng, **settings)` with an explicit seeded `random.Random`, and
answers `choose(view) -> Move`. Games whose shape these do not fit provide their own bots under the
same names in their `GameInfo.bots`.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from dicetable.core.game import CHANCE, Bot, GameInfo, Move


def value_for(state: Any, seat: int) -> float:
    """+1 when `seat` won alone, -1 when it lost, between for draws and shared wins."""
    result = state.result
    if seat in result.winners:
        return 1.0 if len(result.winners) == 1 else 0.5
    return 0.0 if not result.winners else -1.0


class RandomBot(Bot):
    name = "random"

    def __init__(self, game: GameInfo, rng: random.Random, **settings: Any) -> None:
        self.rng = rng

    def choose(self, view: Any) -> Move:
        return self.rng.choice(view.legal_moves())


class GreedyBot(Bot):
    """Takes a move that wins now; avoids a move that loses now or lets an opponent win at once.

    "At once" follows the mover's own further moves until another seat acts (in TRICE a placement
    is followed by the placer's choice of die, then the opponent's placement), so the bot never
    hands an opponent an immediate win when another choice exists. Among equal moves the game's
    heuristic decides, then the seeded rng.
    """

    name = "greedy"

    def __init__(self, game: GameInfo, rng: random.Random, own_moves: int = 2, **settings: Any):
        self.game = game
        self.rng = rng
        self.own_moves = own_moves

    def choose(self, view: Any) -> Move:
        me = view.actor
        best, best_score = [], None
        for move in view.legal_moves():
            after = view.apply(move)
            score = (self._threat(after, me, self.own_moves), self.game.heuristic(after, me)) if after.result is None else (value_for(after, me) * 2, 0.0)
            if best_score is None or score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return self.rng.choice(best)

    def _threat(self, state: Any, me: int, own_moves: int) -> float:
        """-1 when an opponent wins at once whatever we do, +1 when we win at once, else 0."""
        if state.result is not None:
            return value_for(state, me)
        actor = state.actor
        if actor == CHANCE:
            return 0.0
        if actor == me:
            if own_moves == 0:
                return 0.0
            return max(self._threat(state.apply(m), me, own_moves - 1) for m in state.legal_moves())
        worst = 0.0
        for move in state.legal_moves():
            after = state.apply(move)
            if after.result is not None:
                worst = min(worst, value_for(after, me))
                if worst == -1.0:
                    break
        return worst


class SearchBot(Bot):
    """Alpha-beta over the engine with iterative deepening inside a node budget.

    Leaves that are not over are scored by the game's heuristic; a chance node is a leaf. The
    result is deterministic for a given seed: ties among equally good moves go to the seeded rng.
    Built for two-seat games; games with more seats or chance in every turn bring their own.
    """

    name = "search"
    WIN = 1000.0

    def __init__(self, game: GameInfo, rng: random.Random, nodes: int = 20000, **settings: Any):
        self.game = game
        self.rng = rng
        self.budget = nodes
        self.hurry = threading.Event()  # set: the deepest search finished so far decides (`hurry`)

    def choose(self, view: Any) -> Move:
        me = view.actor
        moves = list(view.legal_moves())
        self.rng.shuffle(moves)
        if len(moves) == 1:
            return moves[0]
        self.nodes = 0
        best = moves[0]
        depth = 1
        while True:
            self.table: dict = {}
            try:
                scored = []
                for move in moves:
                    scored.append((self._value(view.apply(move), me, depth - 1, -self.WIN * 2, self.WIN * 2), move))
            except _OutOfNodes:
                break
            top = max(score for score, _ in scored)
            # Keep the move order stable so ties resolve by the seeded shuffle.
            best = next(move for score, move in scored if score == top)
            moves.sort(key=lambda m: -next(s for s, mm in scored if mm is m))
            if abs(top) >= self.WIN / 2 or depth >= 64:
                break
            depth += 1
        return best

    def _value(self, state: Any, me: int, depth: int, alpha: float, beta: float) -> float:
        self.nodes += 1
        if self.nodes > self.budget or (self.nodes & 255 == 0 and self.hurry.is_set()):
            raise _OutOfNodes
        if state.result is not None:
            # Prefer quick wins and slow losses: the score shrinks with the remaining depth.
            return value_for(state, me) * (self.WIN + depth)
        actor = state.actor
        if depth <= 0 or actor == CHANCE:
            return self.game.heuristic(state, me)
        identity = state.key()
        key = (identity, depth) if identity is not None else None
        if key is not None and key in self.table:
            return self.table[key]
        maximise = actor == me
        best = -self.WIN * 2 if maximise else self.WIN * 2
        a, b = alpha, beta
        for move in state.legal_moves():
            value = self._value(state.apply(move), me, depth - 1, a, b)
            if maximise:
                best = max(best, value)
                a = max(a, best)
            else:
                best = min(best, value)
                b = min(b, best)
            if a >= b:
                break
        if key is not None and alpha < best < beta:
            self.table[key] = best
        return best


class _OutOfNodes(Exception):
    pass


def hurry(bot: Bot) -> bool:
    """Ask a thinking bot to move now: a bot that searches (a `hurry` event) plays the best move it
    has found so far, still a move of its own choosing; False when `bot` does not search."""
    if bot.hurry is None:
        return False
    bot.hurry.set()
    return True


# The generic bots, bound by core/registry.py to the games that have no bots of their own.
BOTS = {"random": RandomBot, "greedy": GreedyBot, "search": SearchBot}
HEURISTIC = None  # the rules module's own evaluation stands (core/registry.py)
