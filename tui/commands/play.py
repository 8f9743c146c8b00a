"""`dicetable play GAME --vs BOT|LEVEL [--first me|bot|roll] [--seed N]`: open the app straight into a game.

`--vs human` seats two people at this terminal (hot-seat). The seed of a local game is printed in
its fairness panel's terms: the same seed replays the same dice.
"""

from __future__ import annotations

import time

from dicetable.core import registry
from dicetable.tui.commands.args import CommandError, parse_options


def add_parser(sub) -> None:
    parser = sub.add_parser("play", help="open the app straight into a local game against a bot")
    parser.add_argument("game")
    parser.add_argument("--vs", default="greedy", metavar="BOT",
                        help="the bot to play: a level (easy, medium, hard), an algorithm (random, greedy, search) "
                             "or 'human' for hot-seat")
    parser.add_argument("--first", default="roll", choices=("me", "bot", "roll"),
                        help="who places first: me, the bot, or as the setup roll decides")
    parser.add_argument("--seed", type=int, default=None, help="seed of the dice and the bot")
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--option", action="append", metavar="NAME=VALUE", help="a game option")
    parser.add_argument("--seats", type=int, default=2,
                        help="players at the table (default 2): you and bots, or people with --vs human")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dicetable.tui.app import player_name, run_table
    from dicetable.tui.tables.controller import Player
    from dicetable.tui.tables.history import history_path
    from dicetable.tui.tables.local_save import kept_table, new_save_path

    game = registry.get(args.game)
    if game.name not in registry.board_games():
        raise CommandError(f"the app has no table for {game.title} yet (tables: {', '.join(registry.board_games())})")
    if args.vs != "human" and args.vs not in game.bots:
        raise CommandError(f"unknown bot {args.vs!r} for {game.title} (bots: {', '.join(game.bots)}, or human)")
    me = args.name or player_name()
    game.check_seats(args.seats)
    if args.vs == "human":
        players = [Player(me)] + [Player(f"Player {n}") for n in range(2, args.seats + 1)]
    elif args.seats == 2:
        players = [Player(me), Player(f"{args.vs} bot", args.vs)]
    else:
        players = [Player(me)] + [Player(f"{args.vs} {n}", args.vs) for n in range(2, args.seats + 1)]
    seed = args.seed if args.seed is not None else time.time_ns() % 2**63
    table = kept_table(game, players, save=new_save_path(game.name), history=history_path(), seed=seed,
                       options=parse_options(args.option), first=args.first)
    return run_table(table)
