"""`dicetable host GAME --port P [--bind ADDR] [--seats N] --bot NAME [--transcript FILE]`.

Opens a table (net/table/host.py), prints `invite: <code>` for the joiners, plays its seat with the bot,
and at the end prints `transcript: <path>` and `result: <...>`. Other happenings (joins, refusals,
drops, claims) are printed as `<what>: <text>` lines. Errors a person can meet: one line, exit 2.
"""

from __future__ import annotations

import signal
import sys

from dicetable.core import registry
from dicetable.net.table.deadlines import Timing
from dicetable.net.identity import ProfileError, load_or_create
from dicetable.net.table.events import (
    AnswerPath,
    ClaimDisputed,
    Chat,
    Claimable,
    CodeGone,
    CodeOffered,
    CodesStopped,
    Cut,
    Defaulted,
    Dropped,
    Ended,
    Fault,
    Invited,
    Joined,
    Lingering,
    NetEvent,
    Ordering,
    Refused,
    RematchAnswered,
    RematchGone,
    Returned,
    StallCleared,
    Stalled,
    SeatHeld,
    SeatReleased,
    SecretShown,
    Started,
    TranscriptOpened,
    Unwitnessed,
    Watching,
)
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.reach.local_networks import DiscoveryError
from dicetable.net.reach.transport import DEFAULT_BIND
from dicetable.tui.commands.args import CommandError, parse_options
from dicetable.tui.tables.opening import Where, hosted, opened


def add_timing_flags(parser) -> None:
    parser.add_argument("--grace", type=float, default=Timing.grace, metavar="S",
                        help=f"seconds a dropped seat may stay away before it is in default (default {Timing.grace:g})")
    parser.add_argument("--turn-deadline", type=float, default=Timing.turn_deadline, metavar="S",
                        help="seconds a seat has for a move (default 0: no limit)")
    parser.add_argument("--reveal-deadline", type=float, default=Timing.reveal_deadline, metavar="S",
                        help=f"seconds a seat has to reveal for a roll (default {Timing.reveal_deadline:g})")
    parser.add_argument("--answer-deadline", type=float, default=Timing.answer_deadline, metavar="S",
                        help=f"seconds a seat has for an answer with a default, e.g. Dice Breaker's Latent Dice claim: "
                             f"late, it declines (default {Timing.answer_deadline:g}; 0: no limit)")
    parser.add_argument("--heartbeat", type=float, default=Timing.heartbeat, metavar="S", help=argparse_hide())
    parser.add_argument("--think", type=float, default=0.0, metavar="S", help="seconds the bot waits before each move (default 0)")


def add_games_flag(parser) -> None:
    parser.add_argument("--games", type=int, default=1, metavar="N",
                        help="games to play at the table: the bot agrees to a rematch until N are played, then "
                             "declines (default 1)")


def games_from(args) -> int:
    games = getattr(args, "games", 1)  # commands without --games (roll) play one game
    if not 1 <= games <= 1000:
        raise CommandError(f"--games {games} is not between 1 and 1000")
    return games


def argparse_hide() -> str:
    import argparse

    return argparse.SUPPRESS


def timing_from(args, connect_timeout: float = Timing.connect_timeout) -> Timing:
    for name in ("grace", "turn_deadline", "reveal_deadline", "answer_deadline", "heartbeat"):
        if getattr(args, name) < 0:
            raise CommandError(f"--{name.replace('_', '-')} cannot be negative")
    if args.heartbeat <= 0:
        raise CommandError("--heartbeat must be above 0")
    return Timing(
        heartbeat=args.heartbeat, drop_after=max(4 * args.heartbeat, 1.0), grace=args.grace,
        turn_deadline=args.turn_deadline, reveal_deadline=args.reveal_deadline, connect_timeout=connect_timeout,
        answer_deadline=args.answer_deadline,
    )


def profile_for(name: str | None):
    try:
        return load_or_create(name)
    except ProfileError as error:
        raise CommandError(str(error)) from None


def check_transcript_flag(path: str | None) -> None:
    from pathlib import Path

    if path is not None and Path(path).exists():
        raise CommandError(f"{path} already exists: a transcript is never overwritten (choose another --transcript)")


def print_event(event: NetEvent) -> None:
    line = event_line(event)
    if line is not None:
        print(line, flush=True)


def event_line(event: NetEvent) -> str | None:
    """The line a person follows the table by; None for the log's entries, turns and the result
    (printed at the end) and for an error (raised, printed once)."""
    match event:
        case Invited(invite):
            return f"invite: {invite}"
        case TranscriptOpened(path):
            return f"transcript: {path}"
        case Joined(seat, name):
            return f"joined: seat {seat} {name}"
        case Started():
            return "started"
        case Chat(seat, text):
            return told("chat", text, seat)
        case Dropped(seat, said):
            return told("dropped", said, seat)
        case Returned(seat, said):
            return told("returned", said, seat)
        case Stalled(said=said):  # heard but stuck, with what to do (net/table/stalls.py)
            return told("stalled", said)
        case StallCleared(said=said):
            return told("unstalled", said)
        case CodesStopped(said):  # no short code now, why, and what to do (PROTOCOL.md §13.4)
            return told("no code", said)
        case Claimable(seat, why):
            return told("claimable", why, seat)
        case Unwitnessed(said=said):  # a claim no neutral seat can witness (FAIRNESS.md §5b)
            return told("unwitnessed", said)
        case CodeOffered(code):
            return told("code", code)
        case CodeGone(how, said):
            return told(how, said)
        case RematchAnswered(said=said) | RematchGone(said=said):
            return told("rematch", said)
        case Defaulted(said=said):
            return told("defaulted", said)
        case Refused(said=said):
            return told("refused", said)
        case Fault(said=said):
            return told("fault", said)
        case ClaimDisputed(said=said):
            return told("disputed", said)
        case Lingering(said):
            return told("lingering", said)
        case Ordering(said=said):
            return told("ordering", said)
        case AnswerPath(said=said):  # my answers reach a seat only through the host (PROTOCOL.md §10.10)
            return told("answers", said)
        case Cut(said=said):
            return told("cut", said)
        case SeatHeld(said=said):
            return told("waiting", said)
        case SeatReleased(said=said):
            return told("released", said)
        case Watching(count, names):
            return told("watching", f"{count} watcher{'s' if count != 1 else ''}" + (f": {', '.join(names)}" if names else ""))
        case SecretShown(said=said):  # a secret roll shown to this seat, the game master (PROTOCOL.md §16.6)
            return told("shown", said)
    return None


def told(what: str, said: str, seat: int | None = None) -> str:
    who = f"seat {seat}: " if seat is not None else ""
    return f"{what}: {who}{said}".rstrip(": ")


def play(session, printer=print_event, out=None) -> int:
    """Run a session to its end, printing its events; SIGTERM leaves the table cleanly, and so does
    SIGINT (the session closes as the CLI's KeyboardInterrupt passes). A series (`--games N`) prints
    each game's result as `game K: ...` when it ends. `out`: where the closing lines go (stdout)."""

    def each_game(event: NetEvent) -> None:
        if isinstance(event, Ended) and session.games != 1:
            print(f"game {session.replica.game_number}: {event.said}", flush=True)
        printer(event)

    session.on_event = each_game

    def leave(signum, frame):
        session.stopped = True

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        result = session.run()
    except SessionError as error:
        raise CommandError(str(error)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    if result is None:
        print("left the table before the end", file=sys.stderr)
        return 1
    if not session.announced_transcript:
        print(f"transcript: {session.transcript_path}", flush=True, file=out)
    print(f"result: {session.describe_result()}", flush=True, file=out)
    return 0


def add_parser(sub) -> None:
    parser = sub.add_parser("host", help="open a networked table, print its invite and play a seat with a bot")
    parser.add_argument("game", nargs="?", help=f"the game ({', '.join(registry.names())})")
    parser.add_argument("--port", type=int, default=None,
                        help="TCP port to listen on (0: any free port; with --resume: the table's port by default)")
    parser.add_argument("--bind", default=DEFAULT_BIND,
                        help=f"address to listen on (default {DEFAULT_BIND}: this machine only, the safe default; "
                             "a LAN or public address opens the table to that network)")
    parser.add_argument("--advertise", default=None, metavar="ADDR",
                        help="address joiners dial, put in the invite (default: the --bind address)")
    add_relay_flags(parser)
    parser.add_argument("--seats", type=int, default=None, help="number of seats (default: the game's minimum)")
    parser.add_argument("--bot", required=True, help="the bot that plays the host's seat (random, greedy, search)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's own choices")
    parser.add_argument("--option", action="append", metavar="NAME=VALUE", help="a game option")
    parser.add_argument("--transcript", default=None, metavar="FILE", help="where to write the transcript (default: the data directory)")
    parser.add_argument("--resume", default=None, metavar="TRANSCRIPT", help="reopen a table after a crash from its transcript")
    parser.add_argument("--name", default=None, help="player name (saved in the profile)")
    add_timing_flags(parser)
    add_games_flag(parser)
    from dicetable.tui.commands.lan import add_host_flags

    add_host_flags(parser)  # --lan, --interface (LAN discovery)
    parser.set_defaults(func=run)


def add_relay_flags(parser) -> None:
    parser.add_argument("--relay", default=None, metavar="RELAY",
                        help="host through this relay (HOST:PORT, its key learned on first contact and pinned, or the "
                             "line `dicetable relay` prints): no open port needed; prints a short code for the joiners")
    parser.add_argument("--second-relay", default=None, metavar="RELAY",
                        help="with --relay: another relay the table moves to if the first dies (named in the invite)")
    parser.add_argument("--code", choices=("table", "seat"), default="table",
                        help="with --relay: one code for the whole table (default), or a new code for each seat")
    parser.add_argument("--code-minutes", type=float, default=30.0, metavar="M",
                        help="with --relay: minutes a code stays valid (default 30)")


def relay_line(typed: str | None, flag: str = "relay", kept: bool = True) -> str | None:
    """The whole line of the relay `--relay` names: its line, or its HOST:PORT (tui/tables/relay_setting.py);
    remembered as the last relay used (`kept`)."""
    from dicetable.net.reach.relay_address import BadRelay
    from dicetable.tui.tables.relay_setting import remember, resolve

    if typed is None:
        return None
    try:
        line = resolve(None, typed).encode()
    except BadRelay as error:
        raise CommandError(f"bad {flag.replace('-', ' ')}: {error}") from None
    if kept:
        remember(None, line)
    return line


def where_from(args) -> Where:
    """Where `host` and `roll --host` open their table, from their flags (`--lan` and `--interface`:
    host's); a flag that cannot be is one line, exit 2. A LAN announcement asked for is checked now,
    so that a table that cannot be announced is not opened."""
    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port {args.port} is not between 0 and 65535")
    if not 0 < args.code_minutes <= 24 * 60:
        raise CommandError("--code-minutes is between 0 and 1440")
    announced, interfaces = getattr(args, "lan", False), tuple(getattr(args, "interface", None) or ())
    if interfaces and not announced:
        raise CommandError("--interface needs --lan")
    second = getattr(args, "second_relay", None)
    if second is not None and args.relay is None:
        raise CommandError("--second-relay needs --relay: the table's first relay")
    where = Where(bind=args.bind, port=args.port, advertise=args.advertise, relay=relay_line(args.relay),
                  second_relay=relay_line(second, "second-relay", kept=False),
                  code_uses="one" if args.code == "seat" else "table", code_minutes=args.code_minutes,
                  lan=announced, interfaces=interfaces)
    try:
        where.announced_at()
        return where.dialled()  # with --lan bound to every address: the invite's address
    except DiscoveryError as error:
        raise CommandError(str(error)) from None


def run(args) -> int:
    if args.relay is not None:
        args.port = args.port or 0
    if args.port is None and args.resume is None:
        raise CommandError("give --port P (0: any free port), or --relay RELAY")
    args.port = args.port or 0
    where = where_from(args)
    if args.resume is None and not args.game:
        raise CommandError("name the game to host (or --resume TRANSCRIPT)")
    check_transcript_flag(args.transcript)
    profile = profile_for(args.name)

    def taken_over(peer, why: str) -> None:  # a seat orders the table at the relay now: this one rejoins as a seat
        print(f"{why}; rejoining the table as seat 0", flush=True)

    try:
        if args.resume:
            host = hosted(profile, where=where, resume=args.resume, timing=timing_from(args), think=args.think,
                          games=games_from(args))
        else:
            host = hosted(profile, args.game, args.seats, parse_options(args.option), where, timing=timing_from(args),
                          transcript=args.transcript, think=args.think, games=games_from(args))
        host.chooser = bot_chooser(registry.get(host.game_name), args.bot, args.seed)
        host.on_event = print_event
        session = opened(host, taken_over, timing=timing_from(args), think=args.think, chooser=host.chooser,
                         on_event=print_event)
    except SessionError as error:
        raise CommandError(str(error)) from None
    from dicetable.tui.commands.lan import advertise_table

    with advertise_table(session, where):  # with --lan: announced while seats are free
        return play(session)
