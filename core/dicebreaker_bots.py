"""Dice Breaker bots: random, greedy, search and lookahead. Each sees only its seat's view.

- `random`: a uniformly random legal move (core/bots.py).
- `greedy`: the throw with the best expected margin of its hand over the best other hand once the
  thrown die lands — in quick play that maximises its own hand; in battle it also breaks the
  leader's best die when that is worth more.
- `search`: Monte-Carlo: the best candidate moves are played out to the end of the round with a
  fast playout policy, on the same seeded random draws for every candidate; a candidate replaces
  the greedy choice only when it beats it clearly. Deterministic for a given seed.
- `lookahead`: two-seat expectimax over my throw and the opponent's reply (deeper within a node
  budget), leaves scored by what the round would really give once the dice still to come are
  rolled (`LookaheadBot`); the `hard` level (core/levels.py).
All throws of unthrown dice are alike (a caught die lands as the thrower's own), so the bots
consider only the first die they may throw.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import threading
from typing import Any

from dicetable.core import bots as generic
from dicetable.core import dicebreaker as db
from dicetable.core import dicebreaker_hands as hands
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Bot, Move

FIVE_VALUE = 20.0  # five of a kind wins the game: worth more than any scoring hand
DEEPER = 15  # measured: a lookahead one throw deeper asks for about 13 times as many positions


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


class GreedyBot(Bot):
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


class SearchBot(Bot):
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


_VALUE = tuple(FIVE_VALUE if p is None else float(p) for p in hands.POINTS)


def round_points(mine: int, theirs: int) -> float:
    """What the round's scoring gives me over the opponent when it ends with hands of ranks `mine`
    and `theirs` (End of a round and scoring); five of a kind counts FIVE_VALUE."""
    if mine == theirs:
        return 0.0  # nothing scored, or the points split evenly
    if mine > theirs:
        return _VALUE[mine]
    return -_VALUE[theirs]


@functools.lru_cache(maxsize=65536)  # hands of up to 10 dice and a Trump Die: a few thousand
def _rank(faces: tuple[int, ...], trump: int) -> int:
    return hands.rank(faces + (trump,) if trump else faces)


@functools.lru_cache(maxsize=65536)
def _plus(faces: tuple[int, ...], face: int) -> tuple[int, ...]:
    """Sorted `faces` with `face` landed among them (the search asks for the same ones again and again)."""
    return tuple(sorted(faces + (face,)))


@functools.lru_cache(maxsize=1024)
def _outlooks(my_need: float, their_need: float) -> tuple[tuple[float, ...], ...]:
    """`round_points` by ranks, except that a round that brings a seat to the target (it still
    needs `my_need` / `their_need` points) wins or loses the game: FIVE_VALUE, as five of a kind."""
    def value(a: int, b: int) -> float:
        won = round_points(a, b)
        if won >= my_need:
            return FIVE_VALUE
        if -won >= their_need:
            return -FIVE_VALUE
        return won

    return tuple(tuple(value(a, b) for b in range(len(_VALUE))) for a in range(len(_VALUE)))


@functools.lru_cache(maxsize=65536)
def rank_chances(faces: tuple[int, ...], trump: int, more: int) -> tuple[float, ...]:
    """The chance of each rank for a hand of `faces` (sorted) and the Trump Die once `more` dice
    are rolled into it."""
    chances = [0.0] * len(_VALUE)
    for rolled in itertools.combinations_with_replacement(range(1, 7), more):
        ways = math.factorial(more)
        for face in set(rolled):
            ways //= math.factorial(rolled.count(face))
        chances[_rank(faces + rolled, trump)] += ways / 6**more
    return tuple(chances)


@functools.lru_cache(maxsize=262144)
def outlook(mine: tuple[int, ...], theirs: tuple[int, ...], trump: int, my_more: int, their_more: int,
            needs: tuple[float, float] = (99.0, 99.0)) -> float:
    """The mean of `round_points` (with the game's end, `_outlooks`) once every seat's dice still to
    come are rolled into its hand (breaks to come are not foreseen)."""
    p = rank_chances(mine, trump, my_more)
    return sum(pa * against for pa, against in zip(p, _against(theirs, trump, their_more, needs)) if pa)


@functools.lru_cache(maxsize=65536)
def _against(theirs: tuple[int, ...], trump: int, their_more: int, needs: tuple[float, float]) -> tuple[float, ...]:
    """For each rank of mine, `outlook`'s mean over the other seat's ranks (shared by all my hands)."""
    q = [(b, qb) for b, qb in enumerate(rank_chances(theirs, trump, their_more)) if qb]
    return tuple(sum(qb * row[b] for b, qb in q) for row in _outlooks(*needs))


def _without(faces: tuple[int, ...], face: int) -> tuple[int, ...]:
    i = faces.index(face)
    return faces[:i] + faces[i + 1:]


@functools.lru_cache(maxsize=4096)  # an entry holds hundreds of outcomes: 65536 grew past 4 GB
def _throws(thrower, other, trump):
    """Each distinct throw of `thrower` (None: a roll; else (whose, face) of the target: "own",
    "other" or "trump"), with its outcomes (thrower's faces, other's, trump) and their chances."""
    return tuple(_each_throw(thrower, other, trump))


def _each_throw(thrower, other, trump):
    # Outcomes come out distinct, in the order the faces first give them: a roll's 6 faces, a
    # broken die of the thrower's and the thrown die as one unordered pair of faces (21, the
    # mixed pairs twice as likely), a broken die of the other's or the Trump Die and the thrown
    # die as 36 ordered pairs (each seat's hand tells them apart).
    landed = [_plus(thrower, f) for f in range(1, 7)]
    yield None, tuple(((hand, other, trump), 1 / 6) for hand in landed)
    for x in sorted(set(thrower)):
        rest = _without(thrower, x)
        yield ("own", x), tuple(((_plus(_plus(rest, g), f), other, trump), (1 if g == f else 2) / 36)
                                for g, f in _PAIRS)
    for x in sorted(set(other)):
        rest = _without(other, x)
        yield ("other", x), tuple(((hand, broken, trump), 1 / 36) for broken in [_plus(rest, g) for g in range(1, 7)]
                                  for hand in landed)
    if trump:
        yield ("trump", trump), tuple(((hand, other, g), 1 / 36) for g in range(1, 7) for hand in landed)


_PAIRS = tuple(itertools.combinations_with_replacement(range(1, 7), 2))  # (g, f), g <= f


class LookaheadBot(Bot):
    """Two-seat expectimax over the throws still to come in the round, deepened one throw at a time:
    `depth` throws always, then deeper up to `deepest` while the search, having asked for at most
    `nodes` positions in all, is expected to finish the next depth within them (`DEEPER`), and
    never past the round's end; the deepest search finished decides. Each throw of mine is weighed
    by the opponent's best reply to each of its outcomes, and so on. A round that ends inside the
    search is scored by what its scoring really gives (`round_points`), not by the hands' margin as
    greedy does; a round that goes on by its `outlook`, which also values what the dice still to
    come may make of each hand (measured: with the margin as leaf instead, no better than greedy).
    Only hands matter, so dice of one owner and face are one target and positions are cached by
    hands. Exact (every face enumerated; dice flying out and spinning are not foreseen): the only
    randomness is the seeded tie-break. Bounded by counts, so a seed decides every move; setting
    `hurry` (a threading.Event) makes it play the move of the deepest search finished so far at
    once. Latent Dice are claimed by `outlook` too; quick play (its breaks and order differ) and
    games of more than two seats are greedy's."""

    name = "lookahead"

    def __init__(self, game: Any, rng: random.Random, depth: int = 2, deepest: int = 2, nodes: int = 0,
                 **settings: Any) -> None:
        self.rng = rng
        self.greedy = GreedyBot(game, rng)
        self.depth = depth
        self.deepest = max(depth, deepest)
        self.budget = nodes
        self.hurry = threading.Event()

    def choose(self, view: db.DiceBreakerState) -> Move:
        if view.phase not in (db.THROW, db.LATENT) or view.seats != 2 or not view.battle:
            return self.greedy.choose(view)
        me, other = view.seat, 1 - view.seat
        mine = tuple(sorted(f for _, o, f in view.arena if o == me))
        theirs = tuple(sorted(f for _, o, f in view.arena if o == other))
        trump = next((f for _, o, f in view.arena if o == db.EVERY_HAND), 0)
        left = [len(view.held[s]) + len(view.extra[s]) for s in range(2)]
        needs = self._needs(view, me)
        if view.phase == db.LATENT:
            return self._claim(view, me, mine, theirs, trump, left, needs)
        search = _Expectimax(needs, self.hurry)
        scored, last = None, 0  # positions asked for by the last depth finished
        for depth in range(1, min(self.deepest, sum(left)) + 1):
            if depth > self.depth:
                # Deeper only when it should fit (so a deeper search seldom starts in vain).
                search.budget = self.budget
                if search.nodes + last * DEEPER > self.budget:
                    break
            try:
                before = search.nodes
                scored = search.root(mine, theirs, trump, left[me], left[other], depth)
                last = search.nodes - before
            except _Stop:
                break
        if scored is None:  # hurried or out of nodes before the first depth: the greedy throw
            return self.greedy.choose(view)
        top = max(score for score, _ in scored)
        target = self.rng.choice([t for score, t in scored if score >= top - 1e-9])
        die = view.throwable(me)[0]
        if target is None:
            return Move("throw", (die,))
        whose, face = target
        owner = {"own": me, "other": other, "trump": db.EVERY_HAND}[whose]
        name = next(n for n, o, f in view.arena if o == owner and f == face)
        return Move("throw", (die, name))

    @staticmethod
    def _needs(view, me: int) -> tuple[float, float]:
        """Points each seat still needs to win the game (capped: more than a round gives is all alike)."""
        target = view.option["target"]
        return (min(7.0, target - view.points(me)), min(7.0, target - view.points(1 - me)))

    @staticmethod
    def _claim(view, me, mine, theirs, trump, left, needs) -> Move:
        """A Latent Die, foreseeing the other seat's sealed answer (Latent Dice): it claims when its
        own claim is worth more to it by `outlook` than the spinning die left as it lies. If it
        claims, one claimant is drawn fairly, so claiming too keeps half the draw: worth it whenever
        my claim is worth more to me than theirs, even at my own spinning pair (measured: the rule
        that weighed "I claim" against "nobody claims" declined there, greedy claimed alone and broke
        the pair; `scripts/ladder.py dicebreaker --bots greedy,hard`, README)."""
        owner, face = next((o, f) for n, o, f in view.arena if n == view.spinning)
        stays = view.option["latent_stays_num"] / view.option["latent_stays_den"]
        hands_of = {me: mine, 1 - me: theirs}
        by_me = by_them = 0.0  # what a claim by me, and by them, is worth to me
        for g in range(1, 7):
            broken = {s: _without(h, face) + (g,) if s == owner else h for s, h in hands_of.items()}
            t = g if owner == db.EVERY_HAND else trump

            def worth(mine_more: tuple[int, ...], theirs_more: tuple[int, ...]) -> float:
                return outlook(tuple(sorted(broken[me] + mine_more)), tuple(sorted(broken[1 - me] + theirs_more)),
                               t, left[me], left[1 - me], needs)

            gone = worth((), ())
            mine_kept = sum(worth((h,), ()) for h in range(1, 7)) / 6
            theirs_kept = sum(worth((), (h,)) for h in range(1, 7)) / 6
            by_me += (stays * mine_kept + (1 - stays) * gone) / 6
            by_them += (stays * theirs_kept + (1 - stays) * gone) / 6
        now = outlook(mine, theirs, trump, left[me], left[1 - me], needs)
        rival = min(by_them, now)  # they claim when it is worth more to them: less to me
        return Move("latent", ("yes",) if by_me > rival else ("no",))


class _Stop(Exception):
    """The search is out of nodes or hurried: the deepest finished depth stands."""


class _Expectimax:
    """The value of a position to me (seat "me") by hands alone: (my faces, theirs, trump, my dice
    left, theirs, who throws: 0 me, 1 them), `depth` throws deep. Values are cached across depths."""

    def __init__(self, needs: tuple[float, float], hurry: threading.Event) -> None:
        self.needs = needs
        self.table = _outlooks(*needs)
        self.budget: int | None = None  # positions the search may ask for in all (None: no bound)
        self.hurry = hurry
        self.nodes = 0
        self.cache: dict = {}

    def root(self, mine, theirs, trump, my_left, their_left, depth) -> list[tuple[float, Any]]:
        scored = []
        for target, outcomes in _throws(mine, theirs, trump):
            scored.append((sum(p * self.value(m, th, t, my_left - 1, their_left, 1, depth - 1)
                               for (m, th, t), p in outcomes), target))
        return scored

    def value(self, mine, theirs, trump, my_left, their_left, turn, depth) -> float:
        self.nodes += 1  # every position asked for, the leaves too: the work done
        if (self.budget is not None and self.nodes > self.budget) or (self.nodes & 1023 == 0 and self.hurry.is_set()):
            raise _Stop
        if my_left == 0 and their_left == 0:
            return self.table[_rank(mine, trump)][_rank(theirs, trump)]
        if depth == 0:
            return outlook(mine, theirs, trump, my_left, their_left, self.needs)
        key = (mine, theirs, trump, my_left, their_left, turn, depth)
        known = self.cache.get(key)
        if known is not None:
            return known
        if turn == 0 and my_left == 0 or turn == 1 and their_left == 0:
            turn = 1 - turn  # a seat with no dice left is passed over
        if depth == 1:
            best = self._last_throw(mine, theirs, trump, my_left, their_left, turn)
        elif turn == 0:
            best = max(sum(p * self.value(m, th, t, my_left - 1, their_left, 1, depth - 1)
                           for (m, th, t), p in outcomes) for _, outcomes in _throws(mine, theirs, trump))
        else:
            best = min(sum(p * self.value(m, th, t, my_left, their_left - 1, 0, depth - 1)
                           for (th, m, t), p in outcomes) for _, outcomes in _throws(theirs, mine, trump))
        self.cache[key] = best
        return best

    def _last_throw(self, mine, theirs, trump, my_left, their_left, turn) -> float:
        """`value` one throw from the leaves, each leaf valued in place: the same values and count of
        positions as a `value` call per leaf, which is where the search spends most of its time."""
        table, needs = self.table, self.needs
        if turn == 0:
            throws, my_left = _throws(mine, theirs, trump), my_left - 1
        else:
            throws, their_left = _throws(theirs, mine, trump), their_left - 1
        ended = my_left == 0 and their_left == 0  # the throw ends the round: the leaves are scored
        scores = []
        for _, outcomes in throws:
            self.nodes += len(outcomes)
            if ended:
                scores.append(sum(p * table[_rank(m, t)][_rank(th, t)]
                                  for (m, th, t), p in _mine_first(outcomes, turn)))
            else:
                scores.append(sum(p * outlook(m, th, t, my_left, their_left, needs)
                                  for (m, th, t), p in _mine_first(outcomes, turn)))
        if (self.budget is not None and self.nodes > self.budget) or self.hurry.is_set():
            raise _Stop
        return max(scores) if turn == 0 else min(scores)


def _mine_first(outcomes, turn):
    """`outcomes` of a throw as (my faces, theirs, trump), whoever threw (turn 1: the other seat)."""
    return outcomes if turn == 0 else (((m, th, t), p) for (th, m, t), p in outcomes)


BOTS = {"random": generic.RandomBot, "greedy": GreedyBot, "search": SearchBot, "lookahead": LookaheadBot}
HEURISTIC = None  # the rules module's own evaluation stands (core/registry.py)
