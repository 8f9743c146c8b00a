"""A seat's sealed answers (net/chance/seal.py; Dice Breaker's Latent Dice claim).

When the table waits for "seal", every asked seat is asked at once (the chooser, or a person through
`your_turn` and `move()`, sees the state as it asks this seat); the move becomes a seal, and once every
seat has sealed the seat opens its own by itself (the last seat to seal opens with its seal). Both wait on the answer deadline; a late seat's
answer is the default.
"""

from __future__ import annotations

from dicetable.core.game import Move
from dicetable.net.chance import seal as sealed
from dicetable.net.log import wire
from dicetable.net.table.events import Failed
from dicetable.net.table.seat_part import SeatPart


class SealedAnswers(SeatPart):
    """One seat's sealed answer: its commitment, then its opening (found again after a restart)."""

    def __init__(self, seat) -> None:
        self.own = seat
        self.emit, self.author = seat.emit, seat.author
        self._sealed: tuple[int, Move] | None = None  # (step, answer) I sealed and have not opened yet
        self._unopenable: int | None = None  # a step whose seal of mine I could not open (said once)

    def _seal_nonce(self, step: int) -> bytes:
        return sealed.nonce_for(self.own.chains[0].secret, self.replica.table, step, self.seat)

    def seal(self, move: Move) -> None:
        """Seal my answer to the open sealed step: a commitment now, the answer once all have sealed."""
        replica = self.replica
        step, waiting = replica.sealing.step, replica.waiting_for
        if waiting.action != "seal" or self.seat not in waiting.seats:
            given = replica.sealing.answers[self.seat] if self.seat in replica.sealing.asked else None
            if self.seat not in replica.sealing.asked:
                why = "you are not asked at this step"
            elif replica.sealing.commits[self.seat] == b"":
                why = f"too late: your time ran out and the table answered {given} for you"
            else:
                why = "your answer is already sealed"
            self.emit(Failed(why))
            return
        if move not in replica.state.asking(self.seat).legal_moves():
            self.emit(Failed(f"{move} is not a legal answer now"))
            return
        commit = sealed.commitment(replica.table, step, self.seat, move.to_data(), self._seal_nonce(step))
        self._sealed = (step, move)
        self.author("seal", wire.seal_body(step, commit))
        if all(c is not None for s, c in enumerate(replica.sealing.commits) if s in replica.sealing.asked and s != self.seat):
            # The last to seal opens at once (PROTOCOL.md §5.8): every other answer is committed in
            # the log this seal builds on, so my opening shows nobody anything before they are bound,
            # and it rides with my seal instead of a round trip later.
            self.author("unseal", wire.unseal_body(step, move, self._seal_nonce(step)))

    def unseal(self) -> None:
        """Open my sealed answer. After a restart my answer is found again from my commitment: the
        nonce comes from my chain secret, so only one legal answer opens it."""
        replica = self.replica
        sealing = replica.sealing
        step, commit = sealing.step, sealing.commits[self.seat]
        nonce = self._seal_nonce(step)
        answer = self._sealed[1] if self._sealed is not None and self._sealed[0] == step else None
        if answer is None:
            answer = sealed.recover(replica.table, step, self.seat, commit, nonce,
                                    replica.state.asking(self.seat).legal_moves())
        if answer is None:
            if self._unopenable != step:  # said once; the others give the default when time runs out
                self._unopenable = step
                self.emit(Failed(f"cannot open my sealed answer to step {step}: the table will give the default"))
            return
        self.author("unseal", wire.unseal_body(step, answer, nonce))
