"""What a networked rematch costs on loopback, beside a move at the same table in the same run.

    .venv/bin/python scripts/bench_rematch.py [--games 12] [--bot random]

A host and a joiner (each its own process, CurveZMQ on 127.0.0.1) play a TRIAD series of `--games`
games with bots, agreeing to every rematch through the log (net/log/rematch.py). The host
times, from its own log:
- move: from one move record to the next (the other seat's bot choosing, signing, the round trip,
  both replicas' checks and the transcript's fsync): the baseline;
- rematch: from the record that ends a game to the record that starts the next (both seats'
  signed consents, each checked against the options the last game's end gives).
It prints the median and 90th percentile of each and the rematch/move ratio of the medians.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def _joiner(invite: str, games: int, bot: str, folder: str) -> None:
    from dicetable.core import registry
    from dicetable.net.identity import Profile
    from dicetable.net.table.joiner import PeerSession
    from dicetable.net.table.session import bot_chooser

    session = PeerSession(Profile.generate("bob"), invite, games=games, transcript=Path(folder) / "bob.dtt",
                          chooser=bot_chooser(registry.get("triad"), bot, 2))
    session.run()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--bot", default="random")
    args = parser.parse_args()
    from dicetable.core import registry
    from dicetable.net.table.events import Recorded
    from dicetable.net.table.host import HostSession
    from dicetable.net.identity import Profile
    from dicetable.net.table.session import bot_chooser

    stamps: list[tuple[float, str, bool, bool]] = []  # (when, kind, it started a game, the game is over)
    with tempfile.TemporaryDirectory() as folder:
        host = HostSession(Profile.generate("ann"), "triad", 2, games=args.games, transcript=Path(folder) / "ann.dtt",
                           chooser=bot_chooser(registry.get("triad"), args.bot, 1))

        def seen(event) -> None:
            if isinstance(event, Recorded):
                replica = host.replica
                started = event.record.index == replica.game_start and replica.phase == "playing"
                stamps.append((time.perf_counter(), event.record.kind, started, replica.result is not None))

        host.on_event = seen
        invite = host.open()
        joiner = mp.get_context("spawn").Process(target=_joiner, args=(invite, args.games, args.bot, folder))
        joiner.start()
        host.run()
        joiner.join(60)
    moves, rematches, ended_at = [], [], None
    last_move = None
    for when, kind, started, over in stamps:
        if started and ended_at is not None:
            rematches.append(when - ended_at)
            ended_at, last_move = None, None
            continue
        if kind == "move":
            if last_move is not None and not over:
                moves.append(when - last_move)
            last_move = when
        if over and ended_at is None and kind != "rematch":
            ended_at, last_move = when, None
    if not rematches or not moves:
        print("no rematch measured (did the series finish?)")
        return 1
    move, rematch = statistics.median(moves), statistics.median(rematches)
    print(f"games {args.games}, bot {args.bot}: {len(moves)} moves, {len(rematches)} rematches")
    print(f"move     median {move * 1000:7.2f} ms   p90 {percentile(moves, 90) * 1000:7.2f} ms")
    print(f"rematch  median {rematch * 1000:7.2f} ms   p90 {percentile(rematches, 90) * 1000:7.2f} ms")
    print(f"rematch/move ratio of medians: {rematch / move:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
