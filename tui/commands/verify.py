"""`dicetable verify FILE [FILE...]`: re-check a game from its transcript (net/log/verify.py).

Exit 0 and `valid: <game>, <n> moves, result: <...>` (a dice room: its rolls and who made them), the
seats called by the names they joined with; exit 1 and the first fault, naming the seat at
fault; exit 2 for a file that is not a transcript. Several files are copies of one table (one per
seat): each is checked, then `copies agree`, or `copies fork: ...` naming the seat that signed both
branches (exit 1).
"""

from __future__ import annotations

from dicetable.net.log.transcript import DamagedTranscript, read
from dicetable.net.log.verify import NotATranscript, compare, verify
from dicetable.tui.commands.args import CommandError


def add_parser(sub) -> None:
    parser = sub.add_parser("verify", help="re-check a game transcript: signatures, rolls, moves, result")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="a transcript written by a table or by selfplay --record; several: one table's copies")
    parser.add_argument("--log", action="store_true", help="also print the log as the game went: every move, roll and "
                                                       "its dice, in people's names")
    parser.add_argument("--roll", metavar="LINE", help="check a roll someone shared (the dice room's F5 line) against "
                                                       "the transcript: confirmed, or what the transcript says instead")
    parser.set_defaults(func=run)


def _say(text: str) -> None:
    print("".join(c if c.isprintable() else "?" for c in text))  # a transcript never drives the terminal


def run(args) -> int:
    if args.roll is not None:
        if len(args.files) != 1:
            raise CommandError("--roll checks a line against one transcript")
        return _check_roll(args.files[0], args.roll)
    if len(args.files) == 1:
        return _check(args.files[0], args.log)
    worst = max(_check(path, args.log, named=True) for path in args.files)
    try:
        agreement = compare([read(path) for path in args.files])
    except DamagedTranscript as error:
        raise CommandError(f"cannot compare the copies: {error}") from None
    except ValueError as error:
        raise CommandError(str(error)) from None
    _say(agreement.line())
    return max(worst, 0 if agreement.fork is None else 1)


def _check(path: str, log: bool, named: bool = False) -> int:
    try:
        verdict = verify(path)
    except NotATranscript as error:
        raise CommandError(str(error)) from None
    if log and verdict.replica is not None:  # the log as the game went, in people's names
        game = verdict.replica.game
        for record in verdict.replica.log:
            _say(f"{record.index + 1:>5}  {verdict.named(record.note)}")
            if record.event is not None:
                event = record.event
                said = verdict.named(game.describe_outcome(None, event.chance, event.outcome))
                _say(f"       {verdict.named(event.label)}: {said} (event {event.number}, seed {event.seed.hex()[:16]}…)")
    _say(f"{path}: {verdict.line()}" if named else verdict.line())
    return 0 if verdict.valid else 1


def _check_roll(path: str, line: str) -> int:
    """A shared roll line against a transcript (net/log/roll_line.py): the transcript must check out
    (a room still open ends unfinished, which is fine), then its line for that event must be `line`."""
    from dicetable.net.log.roll_line import RollLineError, check

    try:
        verdict = verify(path)
    except NotATranscript as error:
        raise CommandError(str(error)) from None
    if not verdict.valid and verdict.fault_kind != "unfinished":
        _say(verdict.line())
        return 1
    try:
        said = check(line, verdict.replica)
    except RollLineError as error:
        raise CommandError(str(error)) from None
    if said == " ".join(line.split()):
        _say(f"roll confirmed: {said}")
        return 0
    _say(f"roll not confirmed: the transcript says {said}")
    return 1
