"""The dice room: a table with no board where seats roll dice expressions (core/dice_expr.py).

It is a game like any other so that every roll goes through the same fair commit–reveal and the
same Replica / verify checks as a game's roll. The seat whose turn it is may `roll EXPR`, `pass`
(the turn goes to the next seat) or `close` the room; each roll is a Chance with one range per die,
then the turn passes on. Option `rolls` closes the room by itself after that many rolls (the
headless `dicetable roll` uses 1); 0 keeps it open until a seat closes it.

Why turns: a state has one actor (core/game.py), and the Replica accepts a move only from the seat
due to act; a room where anyone rolls at any moment would need the Replica to ask the state who
may act instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from core.dice_expr import BadExpression, parse
from core.game import (CHANCE, BadOption, BadOutcome, Chance, GameInfo, IllegalMove, Move, Option, Outcome, Result,
                       outcome_values)


@dataclass(frozen=True, slots=True)
class Roll:
    seat: int
    expr: str
    faces: tuple[int, ...]

    def describe(self) -> str:
        """`<total> [<dice>]` as the `result:` line and the room's log show it."""
        return parse(self.expr).describe(self.faces)

    @property
    def total(self) -> int:
        return parse(self.expr).total(self.faces)


class _RoomMoves(tuple):
    """The listed moves, plus every well-formed `roll EXPR`: expressions are too many to list."""

    def __contains__(self, move: object) -> bool:
        if isinstance(move, Move) and move.kind == "roll" and len(move.args) == 1 and isinstance(move.args[0], str):
            try:
                parse(move.args[0])
            except BadExpression:
                return False
            return True
        return tuple.__contains__(self, move)


@dataclass(frozen=True, slots=True)
class DiceRoomState:
    seats: int
    options: tuple[tuple[str, Any], ...]
    turn: int = 0
    pending: str = ""  # the expression being rolled, while chance decides it
    rolls: tuple[Roll, ...] = ()
    result: Result | None = None

    @property
    def option(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def actor(self) -> int | None:
        if self.result is not None:
            return None
        return CHANCE if self.pending else self.turn

    @property
    def last(self) -> Roll | None:
        return self.rolls[-1] if self.rolls else None

    def chance(self) -> Chance | None:
        if not self.pending:
            return None
        return Chance(f"seat {self.turn} rolls {self.pending}", ranges=parse(self.pending).ranges)

    def resolve(self, outcome: Outcome) -> "DiceRoomState":
        chance = self.chance()
        if chance is None:
            raise BadOutcome("the dice room asks chance only for a roll")
        chance.check(outcome)
        roll = Roll(self.turn, self.pending, parse(self.pending).faces(outcome.values))
        after = replace(self, pending="", rolls=self.rolls + (roll,), turn=(self.turn + 1) % self.seats)
        limit = self.option["rolls"]
        if limit and len(after.rolls) >= limit:
            return after._close(f"{len(after.rolls)} roll{'s' if len(after.rolls) != 1 else ''}: {roll.describe()}")
        return after

    def legal_moves(self) -> tuple[Move, ...]:
        """The room's own expression, pass and close; `in` also accepts any other `roll EXPR`."""
        if self.actor is None or self.actor == CHANCE:
            return ()
        return _RoomMoves((Move("roll", (self.option["expr"],)), Move("pass"), Move("close")))

    def apply(self, move: Move) -> "DiceRoomState":
        if self.actor is None or self.actor == CHANCE:
            raise IllegalMove(f"{move} is not legal now: {'the room is closed' if self.result else 'a roll is being decided'}")
        if move.kind == "roll":
            if len(move.args) != 1 or not isinstance(move.args[0], str):
                raise IllegalMove("roll takes one dice expression, e.g. roll 3d6")
            try:
                expr = parse(move.args[0])
            except BadExpression as error:
                raise IllegalMove(str(error)) from None
            return replace(self, pending=str(expr))
        if move.args:
            raise IllegalMove(f"{move.kind} takes no arguments")
        if move.kind == "pass":
            return replace(self, turn=(self.turn + 1) % self.seats)
        if move.kind == "close":
            return self._close(f"seat {self.turn} closed the room after {len(self.rolls)} rolls")
        raise IllegalMove(f"{move} is not a dice room move (roll EXPR, pass, close)")

    def without(self, seat: int) -> "DiceRoomState":
        """`seat`, out of the room after a default (FAIRNESS.md §4), passes whenever its turn comes."""
        return self.apply(Move("pass")) if self.actor == seat else self

    def _close(self, reason: str) -> "DiceRoomState":
        return replace(self, result=Result((), (0.0,) * self.seats, reason))

    def view(self, seat: int) -> "DiceRoomState":
        return self  # every roll is public

    def key(self) -> tuple:
        return (self.turn, self.pending, len(self.rolls))

    def to_data(self) -> dict:
        return {
            "seats": self.seats,
            "options": [list(o) for o in self.options],
            "turn": self.turn,
            "pending": self.pending,
            "rolls": [[r.seat, r.expr, list(r.faces)] for r in self.rolls],
            "result": self.result.to_data() if self.result else None,
        }


def load(data: Mapping) -> DiceRoomState:
    return DiceRoomState(
        seats=data["seats"],
        options=tuple((k, v) for k, v in data["options"]),
        turn=data["turn"],
        pending=data["pending"],
        rolls=tuple(Roll(s, e, tuple(f)) for s, e, f in data["rolls"]),
        result=Result.from_data(data["result"]) if data["result"] else None,
    )


def new(seats: int, options: Mapping[str, Any]) -> DiceRoomState:
    try:  # a room whose own expression cannot be rolled is refused at once
        parse(options["expr"])
    except BadExpression as error:
        raise BadOption(f"option expr: {error}") from None
    return DiceRoomState(seats=seats, options=tuple(sorted(options.items())))


class RollerBot:
    """Rolls the room's expression when it is its turn (every generic bot name maps here)."""

    name = "roller"

    def __init__(self, game: GameInfo, rng, **settings: Any) -> None:
        self.rng = rng

    def choose(self, view: DiceRoomState) -> Move:
        return Move("roll", (view.option["expr"],))


def describe(state: DiceRoomState, move: Move) -> str:
    if move.kind == "roll":
        return f"seat {state.turn} rolls {move.args[0]}"
    if move.kind == "pass":
        return f"seat {state.turn} passes the dice"
    return f"seat {state.turn} closes the room"


def describe_outcome(state: Any, chance: Chance, outcome: Outcome) -> str:
    """A roll in words: its total and dice (`13 [6 4 3 (1)]`), from the expression in the label."""
    if " rolls " in chance.label:
        try:
            expr = parse(chance.label.rsplit(" rolls ", 1)[1])
            return expr.describe(expr.faces(outcome.values))
        except BadExpression:
            pass
    return outcome_values(state, chance, outcome)


GAME = GameInfo(
    name="diceroom",
    title="Dice room",
    min_seats=1,
    max_seats=8,
    options=(
        Option("expr", "d20", "the dice expression bots and the headless roll use"),
        Option("rolls", 0, "close the room after this many rolls (0: when a seat closes it)", minimum=0),
    ),
    new=new,
    load=load,
    bots={"random": RollerBot, "greedy": RollerBot, "search": RollerBot, "roller": RollerBot},
    describe=describe,
    describe_outcome=describe_outcome,
)
