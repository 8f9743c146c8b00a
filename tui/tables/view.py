"""What a table shows its screen: the `TableView` snapshot and the typed things in it.

Every table (tui/tables/controller.py `LocalTable`, tui/tables/net_table.py `NetTable`) hands its
screen these, never text to be read back: the seats that core's and net's words name stay seats
(core/phrase.py `Phrase`) until a widget draws them with the names of the moment (`words(names)`).
No Textual here, so the history and the saves read the same types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from dicetable.core.game import CHANCE, GameInfo, Result
from dicetable.core.phrase import Phrase, seat_name

# Event statuses, as the fairness panel shows them.
LOCAL = "local"  # drawn from this computer's random numbers: nothing to verify
VERIFIED = "verified"  # every seat's reveal checked against its commitment
WAITING = "waiting"  # some reveals are still due
FAULT = "fault"  # a reveal did not open its commitment; `detail` names the seat
OUT = "out"  # the seat was out of the game (it left a room, or defaulted): its reveal counts as zeros


def told_apart(names: Sequence[str], fingerprints: Sequence[str]) -> tuple[str, ...]:
    """The seats' names as a table shows them: people who chose one name are told apart by the start
    of their key's fingerprint, `Ann (K3QF)` (longer when those starts match too)."""
    shown = []
    for seat, name in enumerate(names):
        twins = [s for s, other in enumerate(names) if other == name]
        if len(twins) == 1 or not fingerprints[seat]:
            shown.append(name)
            continue
        size = 4  # one group of `ABCD-EFGH-...`, then two, ...
        while size < len(fingerprints[seat]) and len({fingerprints[s][:size] for s in twins}) < len(twins):
            size += 5
        shown.append(f"{name} ({fingerprints[seat][:size]})")
    return tuple(shown)


def result_words(result: Result, names: Sequence[str]) -> str:
    """A result's line with names, seats in its reason too: `Ann wins (Bob resigned)`."""
    return result.said().words(names)


def reason_words(result: Result, names: Sequence[str]) -> str:
    """Why a game ended, with names: `Bob in default`."""
    return result.reason.words(names)


# -- the move log: one small type per kind of entry; `seat` is the seat that acted, CHANCE if none --
@dataclass(frozen=True)
class Moved:
    """A seat's move, claim or resignation, in the engine's (or the session's) words."""

    seat: int
    what: Phrase

    def words(self, names: Sequence[str]) -> str:
        return self.what.words(names)


@dataclass(frozen=True)
class Decided:
    """A random event decided: the chance's label and its outcome."""

    label: Phrase
    outcome: Phrase
    seat: ClassVar[int] = CHANCE

    def words(self, names: Sequence[str]) -> str:
        return f"{self.label.words(names)}: {self.outcome.words(names)}"


@dataclass(frozen=True)
class SatDown:
    """A seat taken at a network table: the name its player gave and its key's fingerprint."""

    taken: int
    name: str
    key: str
    seat: ClassVar[int] = CHANCE

    def words(self, names: Sequence[str]) -> str:
        return f"{seat_name(self.taken, names)} sits down ({self.name}, key {self.key})"


@dataclass(frozen=True)
class Written:
    """An entry read back from the history file: the words as the table showed them."""

    seat: int
    text: str

    def words(self, names: Sequence[str]) -> str:
        return self.text


LogEntry = Moved | Decided | SatDown | Written


@dataclass(frozen=True)
class SeatLine:
    """A seat as the seats panel shows it."""

    name: str
    kind: str  # "human" (at this terminal), "bot", or "remote"
    detail: str = ""  # "greedy bot", "this terminal", a host address...
    fingerprint: str = ""
    connected: bool = True
    deadline: float | None = None  # time.monotonic() by which this seat must act (tables with deadlines)


@dataclass(frozen=True)
class Reveal:
    """One seat's part in one random event (network tables)."""

    seat: int
    status: str  # VERIFIED, WAITING or FAULT
    detail: str = ""  # a short prefix of the revealed value, or the fault in words


@dataclass(frozen=True)
class FairEvent:
    """One random event: what was decided, how, and whether everyone's part checks out."""

    number: int
    label: Phrase  # the Chance label: "setup roll"
    outcome: Phrase  # the outcome (empty while reveals are still due)
    status: str = LOCAL
    reveals: tuple[Reveal, ...] = ()


@dataclass(frozen=True)
class TableView:
    """A snapshot of a table: everything a screen draws, safe to hand across threads."""

    game: GameInfo
    state: Any
    seats: tuple[SeatLine, ...]
    local_seats: frozenset[int]  # the seats this terminal plays
    log: tuple[LogEntry, ...] = ()
    events: tuple[FairEvent, ...] = ()
    network: bool = False
    transcript: str = ""  # the transcript file of a network table
    note: str = ""  # what the table waits for, when it is not a seat's move ("waiting for Bob")
    thinking: int | None = None  # a bot seat that is working out its move
    final: Any = None  # a Result the engine did not make (a resignation, a default claim)
    acting: frozenset[int] | None = None  # at a sealed step: the seats still to answer (None: the actor)
    # a network table's next game (net/log/rematch.py): "" none, "open" this seat may offer,
    # "offered" it agreed and waits, "asked" another seat offered, "declined" or "closed": no more games
    rematch: str = ""
    out: frozenset[int] = frozenset()  # seats out of the game: left a room that goes on, or in default
    peeked: tuple[tuple[int, tuple[int, ...]], ...] = ()  # this terminal's sealed secret rolls: (roll index, faces)
    watching: int = 0  # people who follow the table without a seat (net/table/watching.py), as the seats are told
    watchers: tuple[str, ...] = ()  # ... the first few of them by name
    # secret rolls shown to one seat, the game master (PROTOCOL.md §16.6 step 7): (roll index, that seat),
    # and those shown to this terminal's seat with the dice its client checked: (roll index, faces)
    shown: tuple[tuple[int, int], ...] = ()
    shown_me: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @property
    def actor(self) -> int | None:
        if self.final is not None or self.state is None:
            return None
        return self.state.actor

    @property
    def result(self):
        if self.final is not None:
            return self.final
        return self.state.result if self.state is not None else None

    @property
    def names(self) -> list[str]:
        return [seat.name for seat in self.seats]

    def my_turn(self) -> bool:
        if self.acting is not None:
            return self.final is None and bool(self.acting & self.local_seats)
        return self.actor in self.local_seats
