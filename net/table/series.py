"""A seat's games at one table: when a game is over for it, and rematches (PROTOCOL.md §5.10).

At a game's end the result is announced at once, but the seat is `finished` only when every deck has
been opened and checked (`replica.settled`), or the reveal deadline has passed. Once a game is over
(its decks opened), `send_rematch` signs the seat's consent to the next game with the options the
ended game's rules give; the consent that completes every seat's starts that game in the same log.
`games` says how many games the seat plays: 1 (default) finishes at the first game's end; N agrees to
rematches until N are played, then declines; None waits for `rematch(agree)` from a person. A seat
still waiting for answers finishes when someone declines or the seats it waits for are gone.

End receipts (PROTOCOL.md §5.13, FAIRNESS.md §3b): once the game is over and its decks opened, the
seat signs a receipt of the log as it holds it, unless its signed frames vouch for all of it already
(its last move was signed on top of the whole log) or its consent to the next game does; it is
finished only when every seat still present has confirmed the end, or the reveal deadline has passed
since the game settled (a seat that left does not hold the others). Receipts come only at ends: no
roll waits for one.
"""

from __future__ import annotations

import time

from dicetable.net.log import wire
from dicetable.core.phrase import Phrase, listing, phrase
from dicetable.net.table.events import Defaulted, Ended, Failed, RematchGone
from dicetable.net.table.seat_part import SeatPart


class Series(SeatPart):
    """One seat's game end and its answers to the next game."""

    def __init__(self, seat, games: int | None = 1) -> None:
        self.own = seat
        self.emit, self.author, self._seated = seat.emit, seat.author, seat.seated
        self.games = games  # games this seat plays at the table (it agrees to rematches until then); None: a person says
        self.result_announced = False
        self.finished = False
        self._over_since: float | None = None
        self._settled_since: float | None = None  # when the decks were opened: receipts are due from then

    def game_over(self) -> None:
        """After the latest record of a batch: the result told once it is in (the decks' openings are due
        from then), and finished once the decks are opened."""
        if self.replica.result is not None and not self.result_announced:
            self.result_announced = True
            self._over_since = time.monotonic()
            self.own.transcript.append_result(self.replica.result)
            self.emit(Ended(self.replica.result, self.describe_result()))
            ending = self.replica.ending
            if ending is not None and ending.against == self.seat:
                self.emit(Defaulted(ending.seat, self.describe_default(ending)))
        self.check_settled()

    def describe_result(self) -> str:
        names = [f"{s.name} (seat {i})" if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)]
        result = self.replica.result
        if self.replica.forced is None and self.replica.game.name == "diceroom" and self.replica.state.last:
            return self.replica.state.summary([s.name if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)])
        return result.describe(names)

    def describe_default(self, claim) -> Phrase:
        """The game's end told to the seat whose default decided it, in plain words: `bob: alice claimed
        the game while you were away (since 16:02) — you were in default (...); alice wins (...)`."""
        names = [s.name if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)]
        away = f" while you were away (since {time.strftime('%H:%M', time.localtime(self.own.left_at))})" if self.own.left_at else ""
        if self.replica.forced is not None:
            what = phrase(f"{names[claim.seat]} claimed the game{away} — you were in default (", claim.reason, ")")
        else:
            what = phrase(f"{names[claim.seat]} claimed your seat in default{away} (", claim.reason, ") and the game went on without it")
        return phrase(f"{names[self.seat]}: ", what, "; ", self.replica.result.said(names))


    def next_game(self) -> None:
        self.result_announced, self.finished, self._over_since, self._settled_since = False, False, None, None

    def resumed(self) -> None:
        """A seat resumed from its transcript: over (and finished) as its replica says, from now."""
        self.replayed()
        self._over_since = time.monotonic()

    def replayed(self) -> None:
        """The seat's replica was replayed (resumed, or cut back): over and finished as it says."""
        self.result_announced = self.replica.result is not None
        self.finished = self.replica.settled

    def check_settled(self) -> None:
        """Finished once the result is in and every deck is opened (or the openings are overdue)."""
        if self.finished or not self.result_announced:
            return
        overdue = time.monotonic() - self._over_since > max(self.own.timing.reveal_deadline, 1.0)
        if overdue and not self.replica.settled:
            self.finished = True
        elif self.replica.settled:
            self.finished = self.series_over() and self.end_confirmed()
            replica = self.replica
            if self.finished and self.games != 1 and replica.declined is None and self.can_rematch():
                gone = listing(replica.who(s) for s in sorted(self.own.away_seats()))  # nobody is left to answer
                self.emit(RematchGone(phrase("no rematch: ", gone or "the table", " left")))

    def end_confirmed(self) -> bool:
        """Every seat still present vouches for the end (its receipt, or a frame signed on top of it),
        or the receipts are overdue: a seat that went silent does not hold this one at the table."""
        now = time.monotonic()
        self._settled_since = self._settled_since or now
        away = self.own.away_seats()
        owing = [s for s in range(self.replica.seat_count) if s not in away and self.replica.receipt_owed(s)]
        return not owing or now - self._settled_since > max(self.own.timing.reveal_deadline, 1.0)

    def send_receipt(self) -> bool:
        """Sign my receipt of the log that holds the game's end, when it is owed (PROTOCOL.md §5.13):
        the decks are opened, and no consent of mine to the next game vouches for it. True if sent."""
        replica = self.replica
        if not replica.settled or not replica.receipt_owed(self.seat):
            return False
        if replica.declined is None and replica.consents[self.seat]:
            return False  # my consent covers the end; the next game's frames will cover the rest
        self.author("receipt", wire.receipt_body(replica.game_number))
        return True

    def can_rematch(self) -> bool:
        """The game is over and its decks opened, nobody declined, and the table can play another."""
        replica = self.replica
        return (replica is not None and replica.phase == "over" and replica.settled and replica.declined is None
                and not replica.deal_handler.formed and self._seated())

    def series_over(self) -> bool:
        """No next game will come: one game was asked for, someone declined, or the seats it waits for left."""
        replica = self.replica
        if self.games == 1 or not self.can_rematch():
            return True
        if self.games is not None and replica.game_number >= self.games:
            return False  # my decline goes out first (play_on), so the others learn it at once
        return bool(self.own.away_seats() & {s for s, agreed in enumerate(replica.consents) if not agreed})

    def send_rematch(self, agree: bool) -> None:
        """My signed consent to the next game, with the options its rules give (or my refusal)."""
        replica = self.replica
        if not self.can_rematch():
            self.emit(Failed("no rematch now: the game is not over, a player declined, or this table plays one game"))
            return
        if agree and replica.consents[self.own.seat]:
            self.emit(Failed("you have agreed to a rematch already: waiting for the others"))
            return
        self.author("rematch", wire.rematch_body(replica.game_number + 1, replica.next_options, agree))

    def play_on(self) -> None:
        """A seat playing `games` games agrees to the next one until it has played them, then declines."""
        replica = self.replica
        if self.games is None or self.own.unordered or not self.can_rematch() or self.finished:
            return
        if replica.game_number >= self.games:
            self.send_rematch(False)  # (one game only: the seat finished at its end, before this)
        elif not replica.consents[self.own.seat]:
            self.send_rematch(True)
