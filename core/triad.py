"""TRIAD, exactly as ../shared/rules/triad.md.

The board is 6 × 6; squares are named a1..f6 (column letter a–f, row number 1–6; row 1 is
Black's start row). A die is written `B2`, `W3` (owner letter and value 1–3). Directions are named from
Black's side of the board: `n` points towards row 6, `e` towards column f; the eight are
n, ne, e, se, s, sw, w, nw.

Moves, in the rules' words (triad.md, "Moves (as the engine sees them)"):
`move c1 3 ne` (turn the die on c1 to 3 and move it three cells north-east), the fallbacks
`turn c1 2` and `shift c1 n` (offered only when no `move` exists), `pass` (when even those are
impossible), and `remove d4` after a scoring move.

Seats and colours: seat 0 and seat 1 are the players in the order they sat down; which seat plays
Black is drawn fairly by the first chance step ("draw for Black": value 0 or 1 is the seat that
plays Black), unless the option `black` fixes it. Black moves first by default; a rematch keeps the
colours and the other player starts (`rematch_options`).

Board order: a Triad's cells are listed in square order a1, b1, .., f1, a2, .., f6 (lowest row
first, then lowest column), which is also the order of the cells along the line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from dicetable.core.game import (
    CHANCE,
    BadOutcome,
    Chance,
    GameInfo,
    GameState,
    IllegalMove,
    Move,
    Option,
    Outcome,
    Result,
    outcome_values,
)
from dicetable.core.phrase import Phrase, Seat, phrase

SIZE = 6
COLUMNS = "abcdef"
SQUARES = tuple(f"{COLUMNS[i % SIZE]}{i // SIZE + 1}" for i in range(SIZE * SIZE))
INDEX = {name: i for i, name in enumerate(SQUARES)}
BLACK, WHITE = "B", "W"
COLOUR_NAMES = {BLACK: "Black", WHITE: "White"}
VALUES = (1, 2, 3)
DICE_PER_PLAYER = 6
REMOVALS_TO_WIN = 3  # triad.md, End
# (name, row step, column step); n is towards row 6, e towards column f.
DIRECTIONS = (
    ("n", 1, 0),
    ("ne", 1, 1),
    ("e", 0, 1),
    ("se", -1, 1),
    ("s", -1, 0),
    ("sw", -1, -1),
    ("w", 0, -1),
    ("nw", 1, -1),
)
DIRECTION_NAMES = tuple(name for name, _, _ in DIRECTIONS)
DIRECTION_WORDS = {
    "n": "north", "ne": "north-east", "e": "east", "se": "south-east",
    "s": "south", "sw": "south-west", "w": "west", "nw": "north-west",
}


def _rays() -> tuple[dict[str, tuple[int, ...]], ...]:
    """Per square and direction, the squares 1, 2, 3 cells away that are still on the board."""
    out = []
    for sq in range(SIZE * SIZE):
        r, c = divmod(sq, SIZE)
        rays = {}
        for name, dr, dc in DIRECTIONS:
            cells = []
            for k in VALUES:
                rr, cc = r + k * dr, c + k * dc
                if not (0 <= rr < SIZE and 0 <= cc < SIZE):
                    break
                cells.append(rr * SIZE + cc)
            rays[name] = tuple(cells)
        out.append(rays)
    return tuple(out)


def _lines() -> tuple[tuple[int, int, int], ...]:
    """The 80 lines of three consecutive squares, each in board order (ascending square index)."""
    found = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(SIZE):
            for c in range(SIZE):
                cells = [(r + k * dr, c + k * dc) for k in range(3)]
                if all(0 <= rr < SIZE and 0 <= cc < SIZE for rr, cc in cells):
                    found.append(tuple(rr * SIZE + cc for rr, cc in cells))
    return tuple(sorted(found))


RAYS = _rays()
LINES = _lines()
LINES_THROUGH = tuple(tuple(line for line in LINES if sq in line) for sq in range(SIZE * SIZE))


def is_triad(a: str, b: str, c: str) -> bool:
    """Three dice (`B1`.. or `` for empty) form a Triad (triad.md, Triads)."""
    if not (a and b and c) or a[0] == b[0] == c[0]:
        return False
    values = {a[1], b[1], c[1]}
    return len(values) == 1 or values == {"1", "2", "3"}


def triads_on(board: tuple[str, ...], lines=LINES) -> list[tuple[int, int, int]]:
    """Every line among `lines` that is a Triad on `board`, in board order."""
    return [line for line in lines if is_triad(*(board[i] for i in line))]


def normal_moves(board: tuple[str, ...], colour: str) -> list[Move]:
    """`move square value direction` for every legal combination of `colour` (triad.md, A turn)."""
    moves = []
    for sq, die in enumerate(board):
        if not die or die[0] != colour:
            continue
        shown = int(die[1])
        for name in DIRECTION_NAMES:
            for k, cell in enumerate(RAYS[sq][name], 1):
                if board[cell]:
                    break  # may not pass over a die (and cannot land on one)
                if k != shown:
                    moves.append(Move("move", (SQUARES[sq], k, name)))
    return moves


def fallback_moves(board: tuple[str, ...], colour: str) -> list[Move]:
    """The two fallbacks (triad.md, A turn): turn without moving, or move by the value shown."""
    moves = []
    for sq, die in enumerate(board):
        if die and die[0] == colour:
            moves.extend(Move("turn", (SQUARES[sq], v)) for v in VALUES if v != int(die[1]))
    for sq, die in enumerate(board):
        if die and die[0] == colour:
            ray_names = (
                name
                for name in DIRECTION_NAMES
                if len(RAYS[sq][name]) >= int(die[1])
                and not any(board[cell] for cell in RAYS[sq][name][: int(die[1])])
            )
            moves.extend(Move("shift", (SQUARES[sq], name)) for name in ray_names)
    return moves


def act(board: tuple[str, ...], move: Move) -> tuple[tuple[str, ...], int]:
    """The board after a move/turn/shift (assumed legal) and the square of the acted die."""
    sq = INDEX[move.args[0]]
    die = board[sq]
    if move.kind == "turn":
        target, value = sq, move.args[1]
    elif move.kind == "shift":
        value = int(die[1])
        target = RAYS[sq][move.args[1]][value - 1]
    else:
        value = move.args[1]
        target = RAYS[sq][move.args[2]][value - 1]
    cells = list(board)
    cells[sq] = ""
    cells[target] = f"{die[0]}{value}"
    return tuple(cells), target


def new_triads(
    before: tuple[str, ...], after: tuple[str, ...], acted: int
) -> list[tuple[int, int, int]]:
    """Triads on `after` that include the acted die and did not stand at the start of the turn.

    A Triad "stood" when the same three squares held the same three dice (triad.md, Scoring).
    """
    return [
        line
        for line in triads_on(after, LINES_THROUGH[acted])
        if not (is_triad(*(before[i] for i in line)) and all(before[i] == after[i] for i in line))
    ]


def parse_board(text: str) -> tuple[str, ...]:
    """Read `analyze` notation: rows 6 down to 1 joined by `/`, cells `B1`..`W3` or `--` (a..f)."""
    rows = [row.split() for row in text.strip().split("/")]
    if len(rows) != SIZE or any(len(row) != SIZE for row in rows):
        raise ValueError(
            f"a TRIAD board is {SIZE} rows (row 6 first) of {SIZE} cells separated by '/'"
        )
    board = [""] * (SIZE * SIZE)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            cell = cell.upper()
            if cell == "--":
                continue
            if len(cell) != 2 or cell[0] not in (BLACK, WHITE) or cell[1] not in "123":
                raise ValueError(f"bad cell {cell!r}: write B or W and a value 1-3, or --")
            board[(SIZE - 1 - r) * SIZE + c] = cell
    for colour in (BLACK, WHITE):
        count = sum(1 for d in board if d and d[0] == colour)
        if count > DICE_PER_PLAYER:
            raise ValueError(f"{COLOUR_NAMES[colour]} has {count} dice; a player has at most 6")
    return tuple(board)


def format_board(board: tuple[str, ...]) -> str:
    """The `analyze` notation of a board (rows 6 down to 1)."""
    return " / ".join(
        " ".join(board[r * SIZE + c] or "--" for c in range(SIZE)) for r in range(SIZE - 1, -1, -1)
    )


def start_board(black_values: tuple[int, ...], white_values: tuple[int, ...]) -> tuple[str, ...]:
    """Dice in ascending order from each player's own left (triad.md, Setup 2)."""
    board = [""] * (SIZE * SIZE)
    for c, v in enumerate(sorted(black_values)):
        board[c] = f"{BLACK}{v}"  # a1 .. f1
    top = (SIZE - 1) * SIZE
    for k, v in enumerate(sorted(white_values)):
        board[top + SIZE - 1 - k] = f"{WHITE}{v}"  # f6 .. a6
    return tuple(board)


# Phases: who acts and which move kind is due.
DRAW, SETUP, TURN, REMOVE, OVER = "draw", "setup", "turn", "remove", "over"


@dataclass(frozen=True, slots=True)
class TriadState(GameState):
    options: tuple[tuple[str, Any], ...]
    phase: str = DRAW
    seat: int = CHANCE  # who acts now (CHANCE while drawing colours and rolling)
    black: int = -1  # the seat that plays Black, once drawn
    board: tuple[str, ...] = ("",) * (SIZE * SIZE)
    removed: tuple[int, int] = (0, 0)  # dice each seat has taken off
    candidates: tuple[int, ...] = ()  # own dice the scorer may remove (REMOVE phase)
    triads: tuple[tuple[int, int, int], ...] = ()  # the new Triads of the scoring move
    quiet: int = 0  # consecutive turns with no die removed
    turns: int = 0  # turns completed
    seen: tuple[tuple[tuple[str, ...], int], ...] = ()  # positions since the last removal
    last: tuple[int, ...] = ()  # squares changed by the last move, for display
    result: Result | None = None

    # -- the fixed questions -------------------------------------------------------------------
    @property
    def actor(self) -> int | None:
        return None if self.phase == OVER else self.seat

    @property
    def option(self) -> dict[str, Any]:
        return dict(self.options)

    def colour(self, seat: int) -> str:
        """`B` or `W` for a seat (once the colours are drawn)."""
        return BLACK if seat == self.black else WHITE

    def seat_of(self, colour: str) -> int:
        return self.black if colour == BLACK else 1 - self.black

    @property
    def first(self) -> int:
        """The seat that moves first, once the colours are drawn (-1 before); local tables use it
        to seat a person first or second (tui/tables/controller.py)."""
        if self.black < 0:
            return -1
        return self.black if self.option["first"] == "black" else 1 - self.black

    def rematch_options(self) -> dict[str, Any]:
        """The next game at this table (triad.md, Setup 3): the same colours, the other player starts."""
        options = self.option
        if self.black < 0:
            return options  # the colours were never drawn: nothing to keep
        return {**options, "black": f"seat{self.black}", "first": "white" if options["first"] == "black" else "black"}

    def chance(self) -> Chance | None:
        if self.phase == DRAW:
            return Chance("draw for Black", ranges=(2,))
        if self.phase == SETUP:
            return Chance("setup roll", ranges=(3,) * (2 * DICE_PER_PLAYER))
        return None

    def resolve(self, outcome: Outcome) -> "TriadState":
        chance = self.chance()
        if chance is None:
            raise BadOutcome("TRIAD asks chance only for the colours and the setup roll")
        chance.check(outcome)
        if self.phase == DRAW:
            return replace(self, phase=SETUP, black=outcome.values[0])
        values = [v + 1 for v in outcome.values]
        board = start_board(tuple(values[:DICE_PER_PLAYER]), tuple(values[DICE_PER_PLAYER:]))
        first = self.black if self.option["first"] == "black" else 1 - self.black
        return replace(self, phase=TURN, seat=first, board=board, seen=((board, first),))

    def legal_moves(self) -> tuple[Move, ...]:
        if self.phase == TURN:
            colour = self.colour(self.seat)
            moves = normal_moves(self.board, colour) or fallback_moves(self.board, colour)
            return tuple(moves) or (Move("pass"),)
        if self.phase == REMOVE:
            return tuple(Move("remove", (SQUARES[sq],)) for sq in self.candidates)
        return ()

    def apply(self, move: Move) -> "TriadState":
        if self.phase not in (TURN, REMOVE):
            raise IllegalMove(f"{move} is not legal now: {self.prompt()}")
        if move not in self.legal_moves():
            raise IllegalMove(f"{move} is not legal: {self._why_illegal(move)}")
        if move.kind == "remove":
            return self._remove(INDEX[move.args[0]])
        if move.kind == "pass":
            return replace(self, last=())._end_turn(removal=False)
        board, acted = act(self.board, move)
        scored = new_triads(self.board, board, acted)
        last = tuple(sorted({INDEX[move.args[0]], acted}))
        after = replace(self, board=board, last=last)
        if not scored:
            return after._end_turn(removal=False)
        colour = self.colour(self.seat)
        own = sorted({sq for line in scored for sq in line if board[sq][0] == colour})
        return replace(after, phase=REMOVE, candidates=tuple(own), triads=tuple(scored))

    def view(self, seat: int) -> "TriadState":
        return self  # TRIAD hides nothing

    # -- rules helpers -------------------------------------------------------------------------
    def _remove(self, square: int) -> "TriadState":
        board = list(self.board)
        board[square] = ""
        removed = list(self.removed)
        removed[self.seat] += 1
        after = replace(
            self, board=tuple(board), removed=tuple(removed), candidates=(), last=(square,),
            seen=(),  # a position with fewer dice can never repeat an earlier one
        )
        if removed[self.seat] >= REMOVALS_TO_WIN:
            after = replace(after, turns=self.turns + 1)
            colour = COLOUR_NAMES[self.colour(self.seat)]
            return after._end(self.seat, f"{colour} took off a third die")
        return after._end_turn(removal=True)

    def _end_turn(self, removal: bool) -> "TriadState":
        """Hand the turn over and apply the draw rules (triad.md, End)."""
        nxt = 1 - self.seat
        quiet = 0 if removal else self.quiet + 1
        key = (self.board, nxt)
        seen = self.seen + (key,)
        after = replace(
            self, phase=TURN, seat=nxt, quiet=quiet, turns=self.turns + 1, seen=seen,
            candidates=(), triads=() if not removal else self.triads,
        )
        if quiet >= self.option["quiet_turns"]:
            return after._end(None, f"{quiet} turns without a die removed")
        if seen.count(key) >= self.option["repetitions"]:
            return after._end(None, f"the same position for the {_ordinal(seen.count(key))} time")
        return after

    def _end(self, winner: int | None, reason: str) -> "TriadState":
        if winner is None:
            result = Result((), (0.5, 0.5), reason)
        else:
            scores = [0.0, 0.0]
            scores[winner] = 1.0
            result = Result((winner,), tuple(scores), reason)
        return replace(self, phase=OVER, candidates=(), result=result)

    def _why_illegal(self, move: Move) -> str:
        """One sentence on why `move` is not among the legal moves."""
        if self.phase == REMOVE:
            names = ", ".join(SQUARES[sq] for sq in self.candidates)
            return f"remove one of your dice in the new Triad ({names})"
        kinds = {m.kind for m in self.legal_moves()}
        if move.kind not in ("move", "turn", "shift", "pass", "remove"):
            return "write move SQUARE VALUE DIRECTION (or turn, shift, pass when no move exists)"
        if move.kind not in kinds:
            return f"{move.kind} is not allowed now; the legal kinds are {', '.join(sorted(kinds))}"
        square = move.args[0] if move.args else None
        sq = INDEX.get(square) if isinstance(square, str) else None
        if sq is None:
            return f"{square!r} is not a square (a1..f6)"
        die = self.board[sq]
        if not die or die[0] != self.colour(self.seat):
            return f"{square} does not hold one of your dice"
        if move.kind in ("move", "turn") and len(move.args) > 1 and move.args[1] == int(die[1]):
            return f"the die must be turned to a value other than the {die[1]} it shows"
        if move.kind in ("move", "turn") and (len(move.args) < 2 or move.args[1] not in VALUES):
            return "the value must be 1, 2 or 3"
        if move.kind in ("move", "shift") and move.args[-1] not in DIRECTION_NAMES:
            return f"the direction must be one of {', '.join(DIRECTION_NAMES)}"
        return "the path leaves the board, passes over a die or ends on one"

    # -- words for people ----------------------------------------------------------------------
    def who(self, seat: int | None = None) -> Seat:
        seat = self.seat if seat is None else seat
        if self.black < 0:
            return Seat(seat)
        return Seat(seat, COLOUR_NAMES[self.colour(seat)])

    def prompt(self) -> str:
        """What is due now, in plain words."""
        if self.phase == DRAW:
            return "drawing which seat plays Black"
        if self.phase == SETUP:
            return "setup roll"
        if self.phase == TURN:
            return f"{self.who()} turns and moves one of its dice"
        if self.phase == REMOVE:
            names = ", ".join(SQUARES[sq] for sq in self.candidates)
            return f"{self.who()} scored and removes one of its dice: {names}"
        return "the game is over"

    def key(self) -> tuple:
        """A compact identity of the position for search tables."""
        return (self.phase, self.seat, self.board, self.removed, self.candidates)

    # -- plain data ----------------------------------------------------------------------------
    def to_data(self) -> dict:
        return {
            "options": [list(o) for o in self.options],
            "phase": self.phase,
            "seat": self.seat,
            "black": self.black,
            "board": list(self.board),
            "removed": list(self.removed),
            "candidates": list(self.candidates),
            "triads": [list(t) for t in self.triads],
            "quiet": self.quiet,
            "turns": self.turns,
            "seen": [[list(b), s] for b, s in self.seen],
            "last": list(self.last),
            "result": self.result.to_data() if self.result else None,
        }


def load(data: Mapping) -> TriadState:
    return TriadState(
        options=tuple((k, v) for k, v in data["options"]),
        phase=data["phase"],
        seat=data["seat"],
        black=data["black"],
        board=tuple(data["board"]),
        removed=tuple(data["removed"]),
        candidates=tuple(data["candidates"]),
        triads=tuple(tuple(t) for t in data["triads"]),
        quiet=data["quiet"],
        turns=data["turns"],
        seen=tuple((tuple(b), s) for b, s in data["seen"]),
        last=tuple(data["last"]),
        result=Result.from_data(data["result"]) if data["result"] else None,
    )


def new(seats: int, options: Mapping[str, Any]) -> TriadState:
    state = TriadState(options=tuple(sorted(options.items())))
    if options["black"] != "draw":
        return replace(state, phase=SETUP, black=int(options["black"][-1]))
    return state


def _ordinal(n: int) -> str:
    return {2: "second", 3: "third"}.get(n, f"{n}th")


def describe(state: TriadState, move: Move) -> Phrase:
    """A move in plain words, as the move log shows it (`state` is the state it was made in)."""
    who = state.who()
    if move.kind == "pass":
        return phrase(who, " cannot turn or move any die and passes")
    if move.kind == "remove":
        return phrase(who, f" takes {state.board[INDEX[move.args[0]]]} off {move.args[0]}")
    try:
        after = state.apply(move)
    except IllegalMove:
        return phrase(who, f": {move}")
    square = move.args[0]
    die = state.board[INDEX[square]]
    if move.kind == "turn":
        text = phrase(who, f" turns {square} from {die[1]} to {move.args[1]} without moving it")
    elif move.kind == "shift":
        _, target = act(state.board, move)
        text = phrase(
            who, f" moves {square} ({die}) {DIRECTION_WORDS[move.args[1]]} to {SQUARES[target]}"
            " without turning it"
        )
    else:
        _, target = act(state.board, move)
        text = phrase(
            who, f" turns {square} from {die[1]} to {move.args[1]} and moves it "
            f"{DIRECTION_WORDS[move.args[2]]} to {SQUARES[target]}"
        )
    if after.phase == REMOVE:
        named = ", ".join("-".join(SQUARES[i] for i in line) for line in after.triads)
        text += f": Triad {named}"
    return text


def heuristic(state: TriadState, seat: int) -> float:
    """Removals ahead (a pending removal counts) scaled into [-1, 1]."""
    removed = list(state.removed)
    if state.phase == REMOVE:
        removed[state.seat] += 1
    return (removed[seat] - removed[1 - seat]) / (REMOVALS_TO_WIN + 1)


def describe_outcome(state: Any, chance: Chance, outcome: Outcome) -> Phrase:
    """The colour draw and the setup roll in words (triad.md, Setup); Black's six dice come first."""
    if chance.label == "draw for Black" and len(outcome.values) == 1:
        return phrase(Seat(outcome.values[0]), " plays Black")
    if chance.label == "setup roll" and len(outcome.values) == 2 * DICE_PER_PLAYER:
        faces = [" ".join(sorted(("I", "II", "III")[v] for v in part))
                 for part in (outcome.values[:DICE_PER_PLAYER], outcome.values[DICE_PER_PLAYER:])]
        return Phrase((f"Black rolled {faces[0]}; White rolled {faces[1]}",))
    return outcome_values(state, chance, outcome)


GAME = GameInfo(
    name="triad",
    title="TRIAD",
    min_seats=2,
    max_seats=2,
    options=(
        Option("quiet_turns", 100, "draw after this many consecutive turns with no die removed",
               minimum=1),
        Option("repetitions", 3,
               "draw when the same position (board and player to move) occurs this many times",
               minimum=2),
        Option("black", "draw", "which seat plays Black: drawn fairly, or fixed (a rematch keeps"
               " the colours)", choices=("draw", "seat0", "seat1")),
        Option("first", "black", "which colour moves first (in a rematch the other player"
               " starts)", choices=("black", "white")),
    ),
    new=new,
    load=load,
    rules_file="triad.md",
    describe=describe,
    heuristic=heuristic,
    describe_outcome=describe_outcome,
)
