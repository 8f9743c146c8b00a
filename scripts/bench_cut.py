#!/usr/bin/env python3
"""What a rejoining host seat's cut of its unrelayed tail costs (net/log/transcript.py `cut`, net/table/following.py).

One real four-seat Tricolor Line game is played by the fair protocol (net/table/local_seats.py) into a
transcript. Printed, as medians of several runs: the cut of its last 3 frames (the file rewritten to
a temporary file, fsync'ed and renamed) with the replica replayed from what is left, as the peer does;
against a baseline in the same run that only resumes the copy (reopen and replay, what every resume
costs), and the ratio.

Usage: .venv/bin/python scripts/bench_cut.py [--runs 9]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path

from dicetable.core import registry
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.table.local_seats import play_table
from dicetable.net.log.replica import Replica
from dicetable.net.log.transcript import TranscriptWriter

from bench_history import median_seconds  # scripts/ is on the path of a script run from it

TAIL = 3  # frames of a batch written and never relayed


def replayed(frames: list[bytes], table: bytes) -> Replica:
    replica = Replica(table, deal_handler=TableDeals())  # as `dicetable verify` replays a copy
    for frame in frames:
        replica.accept(frame)
    return replica


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-cut-"))
    try:
        tricolor = registry.get("tricolor")
        bots = [tricolor.bots["greedy"](tricolor, random.Random(n)) for n in range(4)]
        played = scratch / "played.dtt"
        play_table(tricolor, {}, bots, ["a", "b", "c", "d"], random.Random(1), transcript=played)
        copy = scratch / "copy.dtt"

        def resume() -> tuple[TranscriptWriter, list[bytes], bytes]:
            shutil.copy(played, copy)
            writer, transcript = TranscriptWriter.reopen(copy)
            table = transcript.header["table"]
            replayed(transcript.frames, table)
            return writer, transcript.frames, table

        def resume_only() -> None:
            resume()[0].close()

        def resume_and_cut() -> None:
            writer, frames, table = resume()
            writer.cut(len(frames) - TAIL, "cut on rejoining")
            replayed(frames[:-TAIL], table)
            writer.close()

        frames = len(resume()[1])
        base = median_seconds(resume_only, args.runs)
        cut = median_seconds(resume_and_cut, args.runs)
        print(f"transcript: {frames} frames, {played.stat().st_size} bytes; cut of the last {TAIL}")
        print(f"resume (reopen, replay):                        median {base * 1000:.1f} ms")
        print(f"resume, cut (rewrite, fsync, rename), replay again: median {cut * 1000:.1f} ms")
        print(f"ratio: {cut / base:.2f}x")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
