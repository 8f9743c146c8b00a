#!/usr/bin/env python3
"""How long the game lists (history, resume) take to read a data directory full of games.

One real four-seat Tricolor Line game is played by the fair protocol (net/table/local_seats.py) and its
transcript copied N times into a scratch data directory, with N local games in history.jsonl beside
it. Printed, as medians of several runs: `past_games` (tui/tables/history.py: every transcript parsed and
its frames decoded, every history line checked), against a baseline in the same run that only reads
the same files' bytes, and the ratio. The lists run this in a thread, so the screen never waits.

Usage: .venv/bin/python scripts/bench_history.py [--games 100] [--runs 5]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path


from dicetable.core import registry
from dicetable.net.table.local_seats import play_table
from dicetable.tui.tables.controller import Player
from dicetable.tui.tables.history import FILE, past_games
from dicetable.tui.tables.local_save import kept_table


def median_seconds(work, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="network games and local games each")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-history-"))
    try:
        transcripts = home / "transcripts"
        transcripts.mkdir()
        tricolor = registry.get("tricolor")
        bots = [tricolor.bots["greedy"](tricolor, random.Random(n)) for n in range(4)]
        first = transcripts / "game-0000.dtt"
        play_table(tricolor, {}, bots, ["a", "b", "c", "d"], random.Random(1), transcript=first)
        for n in range(1, args.games):
            shutil.copy(first, transcripts / f"game-{n:04}.dtt")
        trice = registry.get("trice")
        table = kept_table(trice, [Player("Ann", "greedy"), Player("Bob", "greedy")], history=home / FILE, seed=1)
        table.attach(None)
        for _ in range(args.games - 1):
            table.rematch()
        files = sorted(transcripts.glob("*.dtt")) + [home / FILE]
        size = sum(f.stat().st_size for f in files)
        listed, unreadable = past_games(home)
        assert len(listed) == 2 * args.games and not unreadable, (len(listed), unreadable)

        bytes_only = median_seconds(lambda: [f.read_bytes() for f in files], args.runs)
        full = median_seconds(lambda: past_games(home), args.runs)
        print(f"{args.games} Tricolor transcripts ({first.stat().st_size // 1024} KiB each) and {args.games} "
              f"local games, {size / 2**20:.1f} MiB in all; median of {args.runs} runs")
        print(f"  read the bytes only (baseline)  {bytes_only * 1000:8.1f} ms")
        print(f"  past_games (list them)          {full * 1000:8.1f} ms   {full / bytes_only:6.1f}x the baseline"
              f"   {full / (2 * args.games) * 1e6:7.0f} us per game")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
