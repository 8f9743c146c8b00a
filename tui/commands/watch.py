"""`dicetable watch INVITE|CODE [--transcript FILE]`: follow a networked table without a seat.

The watcher reaches the table by its invite, its short code (at the relay used last, or --relay) or
LAN discovery (--lan), proves this profile's key with a watch hello, and checks every entry of the
log as a seat does (net/table/watcher.py): it prints who joins, each move as the log says it, and the
result; its transcript verifies with `dicetable verify`, and beside a seat's as a copy. It sees what
the log shows and no more (hidden cards stay hidden until the log opens them). A wrong invite, an
unreachable table, a table with no room for watchers: one line, exit 2.
"""

from __future__ import annotations

import signal
import sys

from dicetable.tui.commands.args import CommandError


def add_parser(sub) -> None:
    parser = sub.add_parser("watch", help="watch a networked table without a seat, checking every move")
    parser.add_argument("invite", nargs="?", help="the host's invite (dt1-... or dr1-...), or its short code")
    parser.add_argument("--relay", default=None, metavar="RELAY",
                        help="the relay the host's short code is at (default: the relay used last)")
    parser.add_argument("--transcript", default=None, metavar="FILE", help="where to write the transcript (default: the data directory)")
    parser.add_argument("--name", default=None, help="the name the seats see (saved in the profile)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="S", help="seconds to wait for the host (default 5)")
    parser.add_argument("--quiet", action="store_true", help="print no moves, only who joins and the result")
    from dicetable.tui.commands.lan import add_join_flags

    add_join_flags(parser)  # --lan, --table, --game, --fingerprint, --interface
    parser.set_defaults(func=run)


def watch_session(args):
    from dicetable.net.table.deadlines import Timing
    from dicetable.net.table.session import SessionError
    from dicetable.net.table.watcher import WatchSession
    from dicetable.tui.commands.host import check_transcript_flag, profile_for
    from dicetable.tui.commands.join import invite_from_code
    from dicetable.tui.commands.lan import confirm_host, lan_invite
    from dicetable.tui.tables.opening import is_invite

    if args.timeout <= 0:
        raise CommandError("--timeout must be above 0")
    args.invite = lan_invite(args)
    if args.invite is None:
        raise CommandError("give the host's invite or short code (or --lan)")
    if not is_invite(args.invite):
        args.invite = invite_from_code(args.invite, args.relay, max(args.timeout, 30.0))
    check_transcript_flag(args.transcript)
    profile = profile_for(args.name)
    try:
        session = WatchSession(profile, args.invite, transcript=args.transcript, timing=Timing(connect_timeout=args.timeout))
        session.connect()
        confirm_host(session, args)
    except SessionError as error:
        raise CommandError(str(error)) from None
    return session


def watch_line(event, session, quiet: bool) -> str | None:
    """The line a person follows the table by (the seats' own words: tui/commands/host.py), and each move."""
    from dicetable.net.table.events import Recorded, TranscriptOpened
    from dicetable.tui.commands.host import event_line, told

    if isinstance(event, Recorded):
        record = event.record
        if quiet or record.kind not in ("move", "resign", "claim", "unseal") or record.note is None:
            return None
        return told("move", record.note.words([s.name if s else f"seat {i}" for i, s in enumerate(session.replica.seats)]),
                    record.seat)
    if isinstance(event, TranscriptOpened):
        return None  # said once, at the end
    return event_line(event)


def run(args) -> int:
    from dicetable.net.table.session import SessionError

    session = watch_session(args)
    caught = len(session.replica.log)
    print(f"watching: {session.replica.game.title}, {caught} entries caught up", flush=True)

    def printer(event) -> None:
        line = watch_line(event, session, args.quiet)
        if line is not None:
            print(line, flush=True)

    session.on_event = printer
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: session.stop())
    try:
        result = session.run()
    except SessionError as error:
        raise CommandError(str(error)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    if result is None:
        print("stopped watching before the end", file=sys.stderr)
        return 1
    print(f"transcript: {session.path}", flush=True)
    names = [f"{s.name} (seat {i})" for i, s in enumerate(session.replica.seats)]
    print(f"result: {result.describe(names)}", flush=True)
    return 0
