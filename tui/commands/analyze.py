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


def analyse_tricolor(text: str, args) -> tuple[dict, list[str]]:
    from dicetable.core.tricolor_routes import best_pair, parse_board, shortest_routes
    from dicetable.core.tricolor_tiles import END, TILES

    try:
        board = parse_board(text)
    except ValueError as error:
        raise CommandError(f"not a Tricolor Line position: {error}") from None
    at = lambda pos: f"{pos[0]},{pos[1]}"  # noqa: E731
    routes = shortest_routes(board)
    ends = sorted((p for p, placed in board.items() if TILES[placed.tile].kind == END), key=lambda p: board[p].order)
    pair = best_pair(board)
    if pair is not None:
        pair = sorted(pair, key=lambda route: board[route[-1]].order)
    tiles = len({p for route in pair for p in route}) if pair else None  # the Start Tile counted once
    data = {
        "ends": [{"at": at(end), "shortest": len(routes[end]) if end in routes else None} for end in ends],
        "valid_pair": [[at(p) for p in route] for route in pair] if pair else None,
        "tiles": tiles,
    }
    lines = [
        f"End Tile {at(end)}: " + (f"shortest route {len(routes[end])} tiles" if end in routes else "no route")
        for end in ends
    ] or ["no End Tile on the table"]
    if pair:
        lines.append(f"valid pair: {tiles} tiles (the Start Tile counted once)")
        lines += [f"  {' '.join(at(p) for p in route)}" for route in pair]
    else:
        lines.append("no valid pair: the game goes on")
    return data, lines


ANALYSERS = {
    "trice": analyse_trice,
    "dicebreaker": analyse_dicebreaker,
    "triad": analyse_triad,
    "tricolor": analyse_tricolor,
}


def add_parser(sub) -> None:
    parser = sub.add_parser(
        "analyze", aliases=["analyse"], help="analyse a position",
        epilog="Tricolor Line: tiles in placement order separated by ';', each X,Y KIND [COLOUR EDGES STATE], "
        "e.g. '0,0 start; 1,0 road R EW built; 2,0 road Y NSW built; 2,1 end' (N faces y+1, E faces x+1).",
    )
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
