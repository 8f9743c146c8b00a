"""`dicetable rules GAME`: the rules text we play, the same the app's rules screen shows."""

from __future__ import annotations

from dicetable.tui.rules import rules_text


def add_parser(sub) -> None:
    parser = sub.add_parser("rules", help="print the rules of a game")
    parser.add_argument("game")
    parser.set_defaults(func=run)


def run(args) -> int:
    print(rules_text(args.game), end="")
    return 0
