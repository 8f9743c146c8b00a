"""TRICE, exactly as ../shared/rules/trice.md.

The board is 3 rows × 4 columns; squares are named a1..d3 (column letter, row number, row 1 at the
top). A die is written `W6`, `P4`, `O1` (colour letter and value). Moves, in the rules' words:
`choose W6`, `place b2`, `indicate c1`, `swap c2`, `increment b2`.
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
from dicetable.core.phrase import Phrase, Seat, listing, phrase

ROWS, COLS = 3, 4
SQUARES = tuple(f"{'abcd'[i % COLS]}{i // COLS + 1}" for i in range(ROWS * COLS))
INDEX = {name: i for i, name in enumerate(SQUARES)}
COLOURS = ("W", "P", "O")
COLOUR_NAMES = {"W": "white", "P": "purple", "O": "orange"}
SETUP_COLOURS = ("W", "W", "P", "P", "O", "O")  # each player's six dice (trice.md, Setup 1)


def _lines() -> tuple[tuple[int, int, int], ...]:
    """The 14 lines of three consecutive squares, each listed in board order."""
    found = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(ROWS):
            for c in range(COLS):
                cells = [(r + k * dr, c + k * dc) for k in range(3)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    found.append(tuple(rr * COLS + cc for rr, cc in cells))
    return tuple(found)


LINES = _lines()
LINES_THROUGH = tuple(tuple(line for line in LINES if sq in line) for sq in range(ROWS * COLS))
NEIGHBOURS = tuple(
    tuple(
        (r + dr) * COLS + (c + dc)
        for dr, dc in ((-1, 0), (0, -1), (0, 1), (1, 0))
        if 0 <= r + dr < ROWS and 0 <= c + dc < COLS
    )
    for r in range(ROWS)
    for c in range(COLS)
)

# Conditions of a full line (trice.md, "Conditions of a full line").
SAME_COLOUR, SAME_VALUE, ORDERED, DOUBLE = "same colour", "same value", "ordered", "double"


def line_conditions(a: str, b: str, c: str) -> tuple[str, ...]:
    """Every condition a full line of dice `a`, `b`, `c` (in line order) meets: colour, value, ordered."""
    va, vb, vc = int(a[1]), int(b[1]), int(c[1])
    met = (
        (SAME_COLOUR, a[0] == b[0] == c[0]),
        (SAME_VALUE, va == vb == vc),
        (ORDERED, (vb - va == 1 and vc - vb == 1) or (va - vb == 1 and vb - vc == 1)),
    )
    return tuple(condition for condition, holds in met if holds)


def line_condition(a: str, b: str, c: str) -> str | None:
    """The condition a full line of dice `a`, `b`, `c` (in line order) meets, or None."""
    met = line_conditions(a, b, c)
    if len(met) >= 2:
        return DOUBLE
    return met[0] if met else None


def board_lines(board: tuple[str, ...], lines=LINES) -> list[tuple[tuple[int, int, int], str | None]]:
    """Every full line among `lines` with its condition."""
    out = []
    for line in lines:
        x, y, z = (board[i] for i in line)
        if x and y and z:
            out.append((line, line_condition(x, y, z)))
    return out


def verdict(board: tuple[str, ...], lines=LINES) -> tuple[str, tuple[int, int, int] | None]:
    """"double", "trice" or "none", with the deciding line (a Double Trice outweighs any Trice)."""
    trice = None
    for line, condition in board_lines(board, lines):
        if condition == DOUBLE:
            return "double", line
        if condition and trice is None:
            trice = line
    return ("trice", trice) if trice else ("none", None)


def parse_board(text: str) -> tuple[str, ...]:
    """Read the notation of trice.md: rows top to bottom joined by `/`, squares `W6` or `--`."""
    rows = [row.split() for row in text.strip().split("/")]
    if len(rows) != ROWS or any(len(row) != COLS for row in rows):
        raise ValueError(f"a TRICE board is {ROWS} rows of {COLS} squares separated by '/'")
    board = []
    for row in rows:
        for cell in row:
            cell = cell.upper()
            if cell == "--":
                board.append("")
            elif len(cell) == 2 and cell[0] in COLOURS and cell[1] in "123456":
                board.append(cell)
            else:
                raise ValueError(f"bad square {cell!r}: write W, P or O and a value 1-6, or --")
    return tuple(board)


def format_board(board: tuple[str, ...]) -> str:
    return " / ".join(
        " ".join(board[r * COLS + c] or "--" for c in range(COLS)) for r in range(ROWS)
    )


def setup_order(rolls: tuple[tuple[str, ...], tuple[str, ...]]) -> int | None:
    """The seat with more 6s, then more 5s, ... (trice.md, Setup 2); None when the rolls tie."""
    for value in "654321":
        counts = [sum(die[1] == value for die in roll) for roll in rolls]
        if counts[0] != counts[1]:
            return 0 if counts[0] > counts[1] else 1
    return None


# Phases: who acts and which move kind is due.
SETUP, CHOOSE, PLACE, INDICATE, SWAP, INCREMENT, OVER = (
    "setup",
    "choose",
    "place",
    "indicate",
    "swap",
    "increment",
    "over",
)


@dataclass(frozen=True, slots=True)
class TriceState(GameState):
    options: tuple[tuple[str, Any], ...]
    phase: str = SETUP
    seat: int = CHANCE  # who acts now (CHANCE during setup rolls, None-equivalent when over)
    board: tuple[str, ...] = ("",) * (ROWS * COLS)
    pool: tuple[str, ...] = ()
    first: int = -1  # the first player, once the setup rolls decided it
    rolls: tuple[tuple[str, ...], ...] = ()  # the deciding setup rolls, per seat
    rerolls: int = 0
    chosen: str = ""  # the die chosen for the placer
    indicated: int = -1  # the square indicated in the swap phase
    swapped: tuple[int, ...] = ()  # the two squares just swapped, awaiting the increment
    swap_turns: int = 0
    seen: tuple[tuple[Any, ...], ...] = ()  # swap-phase positions met so far (threefold rule)
    last: tuple[int, ...] = ()  # squares changed by the last move, for display
    line: tuple[int, ...] = ()  # the deciding line, once the game is over
    result: Result | None = None

    # -- the fixed questions -------------------------------------------------------------------
    @property
    def actor(self) -> int | None:
        return None if self.phase == OVER else self.seat

    @property
    def option(self) -> dict[str, Any]:
        return dict(self.options)

    def chance(self) -> Chance | None:
        if self.phase != SETUP:
            return None
        label = "setup roll" if not self.rerolls else f"setup re-roll {self.rerolls}"
        return Chance(label, ranges=(6,) * 12)

    def resolve(self, outcome: Outcome) -> "TriceState":
        chance = self.chance()
        if chance is None:
            raise BadOutcome("TRICE asks chance only for the setup rolls")
        chance.check(outcome)
        dice = [f"{c}{v + 1}" for c, v in zip(SETUP_COLOURS * 2, outcome.values)]
        rolls = (tuple(dice[:6]), tuple(dice[6:]))
        first = setup_order(rolls)
        if first is None:
            return replace(self, rerolls=self.rerolls + 1, rolls=rolls)
        return replace(
            self, phase=CHOOSE, seat=1 - first, first=first, rolls=rolls, pool=tuple(dice)
        )

    def legal_moves(self) -> tuple[Move, ...]:
        if self.phase == CHOOSE:
            return tuple(Move("choose", (die,)) for die in sorted(set(self.pool)))
        if self.phase == PLACE:
            return tuple(Move("place", (SQUARES[i],)) for i, d in enumerate(self.board) if not d)
        if self.phase == INDICATE:
            return tuple(Move("indicate", (name,)) for name in SQUARES)
        if self.phase == SWAP:
            return tuple(Move("swap", (SQUARES[n],)) for n in NEIGHBOURS[self.indicated])
        if self.phase == INCREMENT:
            return tuple(Move("increment", (SQUARES[i],)) for i in self.swapped)
        return ()

    def apply(self, move: Move) -> "TriceState":
        if self.phase in (SETUP, OVER) or move.kind != self.phase or len(move.args) != 1:
            raise IllegalMove(f"{move} is not legal now: {self.prompt()}")
        arg = move.args[0]
        if self.phase == CHOOSE:
            if arg not in self.pool:
                raise IllegalMove(f"{arg} is not in the pool")
            return replace(self, phase=PLACE, seat=1 - self.seat, chosen=arg, last=())
        square = INDEX.get(arg) if isinstance(arg, str) else None
        if square is None:
            raise IllegalMove(f"{arg!r} is not a square (a1..d3)")
        if self.phase == PLACE:
            if self.board[square]:
                raise IllegalMove(f"{arg} is not free")
            return self._place(square)
        if self.phase == INDICATE:
            return self._after_indicate(square)
        if self.phase == SWAP:
            if square not in NEIGHBOURS[self.indicated]:
                raise IllegalMove(
                    f"{arg} is not orthogonally next to the indicated {SQUARES[self.indicated]}"
                )
            board = list(self.board)
            board[square], board[self.indicated] = board[self.indicated], board[square]
            pair = (self.indicated, square)
            return replace(self, phase=INCREMENT, board=tuple(board), swapped=pair, last=pair)
        # INCREMENT
        if square not in self.swapped:
            raise IllegalMove(f"{arg} is not one of the two swapped dice")
        board = list(self.board)
        die = board[square]
        board[square] = f"{die[0]}{int(die[1]) % 6 + 1}"
        after = replace(self, board=tuple(board), swap_turns=self.swap_turns + 1)
        return after._decide(self.swapped, next_phase=INDICATE, next_seat=self.seat)

    def view(self, seat: int) -> "TriceState":
        return self  # TRICE hides nothing

    # -- rules helpers -------------------------------------------------------------------------
    def _place(self, square: int) -> "TriceState":
        board = list(self.board)
        board[square] = self.chosen
        pool = list(self.pool)
        pool.remove(self.chosen)
        after = replace(self, board=tuple(board), pool=tuple(pool), chosen="", last=(square,))
        if pool:
            return after._decide((square,), next_phase=CHOOSE, next_seat=self.seat)
        # Board completed: the player who placed the last die indicates (trice.md, swap phase 1).
        return after._decide((square,), next_phase=INDICATE, next_seat=self.seat)

    def _decide(self, changed: tuple[int, ...], next_phase: str, next_seat: int) -> "TriceState":
        """Check the lines through the changed squares for the player who just acted."""
        lines = tuple({line for sq in changed for line in LINES_THROUGH[sq]})
        found, line = verdict(self.board, sorted(lines))
        mover = self.seat
        if found == "double":
            return self._end(1 - mover, "Double Trice", line)
        if found == "trice":
            return self._end(mover, "Trice", line)
        if self.phase == INCREMENT and self.swap_turns >= self.option["swap_limit"]:
            return self._end(None, f"{self.swap_turns} swap turns without a result", ())
        return replace(self, phase=next_phase, seat=next_seat, indicated=-1, swapped=())

    def _after_indicate(self, square: int) -> "TriceState":
        key = (self.board, square, 1 - self.seat)
        seen = self.seen + (key,)
        after = replace(self, phase=SWAP, seat=1 - self.seat, indicated=square, seen=seen, last=())
        if seen.count(key) >= self.option["repetitions"]:
            return after._end(None, "the same position a third time", ())
        return after

    def _end(self, winner: int | None, reason: str, line) -> "TriceState":
        if winner is None:
            result = Result((), (0.5, 0.5), reason)
        else:
            scores = [0.0, 0.0]
            scores[winner] = 1.0
            result = Result((winner,), tuple(scores), reason)
        return replace(self, phase=OVER, result=result, line=tuple(line or ()))

    # -- words for people ----------------------------------------------------------------------
    def prompt(self) -> str:
        """What is due now, in plain words."""
        return {
            SETUP: "setup roll",
            CHOOSE: f"seat {self.seat} chooses a die from the pool for seat {1 - self.seat}",
            PLACE: f"seat {self.seat} places {self.chosen} on a free square",
            INDICATE: f"seat {self.seat} indicates a die for seat {1 - self.seat} to swap",
            SWAP: f"seat {self.seat} swaps {SQUARES[self.indicated] if self.indicated >= 0 else ''}"
            " with an orthogonal neighbour",
            INCREMENT: f"seat {self.seat} increments one of the two swapped dice",
            OVER: "the game is over",
        }[self.phase]

    def key(self) -> tuple:
        """A compact identity of the position for search tables."""
        return (self.phase, self.seat, self.board, self.pool, self.chosen, self.indicated, self.swapped)

    # -- plain data ----------------------------------------------------------------------------
    def to_data(self) -> dict:
        return {
            "options": [list(o) for o in self.options],
            "phase": self.phase,
            "seat": self.seat,
            "board": list(self.board),
            "pool": list(self.pool),
            "first": self.first,
            "rolls": [list(r) for r in self.rolls],
            "rerolls": self.rerolls,
            "chosen": self.chosen,
            "indicated": self.indicated,
            "swapped": list(self.swapped),
            "swap_turns": self.swap_turns,
            "seen": [[list(b), sq, s] for b, sq, s in self.seen],
            "last": list(self.last),
            "line": list(self.line),
            "result": self.result.to_data() if self.result else None,
        }


def load(data: Mapping) -> TriceState:
    return TriceState(
        options=tuple((k, v) for k, v in data["options"]),
        phase=data["phase"],
        seat=data["seat"],
        board=tuple(data["board"]),
        pool=tuple(data["pool"]),
        first=data["first"],
        rolls=tuple(tuple(r) for r in data["rolls"]),
        rerolls=data["rerolls"],
        chosen=data["chosen"],
        indicated=data["indicated"],
        swapped=tuple(data["swapped"]),
        swap_turns=data["swap_turns"],
        seen=tuple((tuple(b), sq, s) for b, sq, s in data["seen"]),
        last=tuple(data["last"]),
        line=tuple(data["line"]),
        result=Result.from_data(data["result"]) if data["result"] else None,
    )


def new(seats: int, options: Mapping[str, Any]) -> TriceState:
    return TriceState(options=tuple(sorted(options.items())))


def describe(state: TriceState, move: Move) -> Phrase:
    """A move in plain words, as the move log shows it (`state` is the state it was made in)."""
    arg = move.args[0] if move.args else ""
    who = Seat(state.seat)
    if move.kind == "choose":
        return phrase(who, f" chooses {COLOUR_NAMES[arg[0]]} {arg[1]} ({arg}) for ", Seat(1 - state.seat))
    if move.kind == "place":
        return phrase(who, f" places {state.chosen} on {arg}")
    if move.kind == "indicate":
        return phrase(who, f" indicates {arg} ({state.board[INDEX[arg]]})")
    if move.kind == "swap":
        return phrase(who, f" swaps {SQUARES[state.indicated]} with {arg}")
    if move.kind == "increment":
        die = state.board[INDEX[arg]]
        return phrase(who, f" increments {arg} from {die} to {die[0]}{int(die[1]) % 6 + 1}")
    return phrase(who, f": {move}")


def describe_outcome(state: Any, chance: Chance, outcome: Outcome) -> Phrase:
    """A setup roll in words: each seat's six dice and who places first (trice.md, Setup)."""
    if len(outcome.values) != 2 * len(SETUP_COLOURS):
        return outcome_values(state, chance, outcome)
    dice = [f"{c}{v + 1}" for c, v in zip(SETUP_COLOURS * 2, outcome.values)]
    rolls = (tuple(dice[:6]), tuple(dice[6:]))
    said = listing((phrase(Seat(s), f" rolled {' '.join(roll)}") for s, roll in enumerate(rolls)), "; ")
    first = setup_order(rolls)
    return phrase(said, ": a tie, both roll again") if first is None else phrase(said, ": ", Seat(first), " places first")


GAME = GameInfo(
    name="trice",
    title="TRICE",
    min_seats=2,
    max_seats=2,
    options=(
        Option("repetitions", 3, "draw when a swap-phase position occurs this many times", minimum=2),
        Option("swap_limit", 60, "draw after this many swap-phase turns without a result", minimum=1),
    ),
    new=new,
    load=load,
    rules_file="trice.md",
    describe=describe,
    describe_outcome=describe_outcome,
)
