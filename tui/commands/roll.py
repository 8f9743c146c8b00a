"""`dicetable roll EXPR --host --seats N [--port P --bind ADDR | --relay RELAY]` / `dicetable roll --join INVITE|CODE`.

A fair roll among several people (the dice room, core/diceroom.py): the host opens a room for N
seats where anyone rolls at any moment (option turns false), prints `invite: <code>`, waits for the
joiners and rolls EXPR (through a relay it prints `code: ...` too, which joiners give with
`--join CODE --relay RELAY`); every seat contributes to the dice (FAIRNESS.md §1) and prints the same
`result:` line and its transcript path, which `dicetable verify` re-checks.

`dicetable roll [EXPR] --join INVITE`: with EXPR the joiner rolls it too, at once, beside the host's
roll (the host's log decides their order). The host closes the room as soon as every roll made so
far is decided; a joiner's roll is sent before its reveal for the host's roll, so it is always in.
`result:` is `<total> [<dice>]` for one roll, and `<name>: <total> [<dice>]; ...` in log order for
several. A room in turns (an older host) takes no EXPR from a joiner. `--secret` rolls EXPR secretly
(PROTOCOL.md §16.6): the others see the expression and a sealed roll; the room's close opens it, and
every seat checks it is that event's. `--secret --to NAME` shows the dice now to NAME alone, the game
master (§16.6 step 7): the secret goes boxed to NAME's key, and NAME's client prints the dice.
"""

from __future__ import annotations

import contextlib
import json
import sys

from dicetable.core.dice_expr import BadExpression, parse
from dicetable.core.diceroom import OneRoll
from dicetable.core.game import GameError
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.reach.transport import DEFAULT_BIND
from dicetable.tui.commands.args import CommandError
from dicetable.tui.commands.host import (
    add_relay_flags, add_timing_flags, check_transcript_flag, play, print_event, profile_for, timing_from, where_from,
)
from dicetable.tui.commands.join import join_session
from dicetable.tui.tables.opening import ANYONE_ROLLS, DICE_ROOM, hosted


def add_parser(sub) -> None:
    parser = sub.add_parser("roll", help="roll dice fairly with other people: host a roll or join one")
    parser.add_argument("expr", nargs="?", help="dice expression: d20, 3d6+2, 4d6kh3, 2d6r1, 3d6!, 10d10>=8, 6#4d6kh3, "
                        "'1d20+5 [attack]' (with --join: roll it too)")
    role = parser.add_mutually_exclusive_group(required=True)
    role.add_argument("--host", action="store_true", help="open the roll and print its invite")
    role.add_argument("--join", metavar="INVITE", help="take part in a host's roll (its invite, or its short code)")
    parser.add_argument("--seats", type=int, default=2, help="people in the roll, the host included (default 2)")
    parser.add_argument("--port", type=int, default=0, help="TCP port to listen on (default 0: any free port)")
    parser.add_argument("--bind", default=DEFAULT_BIND,
                        help=f"address to listen on (default {DEFAULT_BIND}: this machine only, the safe default)")
    parser.add_argument("--advertise", default=None, metavar="ADDR", help="address joiners dial (default: --bind)")
    add_relay_flags(parser)
    parser.add_argument("--transcript", default=None, metavar="FILE", help="where to write the transcript")
    parser.add_argument("--name", default=None, help="player name (saved in the profile)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="S", help="seconds to wait for the host (default 5)")
    parser.add_argument("--secret", action="store_true",
                        help="roll secretly: everyone sees the expression, the dice stay sealed until the room closes "
                             "(then every seat checks them)")
    parser.add_argument("--to", default=None, metavar="NAME",
                        help="with --secret: show the dice now to NAME alone (the game master); the others see it sealed")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object of the rolls on stdout (the usual lines go to stderr)")
    add_timing_flags(parser)
    parser.set_defaults(func=run, bot="roller", seed=None, resume=None)


def _played(session, json_out: bool) -> int:
    """Play to the end; with --json the lines go to stderr and stdout gets one object: the table,
    the transcript and every roll (who, what, each roll of the line, the dice, its checkable line)."""
    if not json_out:
        return play(session)

    def to_stderr(event) -> None:
        with contextlib.redirect_stdout(sys.stderr):
            print_event(event)

    code = play(session, to_stderr, out=sys.stderr)
    if code == 0:
        print(json.dumps(room_json(session.replica, session.transcript_path)), flush=True)
    return code


def room_json(replica, transcript) -> dict:
    from dicetable.net.log.roll_line import roll_line
    from dicetable.net.log.verify import people

    names, rolls = people(replica), replica.state.rolls
    first = len(replica.events) - len(rolls) + 1  # this game's first event (a rematch's come after)
    return {"table": replica.table.hex(), "transcript": str(transcript), "rolls": [
        {"seat": roll.seat, "name": names[roll.seat], "expr": roll.expr, "total": roll.total, "secret": bool(roll.secret),
         "sealed": roll.sealed,
         "rolls": [{"label": tally.label, "total": tally.total, "dice": [d.face for d in tally.dice], "shown": tally.dice_text()}
                   for tally in roll.tallies],
         "event": first + n, "line": roll_line(replica, first + n)}
        for n, roll in enumerate(rolls)]}


def run(args) -> int:
    if args.to is not None and not args.secret:
        raise CommandError("--to NAME shows a secret roll: give --secret too")
    if args.join is not None:
        expr = None
        if args.expr is not None:
            try:
                expr = str(parse(args.expr))
            except BadExpression as error:
                raise CommandError(str(error)) from None
        args.invite = args.join
        with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
            session = join_session(args)  # what it says while seating goes with the lines, not the JSON
        if session.replica.game.name != "diceroom":
            session.close()
            raise CommandError(f"that invite is for a {session.replica.game.title} table, not a roll")
        if not session.replica.options.get("turns", True):
            if args.to is not None and args.to.casefold() not in [n.casefold() for n in session.replica.names if n]:
                session.close()
                raise CommandError(f"nobody called {args.to} is in that room yet: --to names a person already in it")
            session.own.room.show_to = args.to
            session.chooser = OneRoll(expr, closes=False, secret=args.secret)
        elif expr is not None or args.secret:
            session.close()
            raise CommandError("that room rolls in turns: the host chooses the dice, give no expression with --join")
        else:
            session.chooser = bot_chooser(session.replica.game, "roller")
        return _played(session, args.json)
    if args.expr is None:
        raise CommandError("give the dice to roll, e.g. dicetable roll 3d6 --host")
    try:
        expr = parse(args.expr)
    except BadExpression as error:
        raise CommandError(str(error)) from None
    where = where_from(args)
    check_transcript_flag(args.transcript)
    profile = profile_for(args.name)
    try:
        with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():  # the invite too
            session = hosted(profile, DICE_ROOM, args.seats, {**ANYONE_ROLLS, "expr": str(expr), "rolls": 0}, where,
                             timing=timing_from(args), transcript=args.transcript,
                             chooser=OneRoll(str(expr), closes=True, secret=args.secret), on_event=print_event)
            session.own.room.show_to = args.to  # resolved when it rolls: every seat has joined by then
            session.open()
    except (SessionError, GameError) as error:
        raise CommandError(str(error)) from None
    return _played(session, args.json)
