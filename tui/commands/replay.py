"""`dicetable replay FILE`: watch a game again from its transcript, step by step, checked as it goes.

The app opens straight into the game's own table screen, read-only: ← → step one move or chance
step, Home and End go to the first and the last (tui/screens/replay_screen.py). Every frame goes
through a replica as `dicetable verify` checks it (tui/tables/replay.py): a transcript that does not
check all through replays up to the frame refused, and says why in verify's words. A file that
cannot be replayed (missing, not a transcript, damaged, no game in it) is one line and exit 1.
"""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    parser = sub.add_parser("replay", help="replay a game from its transcript, step by step, checking every step")
    parser.add_argument("file", metavar="FILE", help="a transcript written by a table or by selfplay --record")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dicetable.tui.app import run_table
    from dicetable.tui.tables.replay import Replay, ReplayError

    try:
        replay = Replay.open(args.file)
    except ReplayError as error:
        said = "".join(c if c.isprintable() else "?" for c in str(error))  # a file never drives the terminal
        print(f"dicetable: cannot replay: {said}", file=sys.stderr)
        return 1
    return run_table(replay)
