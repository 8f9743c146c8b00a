"""The table controller: the one interface a game screen talks to, local or networked.

A screen never drives an engine itself. It holds a `TableController`, calls `attach(screen)` once,
sends the player's moves with `submit(move)`, and redraws from the `TableView` snapshots
(tui/tables/view.py) that arrive as `TableChanged`. Everything else a table can say arrives the same
way: `MoveRefused`, `ChatArrived`, `Banner`, `TableClosed` (tui/tables/messages.py). Messages may be
posted from any thread (Textual's `post_message` is thread-safe), so a network controller posts them
from its workers.

`LocalTable` is the offline controller: the core engine, bots, and `core.chance.LocalSource` with a
seeded `random.Random`; bots think in a thread worker so the interface never blocks. It keeps
nothing on disk itself: whoever makes it with a save or a history passes `on_move` / `on_finish`
(tui/tables/local_save.py `kept_table`). The network controller (tui/tables/net_table.py) implements
the same interface over the fair protocol; its `TableView` lists each random event with every
seat's reveal (`FairEvent.reveals`) and a transcript path.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from dicetable.core.bots import hurry as move_now
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Chance, GameError, GameInfo, Move, Outcome
from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.tui.tables.messages import Banner, MoveRefused, TableChanged
from dicetable.tui.tables.view import LOCAL, Decided, FairEvent, LogEntry, Moved, SeatLine, TableView


class TableController:
    """The interface between a game screen and a table. Subclasses: LocalTable, net's table."""

    network = False
    replayed = False  # a transcript watched again (tui/tables/replay.py): its screen is the replay's

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
        """Start a new game with the same seats (at a network table: offer or accept it)."""

    def decline_rematch(self) -> None:
        """Refuse the rematch another seat offered (network tables)."""

    def verify(self) -> str:
        """Run the same check as `dicetable verify` on this table's transcript; one line."""
        return "nothing to verify"

    def leave_note(self) -> str:
        """What a person leaving the table mid-game should know (where the game is kept), or ""."""
        return ""

    def ending_note(self) -> str:
        """How the game's end came to this terminal's seat when others decided it (a default claimed
        against it, perhaps while it was away), for the game-over dialog; "" otherwise."""
        return ""

    def close(self) -> None:
        """Leave the table and stop every worker."""

    def can_hurry(self) -> bool:
        """A bot of this terminal is thinking and can be asked to move now (`hurry`)."""
        return False

    def hurry(self) -> None:
        """Ask the thinking bot to play the best move it has found so far."""

    def leave(self) -> None:
        """Leave the table for good (the dice room: nobody comes back to a room); a table that can
        be resumed later is only closed."""
        self.close()

    def roll_secretly(self, expr: str, to: int | None = None) -> bool:
        """A secret roll in a network dice room (PROTOCOL.md §16.6), shown now to seat `to` (the game
        master) if given; False where there is none (local dice)."""
        return False

    def unveil(self) -> None:
        """Open this terminal's sealed secret rolls to everyone."""

    def can_resign(self) -> bool:
        """A game in play that this terminal's seat may resign (network tables)."""
        return False

    def resign(self) -> None:
        """Resign this terminal's seat: the others win (FAIRNESS.md: a signed `resign` in the log)."""

    def roll_line(self, number: int) -> str | None:
        """Event `number` told in one line that anyone with the table's transcript can check
        (net/log/roll_line.py); None at a table with no log to check it against (local dice)."""
        return None

    def invitation(self) -> tuple[str, str]:
        """The table's invite and, through a relay, its short code, for a newcomer to an open room
        (PROTOCOL.md §5.2); ("", "") where nobody can join (a local table)."""
        return "", ""

    def seat_waits(self) -> float:
        """Seconds a seat that leaves mid-game is waited for before the others may claim it (0: none)."""
        return 0.0


@dataclass(frozen=True)
class Player:
    """Who sits at a local seat: a person at this terminal (bot "") or a bot by name."""

    name: str
    bot: str = ""


def outcome_words(game: GameInfo, chance: Chance, outcome: Outcome, state: Any) -> Phrase:
    """A random outcome in the game's own words (its `describe_outcome` hook), seats kept as seats;
    `state` is the state that asked for the chance (None when not known)."""
    if chance.hidden and chance.reveal is None:  # a local full state knows the deal: never print it
        return Phrase(("shuffled face down" if chance.shuffle else "dealt face down",))
    return game.describe_outcome(state, chance, outcome)


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
        number: int = 0,
        on_move: Callable[["LocalTable"], None] | None = None,
        on_finish: Callable[["LocalTable"], None] | None = None,
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
        self.on_move = on_move  # saves the game as it stands, after every move of a game going on
        self.on_finish = on_finish  # once a game is over: drops its save, adds it to the history
        self._save_failed = False  # an on_move that raised OSError is told once
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
            SeatLine(
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
            return self._refuse(Phrase(("the game is over",)))
        if seat == CHANCE or self.seating[seat].bot:
            return self._refuse(phrase("it is not your turn: ", Seat(seat) if seat >= 0 else "chance", " acts now"))
        try:
            self._apply(seat, move)
        except GameError as error:
            return self._refuse(Phrase((str(error),)))
        self._changed()

    def can_rematch(self) -> bool:
        return True

    def rematch(self) -> None:
        following = self.state.rematch_options()
        if following is not None:
            # The rules decide the next game (TRIAD: same colours, the other player starts): the seats
            # stay as they are and nobody is seated anew, so a save replays this game too.
            self.players, self.first, self.options = tuple(self.seating), "roll", following
        self.number += 1
        self._generation += 1
        self._new_game()
        self._changed()

    def verify(self) -> str:
        return "a local game: its dice come from this computer's random numbers; there is no transcript to verify"

    def leave_note(self) -> str:
        if not self.kept or self.state.result is not None:
            return ""
        return "Your game is saved: c on the home screen (Resume) picks it up where it stands."

    def close(self) -> None:
        self._generation += 1
        self.target = None

    def can_hurry(self) -> bool:
        return self._thinking is not None and self.bots[self._thinking].hurry is not None

    def hurry(self) -> None:
        if self._thinking is not None:
            move_now(self.bots[self._thinking])

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
        self._recorded = False  # on_finish has seen this game
        self.kept = False  # the game as it stands is saved (on_move, or the save it was resumed from)
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
        words = self.game.describe(self.state, move)
        self.state = self.state.apply(move)
        self.log.append(Moved(seat, words))
        self.moves.append((seat, move))
        self._run_chance()
        if save and self.on_move is not None and self.state.result is None:
            self._save()

    def _save(self) -> None:
        try:
            self.on_move(self)
        except OSError as error:
            self.kept = False
            if not self._save_failed and self.target is not None:
                said = Phrase((f"the game could not be saved: {error.strerror}",))
                self.target.post_message(Banner(said, "error"))
            self._save_failed = True
            return
        self.kept = True

    def _run_chance(self) -> None:
        while self.state.actor == CHANCE:
            chance = self.state.chance()
            outcome = self.source.outcome(chance)
            asked, self.state = self.state, self.state.resolve(outcome)
            self._arrange_first()
            words = outcome_words(self.game, chance, outcome, asked)
            label = chance.label
            self.events.append(FairEvent(len(self.events) + 1, label, words, LOCAL))
            self.log.append(Decided(label, words))

    def _arrange_first(self) -> None:
        """Seat the person first or second once the roll has named the first player."""
        first = self.state.first
        if self._arranged or first < 0:
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
        """The finished game to on_finish (its save dropped, the history told); a file that cannot
        be written is told, once."""
        self._recorded = True
        self.kept = False
        if self.on_finish is None:
            return
        try:
            self.on_finish(self)
        except OSError as error:
            if self.target is not None:
                said = Phrase((f"the game was not added to the history: {error.strerror}",))
                self.target.post_message(Banner(said, "error"))

    def _start_bot(self, seat: int) -> None:
        generation, view, bot = self._generation, self.state.view(seat), self.bots[seat]
        if self.target is None:  # no screen: play the bot at once (headless use and tests)
            self._bot_moved(generation, seat, bot.choose(view))
            return
        target = self.target
        hurried = bot.hurry
        if hurried is not None:
            hurried.clear()  # a "move now" is for one move

        def think() -> None:
            started = time.monotonic()
            move = bot.choose(view)
            # A short pause so a person sees the bot's move land instead of a blink (unless hurried).
            rest = self.bot_delay - (time.monotonic() - started)
            if rest > 0 and not (hurried is not None and hurried.is_set()):
                time.sleep(rest)
            if generation == self._generation:
                target.app.call_from_thread(self._bot_moved, generation, seat, move)

        target.run_worker(think, thread=True, group="bot", name=f"bot seat {seat}")

    def _bot_moved(self, generation: int, seat: int, move: Move) -> None:
        if generation != self._generation or self.state.actor != seat:
            return  # a rematch or close came first
        self._apply(seat, move)
        self._changed()

    def _refuse(self, reason: Phrase) -> None:
        if self.target is not None:
            self.target.post_message(MoveRefused(reason))
