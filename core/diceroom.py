"""The dice room: a table with no board where seats roll dice expressions (core/dice_expr.py).

It is a game like any other so that every roll goes through the same fair commit–reveal and the
same Replica / verify checks as a game's roll. Each roll is one Chance whose ranges follow from its
expression (one per die, rerolls and explosions reserved: core/dice_expr.py). Option
`rolls` closes the room by itself after that many rolls; 0 keeps it open until it is closed.

Two ways to roll (option `turns`):
- `turns` true (the default, kept for the tables built on it): the seat whose turn it is may
  `roll EXPR`, `pass` (the turn goes to the next seat) or `close`; after a roll the turn passes on.
- `turns` false, a dice tray (the app's network room, `dicetable roll`): any seat may `roll EXPR`
  at any moment (`may_act`, core/game.py; the actor is ANYONE, so nobody is ever due or in default
  for not rolling) and seat 0, the host, may `close`. The log's order (the host orders it) is the
  order of the rolls. A roll made while another is being decided is QUEUED in the state, in log
  order, up to MAX_QUEUED per seat: the chance being decided never changes, and each queued roll
  becomes the next chance once the one before is resolved, so every roll is its own event fixed by
  every seat's reveal for it (FAIRNESS.md §1). A `close` while rolls are queued closes the room
  once they are decided; no roll is taken after it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from dicetable.core.dice_expr import BadExpression, Tally, parse
from dicetable.core.game import (ANYONE, CHANCE, BadOption, BadOutcome, Bot, Chance, GameInfo, GameState, IllegalMove, Move,
                       Option, Outcome, Result, outcome_values)
from dicetable.core.phrase import Phrase, Seat, phrase


@dataclass(frozen=True, slots=True)
class Roll:
    seat: int
    expr: str
    faces: tuple[int, ...]
    secret: str = ""  # a secret roll: the commitment to its roller's secret (hex, PROTOCOL.md §16.6)
    sealed: bool = False  # a secret roll not opened yet: its faces are nobody's to know from the log

    def describe(self) -> str:
        """`<total> [<dice>]` as the `result:` line and the room's log show it."""
        if self.sealed:
            return "sealed (a secret roll, not opened yet)"
        return parse(self.expr).describe(self.faces)

    @property
    def total(self) -> int:
        return 0 if self.sealed else parse(self.expr).total(self.faces)

    @property
    def tallies(self) -> tuple[Tally, ...]:
        """Each roll of the expression's line: label, total, dice (none while sealed)."""
        return () if self.sealed else parse(self.expr).tallies(self.faces)


class _RoomMoves(tuple):
    """The listed moves, plus every well-formed `roll EXPR`: expressions are too many to list."""

    def __contains__(self, move: object) -> bool:
        if isinstance(move, Move) and move.kind == "secret":
            try:
                _secret(move)
            except IllegalMove:
                return False
            return True
        if isinstance(move, Move) and move.kind == "roll" and len(move.args) == 1 and isinstance(move.args[0], str):
            try:
                parse(move.args[0])
            except BadExpression:
                return False
            return True
        return tuple.__contains__(self, move)


MAX_QUEUED = 4  # rolls one seat may have under way at once in a free room (a bound on the queue)


@dataclass(frozen=True, slots=True)
class DiceRoomState(GameState):
    seats: int
    options: tuple[tuple[str, Any], ...]
    turn: int = 0
    pending: str = ""  # the expression being rolled, while chance decides it
    rolls: tuple[Roll, ...] = ()
    result: Result | None = None
    roller: int = -1  # the seat whose roll is being decided (-1: the seat whose turn it is)
    queue: tuple[tuple[int, str, str], ...] = ()  # a free room: rolls waiting behind the pending one (seat, expr, secret)
    closing: bool = False  # a free room: closed by the host, once the queued rolls are decided
    pending_secret: str = ""  # the pending roll is secret: its roller's commitment (hex)

    @property
    def option(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def free(self) -> bool:
        """Anyone rolls at any moment (option turns false)."""
        return not self.option.get("turns", True)

    @property
    def actor(self) -> int | None:
        if self.result is not None:
            return None
        if self.pending:
            return CHANCE
        return ANYONE if self.free else self.turn

    def may_act(self, seat: int) -> bool:
        """Turns: the seat whose turn it is. Free: every seat while the room is open, also during a roll."""
        if self.result is not None or not 0 <= seat < self.seats:
            return False
        if self.free:  # closing: only the host's second close, which does not wait for sealed rolls
            return not self.closing or (seat == 0 and not self.pending and not self.queue)
        return not self.pending and seat == self.turn

    @property
    def last(self) -> Roll | None:
        return self.rolls[-1] if self.rolls else None

    @property
    def rolling(self) -> int:
        """The seat whose roll chance is deciding now."""
        return self.roller if self.roller >= 0 else self.turn

    def chance(self) -> Chance | None:
        if not self.pending:
            return None
        if self.pending_secret:  # the dice come from this event's seed and the roller's secret: drawn at the opening
            return Chance(phrase(Seat(self.rolling), f" rolls {self.pending} secretly"))
        return Chance(phrase(Seat(self.rolling), f" rolls {self.pending}"), ranges=parse(self.pending).ranges)

    def resolve(self, outcome: Outcome) -> "DiceRoomState":
        chance = self.chance()
        if chance is None:
            raise BadOutcome("the dice room asks chance only for a roll")
        chance.check(outcome)
        if self.pending_secret:
            roll = Roll(self.rolling, self.pending, (), self.pending_secret, sealed=True)
        else:
            roll = Roll(self.rolling, self.pending, parse(self.pending).faces(outcome.values))
        if self.free:
            (roller, pending, secret), queue = (self.queue[0], self.queue[1:]) if self.queue else ((-1, "", ""), ())
            after = replace(self, pending=pending, roller=roller, queue=queue, rolls=self.rolls + (roll,),
                            pending_secret=secret)
            if after.closing and not pending and not after.unopened:
                return after._close(f"seat 0 closed the room after {len(after.rolls)} rolls")
        else:
            after = replace(self, pending="", roller=-1, rolls=self.rolls + (roll,), turn=(self.turn + 1) % self.seats)
        limit = self.option["rolls"]
        if limit and len(after.rolls) >= limit:
            return after._close(f"{len(after.rolls)} roll{'s' if len(after.rolls) != 1 else ''}: {roll.describe()}")
        return after

    def legal_moves(self) -> tuple[Move, ...]:
        """The room's own expression, pass (turns) and close; `in` also accepts any other `roll EXPR`."""
        if self.result is not None:
            return ()
        if self.closing:
            return _RoomMoves((Move("close"),)) if self.free and not self.pending and not self.queue else ()
        if self.free:
            return _RoomMoves((Move("roll", (self.option["expr"],)), Move("close")))
        if self.pending:
            return ()
        return _RoomMoves((Move("roll", (self.option["expr"],)), Move("pass"), Move("close")))

    def apply(self, move: Move) -> "DiceRoomState":
        """`move` with no seat named: the turn's seat's in a room of turns; a free room refuses it."""
        return self.apply_as(None, move)

    def apply_as(self, seat: int | None, move: Move) -> "DiceRoomState":
        if self.free:
            return self._apply_free(move, seat)
        if seat is not None and seat != self.turn and self.result is None and not self.pending:
            raise IllegalMove(f"it is seat {self.turn}'s turn, not seat {seat}'s")
        if self.actor is None or self.actor == CHANCE:
            raise IllegalMove(f"{move} is not legal now: {'the room is closed' if self.result else 'a roll is being decided'}")
        if move.kind == "roll":
            return replace(self, pending=str(_expression(move)))
        if move.args:
            raise IllegalMove(f"{move.kind} takes no arguments")
        if move.kind == "pass":
            return replace(self, turn=(self.turn + 1) % self.seats)
        if move.kind == "close":
            return self._close(phrase(Seat(self.turn), f" closed the room after {len(self.rolls)} rolls"))
        raise IllegalMove(f"{move} is not a dice room move (roll EXPR, pass, close)")

    def _apply_free(self, move: Move, seat: int | None) -> "DiceRoomState":
        if seat is None or not 0 <= seat < self.seats:
            raise IllegalMove("in a room where anyone rolls, a move must say which seat makes it")
        if self.result is not None:
            raise IllegalMove(f"{move} is not legal now: the room is closed")
        if self.closing:
            if move.kind == "close" and seat == 0 and not self.pending and not self.queue:
                return self._close(phrase(Seat(0), f" closed the room after {len(self.rolls)} rolls, "
                                                   f"{len(self.unopened)} secret still sealed"))
            raise IllegalMove(f"{move} is not legal now: the room is closing")
        if move.kind in ("roll", "secret"):
            expr, secret = _secret(move) if move.kind == "secret" else (str(_expression(move)), "")
            limit = self.option["rolls"]
            if limit and len(self.rolls) + bool(self.pending) + len(self.queue) >= limit:
                raise IllegalMove(f"the room closes after {limit} roll{'s' if limit != 1 else ''}: no more rolls")
            if not self.pending:
                return replace(self, pending=expr, roller=seat, pending_secret=secret)
            if sum(1 for q in self.queue if q[0] == seat) + (self.roller == seat) >= MAX_QUEUED:
                raise IllegalMove(f"seat {seat} already has {MAX_QUEUED} rolls waiting to be decided")
            return replace(self, queue=self.queue + ((seat, expr, secret),))  # the pending chance is unchanged
        if move.args:
            raise IllegalMove(f"{move.kind} takes no arguments")
        if move.kind == "close":
            if seat != 0:
                raise IllegalMove(f"only the host (seat 0) closes the room, not seat {seat}")
            if self.pending or self.unopened:  # the rolls under way decided, the secret ones opened, first
                return replace(self, closing=True)
            return self._close(phrase(Seat(0), f" closed the room after {len(self.rolls)} rolls"))
        if move.kind == "pass":
            raise IllegalMove("there are no turns to pass in a room where anyone rolls")
        raise IllegalMove(f"{move} is not a dice room move (roll EXPR, secret EXPR COMMITMENT, close)")

    def unveil(self, index: int, values: tuple[int, ...]) -> "DiceRoomState":
        """Secret roll `index` (0-based, in `rolls`) opened: its dice are `values`, drawn by the net
        layer from the event's seed and the roller's secret once it checked the secret against the
        roll's commitment (PROTOCOL.md §16.6). Allowed once, also after the room closed."""
        if not 0 <= index < len(self.rolls) or not self.rolls[index].sealed:
            raise IllegalMove(f"roll {index + 1} is not a sealed secret roll")
        roll = self.rolls[index]
        Chance(f"the opening of roll {index + 1}", ranges=parse(roll.expr).ranges).check(Outcome(tuple(values)))
        opened = replace(roll, faces=parse(roll.expr).faces(tuple(values)), sealed=False)
        after = replace(self, rolls=self.rolls[:index] + (opened,) + self.rolls[index + 1:])
        if after.closing and not after.pending and not after.unopened:
            return after._close(phrase(Seat(0), f" closed the room after {len(after.rolls)} rolls"))
        return after

    @property
    def unopened(self) -> tuple[Roll, ...]:
        """The secret rolls decided and not opened yet: a closing room waits for them."""
        return tuple(r for r in self.rolls if r.sealed)

    def welcomes_back(self, seat: int) -> bool:
        """A free room goes on without a seat that left and takes it back while it is open."""
        return self.free and self.result is None and not self.closing and 0 <= seat < self.seats

    def chances_ordered(self) -> int:
        """The roll being decided and the rolls queued behind it: a seat that joins now is not in them."""
        return bool(self.pending) + len(self.queue)

    def without(self, seat: int) -> "DiceRoomState":
        """`seat`, out of the room after a default (FAIRNESS.md §4), passes whenever its turn comes."""
        return self.apply(Move("pass")) if self.actor == seat else self

    def _close(self, reason: Phrase | str) -> "DiceRoomState":
        return replace(self, result=Result((), (0.0,) * self.seats, reason), closing=False)

    def view(self, seat: int) -> "DiceRoomState":
        return self  # every roll is public

    def key(self) -> tuple:
        return (self.turn, self.pending, self.roller, self.queue, self.closing, len(self.rolls), self.pending_secret,
                tuple(r.sealed for r in self.rolls))

    def summary(self, names: list[str] | None = None) -> str:
        """The `result:` line: one roll as `<total> [<dice>]`; several as `<who>: <total> [<dice>]; ...`."""
        if len(self.rolls) == 1:
            return self.rolls[0].describe()
        name = (lambda s: names[s]) if names else (lambda s: f"seat {s}")
        return "; ".join(f"{name(r.seat)}: {r.describe()}" for r in self.rolls)

    def to_data(self) -> dict:
        return {
            "seats": self.seats,
            "options": [list(o) for o in self.options],
            "turn": self.turn,
            "pending": self.pending,
            "rolls": [[r.seat, r.expr, list(r.faces), r.secret, r.sealed] if r.secret else [r.seat, r.expr, list(r.faces)]
                      for r in self.rolls],
            "result": self.result.to_data() if self.result else None,
            "roller": self.roller,
            "queue": [list(q) for q in self.queue],
            "closing": self.closing,
            "pending_secret": self.pending_secret,
        }


SECRET_HEX = 64  # a secret roll's commitment: 32 bytes as hex (a move's arguments are text or integers)


def _secret(move: Move) -> tuple[str, str]:
    """`secret EXPR COMMITMENT`: the expression, public, and the roller's commitment to its secret."""
    if len(move.args) != 2 or not isinstance(move.args[1], str):
        raise IllegalMove("secret takes a dice expression and the roller's commitment")
    commit = move.args[1]
    if len(commit) != SECRET_HEX or any(c not in "0123456789abcdef" for c in commit):
        raise IllegalMove("a secret roll's commitment is 64 lowercase hex digits")
    return str(_expression(Move("roll", move.args[:1]))), commit


def _expression(move: Move):
    if len(move.args) != 1 or not isinstance(move.args[0], str):
        raise IllegalMove("roll takes one dice expression, e.g. roll 3d6")
    try:
        return parse(move.args[0])
    except BadExpression as error:
        raise IllegalMove(str(error)) from None


def load(data: Mapping) -> DiceRoomState:
    return DiceRoomState(
        seats=data["seats"],
        options=tuple((k, v) for k, v in data["options"]),
        turn=data["turn"],
        pending=data["pending"],
        rolls=tuple(Roll(r[0], r[1], tuple(r[2]), *r[3:5]) for r in data["rolls"]),
        result=Result.from_data(data["result"]) if data["result"] else None,
        roller=data.get("roller", -1),
        queue=tuple((q[0], q[1], q[2] if len(q) > 2 else "") for q in data.get("queue", ())),
        closing=data.get("closing", False),
        pending_secret=data.get("pending_secret", ""),
    )


def new(seats: int, options: Mapping[str, Any]) -> DiceRoomState:
    try:  # a room whose own expression cannot be rolled is refused at once
        parse(options["expr"])
    except BadExpression as error:
        raise BadOption(f"option expr: {error}") from None
    return DiceRoomState(seats=seats, options=tuple(sorted(options.items())))


class RollerBot(Bot):
    """Rolls the room's expression: on its turn, or in a free room whenever no roll is under way."""

    name = "roller"

    def __init__(self, game: GameInfo, rng, **settings: Any) -> None:
        self.rng = rng

    def choose(self, view: DiceRoomState) -> Move | None:
        if view.free and (view.pending or view.queue):
            return None  # a free room: wait for the dice on the table (None: nothing to do now)
        return Move("roll", (view.option["expr"],))


class OneRoll:
    """A headless seat in a free room (`dicetable roll`): rolls `expr` once (if given); the host's
    seat then closes the room once every roll made so far is decided. A chooser: None = nothing now."""

    def __init__(self, expr: str | None, closes: bool, secret: bool = False) -> None:
        self.expr, self.closes, self.rolled, self.secret = expr, closes, expr is None, secret

    def __call__(self, view: DiceRoomState) -> Move | None:
        if not self.rolled:
            self.rolled = True
            # secret: `secret EXPR`, to which the seat adds its commitment (net/table/room_part.py)
            return Move("secret" if self.secret else "roll", (self.expr,))
        if self.closes and not view.pending and not view.queue and not view.closing and view.rolls:
            return Move("close")
        return None


def describe(state: DiceRoomState, move: Move) -> Phrase:
    """The move in words; in a free room the mover is not the state's to know: the log names it."""
    who = phrase() if state.free else phrase(Seat(state.turn), " ")
    if move.kind == "roll":
        return phrase(who, f"rolls {move.args[0]}")
    if move.kind == "secret":
        return phrase(who, f"rolls {move.args[0]} secretly")
    if move.kind == "pass":
        return phrase(who, "passes the dice")
    return phrase(who, "closes the room")


def describe_outcome(state: Any, chance: Chance, outcome: Outcome) -> Phrase:
    """A roll in words: its total and dice (`13 [6 4 3 (1)]`), from the expression in the label."""
    if str(chance.label).endswith(" secretly"):
        return Phrase(("sealed",))  # opened later (net/log/secret_rolls.py)
    if " rolls " in chance.label:
        try:
            expr = parse(chance.label.split(" rolls ", 1)[1])  # the first: a label may say "rolls" too
            return Phrase((expr.describe(expr.faces(outcome.values)),))
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
        Option("turns", True, "seats roll in turn; false: anyone rolls at any moment, the host closes"),
    ),
    new=new,
    load=load,
    bots={"random": RollerBot, "greedy": RollerBot, "search": RollerBot, "roller": RollerBot},
    describe=describe,
    describe_outcome=describe_outcome,
)
