"""The table controller: the one interface a game screen talks to, local or networked.

A screen never drives an engine itself. It holds a `TableController`, calls `attach(screen)` once,
sends the player's moves with `submit(move)`, and redraws from the `TableView` snapshots that arrive
as `tui.messages.TableChanged`. Everything else a table can say arrives the same way: `MoveRefused`,
`ChatArrived`, `Banner`, `TableClosed` (tui/tables/messages.py). Messages may be posted from any thread
(Textual's `post_message` is thread-safe), so a network controller posts them from its workers.

`LocalTable` is the offline controller: the core engine, bots, and `core.chance.LocalSource` with a
seeded `random.Random`; bots think in a thread worker so the interface never blocks. A network
controller (net/session.py) implements the same interface over the fair protocol; its `TableView`
lists each random event with every seat's reveal (`FairEvent.reveals`) and a transcript path.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Chance, GameError, GameInfo, Move, Outcome
from dicetable.tui.tables.messages import Banner, MoveRefused, TableChanged

# Event statuses, as the fairness panel shows them.
LOCAL = "local"  # drawn from this computer's random numbers: nothing to verify
VERIFIED = "verified"  # every seat's reveal checked against its commitment
WAITING = "waiting"  # some reveals are still due
FAULT = "fault"  # a reveal did not open its commitment; `detail` names the seat


@dataclass(frozen=True)
class SeatInfo:
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
    label: str  # the Chance label: "setup roll"
    outcome: str  # the outcome in plain words ("" while reveals are still due)
    status: str = LOCAL
    reveals: tuple[Reveal, ...] = ()


@dataclass(frozen=True)
class LogEntry:
    seat: int  # the seat that moved, or CHANCE for a random event
    text: str  # in plain words, with names


@dataclass(frozen=True)
class TableView:
    """A snapshot of a table: everything a screen draws, safe to hand across threads."""

    game: GameInfo
    state: Any
    seats: tuple[SeatInfo, ...]
    local_seats: frozenset[int]  # the seats this terminal plays
    log: tuple[LogEntry, ...] = ()
    events: tuple[FairEvent, ...] = ()
    network: bool = False
    transcript: str = ""  # the transcript file of a network table
    note: str = ""  # what the table waits for, when it is not a seat's move ("waiting for Bob")
    thinking: int | None = None  # a bot seat that is working out its move
    final: Any = None  # a Result the engine did not make (a resignation, a default claim)
    acting: frozenset[int] | None = None  # at a sealed step: the seats still to answer (None: the actor)

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


class TableController:
    """The interface between a game screen and a table. Subclasses: LocalTable, net's table."""

    network = False

    def attach(self, target) -> None:
        """Start sending messages to `target` (the screen); the first is a TableChanged."""
        raise NotImplementedError

    def view(self) -> TableView:
        raise NotImplementedError

    def submit(self, move: Move) -> None:
        """A move by the local seat due to act; the answer arrives as TableChanged or MoveRefused."""
        raise NotImplementedError

    def send_chat(self, text: str) -> None:
        """Say something at the table (network tables)."""

    def can_rematch(self) -> bool:
        return False

    def rematch(self) -> None:
        """Start a new game with the same seats."""

    def verify(self) -> str:
        """Run the same check as `dicetable verify` on this table's transcript; one line."""
        return "nothing to verify"

    def leave_note(self) -> str:
        """What a person leaving the table mid-game should know (where the game is kept), or ""."""
        return ""

    def close(self) -> None:
        """Leave the table and stop every worker."""


@dataclass(frozen=True)
class Player:
    """Who sits at a local seat: a person at this terminal (bot "") or a bot by name."""

    name: str
    bot: str = ""


def with_names(text: str, names: Sequence[str]) -> str:
    """Replace the engine's `seat N` (and the replica's `seat N (name)`) by the seat's name."""
    text = re.sub(r"\bseat (\d+) \([^)]*\)", r"seat \1", text)
    return re.sub(r"\bseat (\d+)\b", lambda m: names[int(m.group(1))] if int(m.group(1)) < len(names) else m.group(0), text)


def outcome_words(game: GameInfo, chance: Chance, outcome: Outcome, state: Any, names: Sequence[str]) -> str:
    """A random outcome in the game's own words (its `describe_outcome` hook), with names for seats;
    `state` is the state that asked for the chance (None when not known)."""
    if chance.hidden and chance.reveal is None:  # a local full state knows the deal: never print it
        return "shuffled face down" if chance.shuffle else "dealt face down"
    return with_names(game.describe_outcome(state, chance, outcome), names)


class LocalTable(TableController):
    """An offline table: people at this terminal and bots, chance from a seeded LocalSource.

    `first` ("roll", "me" or "bot") matters for one person against one bot: the setup roll is made
    as always, then the person takes the seat the roll made first ("me") or second ("bot"), so who
    starts is chosen without touching the dice.
    """

    def __init__(
        self,
        game: GameInfo,
        players: Sequence[Player],
        seed: int = 0,
        options: Mapping[str, Any] | None = None,
        first: str = "roll",
        bot_delay: float = 0.5,
        history: Path | None = None,
        save: Path | None = None,
        number: int = 0,
    ) -> None:
        game.check_seats(len(players))
        for player in players:
            if player.bot and player.bot not in game.bots:
                raise GameError(f"unknown bot {player.bot!r} for {game.title} (bots: {', '.join(game.bots)})")
        if first not in ("roll", "me", "bot"):
            raise GameError(f"who starts must be roll, me or bot, not {first!r}")
        self.game = game
        self.players = tuple(players)
        self.seed = seed
        self.options = game.resolve_options(options)
        self.first = first
        self.bot_delay = bot_delay
        self.history = history  # the history file finished games are added to (tui/tables/history.py); None: not kept
        self.save_path = save  # rewritten after every move (tui/tables/local_save.py); None: not saved
        self._save_failed = False
        self.target = None
        self.number = number  # games played at this table, for rematch seeds
        self._generation = 0  # bumps on rematch/close so a late bot move is dropped
        self._thinking: int | None = None
        self._new_game()

    # -- the interface -------------------------------------------------------------------------
    def attach(self, target) -> None:
        self.target = target
        self._changed()

    def view(self) -> TableView:
        seats = tuple(
            SeatInfo(
                p.name,
                "bot" if p.bot else "human",
                "bot" if p.bot else "this terminal",
            )
            for p in self.seating
        )
        return TableView(
            game=self.game,
            state=self.state,
            seats=seats,
            local_seats=frozenset(s for s, p in enumerate(self.seating) if not p.bot),
            log=tuple(self.log),
            events=tuple(self.events),
            thinking=self._thinking,
        )

    def submit(self, move: Move) -> None:
        seat = self.state.actor
        if seat is None:
            return self._refuse("the game is over")
        if seat == CHANCE or self.seating[seat].bot:
            return self._refuse(f"it is not your turn: {self.names[seat] if seat >= 0 else 'chance'} acts now")
        try:
            self._apply(seat, move)
        except GameError as error:
            return self._refuse(str(error))
        self._changed()

    def can_rematch(self) -> bool:
        return True

    def rematch(self) -> None:
        self.number += 1
        self._generation += 1
        self._new_game()
        self._changed()

    def verify(self) -> str:
        return "a local game: its dice come from this computer's random numbers; there is no transcript to verify"

    def leave_note(self) -> str:
        if self.save_path is None or self.state.result is not None or not self.save_path.exists():
            return ""
        return "Your game is saved: c on the home screen (Resume) picks it up where it stands."

    def close(self) -> None:
        self._generation += 1
        self.target = None

    # -- driving the engine --------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [p.name for p in self.seating]

    def _new_game(self) -> None:
        base = self.seed * 1_000_003 + self.number * 7919  # the seeds selfplay uses, per game
        self.source = LocalSource(random.Random(base))
        self.state = self.game.new(len(self.players), self.options)
        self.seating = list(self.players)
        self.log: list[LogEntry] = []
        self.events: list[FairEvent] = []
        self.moves: list[tuple[int, Move]] = []  # (seat, move) in order: what a save replays
        self._recorded = False  # this game is in the history file
        self._thinking = None
        self._arranged = self.first == "roll"
        self._run_chance()
        self.bots = {
            seat: self.game.bots[p.bot](self.game, random.Random(base + 1 + seat))
            for seat, p in enumerate(self.seating)
            if p.bot
        }

    def replay(self, seat: int, move: Move) -> None:
        """A saved move made again (tui/tables/local_save.py): as played, without saving."""
        self._apply(seat, move, save=False)

    def _apply(self, seat: int, move: Move, save: bool = True) -> None:
        words = with_names(self.game.describe(self.state, move), self.names)
        self.state = self.state.apply(move)
        self.log.append(LogEntry(seat, words))
        self.moves.append((seat, move))
        self._run_chance()
        if save and self.save_path is not None and self.state.result is None:
            self._save()

    def _save(self) -> None:
        from dicetable.tui.tables import local_save

        try:
            local_save.write(self.save_path, self)
        except OSError as error:
            if not self._save_failed and self.target is not None:
                self.target.post_message(Banner(f"the game could not be saved: {error.strerror}", "error"))
            self._save_failed = True

    def _run_chance(self) -> None:
        while self.state.actor == CHANCE:
            chance = self.state.chance()
            outcome = self.source.outcome(chance)
            asked, self.state = self.state, self.state.resolve(outcome)
            self._arrange_first()
            words = outcome_words(self.game, chance, outcome, asked, self.names)
            label = with_names(chance.label, self.names)
            self.events.append(FairEvent(len(self.events) + 1, label, words, LOCAL))
            self.log.append(LogEntry(CHANCE, f"{label}: {words}"))

    def _arrange_first(self) -> None:
        """Seat the person first or second once the roll has named the first player."""
        first = getattr(self.state, "first", -1)
        if self._arranged or first is None or first < 0:
            return
        self._arranged = True
        people = [s for s, p in enumerate(self.seating) if not p.bot]
        if len(people) != 1 or len(self.seating) != 2:
            return
        wanted = first if self.first == "me" else 1 - first
        if people[0] != wanted:
            self.seating.reverse()

    def _changed(self) -> None:
        if self.state.result is not None and not self._recorded:
            self._record()
        seat = self.state.actor
        bot_due = seat is not None and seat >= 0 and bool(self.seating[seat].bot)
        self._thinking = seat if bot_due else None
        if self.target is not None:
            self.target.post_message(TableChanged(self.view()))
        if bot_due:
            self._start_bot(seat)

    def _record(self) -> None:
        """Add the finished game to the history file (and drop its save); a file that cannot be
        written is told, once."""
        self._recorded = True
        if self.save_path is not None:
            self.save_path.unlink(missing_ok=True)
        if self.history is None or self.game.name == "diceroom":
            return
        from dicetable.tui.tables.history import record_local

        names = self.names
        result = with_names(self.state.result.describe(names), names)
        try:
            record_local(self.history, self.game.name, names, result, self.log, self.seed)
        except OSError as error:
            if self.target is not None:
                self.target.post_message(Banner(f"the game was not added to the history: {error.strerror}", "error"))

    def _start_bot(self, seat: int) -> None:
        generation, view, bot = self._generation, self.state.view(seat), self.bots[seat]
        if self.target is None:  # no screen: play the bot at once (headless use and tests)
            self._bot_moved(generation, seat, bot.choose(view))
            return
        target = self.target

        def think() -> None:
            started = time.monotonic()
            move = bot.choose(view)
            # A short pause so a person sees the bot's move land instead of a blink.
            rest = self.bot_delay - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)
            if generation == self._generation:
                target.app.call_from_thread(self._bot_moved, generation, seat, move)

        target.run_worker(think, thread=True, group="bot", name=f"bot seat {seat}")

    def _bot_moved(self, generation: int, seat: int, move: Move) -> None:
        if generation != self._generation or self.state.actor != seat:
            return  # a rematch or close came first
        self._apply(seat, move)
        self._changed()

    def _refuse(self, reason: str) -> None:
        if self.target is not None:
            self.target.post_message(MoveRefused(reason))
