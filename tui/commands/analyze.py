"""`dicetable analyze GAME POSITION [--json]`: what the rules say about one position.

Each game's analyser takes the position text (and the parsed args) and returns `(data, lines)`:
the JSON-able answer and the human-readable lines. Adding a game is one entry in ANALYSERS.
"""

from __future__ import annotations

import json

from dicetable.tui.commands.args import CommandError


def analyse_trice(text: str, args) -> tuple[dict, list[str]]:
    from dicetable.core import trice

    try:
        board = trice.parse_board(text)
    except ValueError as error:
        raise CommandError(f"malformed TRICE board: {error}") from None
    found = trice.board_lines(board)
    verdict, _ = trice.verdict(board)
    data = {
        "lines": [
            {"squares": [trice.SQUARES[i] for i in line], "condition": condition}
            for line, condition in found
        ],
        "verdict": verdict,
    }
    lines = [
        f"{'-'.join(trice.SQUARES[i] for i in line):<9} "
        f"{' '.join(board[i] for i in line)}  {condition or 'no condition'}"
        for line, condition in found
    ]
    words = {"trice": "Trice: the player who placed wins", "double": "Double Trice: the player who placed loses", "none": "no Trice"}
    lines.append(f"verdict: {verdict} ({words[verdict]})")
    return data, lines


def analyse_triad(text: str, args) -> tuple[dict, list[str]]:
    from dicetable.core import triad

    side = (args.to_move or "").strip().lower()
    if side not in ("black", "white"):
        raise CommandError("TRIAD needs the side to move: --to-move black or --to-move white")
    try:
        board = triad.parse_board(text)
    except ValueError as error:
        raise CommandError(f"malformed TRIAD board: {error}") from None
    moves = triad.normal_moves(board, triad.BLACK if side == "black" else triad.WHITE)
    found = triad.triads_on(board)
    data = {"moves": len(moves), "triads": [[triad.SQUARES[i] for i in line] for line in found]}
    lines = [f"{side} to move: {len(moves)} legal normal moves (die, value, direction)"]
    lines += [f"  {m.args[0]} ({board[triad.INDEX[m.args[0]]]}) -> {m.args[1]} {m.args[2]}" for m in moves]
    lines.append(f"Triads on the board (cells in board order): {len(found)}")
    lines += [
        f"  {'-'.join(triad.SQUARES[i] for i in line)}  {' '.join(board[i] for i in line)}"
        for line in found
    ]
    return data, lines


def analyse_dicebreaker(text: str, args) -> tuple[dict, list[str]]:
    from dicetable.core import dicebreaker_hands as hands

    try:
        faces = hands.parse_hand(text)
    except ValueError as error:
        raise CommandError(f"malformed Dice Breaker hand: {error}") from None
    name, points = hands.category(faces), hands.points(faces)
    best = hands.best_five(faces)
    worth = "wins the game" if points is None else f"{points} point{'s' if points != 1 else ''}"
    lines = [f"hand: {' '.join(map(str, faces))}"]
    if len(faces) > 5:
        lines.append(f"best five: {' '.join(map(str, best))}")
    lines.append(f"{name}: {worth}")
    return {"hand": name, "points": points}, lines


ANALYSERS = {
    "trice": analyse_trice,
    "dicebreaker": analyse_dicebreaker,
    "triad": analyse_triad,
}


def add_parser(sub) -> None:
    parser = sub.add_parser("analyze", aliases=["analyse"], help="analyse a position")
    parser.add_argument("game")
    parser.add_argument("position", help="the position in the notation of the game's rules")
    parser.add_argument("--to-move", default=None, help="the side to move, where the game needs it")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args) -> int:
    analyser = ANALYSERS.get(args.game)
    if analyser is None:
        raise CommandError(f"no analyser for {args.game!r} (games: {', '.join(ANALYSERS)})")
    data, lines = analyser(args.position, args)
    print(json.dumps(data) if args.json else "\n".join(lines))
    return 0
