#!/usr/bin/env python3
"""Engine speed: random-vs-random games per second, and the bots' time per move.

Prints medians over several runs, and each bot's time per move as a ratio to the random bot's in
the same run (the baseline). Usage: .venv/bin/python scripts/bench_engine.py [--game trice]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE
from dicetable.core.match import play_out


def games_per_second(game, seats: int, games: int, seed: int) -> float:
    start = time.perf_counter()
    for n in range(games):
        bots = [game.bots["random"](game, random.Random(seed + n * 10 + s)) for s in range(seats)]
        play_out(game.start(seats), bots, LocalSource(random.Random(seed + n)))
    return games / (time.perf_counter() - start)


def move_times(game, seats: int, bot_name: str, positions: int, seed: int) -> list[float]:
    """Time of `bot_name` to choose a move, over positions met in random games."""
    rng = random.Random(seed)
    source = LocalSource(rng)
    bot = game.bots[bot_name](game, random.Random(seed))
    times = []
    while len(times) < positions:
        state = game.start(seats)
        while state.actor is not None and len(times) < positions:
            if state.actor == CHANCE:
                state = state.resolve(source.outcome(state.chance()))
                continue
            view = state.view(state.actor)
            start = time.perf_counter()
            bot.choose(view)
            times.append(time.perf_counter() - start)
            state = state.apply(rng.choice(state.legal_moves()))
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", default="trice")
    parser.add_argument("--seats", type=int, default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--positions", type=int, default=40)
    args = parser.parse_args()
    game = registry.get(args.game)
    seats = args.seats or game.min_seats
    rates = [games_per_second(game, seats, 100, 1000 * r) for r in range(args.runs)]
    print(f"{game.name}: random vs random, median of {args.runs} runs of 100 games: "
          f"{statistics.median(rates):.1f} games/s (min {min(rates):.1f}, max {max(rates):.1f})")
    base = statistics.median(move_times(game, seats, "random", args.positions, 7))
    print(f"  random bot: median {base * 1e6:.1f} us per move (baseline)")
    for name in ("greedy", "search"):
        times = move_times(game, seats, name, args.positions, 7)
        median, mean = statistics.median(times), statistics.fmean(times)
        print(f"  {name} bot: median {median * 1e3:.2f} ms, mean {mean * 1e3:.2f} ms per move "
              f"over {len(times)} positions ({median / base:.0f}x random)")


if __name__ == "__main__":
    main()
