"""`dicetable selfplay GAME --games N --seed S --bots A,B [--json]`: bot-vs-bot games."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.match import play_out
from dicetable.tui.commands.args import CommandError, parse_options
from dicetable.tui.commands.progress import Progress


def add_parser(sub) -> None:
    parser = sub.add_parser("selfplay", help="play bot-vs-bot games and print the score")
    parser.add_argument("game")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bots", default="random,random", help="one bot or level (easy, medium, hard) per seat, comma-separated")
    parser.add_argument("--seats", type=int, default=None, help="number of seats (default: one per bot)")
    parser.add_argument("--option", action="append", metavar="NAME=VALUE", help="a game option")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--record", metavar="DIR", help="play by the fair protocol and write one transcript per game to DIR")
    parser.set_defaults(func=run)


def selfplay(game_name: str, bot_names: list[str], games: int, seed: int, options=None, seats=None, record=None,
             on_game=None):
    """Play `games` games with seats rotating each game; returns the summary dict. `on_game(n)` is
    called after the n-th game (the progress bar)."""
    game = registry.get(game_name)
    seats = seats or len(bot_names)
    game.check_seats(seats)
    if len(bot_names) == 1:
        bot_names = bot_names * seats
    if len(bot_names) != seats:
        raise CommandError(f"{len(bot_names)} bots for {seats} seats: name one bot per seat")
    for name in bot_names:
        if name not in game.bots:
            raise CommandError(f"unknown bot {name!r} for {game.title} (bots: {', '.join(game.bots)})")
    options = game.resolve_options(options)
    if record:  # check the directory once, before any game is played
        paths = [Path(record) / f"{game.name}-seed{seed}-game{n:04d}.transcript" for n in range(games)]
        try:
            Path(record).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CommandError(f"cannot use {record} for transcripts: {error.strerror}") from None
        if any(path.exists() for path in paths):
            raise CommandError(f"{record} already holds transcripts of seed {seed}: pick another directory or seed")
    wins = {name: 0 for name in bot_names}
    draws = moves = 0
    start = time.perf_counter()
    for number in range(games):
        # Seats alternate: game n seats bot i at seat (i + n) mod seats.
        order = [bot_names[(seat - number) % seats] for seat in range(seats)]
        base = seed * 1_000_003 + number * 7919
        bots = [game.bots[name](game, random.Random(base + 1 + s)) for s, name in enumerate(order)]
        if record:  # the real protocol among in-process seats, each with its own keys and chain
            from dicetable.net.table.local_seats import play_table

            final = play_table(game, options, bots, [f"{n} {s}" for s, n in enumerate(order)],
                               random.Random(base), transcript=paths[number]).host
            moves += final.moves
        else:
            final, steps = play_out(game.new(seats, options), bots, LocalSource(random.Random(base)))
            moves += sum(1 for step in steps if step.move is not None)
        if not final.result.winners:
            draws += 1
        for seat in final.result.winners:
            wins[order[seat]] += 1 / len(final.result.winners)
        if on_game is not None:
            on_game(number + 1)
    seconds = time.perf_counter() - start
    return {
        "game": game.name,
        "games": games,
        "wins": {name: round(count, 3) for name, count in wins.items()},
        "draws": draws,
        "mean_moves": round(moves / games, 2) if games else 0,
        "seconds": round(seconds, 3),
    }


def run(args) -> int:
    if args.games < 1:
        raise CommandError("--games must be at least 1")
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    registry.get(args.game)  # an unknown game is said before the bar is drawn
    progress = Progress(args.games, f"{args.game}: game", quiet=args.json)  # on a terminal, on stderr
    try:
        summary = selfplay(args.game, bots, args.games, args.seed, parse_options(args.option), args.seats,
                           args.record, on_game=progress.step)
    finally:
        progress.close()
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{summary['game']}: {summary['games']} games, seed {args.seed}")
    for name, count in summary["wins"].items():
        print(f"  {name:<10} {count:g} wins")
    print(f"  draws      {summary['draws']}")
    print(f"  mean moves {summary['mean_moves']}")
    rate = summary["games"] / summary["seconds"] if summary["seconds"] else float("inf")
    print(f"  {rate:.1f} games per second")
    return 0
