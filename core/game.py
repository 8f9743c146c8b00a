"""The one shape every game has: description, options, moves, chance, result.

A game module provides a `GameInfo` and an immutable state class. The state answers a fixed set of
questions (ARCHITECTURE.md, "core: one shape for every game"):

    state.actor            -> seat number, CHANCE, ANYONE, or None when the game is over
    state.legal_moves()    -> tuple[Move, ...] for the seat that acts
    state.apply(move)      -> next state (raises IllegalMove)
    state.chance()         -> the Chance the state waits for (when actor is CHANCE)
    state.resolve(outcome) -> next state, fed with an Outcome from a random source
    state.view(seat)       -> what that seat may see (hidden things as unknown handles)
    state.result           -> Result or None
    state.to_data()        -> plain msgpack-able data; GameInfo.load(data) rebuilds the state

What a game can do beyond that set is declared on `GameState`, the base of every state: each
member answers as a game without the capability would, and a game overrides the ones its rules have,
so callers ask every state the same questions and never probe for members.

Who may act. By default exactly one seat may move: the actor. A state may instead let several
seats move (a dice room where anyone rolls at any moment) by overriding `may_act(seat)` and
`apply_as(seat, move)`, which tells the state who moved; it uses `actor == ANYONE` when it waits for
no seat in particular (no seat is due: no turn deadline, no default claim). Such a state may even
accept moves while its actor is CHANCE (a roll made while another is being decided is queued by the
state; the chance it asks for must not change).

Sealed answers. A step where several seats each give one answer that no seat may see before all
have answered (Dice Breaker's Latent Dice claim) overrides `sealed()` (the seats the step asks, in the
order the state applies their answers) and `asking(seat)` (the state as it asks `seat`: that seat's
prompt and the check of its answer). A local table asks the seats one by one and the state's `view`
hides answers already given; over the network each seat seals its answer with a hash commitment and
the answers are opened, then applied in this order, only once every seat has sealed one
(net/log/replica.py).

Randomness never originates here: outcomes come from a source (core/chance.py locally, net/chance/outcomes.py
over the network), which is why every engine is deterministic and replayable.

Hidden cards (FAIRNESS.md §2). A Chance with a `deck` is a step of a dealer-less deal; it has one of
three forms, and for each the Outcome may be EMPTY, meaning "the resolving state does not learn this":
  - hidden shuffle: `private == NOBODY`, `shuffle == len(cards)`; `cards` lists the card identities
    forming the new deck. No seat learns the order: peers resolve with an empty Outcome (net/cards/deal.py
    does the encrypted shuffle). A local runner holding the full state may pass the permutation
    (position i of the deck then holds cards[permutation[i]]), which LocalSource does by itself.
  - private draw: `private == seat`, `positions` = the deck positions dealt to that seat. The seat
    resolves with `values` = the identities of the cards at those positions; every other peer with an
    empty Outcome (the state records unknown handles). A full state that knows the deck order
    resolves with an empty Outcome too (LocalSource gives one, since `ranges` is empty).
  - reveal: `reveal == seat`: all of that seat's cards still hidden are opened; `values` lists them
    deck by deck in the order the decks were formed, by position within a deck; every peer gets
    the same values (a full state may resolve with an empty Outcome).
Paying or discarding a hidden card is a move naming the card: the move itself reveals it (the network
checks the named card against the holder's commitment); the state's `paid_cards(move)` names them. Public chances (dice, piles, event decks)
leave all these fields at their defaults, so games without hidden cards are unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

from dicetable.core.phrase import Phrase, Seat, listing, phrase

CHANCE = -1  # the actor of a state that waits for a random outcome
NOBODY = -2  # Chance.private of a hidden shuffle: no seat learns the order
ANYONE = -3  # the actor of a state where seats may move (`may_act`) but none is due


class GameError(Exception):
    """Base of the errors a person can meet while using an engine."""


class IllegalMove(GameError):
    """A move that is not legal in the state it was applied to."""


class BadOption(GameError):
    """An unknown option, or a value outside what the option allows."""


class BadOutcome(GameError):
    """A chance outcome that does not fit the Chance the state asked for."""


@dataclass(frozen=True, slots=True)
class Move:
    """A move as plain data: a kind in the rules' own words and its arguments.

    `str(Move("place", ("b2",)))` is `"place b2"`, the notation used in logs and on the command line.
    Arguments are str or int only, so a move is msgpack-able as it is.
    """

    kind: str
    args: tuple[str | int, ...] = ()

    def __str__(self) -> str:
        return " ".join([self.kind, *map(str, self.args)])

    def to_data(self) -> list:
        return [self.kind, *self.args]

    @classmethod
    def from_data(cls, data: Any) -> "Move":
        if not isinstance(data, (list, tuple)) or not data or not isinstance(data[0], str):
            raise IllegalMove(f"a move is a list [kind, args...], not {data!r:.60}")
        args = tuple(data[1:])
        for arg in args:
            if type(arg) not in (str, int):
                raise IllegalMove(f"move arguments are strings or integers, not {arg!r:.60}")
        return cls(data[0], args)

    @classmethod
    def parse(cls, text: str) -> "Move":
        """Read the notation of `__str__`; integer-looking arguments become ints."""
        words = text.split()
        if not words:
            raise IllegalMove("an empty move")
        return cls(words[0], tuple(int(w) if w.lstrip("-").isdigit() else w for w in words[1:]))


@dataclass(frozen=True, slots=True)
class Chance:
    """What a state needs from chance: one uniform integer in range(n) per entry of `ranges`,
    then, when `shuffle` > 0, one uniformly random permutation of range(shuffle).

    `label` says what is being decided ("setup roll", "draw from pile 2"), plain words kept as a Phrase.
    `private`, `deck`, `positions`, `cards` and `reveal` describe hidden-card steps (module docstring).
    """

    label: Phrase
    ranges: tuple[int, ...] = ()
    shuffle: int = 0
    private: int | None = None  # hidden draw: the seat that alone learns it; NOBODY: hidden shuffle
    deck: str = ""  # the hidden deck this step shuffles, draws from or reveals ("" = public chance)
    positions: tuple[int, ...] = ()  # hidden draw: the deck positions dealt
    cards: tuple[int, ...] = ()  # hidden shuffle: the card identities forming the deck
    reveal: int | None = None  # reveal: the seat whose hidden cards are all opened

    def __post_init__(self) -> None:
        if not isinstance(self.label, Phrase):  # plain words
            object.__setattr__(self, "label", Phrase((self.label,)))
        if any(n < 1 for n in self.ranges) or self.shuffle < 0:
            raise ValueError(f"a chance range must be at least 1: {self}")

    @property
    def hidden(self) -> bool:
        """True for a step of a hidden deal, whose Outcome may be empty (module docstring)."""
        return bool(self.deck)

    def check(self, outcome: "Outcome") -> None:
        """Raise BadOutcome unless `outcome` is one this chance could produce."""
        if self.hidden:
            self._check_hidden(outcome)
            return
        if len(outcome.values) != len(self.ranges):
            raise BadOutcome(f"{self.label}: {len(outcome.values)} values for {len(self.ranges)} draws")
        for value, n in zip(outcome.values, self.ranges):
            if type(value) is not int or not 0 <= value < n:
                raise BadOutcome(f"{self.label}: value {value!r} outside range({n})")
        if sorted(outcome.permutation) != list(range(self.shuffle)) or any(
            type(p) is not int for p in outcome.permutation
        ):
            raise BadOutcome(f"{self.label}: not a permutation of {self.shuffle}")

    def _check_hidden(self, outcome: "Outcome") -> None:
        if any(type(v) is not int or v < 0 for v in outcome.values):
            raise BadOutcome(f"{self.label}: card identities are whole numbers from 0")
        if self.private == NOBODY:
            if outcome.values:
                raise BadOutcome(f"{self.label}: a hidden shuffle carries no values")
        elif self.private is not None:
            if outcome.values and len(outcome.values) != len(self.positions):
                raise BadOutcome(
                    f"{self.label}: {len(outcome.values)} cards for {len(self.positions)} positions"
                )
        if outcome.permutation and (
            self.private != NOBODY
            or sorted(outcome.permutation) != list(range(self.shuffle))
            or any(type(p) is not int for p in outcome.permutation)
        ):
            raise BadOutcome(f"{self.label}: not a permutation of {self.shuffle}")


@dataclass(frozen=True, slots=True)
class Outcome:
    """The random values that resolve one Chance."""

    values: tuple[int, ...] = ()
    permutation: tuple[int, ...] = ()

    def to_data(self) -> list:
        return [list(self.values), list(self.permutation)]

    @classmethod
    def from_data(cls, data: Any) -> "Outcome":
        if (
            not isinstance(data, (list, tuple))
            or len(data) != 2
            or not all(isinstance(part, (list, tuple)) for part in data)
        ):
            raise BadOutcome(f"an outcome is [values, permutation], not {data!r:.60}")
        return cls(tuple(data[0]), tuple(data[1]))


@dataclass(frozen=True, slots=True)
class Result:
    """How a game ended: the winning seats (empty for a draw), scores per seat, and why (plain words
    kept as a Phrase)."""

    winners: tuple[int, ...]
    scores: tuple[float, ...]
    reason: Phrase

    def __post_init__(self) -> None:
        if not isinstance(self.reason, Phrase):  # plain words
            object.__setattr__(self, "reason", Phrase((self.reason,)))

    def to_data(self) -> dict:
        return {"winners": list(self.winners), "scores": list(self.scores), "reason": str(self.reason)}

    @classmethod
    def from_data(cls, data: Mapping) -> "Result":
        return cls(tuple(data["winners"]), tuple(data["scores"]), Phrase.read(data["reason"]))

    def said(self, names: "Sequence[str] | None" = None) -> Phrase:
        """One line, its seats kept as seats (the winners by `names` when given): `seat 0 wins (trice)`,
        `draw (threefold repetition)`, `seat 1, seat 2 share the win (...)`."""
        who = (lambda s: names[s]) if names else Seat
        if not self.winners:
            return phrase("draw (", self.reason, ")")
        if len(self.winners) == 1:
            return phrase(who(self.winners[0]), " wins (", self.reason, ")")
        return phrase(listing(who(s) for s in self.winners), " share the win (", self.reason, ")")

    def describe(self, names: "Sequence[str] | None" = None) -> str:
        """`said(names)` in plain words."""
        return str(self.said(names))


class GameState:
    """The base of every game state: what a game may be able to do, each member answering as a game
    without that capability does (module docstring). A game overrides what its rules have."""

    __slots__ = ()

    PAID_DECK: ClassVar[str] = ""  # the hidden decks `paid_cards` come from (a Chance.deck prefix; "" = any)

    def may_act(self, seat: int) -> bool:
        """May `seat` move now: by default only the actor."""
        return seat == self.actor

    def apply_as(self, seat: int, move: Move) -> "GameState":
        """`move` made by `seat`: a state where several seats may move is told who moved."""
        return self.apply(move)

    def sealed(self) -> tuple[int, ...]:
        """The seats a sealed step asks, in the order their answers apply (none: not a sealed step)."""
        return ()

    def asking(self, seat: int) -> "GameState":
        """The sealed step as it asks `seat`, one of `sealed()`."""
        raise IllegalMove(f"seat {seat} is not asked now")

    def default_move(self) -> Move | None:
        """The answer of a seat that does not answer in time, where its step has one (FAIRNESS.md §4)."""
        return None

    def welcomes_back(self, seat: int) -> bool:
        """May `seat`, out of the game (it left, or after a default), come back now: no, but in a game
        whose rules take a returning seat (a free dice room)."""
        return False

    def chances_ordered(self) -> int:
        """Chance steps the game has ordered and not had decided yet: the one it asks for now, and any
        queued behind it (a free dice room's rolls). A seat joining a room that takes newcomers
        (`welcomes_back`) reveals only from the step after them (PROTOCOL.md §5.2)."""
        return 1 if self.actor == CHANCE else 0

    def without(self, seat: int) -> "GameState | None":
        """The game going on without `seat`, out after a default (FAIRNESS.md §4): skipped where it
        would act, the state as it is elsewhere; None where the rules cannot go on without it."""
        return None

    def score_now(self) -> Result | None:
        """The result of a game cut short as it stands, where its rules score one."""
        return None

    def rematch_options(self) -> dict[str, Any] | None:
        """The options of the next game at the table, where the rules decide them (TRIAD: the colours
        stay, the other player starts); None: a rematch is made as the first game was."""
        return None

    @property
    def first(self) -> int:
        """The seat that starts, once chance has decided it; -1 before, or where no draw decides it
        (a local table seats a person first or second by it)."""
        return -1

    def paid_cards(self, move: Move) -> tuple[int, ...] | None:
        """The identities of the hidden cards `move` pays or discards (module docstring, "Hidden
        cards"); None in a game without hidden hands to pay from."""
        return None

    def key(self) -> Hashable | None:
        """A compact identity of the position for search tables; None: a search keeps none."""
        return None


class Bot:
    """The base of every bot (`GameInfo.bots` makes them): `choose(view) -> Move` for its seat's view.

    `hurry` is a searching bot's threading.Event: set, the bot plays the best move it has found so
    far (core/bots.py `hurry`); None, the default, for a bot that answers at once.
    """

    name: str
    hurry: threading.Event | None = None

    def choose(self, view: Any) -> Move:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Option:
    """A game option with its default; `choices` or `minimum`/`maximum` bound its values."""

    name: str
    default: int | bool | str
    help: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def coerce(self, value: Any) -> int | bool | str:
        """Turn a value (possibly command-line text) into this option's type, or raise BadOption."""
        kind = type(self.default)
        if isinstance(value, str) and kind is not str:
            text = value.strip().lower()
            if kind is bool:
                if text not in ("true", "false", "yes", "no", "1", "0", "on", "off"):
                    raise BadOption(f"option {self.name}: {value!r} is not true or false")
                value = text in ("true", "yes", "1", "on")
            else:
                try:
                    value = int(text)
                except ValueError:
                    raise BadOption(f"option {self.name}: {value!r} is not a whole number") from None
        if type(value) is not kind:
            raise BadOption(f"option {self.name}: {value!r} is not a {kind.__name__}")
        if self.choices and value not in self.choices:
            raise BadOption(f"option {self.name}: {value!r} is not one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise BadOption(f"option {self.name}: {value} is below {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise BadOption(f"option {self.name}: {value} is above {self.maximum}")
        return value


def outcome_values(state: Any, chance: Chance, outcome: Outcome) -> Phrase:
    """The default words for a random outcome: its raw values and order."""
    parts = []
    if outcome.values:
        parts.append("values " + " ".join(str(v) for v in outcome.values))
    if outcome.permutation:
        parts.append("order " + " ".join(str(p) for p in outcome.permutation))
    return Phrase((", ".join(parts) or "nothing drawn",))


@dataclass(frozen=True)
class GameInfo:
    """A game's description and its entry points.

    `new(seats, options)` makes the initial state; `load(data)` rebuilds any state from `to_data()`;
    `bots` maps a bot name to a factory `(rng, **settings) -> Bot` (above; core/bots.py); every game names
    its bots `random`, `greedy` and `search`.
    """

    name: str
    title: str
    min_seats: int
    max_seats: int
    options: tuple[Option, ...]
    new: Callable[[int, Mapping[str, Any]], Any]
    load: Callable[[Any], Any]
    bots: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    rules_file: str = ""  # the file name under shared/rules (and tui/rules) with the text we play
    # describe(state, move) -> the move in words, its seats as seats, as made in `state` (move log, transcripts)
    describe: Callable[[Any, Move], Phrase] = lambda state, move: Phrase((str(move),))
    # heuristic(state, seat) -> a value in [-1, 1] for `seat` of a position that is not over
    heuristic: Callable[[Any, int], float] = lambda state, seat: 0.0
    # describe_outcome(state, chance, outcome) -> the outcome in words, its seats as seats;
    # `state` asked for `chance` (None when unknown) (fairness panel, move log)
    describe_outcome: Callable[[Any, Chance, Outcome], Phrase] = outcome_values

    def resolve_options(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """All options with defaults filled in; an unknown name or bad value raises BadOption."""
        by_name = {o.name: o for o in self.options}
        resolved = {o.name: o.default for o in self.options}
        for key, value in (given or {}).items():
            if key not in by_name:
                known = ", ".join(by_name) or "none"
                raise BadOption(f"{self.name} has no option {key!r} (options: {known})")
            resolved[key] = by_name[key].coerce(value)
        return resolved

    def check_seats(self, seats: int) -> None:
        if type(seats) is not int or not self.min_seats <= seats <= self.max_seats:
            span = (
                f"{self.min_seats}"
                if self.min_seats == self.max_seats
                else f"{self.min_seats} to {self.max_seats}"
            )
            raise BadOption(f"{self.title} is played by {span} players, not {seats}")

    def start(self, seats: int | None = None, options: Mapping[str, Any] | None = None):
        """The initial state for `seats` (default: the minimum) with checked options."""
        seats = self.min_seats if seats is None else seats
        self.check_seats(seats)
        return self.new(seats, self.resolve_options(options))
