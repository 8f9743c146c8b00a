"""Sealed answers in the log: "seal" and "unseal" (PROTOCOL.md §5.8, §8). A step that asks several
seats at once (a state's `sealed()`, core/game.py) takes each asked seat's commitment first and its opened
answer only once every asked seat has sealed; the answers then apply in the state's order.

`SealedAnswers` owns the sealed step collecting answers now."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dicetable.core.game import GameError, Move
from dicetable.core.phrase import listing, phrase
from dicetable.net.chance import seal
from dicetable.net.log import wire
from dicetable.net.log.records import PLAYING, Effect
from dicetable.net.refusals import BadSeal, IllegalMoveRefused, NotDue


@dataclass(frozen=True)
class Sealing:
    """A sealed step collecting answers: its number (`replica.steps` when it opened), the seats in
    the order their answers apply (`order`; seats out of the game answer by default) and, per seat,
    its commitment (b"" when the answer was given by default) and its opened answer."""

    step: int
    order: tuple[int, ...]
    asked: tuple[int, ...]
    commits: tuple[bytes | None, ...]
    answers: tuple[Move | None, ...]

    @property
    def unsealed(self) -> tuple[int, ...]:
        return tuple(s for s in self.asked if self.commits[s] is None)

    @property
    def unopened(self) -> tuple[int, ...]:
        return tuple(s for s in self.asked if self.answers[s] is None)


class SealedAnswers:
    FIELDS = ("sealing",)  # what an Effect may set here

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.sealing: Sealing | None = None  # a sealed step collecting answers (core/game.py)

    def seal(self, env: wire.Envelope) -> Effect:
        seat = env.seat
        sealing = self._sealed_step(env)
        if sealing.commits[seat] is not None:
            raise NotDue(seat, f"seat {seat} has already answered step {sealing.step}")
        commits = list(sealing.commits)
        commits[seat] = env.body["commit"]
        return Effect({"sealing": replace(sealing, commits=tuple(commits))}, phrase(self.replica.who(seat), " seals its answer"))

    def unseal(self, env: wire.Envelope) -> Effect:
        replica, seat, body = self.replica, env.seat, env.body
        sealing = self._sealed_step(env)
        if sealing.unsealed:
            waiting = listing(replica.who(s) for s in sealing.unsealed)
            raise NotDue(seat, f"answers open once every seat has sealed one (waiting for {waiting})")
        if sealing.answers[seat] is not None:
            raise NotDue(seat, f"seat {seat} has already opened its answer to step {sealing.step}")
        if seal.commitment(replica.table, sealing.step, seat, body["move"], body["nonce"]) != sealing.commits[seat]:
            raise BadSeal(seat, f"the answer does not open {replica.who(seat)}'s seal for step {sealing.step}")
        try:
            move = Move.from_data(body["move"])
            if move not in replica.state.asking(seat).legal_moves():
                raise GameError(f"{move} is not a legal answer now")
        except GameError as error:
            raise IllegalMoveRefused(seat, str(error)) from None
        changes = self.answered(sealing, seat, move)
        return Effect(changes, phrase(replica.who(seat), f" opens its sealed answer: {move}"), move)

    def answered(self, sealing: Sealing, seat: int, move: Move) -> dict:
        """`seat`'s answer is in; once every asked seat's is, all apply in the state's order."""
        play = self.replica.play
        answers, commits = list(sealing.answers), list(sealing.commits)
        answers[seat] = move
        if commits[seat] is None:
            commits[seat] = b""  # given by default: nothing of its own to open
        sealing = replace(sealing, answers=tuple(answers), commits=tuple(commits))
        moves = play.moves + 1
        if sealing.unopened:
            return {"sealing": sealing, "moves": moves}
        state = play.state
        for s in sealing.order:
            state = state.apply_as(s, sealing.answers[s] or state.default_move())
        return {"moves": moves, **play.after(state, play.events)}

    def _sealed_step(self, env: wire.Envelope) -> Sealing:
        """The open sealed step a seal or unseal names, asking its author (else a Refusal)."""
        seat, sealing = env.seat, self.sealing
        if self.replica.phase != PLAYING or sealing is None:
            raise NotDue(seat, f"a {env.kind} when no sealed answer is asked")
        if env.body["step"] != sealing.step:
            raise NotDue(seat, f"a {env.kind} for step {env.body['step']} while step {sealing.step} is asked")
        if seat not in sealing.asked:
            raise NotDue(seat, f"seat {seat} is not asked at step {sealing.step}")
        return sealing
