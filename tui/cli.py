"""The `dicetable` command: no arguments opens the app; sub-commands give the same powers headless.

Each sub-command lives in its own module `tui/commands/<name>.py` with `add_parser(subparsers)` (which
sets `func`) — adding one is one line in COMMANDS.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dicetable.tui.commands.args import CommandError

COMMANDS = [
    "dicetable.tui.commands.selfplay",
    "dicetable.tui.commands.rules",
    "dicetable.tui.commands.analyze",
    "dicetable.tui.commands.play",
    "dicetable.tui.commands.verify",
    "dicetable.tui.commands.host",
    "dicetable.tui.commands.join",
    "dicetable.tui.commands.roll",
    "dicetable.tui.commands.lan",
    "dicetable.tui.commands.deal",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line and exit 2, no usage dump
        print(f"dicetable: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dicetable", description="Dice and card board games, peer to peer and verifiably fair.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from dicetable.core.game import GameError

    args = build_parser().parse_args(argv)
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
