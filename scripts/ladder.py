#!/usr/bin/env python3
"""Bot ladder: a round robin of two-seat games among bots, printed as an Elo table.

Usage: .venv/bin/python scripts/ladder.py GAME [--games N] [--seed S] [--bots easy,medium,hard,...] [--jobs J]
       .venv/bin/python scripts/ladder.py GAME --seats K --bots A,B [--games N] [--seed S] [--jobs J]

Every pair of bots plays N games (seats alternate, the seeds are selfplay's), each bot's every
move is timed, and the table shows per bot: Elo (the first bot is 0) with its 95% interval against
that anchor, its score over all games, and its median and 90th-percentile time per move. A matrix
follows: the row bot's score against the column bot. With `--seats K` (K > 2) A plays N K-seat games
against K-1 copies of B instead (A's seat rotating), and the line shows A's share of the wins with
its 95% interval and both bots' move times. `--jobs J` plays J games at once in J processes (one a
core): the same games and results, sooner. README, "Bot levels", says how to read it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import multiprocessing
import random
import statistics
import sys
import time

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.match import play_out

ELO = 400 / math.log(10)  # Elo points per unit of logistic strength
MOVE_LIMIT = 1.0  # seconds: the median thinking time a level may take per move


class Timed:
    """A bot whose every `choose` is timed into `times` (the bot's own choices are untouched)."""

    def __init__(self, bot, times: list[float]) -> None:
        self.bot = bot
        self.times = times

    def choose(self, view):
        start = time.perf_counter()
        move = self.bot.choose(view)
        self.times.append(time.perf_counter() - start)
        return move


def play_one(job: tuple[str, tuple[str, ...], int, int]) -> tuple[tuple[int, ...], dict[str, list[float]]]:
    """One game, `job` = (game, bot of each seat, seed, game number): the winning seats and each
    bot's move times. Its seeds come from the seed and number alone, so a game is the same game
    whichever process plays it and whatever was played before."""
    name, order, seed, number = job
    game = registry.get(name)
    times: dict[str, list[float]] = {bot: [] for bot in order}
    base = seed * 1_000_003 + number * 7919
    bots = [Timed(game.bots[bot](game, random.Random(base + 1 + s)), times[bot]) for s, bot in enumerate(order)]
    final, _ = play_out(game.new(len(order), game.resolve_options(None)), bots, LocalSource(random.Random(base)))
    return final.result.winners, times


def play_all(jobs: list, workers: int, times: dict):
    """Each game's winning seats, in the order of `jobs`, `workers` games at a time; each bot's move
    times are added to `times`."""
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(multiprocessing.Pool(workers)) if workers > 1 else None
        played = pool.imap(play_one, jobs) if pool else map(play_one, jobs)
        for winners, moved in played:
            for name, spent in moved.items():
                times[name] += spent
            yield winners


def play_pair(game, a: str, b: str, games: int, seed: int, times: dict, workers: int = 1) -> tuple[float, float]:
    """Scores of `a` and `b` over `games` two-seat games (a shared win counts half)."""
    score = {a: 0.0, b: 0.0}
    jobs = [(game.name, (a, b) if number % 2 == 0 else (b, a), seed, number) for number in range(games)]
    for (_, order, _, _), winners in zip(jobs, play_all(jobs, workers, times)):
        for seat in range(2):
            share = 1 / len(winners) if seat in winners else 0.0 if winners else 0.5
            score[order[seat]] += share
    return score[a], score[b]


def play_field(game, a: str, b: str, seats: int, games: int, seed: int, times: dict, workers: int = 1) -> float:
    """`a`'s share of the wins over `games` games of `seats` seats against seats - 1 copies of `b`."""
    won = 0.0
    jobs = []
    for number in range(games):
        order = [b] * seats
        order[number % seats] = a
        jobs.append((game.name, tuple(order), seed, number))
    for number, winners in enumerate(play_all(jobs, workers, times)):
        share = 1 / len(winners) if number % seats in winners else 0.0
        won += share
        print(f"  game {number + 1}: {a} {share:g}, {won:g} of {number + 1}", file=sys.stderr, flush=True)
    return won


def interval(won: float, games: int) -> tuple[float, float]:
    """The 95% Wilson interval of a win rate."""
    z, p = 1.96, won / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return centre - half, centre + half


def timing(moves: list[float]) -> str:
    moves = sorted(moves)
    median = statistics.median(moves) * 1000 if moves else 0.0
    p90 = moves[int(0.9 * (len(moves) - 1))] * 1000 if moves else 0.0
    late = "  over the 1 s median" if median > MOVE_LIMIT * 1000 else ""
    return f"{median:>10.1f} {p90:>8.1f}{late}"


def field(game, names: list[str], seats: int, games: int, seed: int, workers: int) -> int:
    a, b = names
    times: dict[str, list[float]] = {a: [], b: []}
    started = time.perf_counter()
    won = play_field(game, a, b, seats, games, seed, times, workers)
    low, high = interval(won, games)
    print(f"{game.title}: {a} against {seats - 1} {b}, {games} games, seed {seed}, "
          f"{time.perf_counter() - started:.0f} s")
    print(f"{a} wins {won:g} of {games}: {100 * won / games:.1f}% (95% {100 * low:.0f}-{100 * high:.0f}%; "
          f"an equal share is {100 / seats:.0f}%)")
    print(f"{'bot':<8} {'median ms':>10} {'p90 ms':>8}")
    for name in (a, b):
        print(f"{name:<8} {timing(times[name])}")
    return 0


def elo(names: list[str], scores: dict) -> tuple[list[float], list[float]]:
    """Bradley-Terry ratings by Newton's method, the first name fixed at 0, and their 95% half-widths.

    Each pair also counts one virtual drawn game, so a bot that won every game still gets a finite
    rating (the usual prior; it pulls lopsided ratings a little toward each other).
    """
    n = len(names)
    wins = [[scores.get((names[i], names[j]), 0.0) + (0.5 if i != j else 0.0) for j in range(n)] for i in range(n)]
    played = [[wins[i][j] + wins[j][i] for j in range(n)] for i in range(n)]
    r = [0.0] * n
    for _ in range(100):
        grad = [0.0] * n
        hess = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(n):
                if i == j or not played[i][j]:
                    continue
                p = 1 / (1 + math.exp(r[j] - r[i]))
                grad[i] += wins[i][j] - played[i][j] * p
                w = played[i][j] * p * (1 - p)
                hess[i][i] -= w
                hess[i][j] += w
        # The anchor (index 0) stays at 0: solve for the others.
        sub = [[-hess[i][j] for j in range(1, n)] for i in range(1, n)]
        cov = _inverse(sub)
        step = [sum(cov[i][j] * grad[j + 1] for j in range(n - 1)) for i in range(n - 1)]
        for i in range(n - 1):
            r[i + 1] += step[i]
        if max((abs(s) for s in step), default=0.0) < 1e-9:
            break
    half = [0.0] + [1.96 * math.sqrt(cov[i][i]) * ELO for i in range(n - 1)]
    return [x * ELO for x in r], half


def _inverse(m: list[list[float]]) -> list[list[float]]:
    n = len(m)
    a = [row[:] + [float(i == j) for j in range(n)] for i, row in enumerate(m)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        lead = a[col][col]
        a[col] = [x / lead for x in a[col]]
        for r in range(n):
            if r != col and a[r][col]:
                factor = a[r][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col])]
    return [row[n:] for row in a]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game")
    parser.add_argument("--games", type=int, default=20, help="games per pair of bots (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bots", default=None, help="comma-separated (default: every level and algorithm bot)")
    parser.add_argument("--seats", type=int, default=2, help="K > 2: the first bot against K-1 of the second")
    parser.add_argument("--jobs", type=int, default=1,
                        help="games played at once, one process each (default 1; the results do not change)")
    args = parser.parse_args()
    try:
        game = registry.get(args.game)
    except registry.UnknownGame as error:
        print(f"ladder: {error}", file=sys.stderr)
        return 2
    names = [b.strip() for b in args.bots.split(",") if b.strip()] if args.bots else list(game.bots)
    unknown = [name for name in names if name not in game.bots]
    seats_ok = args.seats == 2 or (args.seats > 2 and len(names) == 2
                                   and game.min_seats <= args.seats <= game.max_seats)
    if unknown or len(names) < 2 or args.games < 1 or args.jobs < 1 or game.min_seats > 2 or not seats_ok:
        problem = (f"unknown bot {unknown[0]!r} for {game.title} (bots: {', '.join(game.bots)})" if unknown
                   else "--games must be at least 1" if args.games < 1
                   else "--jobs must be at least 1" if args.jobs < 1
                   else f"{game.title} is not a two-seat game" if game.min_seats > 2
                   else "name at least two bots" if len(names) < 2
                   else f"--seats {args.seats}: name two bots and {game.min_seats}-{game.max_seats} seats")
        print(f"ladder: {problem}", file=sys.stderr)
        return 2
    if args.seats > 2:
        return field(game, names, args.seats, args.games, args.seed, args.jobs)
    times: dict[str, list[float]] = {name: [] for name in names}
    scores: dict[tuple[str, str], float] = {}
    started = time.perf_counter()
    for a, b in itertools.combinations(names, 2):
        scores[a, b], scores[b, a] = play_pair(game, a, b, args.games, args.seed, times, args.jobs)
        print(f"  {a} vs {b}: {scores[a, b]:g}-{scores[b, a]:g}", file=sys.stderr, flush=True)
    ratings, half = elo(names, scores)
    games_each = args.games * (len(names) - 1)
    print(f"{game.title}: {args.games} games per pair, seed {args.seed}, "
          f"{time.perf_counter() - started:.0f} s")
    print(f"{'bot':<8} {'Elo':>6} {'95%':>6} {'score':>7} {'median ms':>10} {'p90 ms':>8}")
    for i in sorted(range(len(names)), key=lambda i: -ratings[i]):
        name = names[i]
        total = sum(scores[name, other] for other in names if other != name)
        print(f"{name:<8} {ratings[i]:>6.0f} {'±' + format(half[i], '.0f'):>6} {100 * total / games_each:>6.1f}% "
              f"{timing(times[name])}")
    print("score of the row bot against the column bot:")
    print(" " * 8 + "".join(f"{name:>8}" for name in names))
    for a in names:
        cells = "".join(f"{'-':>8}" if a == b else f"{100 * scores[a, b] / args.games:>7.0f}%" for b in names)
        print(f"{a:<8}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
