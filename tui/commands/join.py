"""`dicetable join INVITE --bot NAME [--transcript FILE]`: take a seat at a networked table.

Connects to the host named in the invite (authenticating it by the invite's key), plays the seat
with the bot and prints `transcript: <path>` and `result: <...>` at the end. `--resume TRANSCRIPT`
rejoins after a crash (the invite is then read from the seat file beside the transcript). A wrong
invite, an unreachable host or a full table: one line, exit 2.
"""

from __future__ import annotations

import sys

from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.tui.commands.args import CommandError
from dicetable.tui.commands.host import (
    add_games_flag, add_timing_flags, check_transcript_flag, games_from, play, print_event, profile_for, timing_from,
)
from dicetable.tui.tables.opening import code_invite, is_invite, joined


def add_parser(sub) -> None:
    parser = sub.add_parser("join", help="join a networked table from its invite and play a seat with a bot")
    parser.add_argument("invite", nargs="?", help="the host's invite (dt1-... or dr1-...), or its short code (at the relay used last, or --relay)")
    parser.add_argument("--relay", default=None, metavar="RELAY",
                        help="the relay the host's short code is at: HOST:PORT (its key is learned on first contact "
                             "and pinned) or the line HOST:PORT/KEY `dicetable relay` prints; default: the relay used last")
    parser.add_argument("--bot", required=True, help="the bot that plays this seat (random, greedy, search)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's own choices")
    parser.add_argument("--transcript", default=None, metavar="FILE", help="where to write the transcript (default: the data directory)")
    parser.add_argument("--resume", default=None, metavar="TRANSCRIPT", help="rejoin after a crash from this seat's transcript")
    parser.add_argument("--name", default=None, help="player name (saved in the profile)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="S", help="seconds to wait for the host (default 5)")
    add_timing_flags(parser)
    add_games_flag(parser)
    from dicetable.tui.commands.lan import add_join_flags

    add_join_flags(parser)  # --lan, --table, --game, --fingerprint, --interface
    parser.set_defaults(func=run)


def join_session(args) -> PeerSession:
    from dicetable.tui.commands.lan import confirm_host, lan_invite

    args.invite = lan_invite(args)  # with --lan: found by discovery
    if args.invite is None and args.resume is None and sys.stdin.isatty():
        args.invite = ask_for_code()
    if args.invite is None and args.resume is None:
        raise CommandError("give the host's invite (or --resume TRANSCRIPT)")
    if args.timeout <= 0:
        raise CommandError("--timeout must be above 0")
    if args.invite is not None and not is_invite(args.invite):
        args.invite = invite_from_code(args.invite, args.relay, max(args.timeout, 30.0))
    check_transcript_flag(args.transcript)
    profile = profile_for(args.name)
    try:
        session = joined(profile, args.invite, resume=args.resume, transcript=args.transcript,
                         timing=timing_from(args, connect_timeout=args.timeout), think=args.think,
                         games=games_from(args))
        session.on_event = print_event
        session.connect()
        confirm_host(session, args)  # with --lan: the announced key opened this table
    except SessionError as error:
        raise CommandError(str(error)) from None
    return session


def ask_for_code() -> str | None:
    """The code (or invite) typed at a prompt, Tab completing the code's words as magic-wormhole's
    prompt does (net/reach/codes.py `complete`); None when nothing was typed."""
    import readline

    from dicetable.net.reach.codes import complete

    readline.set_completer(lambda text, n: (complete(readline.get_line_buffer())[n:] or [None])[0])
    readline.set_completer_delims("")  # the whole line is the code being completed
    readline.parse_and_bind("tab: complete")
    try:
        typed = input("code (Tab completes a word): ").strip()
    except EOFError:
        return None
    return typed or None


def invite_from_code(code: str, relay: str | None, timeout: float) -> str:
    """The invite a short code stands for (tui/tables/opening.py `code_invite`), what is wrong said
    with the flags' names."""
    from dicetable.net.reach import codes
    from dicetable.net.reach.relay_address import BadRelay
    from dicetable.net.reach.transport import TransportError
    from dicetable.tui.tables.relay_setting import remember, resolve

    try:
        codes.parse_code(code)
    except codes.CodeError as error:
        raise CommandError(f"{error} (or give the host's invite, dt1-...)") from None
    try:
        address = resolve(None, relay)  # none given: the relay used last (tui/tables/relay_setting.py)
    except BadRelay as error:
        raise CommandError(f"a short code is kept at its host's relay: {error}") from None
    try:
        invite = code_invite(code, address, timeout)
    except (codes.CodeError, TransportError) as error:
        raise CommandError(str(error)) from None
    remember(None, address.encode())
    return invite


def run(args) -> int:
    session = join_session(args)
    try:
        session.chooser = bot_chooser(session.replica.game, args.bot, args.seed)
    except SessionError as error:
        session.close()
        raise CommandError(str(error)) from None
    return play(session)
