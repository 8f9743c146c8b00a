"""Dice Breaker bots: random, greedy and search. Each sees only its seat's view.

- `random`: a uniformly random legal move (core/bots.py).
- `greedy`: the throw with the best expected margin of its hand over the best other hand once the
  thrown die lands — in quick play that maximises its own hand; in battle it also breaks the
  leader's best die when that is worth more.
- `search`: Monte-Carlo: the best candidate moves are played out to the end of the round with a
  fast playout policy, on the same seeded random draws for every candidate; a candidate replaces
  the greedy choice only when it beats it clearly. Deterministic for a given seed.
All throws of unthrown dice are alike (a caught die lands as the thrower's own), so the bots
consider only the first die they may throw.
"""

from __future__ import annotations

import random
from typing import Any

from dicetable.core import bots as generic
from dicetable.core import dicebreaker as db
from dicetable.core import dicebreaker_hands as hands
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Move

FIVE_VALUE = 20.0  # five of a kind wins the game: worth more than any scoring hand


def hand_value(faces) -> float:
    points = hands.POINTS[hands.rank(faces)]
    return FIVE_VALUE if points is None else float(points)


def margin(arena, seat: int, seats: int) -> float:
    """`seat`'s hand value minus the best other hand's, for an arena of (die, owner, face)."""
    by_seat: list[list[int]] = [[] for _ in range(seats)]
    for _, owner, face in arena:
        if owner == db.EVERY_HAND:
            for faces in by_seat:
                faces.append(face)
        else:
            by_seat[owner].append(face)
    mine = hand_value(by_seat[seat])
    return mine - max(hand_value(by_seat[s]) for s in range(seats) if s != seat)


def candidate_moves(view: db.DiceBreakerState) -> tuple[Move, ...]:
    """The legal moves, with the thrown die fixed to the first the seat may throw."""
    if view.phase == db.THROW:
        die = view.throwable(view.seat)[0]
        return (Move("throw", (die,)), *(Move("throw", (die, t)) for t in view.targets(view.seat)))
    return view.legal_moves()


def expected_margin(view: db.DiceBreakerState, move: Move, seat: int) -> float:
    """The mean margin once `move` is done and its dice have new faces (out and spin ignored)."""
    arena, n = list(view.arena), view.seats
    if move.kind == "latent":
        if move.args == ("no",):
            return margin(arena, seat, n)
        stays = view.option["latent_stays_num"] / view.option["latent_stays_den"]
        i = next(i for i, d in enumerate(arena) if d[0] == view.spinning)
        total = 0.0
        for g in range(1, 7):
            arena[i] = (arena[i][0], arena[i][1], g)
            gone = margin(arena, seat, n)
            kept = sum(margin(arena + [("L", seat, h)], seat, n) for h in range(1, 7)) / 6
            total += stays * kept + (1 - stays) * gone
        return total / 6
    if move.args == (db.TRUMP,):
        return sum(margin(arena + [(db.TRUMP, db.EVERY_HAND, f)], seat, n) for f in range(1, 7)) / 6
    die = move.args[0]
    if len(move.args) == 1:
        return sum(margin(arena + [(die, seat, f)], seat, n) for f in range(1, 7)) / 6
    i = next(i for i, d in enumerate(arena) if d[0] == move.args[1])
    total = 0.0
    for g in range(1, 7):
        arena[i] = (arena[i][0], arena[i][1], g)
        total += sum(margin(arena + [(die, seat, f)], seat, n) for f in range(1, 7))
    return total / 36


def _best(scored: list[tuple[float, Move]], rng: random.Random) -> Move:
    top = max(score for score, _ in scored)
    return rng.choice([move for score, move in scored if score >= top - 1e-9])


class GreedyBot:
    name = "greedy"

    def __init__(self, game: Any, rng: random.Random, **settings: Any) -> None:
        self.rng = rng

    def choose(self, view: db.DiceBreakerState) -> Move:
        me = view.actor
        return _best([(expected_margin(view, m, me), m) for m in candidate_moves(view)], self.rng)


def playout_move(state: db.DiceBreakerState) -> Move:
    """A fast, sensible move for playouts: break the leader's grouped die, else one's own lone die,
    else roll; claim a Latent Die unless the spinning die is part of one's own group."""
    seat = state.seat
    if state.phase == db.TRUMP_THROW:
        return Move("throw", (db.TRUMP,))
    if state.phase == db.LATENT:
        mine = state.hand(seat)
        if state.owner(state.spinning) == seat and mine.count(state.face(state.spinning)) >= 2:
            return Move("latent", ("no",))
        return Move("latent", ("yes",))
    die = state.throwable(seat)[0]
    own = [(name, face) for name, owner, face in state.arena if owner == seat]
    mine = state.hand(seat)
    if state.battle:
        rank = hands.rank(mine)
        leader, lead_rank = -1, 0
        for s in range(state.seats):
            if s != seat:
                r = hands.rank(state.hand(s))
                if r > lead_rank:
                    leader, lead_rank = s, r
        if leader >= 0 and lead_rank >= rank:
            theirs = [(name, face) for name, owner, face in state.arena if owner == leader]
            counts = state.hand(leader)
            grouped = [(counts.count(face), name) for name, face in theirs if counts.count(face) >= 2]
            if grouped:
                return Move("throw", (die, max(grouped)[1]))
    lone = [name for name, face in own if mine.count(face) == 1]
    if lone and len(mine) >= 2:
        return Move("throw", (die, lone[0]))
    return Move("throw", (die,))


def round_value(state: db.DiceBreakerState, seat: int) -> float:
    """Points ahead of the best other seat; a finished game counts far more."""
    if state.result is not None:
        return 100.0 * generic.value_for(state, seat)
    return state.points(seat) - max(state.points(s) for s in range(state.seats) if s != seat)


class SearchBot:
    """Monte-Carlo playouts to the end of the round, `playouts` per candidate move, among at most
    `candidates` moves (the best by greedy expectation).

    Playouts are noisy next to the small differences between good throws, so the bot keeps the
    greedy choice unless a candidate beats it on the same draws by more than `confidence` standard
    errors of the paired difference.
    """

    name = "search"

    def __init__(
        self,
        game: Any,
        rng: random.Random,
        playouts: int = 16,
        candidates: int = 4,
        confidence: float = 2.0,
        **settings: Any,
    ) -> None:
        self.rng = rng
        self.playouts = playouts
        self.candidates = candidates
        self.confidence = confidence

    def choose(self, view: db.DiceBreakerState) -> Move:
        me = view.actor
        moves = list(candidate_moves(view))
        if len(moves) == 1:
            return moves[0]
        scored = [(expected_margin(view, m, me), m) for m in moves]
        top = max(score for score, _ in scored)
        best = [m for score, m in scored if score >= top - 1e-9]
        greedy = self.rng.choice(best)
        others = [m for _, m in sorted(scored, key=lambda sm: -sm[0]) if m != greedy]
        others = others[: self.candidates - 1]
        # Common random numbers: every candidate meets the same draws, so differences are the moves'.
        seeds = [self.rng.getrandbits(64) for _ in range(self.playouts)]
        base = [self._playout(view.apply(greedy), me, seed) for seed in seeds]
        choice, margin_of = greedy, 0.0
        for move in others:
            diffs = [self._playout(view.apply(move), me, seed) - b for seed, b in zip(seeds, base)]
            mean = sum(diffs) / len(diffs)
            spread = (sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1)) ** 0.5
            bound = mean - self.confidence * spread / len(diffs) ** 0.5
            if bound > margin_of:
                choice, margin_of = move, bound
        return choice

    def _playout(self, state: db.DiceBreakerState, me: int, seed: int) -> float:
        source = LocalSource(random.Random(seed))
        start = state.round
        while state.result is None and state.round == start:
            if state.actor == CHANCE:
                state = state.resolve(source.outcome(state.chance()))
            else:
                state = state.apply(playout_move(state))
        return round_value(state, me)


BOTS = {"random": generic.RandomBot, "greedy": GreedyBot, "search": SearchBot}
