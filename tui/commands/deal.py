"""`dicetable deal --host --seats N --port P [--bind ADDR]` / `dicetable deal --join INVITE`.

The dealer-less deal on its own, no game needed (net/table/deal_table.py): Tricolor Line's 9 ID cards
are dealt one to each of N seats over the network. Each peer prints only its own card (`your card:
<colour>`); then every seat opens its keys, every peer replays and checks the whole deal, and prints
`verified` and `assignment: seat 0 <colour>, seat 1 ...`. A fault ends the command with exit 1 and
`fault: seat <n> ...`.
"""

from __future__ import annotations

import signal
import sys

from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import CardDealt, DealVerified, Dropped, Failed, Fault, Invited, NetEvent, Refused, Returned
from dicetable.net.table.session import SessionError
from dicetable.net.reach.transport import DEFAULT_BIND
from dicetable.tui.commands.args import CommandError
from dicetable.tui.commands.host import check_transcript_flag, profile_for
from dicetable.tui.tables.opening import Where, deal_hosted, deal_joined

def print_event(event: NetEvent) -> None:
    match event:
        case Invited(invite):
            print(f"invite: {invite}", flush=True)
        case CardDealt(colour):
            print(f"your card: {colour}", flush=True)
        case DealVerified(assignment):
            print("verified", flush=True)
            print(f"assignment: {assignment}", flush=True)
        case Fault(said=said):
            print(f"fault: {said}", flush=True)
        case Refused(said=said):
            print(f"refused: {said}", flush=True)
        case Failed(said):
            print(f"error: {said}", flush=True)
        case Dropped(said=said):
            print(f"dropped: {said}", flush=True)
        case Returned(said=said):
            print(f"returned: {said}", flush=True)


def add_parser(sub) -> None:
    parser = sub.add_parser("deal", help="deal the 9 Tricolor Line ID cards to N networked seats, dealer-less, and check it")
    side = parser.add_mutually_exclusive_group(required=True)
    side.add_argument("--host", action="store_true", help="open the table and print its invite")
    side.add_argument("--join", metavar="INVITE", help="take a seat from the host's invite (dt1-...)")
    parser.add_argument("--seats", type=int, default=2, help="number of seats, 2 to 8 (host; default 2)")
    parser.add_argument("--port", type=int, default=None, help="TCP port to listen on (host; 0: any free port)")
    parser.add_argument("--bind", default=DEFAULT_BIND, help=f"address to listen on (host; default {DEFAULT_BIND})")
    parser.add_argument("--advertise", default=None, metavar="ADDR", help="address joiners dial (host; default --bind)")
    parser.add_argument("--transcript", default=None, metavar="FILE", help="where to write the transcript")
    parser.add_argument("--name", default=None, help="player name (saved in the profile)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="S", help="seconds to wait for the host (join)")
    parser.set_defaults(func=run)


def run(args) -> int:
    check_transcript_flag(args.transcript)
    if args.host:
        if args.port is None or not 0 <= args.port <= 65535:
            raise CommandError("--host needs --port P with P between 0 and 65535")
        if not 2 <= args.seats <= 8:
            raise CommandError(f"--seats {args.seats}: the ID deal needs 2 to 8 seats")
    elif args.timeout <= 0:
        raise CommandError("--timeout must be above 0")
    profile = profile_for(args.name)
    try:
        if args.host:
            session = deal_hosted(profile, args.seats, Where(bind=args.bind, port=args.port, advertise=args.advertise),
                                  transcript=args.transcript, on_event=print_event)
            session.open()
        else:
            session = deal_joined(profile, args.join, transcript=args.transcript, on_event=print_event,
                                  timing=Timing(connect_timeout=args.timeout))
            session.connect()
    except SessionError as error:
        raise CommandError(str(error)) from None
    return finish(session)


def finish(session) -> int:
    """Run the session to its end (SIGTERM leaves cleanly; SIGINT too, as the CLI's KeyboardInterrupt
    passes); exit 0 only for a verified deal."""

    def leave(signum, frame):
        session.stopped = True

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        session.run()
    except SessionError as error:
        raise CommandError(str(error)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    if session.transcript_path is not None:
        print(f"transcript: {session.transcript_path}", flush=True)
    dealt = session.own  # the DealingSeat (net/table/deal_table.py)
    if dealt.failure is not None:
        return 1
    if dealt.dealer is None or dealt.dealer.result is None:
        print("left the table before the deal was verified", file=sys.stderr)
        return 1
    return 0
