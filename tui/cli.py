"""The `dicetable` command: no arguments opens the app; sub-commands give the same powers headless.

Each sub-command lives in its own module `tui/commands/<name>.py` with `add_parser(subparsers)` (which
sets `func`) — adding one is one name in COMMANDS.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dicetable.tui.commands.args import CommandError

# sub-command -> its module; only the module of the command given is imported (the app's first frame
# waits for no network code)
COMMANDS = {
    "selfplay": "dicetable.tui.commands.selfplay",
    "rules": "dicetable.tui.commands.rules",
    "analyze": "dicetable.tui.commands.analyze",
    "play": "dicetable.tui.commands.play",
    "verify": "dicetable.tui.commands.verify",
    "host": "dicetable.tui.commands.host",
    "join": "dicetable.tui.commands.join",
    "roll": "dicetable.tui.commands.roll",
    "lan": "dicetable.tui.commands.lan",
    "deal": "dicetable.tui.commands.deal",
    "serve-ssh": "dicetable.tui.commands.serve_ssh",
    "relay": "dicetable.tui.commands.relay",
}


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


def main(argv: list[str] | None = None) -> int:
    from dicetable.core.game import GameError

    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    if args.command is None:
        from dicetable.tui.app import run_app

        return run_app()
    try:
        return args.func(args) or 0
    except (CommandError, GameError) as error:
        print(f"dicetable: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
