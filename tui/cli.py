"""The `dicetable` command: no arguments opens the app; sub-commands give the same powers headless.

Each sub-command lives in its own module `tui/commands/<name>.py` with `add_parser(subparsers)` (which
sets `func`) — adding one is one name in COMMANDS.

Ctrl+C (SIGINT) is met here for every command: it unwinds the command as KeyboardInterrupt, whose
`finally` blocks and `with` statements close sessions, sockets and transcripts on the way out; then one
line on stderr and exit 130, as a shell reports a command ended by Ctrl+C. A command that stops on
SIGINT by itself (the app, the SSH server) raises KeyboardInterrupt once it has stopped.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import stat
import sys
import threading

from dicetable.tui.commands.args import INTERRUPTED, CommandError

# sub-command -> its module; only the module of the command given is imported (the app's first frame
# waits for no network code)
COMMANDS = {
    "selfplay": "dicetable.tui.commands.selfplay",
    "rules": "dicetable.tui.commands.rules",
    "analyze": "dicetable.tui.commands.analyze",
    "play": "dicetable.tui.commands.play",
    "verify": "dicetable.tui.commands.verify",
    "replay": "dicetable.tui.commands.replay",
    "watch": "dicetable.tui.commands.watch",
    "host": "dicetable.tui.commands.host",
    "join": "dicetable.tui.commands.join",
    "roll": "dicetable.tui.commands.roll",
    "lan": "dicetable.tui.commands.lan",
    "deal": "dicetable.tui.commands.deal",
    "serve-ssh": "dicetable.tui.commands.serve_ssh",
    "relay": "dicetable.tui.commands.relay",
}
OPENS_THE_APP = {"play", "replay"}  # sub-commands that open the app in the terminal


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line and exit 2, no usage dump
        print(f"dicetable: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv`: with only the sub-command it names, or every one (help, a wrong name)."""
    parser = _Parser(prog="dicetable", description="Dice and card board games, peer to peer and verifiably fair.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    named = argv[0] if argv and argv[0] in COMMANDS else None
    if argv is not None and not argv:
        return parser  # no sub-command: the app
    for name, module in COMMANDS.items():
        if named is None or name == named:
            importlib.import_module(module).add_parser(sub)
    return parser


def _interrupt(signum, frame) -> None:
    """The first Ctrl+C unwinds the command; a second one while it cleans up leaves at once, without a
    traceback (the person asked twice)."""
    signal.signal(signal.SIGINT, _leave_now)
    raise KeyboardInterrupt


def _leave_now(signum, frame) -> None:
    os.write(2, b"dicetable: interrupted again: leaving at once\n")
    os._exit(INTERRUPTED)


def main(argv: list[str] | None = None) -> int:
    # Python's own handler only (not when Ctrl+C is ignored, as for `nohup` or `&`), in the main thread
    ours = threading.current_thread() is threading.main_thread() \
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, _interrupt)
    try:
        status = _run(argv)
        sys.stdout.flush()  # here, not at exit: Ctrl+C while a pipe's reader holds the output back is met too
        return status
    except KeyboardInterrupt:
        _let_output_go()
        print("dicetable: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader left (`| head`): no "Exception ignored" at exit either
        _let_output_go()
        return 0
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _let_output_go() -> None:
    """Output a pipe's reader does not take now is dropped, so that the exit does not wait for it (in a
    shell's pipeline the reader was interrupted too, or has left); a file or a terminal gets all of it."""
    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
    except (OSError, ValueError):  # no file behind sys.stdout: an in-process caller's capture
        return
    try:
        os.set_blocking(fd, False)
        sys.stdout.flush()
    except OSError:  # BlockingIOError, BrokenPipeError
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


def _run(argv: list[str] | None) -> int:
    from dicetable.core.game import GameError

    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    if args.command is None or args.command in OPENS_THE_APP:
        # No collector while the app's modules load: they live as long as the app, and the young
        # passes over what their imports make cost its first frame some 10 ms (scripts/bench_tui.py).
        # The app keeps it off until its first frame (tui/app.py `run`).
        gc.disable()
    try:
        if args.command is None:
            from dicetable.tui.app import run_app

            return run_app()
        return args.func(args) or 0
    except (CommandError, GameError) as error:
        print(f"dicetable: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    finally:
        gc.enable()


if __name__ == "__main__":
    sys.exit(main())
