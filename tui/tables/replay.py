"""A finished (or stopped) table replayed from its transcript, step by step, checked as it goes.

`Replay` is a `TableController` (tui/tables/controller.py) that nobody can act at: the game's own
screen (tui/screens/by_game.py `screen_for`, with the replay keys of tui/screens/replay_screen.py)
draws its `TableView` snapshots exactly as at a live table, and `submit` refuses.

The transcript's frames go through a real Replica one by one by net/log/verify.py's
`verify_transcript` — the same check as `dicetable verify`, no second copy of it — and after each
accepted frame that is a step (a move, a chance step, a resignation or claim) the replica as it
stands is taken as a `TableView`, built by the same functions as a network table's
(tui/tables/net_table.py). So a step shows only what the log had made public by then (no seat's
secrets are used: a hidden hand appears when the transcript opens it), and a refused frame ends the
steps there, the last one carrying the verdict's words.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.messages import MoveRefused, TableChanged
from dicetable.tui.tables.net_table import fair_events, replica_log, seat_names
from dicetable.tui.tables.view import LogEntry, Phrase, SeatLine, TableView

# Records that change the table without a step of the engine (net/log/replica.py's kinds).
SPOKEN = ("resign", "claim", "witness", "dispute", "rematch")

# A "deal" record that moved the game on, by its step (net/cards/deal.py lists them).
DEAL_WORDS = {
    "lock": "the deck is shuffled face down",
    "hold": "cards dealt face down",
    "show": "a card shown",
    "open": "cards turned face up",
    "opening": "every card opened for the end-of-game check",
}


class ReplayError(Exception):
    """A file that cannot be replayed: missing, not a transcript, damaged, or no game in it (one line)."""


@dataclass(frozen=True)
class Step:
    """One place of the replay: the table as it stood, and what had just happened there."""

    view: TableView
    what: LogEntry | str  # the log entry this step added, or plain words when it added none


def replica_view(replica, transcript: str = "") -> TableView:
    """The table as `replica` holds it now, for a person watching: no seat is this terminal's."""
    names = seat_names(replica)
    seats = tuple(
        SeatLine(names[seat], "replay", "", info.fingerprint) if info is not None  # neither here nor away
        else SeatLine(f"seat {seat}", "free", "never taken", connected=False)
        for seat, info in enumerate(replica.seats)
    )
    events = fair_events(replica)
    waiting = replica.waiting_for
    sealed = frozenset(waiting.seats) if waiting.action == "seal" and replica.phase == "playing" else None
    return TableView(
        game=replica.game,
        state=replica.state,
        seats=seats,
        local_seats=frozenset(),
        log=tuple(replica_log(replica, events)),
        events=events,
        network=True,
        transcript=transcript,
        final=replica.forced,
        acting=sealed,
    )


class Replay(TableController):
    """The steps of one transcript: `at` is the step shown, 0 the table as it started."""

    replayed = True

    def __init__(self, transcript, path: str | os.PathLike = "") -> None:
        from dicetable.net.log.verify import verify_transcript

        self.path = str(path)
        self.steps: list[Step] = []
        self._mark = None  # the (state, result) of the last step taken
        self.verdict = verify_transcript(transcript, watch=self._watch)
        if not self.steps:
            raise ReplayError(f"{self.path or 'the transcript'}: no game to replay: {self.verdict.line()}")
        replica = self.verdict.replica
        if not self.verdict.valid and fair_events(replica) != self.steps[-1].view.events:
            self._take(replica, "reveal")  # reveals the log holds for an event it never decided
        if not self.verdict.valid:  # the replay stops at the last step that checks, saying why
            last = self.steps[-1]
            self.steps[-1] = replace(last, view=replace(last.view, note=self.verdict.line()))
        self.at = 0
        self.target = None

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Replay":
        """The replay of the transcript at `path`; ReplayError (one line) when there is none."""
        from dicetable.net.log.transcript import DamagedTranscript, NotATranscript, read

        try:
            transcript = read(path)
        except NotATranscript as error:
            raise ReplayError(str(error)) from None
        except DamagedTranscript as error:
            raise ReplayError(f"{path}: {error}") from None
        return cls(transcript, path)

    def _watch(self, replica, record) -> None:
        """After each accepted frame: a new step when the table moved on (verify_transcript's watch)."""
        if replica.state is None:
            return  # not started yet: nothing to draw
        mark = (replica.state, replica.result)  # a new state, or an end the engine did not make
        if self._mark is not None and mark[0] is self._mark[0] and mark[1] == self._mark[1] \
                and record.kind not in SPOKEN:
            return  # a reveal still short of its event, a key, a receipt: no step of the table
        self._mark = mark
        self._take(replica, record.kind, record.envelope.body.get("step") if record.kind == "deal" else None)

    def _take(self, replica, kind: str, step=None) -> None:
        before = len(self.steps[-1].view.log) if self.steps else None
        view = replica_view(replica, self.path)
        if before is None:
            what: LogEntry | str = "the table starts"
        elif len(view.log) > before:
            what = view.log[-1]
        elif kind == "deal":
            what = DEAL_WORDS.get(step, "a card deal goes on")
        elif kind == "reveal":
            what = "reveals for a roll not yet decided"
        else:
            what = f"the log goes on ({kind})"
        self.steps.append(Step(view, what))

    # -- moving through the steps ------------------------------------------------------------------
    @property
    def last(self) -> int:
        return len(self.steps) - 1

    def go(self, step: int) -> None:
        """Show step `step` (kept within the first and the last)."""
        step = max(0, min(step, self.last))
        if step != self.at:
            self.at = step
            self._changed()

    def step(self, by: int) -> None:
        self.go(self.at + by)

    @property
    def stopped(self) -> bool:
        """The transcript does not check all through: its last step is where the replay stops."""
        return not self.verdict.valid

    def place_of(self, view: TableView) -> int:
        """The step whose view `view` is (a screen drawing a message that was on its way), else `at`."""
        return next((n for n, step in enumerate(self.steps) if step.view is view), self.at)

    def where(self, step: int | None = None) -> str:
        """Where the replay stands (or step `step` is): `step 12 of 40`."""
        return f"step {self.at if step is None else step} of {self.last}"

    def what(self, step: int | None = None) -> str:
        """What happened at the step shown (or at `step`), with the seats' names."""
        shown = self.steps[self.at if step is None else step]
        return shown.what if isinstance(shown.what, str) else shown.what.words(shown.view.names)

    # -- the controller interface --------------------------------------------------------------
    @property
    def game(self):
        return self.steps[0].view.game

    def attach(self, target) -> None:
        self.target = target
        self._changed()

    def view(self) -> TableView:
        return self.steps[self.at].view

    def submit(self, move) -> None:
        if self.target is not None:
            said = Phrase(("a replay: nothing can be played here; ← → step through the game",))
            self.target.post_message(MoveRefused(said))

    def verify(self) -> str:
        return self.verdict.line()

    def close(self) -> None:
        self.target = None

    def _changed(self) -> None:
        if self.target is not None:
            self.target.post_message(TableChanged(self.view()))
