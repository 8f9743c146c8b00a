"""`dicetable verify FILE`: re-check a game from its transcript (net/verify.py).

Exit 0 and `valid: <game>, <n> moves, result: <...>`; exit 1 and the first fault, naming the seat at
fault; exit 2 for a file that is not a transcript.
"""

from __future__ import annotations

from dicetable.net.verify import NotATranscript, verify
from dicetable.tui.cli import CommandError


def add_parser(sub) -> None:
    parser = sub.add_parser("verify", help="re-check a game transcript: signatures, rolls, moves, result")
    parser.add_argument("file", help="a transcript written by a table or by selfplay --record")
    parser.add_argument("--log", action="store_true", help="also print every record of the log")
    parser.set_defaults(func=run)


def _say(text: str) -> None:
    print("".join(c if c.isprintable() else "?" for c in text))  # a transcript never drives the terminal


def run(args) -> int:
    try:
        verdict = verify(args.file)
    except NotATranscript as error:
        raise CommandError(str(error)) from None
    if args.log and verdict.replica is not None:
        for record in verdict.replica.log:
            _say(f"{record.index + 1:>5}  {record.note}")
            if record.event is not None:
                event = record.event
                _say(f"       event {event.number}: seed {event.seed.hex()[:16]}…, outcome {event.outcome.to_data()}")
    _say(verdict.line())
    return 0 if verdict.valid else 1
