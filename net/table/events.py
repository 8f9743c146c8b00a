"""What a table session tells its app: one frozen type per event (`session.emit(event)`, heard
through `on_event`, in the session's thread).

Seats are seat numbers. Words about seats are a `Phrase` (core/phrase.py): the app draws them with
the names it shows, the command line prints them as they are; words that came as text (a host's
refusal, a claim's reason) were read into one with `Phrase.read`, in net. Words shown as they are
(an error, a code) are a `str`. The app and the commands match on these types.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dicetable.core.game import Result
from dicetable.core.phrase import Phrase
from dicetable.net.log.replica import Record


# -- reaching the table ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Invited:
    """The host's invite (`dt1-...`), to hand to joiners."""

    invite: str


@dataclass(frozen=True)
class CodeOffered:
    """A short code at the relay that opens the table (net/reach/codes.py)."""

    code: str


@dataclass(frozen=True)
class CodeGone:
    """A code that no longer opens the table (`how`: "burned" or "expired"), told with its successor."""

    how: str
    said: str


@dataclass(frozen=True)
class TranscriptOpened:
    """Where this seat writes the table's transcript (once every seat has joined)."""

    path: Path


@dataclass(frozen=True)
class SeatHeld:
    """The host holds `seat` for the joiner with `key` until its join lands."""

    seat: int
    key: bytes
    said: Phrase


@dataclass(frozen=True)
class SeatReleased:
    """A held seat is free again: its joiner did not join, went silent, or was refused."""

    seat: int
    key: bytes
    said: Phrase


# -- the log -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Joined:
    seat: int
    name: str
    index: int


@dataclass(frozen=True)
class Started:
    """A game starts (the first, or a rematch every seat agreed to) at log entry `index`."""

    index: int


@dataclass(frozen=True)
class Chat:
    seat: int
    text: str
    index: int


@dataclass(frozen=True)
class Recorded:
    """Any entry the log took, after the events above that it also makes."""

    record: Record


@dataclass(frozen=True)
class YourTurn:
    seat: int
    index: int


@dataclass(frozen=True)
class Ended:
    """The game's result, and the line that says it (with the seats' names)."""

    result: Result
    said: str


@dataclass(frozen=True)
class Defaulted:
    """The game was decided by `claimant`'s claim against this seat: told with the names the log knows."""

    claimant: int
    said: Phrase


@dataclass(frozen=True)
class RematchAnswered:
    """`seat` agreed to the next game (`agree`) or declined it (PROTOCOL.md §5.10)."""

    seat: int
    agree: bool
    said: Phrase
    index: int


@dataclass(frozen=True)
class RematchGone:
    """An offer ended unanswered: the seats it waited for left."""

    said: Phrase


# -- faults, claims, presence ------------------------------------------------------------------------
@dataclass(frozen=True)
class Refused:
    """A frame refused: `seat` is its author, at fault (None: the frame names no one)."""

    seat: int | None
    said: Phrase


@dataclass(frozen=True)
class Fault:
    """A seat caught cheating, told once, the moment this seat knows (FAIRNESS.md §3)."""

    seat: int | None
    said: Phrase


@dataclass(frozen=True)
class ClaimDisputed:
    """A claim against this seat that its own view refutes (FAIRNESS.md §4): `claimant` made it."""

    claimant: int
    said: Phrase


@dataclass(frozen=True)
class Claimable:
    """`seat` is in default by this seat's clock: `why`, the reason its claim would carry."""

    seat: int
    why: Phrase


@dataclass(frozen=True)
class Unwitnessed:
    """A pending claim against `seat` that no seat left can witness without winning by it (FAIRNESS.md
    §5b): it stays pending and the game waits (net/log/claims.py `unwitnessable`)."""

    seat: int
    said: Phrase


@dataclass(frozen=True)
class Dropped:
    """`seat` went silent (seat 0 on a joiner: the host); `said`, why, when known."""

    seat: int
    said: str = ""


@dataclass(frozen=True)
class Returned:
    seat: int
    said: str = ""


@dataclass(frozen=True)
class Lingering:
    """The finished host stays open for seats still away, to tell them the outcome."""

    said: Phrase


@dataclass(frozen=True)
class Stalled:
    """`seat` is heard but stuck (net/table/stalls.py, PROTOCOL.md §10.6): `what` is "unordered" (its frames
    are not ordered), "behind" (its copy lags the orderer's log) or "held" (the orderer holds its frames
    back); `said` says so and what the person can do. Told once per stall."""

    seat: int
    what: str
    said: Phrase


@dataclass(frozen=True)
class StallCleared:
    """The stall `Stalled` told of `seat` (the same `what`) is over."""

    seat: int
    what: str
    said: Phrase


@dataclass(frozen=True)
class CodesStopped:
    """The host offers no short code now (net/reach/codes.py, PROTOCOL.md §13.4): why, and what to do."""

    said: str


@dataclass(frozen=True)
class Ordering:
    """`seat` took over ordering the log through the relay, in the host seat's place (net/table/succession.py)."""

    seat: int
    said: Phrase


@dataclass(frozen=True)
class AnswerPath:
    """This seat's answers reach `seat` only through the orderer (no link of their own, PROTOCOL.md
    §10.10): an orderer that holds all of this seat's packets could then have it claimed in default."""

    seat: int
    said: Phrase


@dataclass(frozen=True)
class Cut:
    """This rejoining host seat cut the tail of its copy that was never relayed (net/table/joiner.py)."""

    seat: int
    said: str


@dataclass(frozen=True)
class SecretShown:
    """A secret roll another seat showed this one (the game master, PROTOCOL.md §16.6 step 7): its box
    opened, its secret checked against the roll's commitment, its dice drawn; for this seat's eyes."""

    seat: int
    said: str


@dataclass(frozen=True)
class Failed:
    """Something this seat could not do, or the table's end: one sentence for a person."""

    said: str


# -- `dicetable deal` (net/table/deal_table.py) -------------------------------------------------------
@dataclass(frozen=True)
class CardDealt:
    """This seat's own card, as a colour."""

    colour: str


@dataclass(frozen=True)
class DealVerified:
    """Every peer's part of the deal checked: the whole assignment, `seat 0 <colour>, ...`."""

    assignment: str


@dataclass(frozen=True)
class Watching:
    """Who watches the table without a seat (net/table/watching.py): how many, and the first few by name."""

    count: int
    names: tuple[str, ...]


NetEvent = (Invited | CodeOffered | CodeGone | TranscriptOpened | SeatHeld | SeatReleased | Joined | Started | Chat
            | Recorded | YourTurn | Ended | Defaulted | RematchAnswered | RematchGone | Refused | Fault | ClaimDisputed
            | Claimable | Unwitnessed | Dropped | Returned | Stalled | StallCleared | CodesStopped | Lingering | Ordering
            | AnswerPath | Cut | SecretShown | Failed | CardDealt | DealVerified | Watching)


def code_event(kind: str, text: str) -> CodeOffered | CodesStopped:
    """A short-code offer's news (net/reach/codes.py `CodeHost.events`): a new code, or why there is none."""
    return CodeOffered(text) if kind == "code" else CodesStopped(text)
