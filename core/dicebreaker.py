"""Dice Breaker, as ../shared/rules/dicebreaker.md.

Names of the dice, used in moves and logs:
- seat 0 is `A`, seat 1 `B`, ... seat 5 `F`; a seat's set is `A1`..`A5`. A die keeps its name when
  it is caught: the catcher throws `B3` as its own extra die, and it lands as the catcher's die.
- `T` is the Trump Die (battle), `L1`..`L4` the Latent Dice in the order they are thrown.
Moves: `throw A3` (a roll), `throw A3 B2` (a break of B2 in the arena), `throw T` (the Trump Die,
first of a battle round), `latent yes` / `latent no` (the claim step of a spinning die).

Readings of the rules that the document leaves open (each is ours, and tested):
- Every probability is an option written as a fraction `*_num` / `*_den`; an event of probability
  num/den happens when its uniform draw from range(den) is below num.
- One chance step per throw draws everything the throw may need, in this order: the thrown die's
  face, the target's new face (breaks only), out of the arena, caught, the catcher (among the other
  seats, counted from the thrower's left), spinning (battle only). Unused draws are ignored.
- The Trump Die's throw is a roll that always lands and never spins: it is nobody's die to lose.
- The Latent Dice claim step asks every seat once, from the thrower's left round to the thrower.
  The answers count as given at the same moment: a seat's view hides the answers of the others
  until every seat has answered. The draw among the seats that said yes is a uniform index into
  them in that asking order.
- Scores are kept exactly, in sixtieths of a point (SCORE_UNIT), so a split among any number of
  seats up to six is exact: 5 points split by two are 2.5 each, by three 5/3 each.
- A round where no hand reaches one pair scores nothing and passes the start to the seat after the
  previous starter.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, Mapping

from dicetable.core import dicebreaker_hands as hands
from dicetable.core.game import (
    CHANCE,
    BadOption,
    BadOutcome,
    Chance,
    GameInfo,
    GameState,
    IllegalMove,
    Move,
    Option,
    Outcome,
    Result,
)
from dicetable.core.phrase import Phrase, Seat, listing, phrase

LETTERS = "ABCDEF"
SET_SIZE = 5
LATENT_DICE = 4
TRUMP = "T"
SCORE_UNIT = 60  # scores count sixtieths of a point: every split among 2-6 seats is exact
EVERY_HAND = -1  # the owner of the Trump Die: it belongs to every hand
QUICK, BATTLE = "quick", "battle"

# Phases; the ones marked (chance) wait for an outcome.
THROWOFF = "throw-off"  # (chance) the starting die, broken by every contender
TRUMP_THROW = "trump"  # the starter throws the Trump Die (battle)
THROW = "throw"  # a seat throws one of its dice
ROLLING = "rolling"  # (chance) the thrown die's fate
LATENT = "latent"  # the seats answer whether they throw a Latent Die at the spinning die
LATENT_DRAW = "latent draw"  # (chance) which claimant throws, and whether its die stays
OVER = "over"
_CHANCE_PHASES = (THROWOFF, ROLLING, LATENT_DRAW)


@lru_cache(maxsize=64)
def _option_dict(options: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    return dict(options)  # shared between states: never mutated


def die_names(seat: int) -> tuple[str, ...]:
    return tuple(f"{LETTERS[seat]}{i}" for i in range(1, SET_SIZE + 1))


def _below(value: int, num: int) -> bool:
    """An event of probability num/den happened, for a uniform draw `value` from range(den)."""
    return value < num


@dataclass(frozen=True, slots=True)
class DiceBreakerState(GameState):
    options: tuple[tuple[str, Any], ...]
    seats: int
    phase: str = THROWOFF
    seat: int = CHANCE  # who acts now (CHANCE in a chance phase)
    round: int = 0  # 1 for the first round, once the throw-off is decided
    starter: int = -1  # who starts this round
    contenders: tuple[int, ...] = ()  # seats still breaking the starting die
    throwoff: tuple[tuple[tuple[int, int], ...], ...] = ()  # each throw-off pass: (seat, face)
    held: tuple[tuple[str, ...], ...] = ()  # per seat: dice of its set not yet thrown
    extra: tuple[tuple[str, ...], ...] = ()  # per seat: caught dice not yet thrown
    arena: tuple[tuple[str, int, int], ...] = ()  # (die, owner, face) in landing order
    out: tuple[str, ...] = ()  # dice out of the arena for the round
    latent_left: int = 0
    passed: int = 0  # quick play: seats that have thrown their whole set this round
    thrower: int = -1  # the seat of the last throw
    throw: tuple[str, ...] = ()  # the throw waiting for chance: (die,) or (die, target)
    spinning: str = ""  # the spinning die of an open Latent Dice claim step
    answers: tuple[str, ...] = ()  # per seat: "", "yes", "no" ("?" in a view: hidden)
    scores: tuple[int, ...] = ()  # per seat, in SCORE_UNITs
    rounds: tuple[tuple[Any, ...], ...] = ()  # (round, starter, categories, SCORE_UNITs won)
    last: tuple[Any, ...] = ()  # what the last chance step did, for logs and the screen
    result: Result | None = None

    # -- the fixed questions -------------------------------------------------------------------
    @property
    def actor(self) -> int | None:
        if self.phase == OVER:
            return None
        return CHANCE if self.phase in _CHANCE_PHASES else self.seat

    @property
    def option(self) -> dict[str, Any]:
        return _option_dict(self.options)

    @property
    def battle(self) -> bool:
        return self.option["mode"] == BATTLE

    def chance(self) -> Chance | None:
        o = self.option
        if self.phase == THROWOFF:
            label = "starting die" if not self.throwoff else "starting die, tied seats again"
            return Chance(label, ranges=(6,) * len(self.contenders))
        if self.phase == ROLLING:
            if self.throw == (TRUMP,):
                return Chance("throw of the Trump Die", ranges=(6,))
            ranges = [6]
            if len(self.throw) == 2:
                ranges.append(6)
            ranges += [o["out_den"], o["caught_den"], self.seats - 1]
            if self.battle:
                ranges.append(o["spinning_den"])
            label = f"throw of {self.throw[0]}" + (f" at {self.throw[1]}" if len(self.throw) == 2 else "")
            return Chance(label, ranges=tuple(ranges))
        if self.phase == LATENT_DRAW:
            claimants = len(self._claimants())
            return Chance(
                f"Latent Die at the spinning {self.spinning}",
                ranges=(claimants, 6, o["latent_stays_den"], 6),
            )
        return None

    def resolve(self, outcome: Outcome) -> "DiceBreakerState":
        chance = self.chance()
        if chance is None:
            raise BadOutcome(f"Dice Breaker does not wait for chance now: {self.prompt()}")
        chance.check(outcome)
        if self.phase == THROWOFF:
            return self._after_throwoff(outcome.values)
        if self.phase == ROLLING:
            return self._after_throw(list(outcome.values))
        return self._after_latent_draw(outcome.values)

    def legal_moves(self) -> tuple[Move, ...]:
        if self.phase == TRUMP_THROW:
            return (Move("throw", (TRUMP,)),)
        if self.phase == THROW:
            targets = self.targets(self.seat)
            return tuple(
                move
                for die in self.throwable(self.seat)
                for move in (Move("throw", (die,)), *(Move("throw", (die, t)) for t in targets))
            )
        if self.phase == LATENT:
            return (Move("latent", ("yes",)), Move("latent", ("no",)))
        return ()

    def apply(self, move: Move) -> "DiceBreakerState":
        if self.phase in (TRUMP_THROW, THROW) and move.kind == "throw" and 1 <= len(move.args) <= 2:
            die = move.args[0]
            if self.phase == TRUMP_THROW:
                if move.args != (TRUMP,):
                    raise IllegalMove(f"seat {self.seat} throws the Trump Die first: throw {TRUMP}")
                return replace(self, phase=ROLLING, throw=(TRUMP,), thrower=self.seat)
            if die not in self.throwable(self.seat):
                mine = ", ".join(self.throwable(self.seat))
                raise IllegalMove(f"seat {self.seat} cannot throw {die!r} now (its dice: {mine})")
            if len(move.args) == 2 and move.args[1] not in self.targets(self.seat):
                whose = "any die in the arena" if self.battle else "its own dice in the arena"
                raise IllegalMove(
                    f"{move.args[1]!r} is not a target for seat {self.seat}: it may break {whose}"
                )
            return replace(self, phase=ROLLING, throw=tuple(move.args), thrower=self.seat, last=())
        if self.phase == LATENT and move.kind == "latent" and move.args in (("yes",), ("no",)):
            answers = list(self.answers)
            answers[self.seat] = move.args[0]
            after = replace(self, answers=tuple(answers))
            order = self.asking_order()
            if self.seat != order[-1]:
                return replace(after, seat=order[order.index(self.seat) + 1])
            if after._claimants():
                return replace(after, phase=LATENT_DRAW, seat=CHANCE)
            return replace(after, spinning="", last=("latent", "", -1, 0, 0, 0))._next_turn()
        raise IllegalMove(f"{move} is not legal now: {self.prompt()}")

    def view(self, seat: int) -> "DiceBreakerState":
        """Everything is public except, during a claim step, the answers of the other seats
        ("?"); a view treats them as declines, since it cannot know them."""
        if self.phase != LATENT:
            return self
        hidden = tuple(a if s == seat or not a else "?" for s, a in enumerate(self.answers))
        return replace(self, answers=hidden)

    def sealed(self) -> tuple[int, ...]:
        """The seats the open Latent Dice claim still asks, in asking order: everyone answers at
        once in the rules, so over the network the answers are sealed until all are in."""
        if self.phase != LATENT:
            return ()
        order = self.asking_order()
        return order[order.index(self.seat):]

    def asking(self, seat: int) -> "DiceBreakerState":
        """The claim step as it asks `seat` (one of `sealed()`)."""
        if seat not in self.sealed():
            raise IllegalMove(f"seat {seat} is not asked now")
        return replace(self, seat=seat)

    def default_move(self) -> Move | None:
        """The answer of a seat that does not answer in time: it declines the Latent Die (Latent
        Dice: "players who do not answer in time decline"); None where no move has a default."""
        return Move("latent", ("no",)) if self.phase == LATENT else None

    def without(self, seat: int) -> "DiceBreakerState | None":
        """`seat`, out of the game after a default (FAIRNESS.md §4), is skipped where it would act:
        its dice not yet thrown this round are set aside (its dice in the arena stay as they lie),
        the next seat throws the Trump Die for it, and it declines every Latent Dice claim."""
        if self.actor != seat:
            return self
        if self.phase == TRUMP_THROW:
            return replace(self, seat=(seat + 1) % self.seats)
        if self.phase == LATENT:
            return self.apply(Move("latent", ("no",)))
        if self.phase == THROW:
            held, extra = list(self.held), list(self.extra)
            held[seat], extra[seat] = (), ()
            return replace(self, held=tuple(held), extra=tuple(extra), thrower=seat)._next_turn()
        return None

    # -- rules helpers -------------------------------------------------------------------------
    def throwable(self, seat: int) -> tuple[str, ...]:
        """The dice `seat` may throw now (Modes: quick play throws the set before caught dice)."""
        if self.phase != THROW or seat != self.seat:
            return ()
        if self.battle:
            return self.held[seat] + self.extra[seat]
        return self.held[seat] if self.passed < self.seats else self.extra[seat]

    def targets(self, seat: int) -> tuple[str, ...]:
        """The dice `seat` may break: its own in quick play, any in battle (Modes)."""
        return tuple(name for name, owner, _ in self.arena if self.battle or owner == seat)

    def asking_order(self) -> tuple[int, ...]:
        """The claim step asks from the thrower's left round to the thrower."""
        return tuple((self.thrower + k) % self.seats for k in range(1, self.seats + 1))

    def _claimants(self) -> tuple[int, ...]:
        return tuple(s for s in self.asking_order() if self.answers[s] == "yes")

    def hand(self, seat: int) -> tuple[int, ...]:
        """The faces of `seat`'s hand: its dice in the arena and the Trump Die."""
        return tuple(face for _, owner, face in self.arena if owner == seat or owner == EVERY_HAND)

    def points(self, seat: int) -> float:
        """`seat`'s score in points (a split may leave a fraction)."""
        return self.scores[seat] / SCORE_UNIT

    def face(self, name: str) -> int:
        return next(face for die, _, face in self.arena if die == name)

    def owner(self, name: str) -> int:
        return next(owner for die, owner, _ in self.arena if die == name)

    def _after_throwoff(self, values: tuple[int, ...]) -> "DiceBreakerState":
        faces = tuple(zip(self.contenders, (v + 1 for v in values)))
        low = min(face for _, face in faces)
        tied = tuple(seat for seat, face in faces if face == low)
        after = replace(self, throwoff=self.throwoff + (faces,), contenders=tied)
        if len(tied) > 1:
            return after  # players tied for lowest break again (Start and end of the game)
        return after._start_round(tied[0])

    def _start_round(self, starter: int) -> "DiceBreakerState":
        n = self.seats
        return replace(
            self,
            phase=TRUMP_THROW if self.battle else THROW,
            seat=starter,
            round=self.round + 1,
            starter=starter,
            contenders=(),
            held=tuple(die_names(s) for s in range(n)),
            extra=((),) * n,
            arena=(),
            out=(),
            latent_left=LATENT_DICE if self.battle else 0,
            passed=0,
            thrower=-1,
            throw=(),
            spinning="",
            answers=(),
        )

    def _after_throw(self, values: list[int]) -> "DiceBreakerState":
        o = self.option
        die = self.throw[0]
        if die == TRUMP:
            arena = self.arena + ((TRUMP, EVERY_HAND, values[0] + 1),)
            return replace(
                self, phase=THROW, seat=self.starter, arena=arena, throw=(),
                last=("trump", TRUMP, values[0] + 1),
            )
        face = values.pop(0) + 1
        arena = list(self.arena)
        target, broken = "", 0
        if len(self.throw) == 2:
            target = self.throw[1]
            i = next(i for i, (name, _, _) in enumerate(arena) if name == target)
            name, owner, _ = arena[i]
            broken = values.pop(0) + 1
            arena[i] = (name, owner, broken)  # a break always hits (Throws)
        out_v, caught_v, catcher_v = values[:3]
        spin_v = values[3] if self.battle else None
        seat = self.thrower
        held, extra = list(self.held), list(self.extra)
        if die in held[seat]:
            held[seat] = tuple(d for d in held[seat] if d != die)
        else:
            extra[seat] = tuple(d for d in extra[seat] if d != die)
        out, catcher, spinning = self.out, -1, False
        if _below(out_v, o["out_num"]):
            if _below(caught_v, o["caught_num"]):
                catcher = (seat + 1 + catcher_v) % self.seats
                extra[catcher] = extra[catcher] + (die,)
                fate = "caught"
            else:
                out = out + (die,)
                fate = "out"
        else:
            arena.append((die, seat, face))
            fate = "landed"
            spinning = spin_v is not None and _below(spin_v, o["spinning_num"])
        after = replace(
            self,
            held=tuple(held),
            extra=tuple(extra),
            arena=tuple(arena),
            out=out,
            throw=(),
            last=("throw", die, target, fate, catcher, face, broken, int(spinning)),  # broken: the target's new face
        )
        if spinning and self.latent_left > 0:
            first = (seat + 1) % self.seats
            return replace(after, phase=LATENT, seat=first, spinning=die, answers=("",) * self.seats)
        return after._next_turn()

    def _after_latent_draw(self, values: tuple[int, ...]) -> "DiceBreakerState":
        pick, spin_face, stay_v, latent_face = values
        claimant = self._claimants()[pick]
        name = f"L{LATENT_DICE - self.latent_left + 1}"
        arena = [
            (die, owner, spin_face + 1 if die == self.spinning else face) for die, owner, face in self.arena
        ]
        stays = _below(stay_v, self.option["latent_stays_num"])
        if stays:
            arena.append((name, claimant, latent_face + 1))
        after = replace(
            self,
            arena=tuple(arena),
            latent_left=self.latent_left - 1,
            spinning="",
            last=("latent", name, claimant, spin_face + 1, int(stays), latent_face + 1),
        )
        return after._next_turn()

    def _next_turn(self) -> "DiceBreakerState":
        """Who throws next after the thrower (Modes), or the end of the round."""
        n, seat = self.seats, self.thrower
        if self.battle:
            for k in range(1, n + 1):
                nxt = (seat + k) % n
                if self.held[nxt] or self.extra[nxt]:
                    return replace(self, phase=THROW, seat=nxt)
            return self._end_round()
        passed = self.passed
        if passed < n:
            if self.held[seat]:
                return replace(self, phase=THROW, seat=seat)
            passed += 1
            if passed < n:
                return replace(self, phase=THROW, seat=(self.starter + passed) % n, passed=passed)
            seat = self.starter  # caught dice follow in turn order from the starter
        for k in range(0, n):
            nxt = (seat + k) % n
            if self.extra[nxt]:
                return replace(self, phase=THROW, seat=nxt, passed=passed)
        return replace(self, passed=passed)._end_round()

    def _end_round(self) -> "DiceBreakerState":
        n = self.seats
        ranks = tuple(hands.rank(self.hand(s)) for s in range(n))
        categories = tuple(hands.CATEGORIES[r] for r in ranks)
        fives = tuple(s for s in range(n) if ranks[s] == hands.FIVE_OF_A_KIND)
        top = max(ranks)
        winners = tuple(s for s in range(n) if ranks[s] == top) if top > 0 and not fives else ()
        won = [0] * n
        for s in winners:
            won[s] = hands.POINTS[top] * SCORE_UNIT // len(winners)  # split exactly
        scores = tuple(a + b for a, b in zip(self.scores, won))
        summary = (self.round, self.starter, categories, tuple(won))
        after = replace(self, scores=scores, rounds=self.rounds + (summary,), seat=CHANCE)
        if fives:
            return after._end(fives, "five of a kind")
        target = self.option["target"] * SCORE_UNIT
        reached = [s for s in range(n) if scores[s] >= target]
        if reached:
            best = max(scores[s] for s in reached)
            winners = tuple(s for s in reached if scores[s] == best)
            return after._end(winners, f"{self.option['target']} points")
        if not winners:
            return after._start_round((self.starter + 1) % n)
        # The winner starts; tied winners: the nearest after the previous starter (seat order).
        nxt = next((self.starter + k) % n for k in range(1, n + 1) if (self.starter + k) % n in winners)
        return after._start_round(nxt)

    def _end(self, winners: tuple[int, ...], reason: str) -> "DiceBreakerState":
        result = Result(winners, tuple(self.points(s) for s in range(self.seats)), reason)
        return replace(self, phase=OVER, seat=CHANCE, result=result)

    # -- words for people ----------------------------------------------------------------------
    def prompt(self) -> str:
        """What is due now, in plain words."""
        if self.phase == THROWOFF:
            return "the starting die: " + ", ".join(f"seat {s}" for s in self.contenders) + " break it"
        if self.phase == TRUMP_THROW:
            return f"seat {self.seat} throws the Trump Die"
        if self.phase == THROW:
            return f"seat {self.seat} throws one of {', '.join(self.throwable(self.seat))}"
        if self.phase == ROLLING:
            return f"the throw of {' at '.join(self.throw)} lands"
        if self.phase == LATENT:
            return f"seat {self.seat}: throw a Latent Die at the spinning {self.spinning}? (latent yes/no)"
        if self.phase == LATENT_DRAW:
            return f"a Latent Die flies at the spinning {self.spinning}"
        return "the game is over"

    def key(self) -> tuple:
        """A compact identity of the position for search tables."""
        return (
            self.phase, self.seat, self.round, self.contenders, self.held, self.extra, self.arena,
            self.out, self.latent_left, self.passed, self.thrower, self.throw, self.spinning,
            self.answers, self.scores,
        )

    # -- plain data ----------------------------------------------------------------------------
    def to_data(self) -> dict:
        return {
            "options": [list(o) for o in self.options],
            "seats": self.seats,
            "phase": self.phase,
            "seat": self.seat,
            "round": self.round,
            "starter": self.starter,
            "contenders": list(self.contenders),
            "throwoff": [[list(p) for p in faces] for faces in self.throwoff],
            "held": [list(h) for h in self.held],
            "extra": [list(e) for e in self.extra],
            "arena": [list(d) for d in self.arena],
            "out": list(self.out),
            "latent_left": self.latent_left,
            "passed": self.passed,
            "thrower": self.thrower,
            "throw": list(self.throw),
            "spinning": self.spinning,
            "answers": list(self.answers),
            "scores": list(self.scores),
            "rounds": [[r, s, list(c), list(w)] for r, s, c, w in self.rounds],
            "last": list(self.last),
            "result": self.result.to_data() if self.result else None,
        }


_FIELDS = tuple(f.name for f in fields(DiceBreakerState))


def replace(state: DiceBreakerState, **changes: Any) -> DiceBreakerState:
    """dataclasses.replace without its checks: playouts make millions of states."""
    new = object.__new__(DiceBreakerState)
    for name in _FIELDS:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(state, name))
    return new


def load(data: Mapping) -> DiceBreakerState:
    return DiceBreakerState(
        options=tuple((k, v) for k, v in data["options"]),
        seats=data["seats"],
        phase=data["phase"],
        seat=data["seat"],
        round=data["round"],
        starter=data["starter"],
        contenders=tuple(data["contenders"]),
        throwoff=tuple(tuple(tuple(p) for p in faces) for faces in data["throwoff"]),
        held=tuple(tuple(h) for h in data["held"]),
        extra=tuple(tuple(e) for e in data["extra"]),
        arena=tuple(tuple(d) for d in data["arena"]),
        out=tuple(data["out"]),
        latent_left=data["latent_left"],
        passed=data["passed"],
        thrower=data["thrower"],
        throw=tuple(data["throw"]),
        spinning=data["spinning"],
        answers=tuple(data["answers"]),
        scores=tuple(data["scores"]),
        rounds=tuple((r, s, tuple(c), tuple(w)) for r, s, c, w in data["rounds"]),
        last=tuple(data["last"]),
        result=Result.from_data(data["result"]) if data["result"] else None,
    )


_FRACTIONS = (
    ("out", "out of the arena"),
    ("caught", "caught (once out)"),
    ("spinning", "spinning (battle, once landed)"),
    ("latent_stays", "a Latent Die stays"),
)


def new(seats: int, options: Mapping[str, Any]) -> DiceBreakerState:
    for name, words in _FRACTIONS:
        if options[f"{name}_num"] > options[f"{name}_den"]:
            raise BadOption(
                f"option {name}_num: the chance {words} cannot exceed 1 ({name}_num <= {name}_den)"
            )
    return DiceBreakerState(
        options=tuple(sorted(options.items())),
        seats=seats,
        contenders=tuple(range(seats)),
        scores=(0,) * seats,
    )


def describe(state: DiceBreakerState, move: Move) -> Phrase:
    """A move in words, as the move log shows it (`state` is the state it was made in)."""
    who = Seat(state.seat, LETTERS[state.seat])
    if move.kind == "throw" and move.args == (TRUMP,):
        return phrase(who, " throws the Trump Die")
    if move.kind == "throw" and len(move.args) == 1:
        return phrase(who, f" rolls {move.args[0]}")
    if move.kind == "throw" and len(move.args) == 2:
        target = move.args[1]
        owner = state.owner(target)
        whose = phrase("the Trump Die") if owner == EVERY_HAND else phrase(Seat(owner), f"'s {target}")
        return phrase(who, f" throws {move.args[0]} to break ", whose, f" (showing {state.face(target)})")
    if move.kind == "latent":
        return phrase(who, " answers the Latent Dice claim")  # the answer stays hidden until all answer
    return phrase(who, f": {move}")


def describe_outcome(state: DiceBreakerState | None, chance: Chance, outcome: Outcome) -> Phrase:
    """A chance outcome in words; `state` asked for it (None: told from the draws alone)."""
    return phrase(_outcome_words(state, chance, outcome))


def _outcome_words(state: DiceBreakerState | None, chance: Chance, outcome: Outcome) -> Phrase | str:
    values = [v + 1 for v in outcome.values]
    label = str(chance.label)
    if state is None or state.chance() != chance:
        if label.startswith("starting die"):
            return "starting die: " + " ".join(str(v) for v in values)
        if label.startswith("throw of"):
            dice = label[len("throw of "):].split(" at ")
            faces = ", ".join(f"{die} shows {face}" for die, face in zip(dice, values))
            rest = " ".join(str(v) for v in outcome.values[len(dice):])
            return faces + (f" (fate draws {rest})" if rest else "")
        return "draws " + " ".join(str(v) for v in outcome.values)
    after = state.resolve(outcome)
    if state.phase == THROWOFF:
        said = listing(phrase(Seat(s), f" {face}") for s, face in after.throwoff[-1])
        again = len(after.contenders) > 1 and after.phase == THROWOFF
        return phrase(said, ": ", "tied lowest, they break again" if again else phrase(Seat(after.starter), " starts"))
    last = after.last
    if last and last[0] == "trump":
        return f"the Trump Die shows {last[2]}"
    if last and last[0] == "throw":
        _, die, target, fate, catcher, face, broken, spinning = last
        words = f"{target} breaks to {broken}, " if target else ""
        if fate == "landed":
            return words + f"{die} lands on {face}" + (", spinning" if spinning else "")
        if fate == "caught":
            return phrase(words, f"{die} flies out, caught by ", Seat(catcher))
        return words + f"{die} flies out of the arena"
    if last and last[0] == "latent":
        _, name, claimant, spin_face, stays, face = last
        kept = f"{name} stays on {face}" if stays else "the Latent Die is lost"
        return phrase(Seat(claimant), f"'s Latent Die breaks {state.spinning} to {spin_face}; {kept}")
    return "draws " + " ".join(str(v) for v in outcome.values)


def heuristic(state: DiceBreakerState, seat: int) -> float:
    """Points ahead of the best other seat, counting half the value of the hands in the arena."""
    if state.result is not None or not state.held:
        return 0.0

    def standing(s: int) -> float:
        value = hands.POINTS[hands.rank(state.hand(s))]
        return state.points(s) + 0.5 * (10 if value is None else value)

    mine = standing(seat)
    best = max(standing(s) for s in range(state.seats) if s != seat)
    return max(-1.0, min(1.0, (mine - best) / state.option["target"]))


def _fraction(name: str, num: int, den: int, words: str) -> tuple[Option, Option]:
    return (
        Option(f"{name}_num", num, f"chance {words}: numerator", minimum=0),
        Option(f"{name}_den", den, f"chance {words}: denominator", minimum=1),
    )


GAME = GameInfo(
    name="dicebreaker",
    title="Dice Breaker",
    min_seats=2,
    max_seats=6,
    options=(
        Option("mode", BATTLE, "quick play or battle (Modes)", choices=(QUICK, BATTLE)),
        Option("target", 33, "the points that win the game", minimum=1),
        *_fraction("out", 1, 12, "that a thrown die flies out of the arena"),
        *_fraction("caught", 1, 2, "that a die out of the arena is caught"),
        *_fraction("spinning", 1, 6, "that a landed die is spinning (battle)"),
        *_fraction("latent_stays", 1, 2, "that a Latent Die stays in the arena"),
    ),
    new=new,
    load=load,
    rules_file="dicebreaker.md",
    describe=describe,
    heuristic=heuristic,
    describe_outcome=describe_outcome,
)
