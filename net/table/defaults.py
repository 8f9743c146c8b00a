"""A seat's clocks and default claims (FAIRNESS.md §4; who decides: net/table/deadlines.py).

A seat claims a seat its own clock finds in default (`auto_claim`, or `claim()` from the app), co-signs
("witness") a pending claim only when its own clock agrees — its clock for a seat starts where its
driver says (`wait_start`: presence is not lateness, net/table/deadlines.py) — never signs a default
that would hand it the game (net/log/claims.py `winners_by_default`; a claim left with no neutral
seat to witness it stands on its claimant's word, "unwitnessed"; one whose signers are all out by
then stays pending and every seat says so once: `Unwitnessed`), and checks every claim against its own
seat with its own view (`own_view`: its clock since it saw the wait begin, with the deadline's slack,
how long it was cut off, and its answers the log does not hold): its replica's `claim_check` refuses
such a claim when it would take effect alone (net/refusals.py's Disputed) and the seat answers it
with a signed "dispute" carrying its unordered frames; a pending one is disputed in the log. The
seat that orders the log keeps a claim it disputes out of the log (its driver's `orders_log`), at no
cost to anyone.
"""

from __future__ import annotations

import time
from typing import Any

from dicetable.net.table import deadlines
from dicetable.net.log import wire
from dicetable.net.refusals import Disputed
from dicetable.core.phrase import phrase
from dicetable.net.table.events import ClaimDisputed, Claimable, Failed, Unwitnessed
from dicetable.net.table.seat_part import SeatPart


class Defaults(SeatPart):
    """One seat's clocks of the table's waits and of seats away, and the claims it makes, witnesses and disputes."""

    def __init__(self, seat, auto_claim: bool = True) -> None:
        self.own = seat
        self.emit, self.author = seat.emit, seat.author
        self.auto_claim = auto_claim
        self.away_since: dict[int, float] = {}  # seats lost sight of (the orderer's word, or its own), since when
        self._waiting_key: Any = None
        self._waiting_since = time.monotonic()
        self.waiting_len = 0  # the log's length when I saw the wait begin: a seat that acknowledged it received it
        self._unwitnessed: set[int] = set()  # pending claims (log index) I said no neutral seat can witness
        self._wins: tuple[int, dict[int, bool]] = (-1, {})  # log length -> whether a default of a seat hands me the game
        self._looked: dict[int, int] = {}  # pending claim (log index) -> log length when I last asked whether one can
        self._claimable: set[int] = set()
        self._last_claim = 0.0
        self._answered: tuple[Any, float] | None = None  # (wait, when) I first sent an answer to it
        self._witnessed: set[int] = set()  # claims (log index) I co-signed
        self._disputed: set[int] = set()  # claims against me (log index) I disputed
        self._views: dict[int, str] = {}  # claims against me (log index) just accepted: my own view then

    def sent(self, kind: str, now: float) -> None:
        """A frame of mine went to the log: if it answers what the table waits for, when is my evidence."""
        if kind in deadlines.ANSWERS.get(self.replica.waiting_for.action, ()):
            wait = deadlines.waiting_key(self.replica)
            if self._answered is None or self._answered[0] != wait:
                self._answered = (wait, now)

    def refused(self) -> None:
        # A witness sent behind a refused frame was refused with it (out of order): the claims' own
        # signers say which of mine landed; the rest are sent again while my clock still agrees.
        self._witnessed.clear()

    # -- deadlines and defaults (FAIRNESS.md §4) -------------------------------------------------
    def watch_deadlines(self, now: float) -> None:
        replica = self.replica
        if replica is None or replica.phase != "playing" or self.own.finished:
            return
        waiting = replica.waiting_for
        self.track(now)
        held = self.own.held
        held.carry(now)  # a claim against a seat whose answer I hold: I carry its answer to the log
        for seat in waiting.seats:
            if seat == self.seat or seat in self._claimable or held.answer(seat) is not None:
                continue
            why = self.default_reason(seat, now)
            if why:
                self._claimable.add(seat)
                self.emit(Claimable(seat, why))
        for claim in replica.claims:  # co-sign what my own clock agrees with, and nothing else
            if claim.state != "pending":
                continue
            looked, self._looked[claim.index] = self._looked.get(claim.index), len(replica.log)
            if claim.index not in self._unwitnessed and looked != len(replica.log) \
                    and replica.default_claims.unwitnessable(claim):  # worked out once per log length, not per turn
                self._unwitnessed.add(claim.index)
                self.emit(Unwitnessed(claim.against, phrase(
                    replica.who(claim.seat), "'s claim against ", replica.who(claim.against), f" (entry {claim.index + 1}) "
                    "stays pending, unwitnessed: every seat that could witness it would win the game by it")))
            if claim.index not in self._witnessed and self.seat != claim.against \
                    and self.seat not in claim.signers and self.seat not in replica.out \
                    and held.answer(claim.against) is None and self.default_reason(claim.against, now) \
                    and not self.wins_by(claim.against):
                self._witnessed.add(claim.index)
                self.author("witness", wire.witness_body(claim.index))
        # Only seats still in and still awaited: a claim against a seat already out is refused, and
        # sending it again every heartbeat would starve the claim against the seat still holding the table.
        unclaimed = [s for s in self._claimable if s not in replica.out and s in waiting.seats
                     and replica.pending_claim(s) is None and held.answer(s) is None]
        if self.auto_claim and unclaimed and now - self._last_claim > max(self.own.timing.heartbeat, 0.2):
            due = [s for s in unclaimed if self.default_reason(s, now)]  # the orderer's word may have changed since
            if due:
                self.send_claim(min(due))

    def track(self, now: float) -> None:
        """Start my clock when I see a new wait (one `waiting_key` per thing awaited)."""
        key = deadlines.waiting_key(self.replica)
        if key != self._waiting_key:
            self._waiting_key = key
            self._waiting_since = now
            self.waiting_len = len(self.replica.log)
            self._claimable.clear()

    def default_reason(self, seat: int, now: float) -> str:
        """Why `seat` is in default now by this seat's clock, or "" when it is not: its wait counts from
        where my driver says its link lets it (None: it has not provably received the wait, so only
        being away past the grace counts)."""
        replica = self.replica
        if replica is None or replica.phase != "playing":
            return ""
        self.track(now)
        away = self.away_since.get(seat)
        start = self.own.driver.wait_start(seat, self._waiting_since, self.waiting_len, now)
        return deadlines.default_reason(replica, self.own.timing, seat, 0.0 if start is None else now - start,
                                        None if away is None else now - away)

    def wins_by(self, against: int) -> bool:
        """Whether a default of `against` would end the game with my seat among the winners (FAIRNESS.md
        §5b: no witness wins by its witness)."""
        length = len(self.replica.log)
        if self._wins[0] != length:  # worked out once per log length (it replays the default), not per turn
            self._wins = (length, {})
        known = self._wins[1]
        if against not in known:
            known[against] = self.seat in self.replica.default_claims.winners_by_default(against)
        return known[against]

    def send_claim(self, against: int) -> None:
        """Claim `against` in default; a claim already pending against it is witnessed instead, when
        my clock agrees."""
        now = self._last_claim = time.monotonic()
        if self.own.held.answer(against) is not None:  # FAIRNESS.md §3c: its answer reached me
            self.emit(Failed(f"this seat holds seat {against}'s answer (sent to it by that seat): no claim, no witness"))
            return
        pending = self.replica.pending_claim(against)
        if pending is not None:
            if self.seat in pending.signers or pending.index in self._witnessed:
                return
            if self.wins_by(against):
                self.emit(Failed(f"a default of seat {against} would hand this seat the game: no witness"))
                return
            if not self.default_reason(against, now):
                self.emit(Failed(f"seat {against} is not in default by this seat's clock: no witness"))
                return
            self._witnessed.add(pending.index)
            self.author("witness", wire.witness_body(pending.index))
            return
        if not self.default_reason(against, now):  # presence is not lateness: the orderer would not order it
            self.emit(Failed(f"seat {against} is not in default by this seat's clock and the orderer's word: no claim"))
            return
        self.author("claim", wire.claim_body(against, self.default_reason(against, now)[:200]))

    # -- claims against my seat (FAIRNESS.md §4: no one party's clock decides) --------------------
    def own_view(self, now: float) -> str:
        """Why my seat is not in default by my own view (my clock since I saw the wait begin, my answer
        the log does not hold, or any frame of mine it does not hold, behind which I wait), or "" when I
        agree it is."""
        replica = self.replica
        wait = deadlines.waiting_key(replica)
        since = self._waiting_since if wait == self._waiting_key else now  # a wait begun in this batch: my clock starts now
        answered = None
        if self._answered is not None and self._answered[0] == wait and self.own.unordered:
            answered = max(0.0, self._answered[1] - since)
        cut_off = self.own.driver.cut_off(now, since)  # how long this seat was cut off from the table since then
        why = deadlines.disputes(replica, self.own.timing, self.seat, now - since, cut_off, answered)
        if why or not self.own.unordered:
            return why
        # A seat acts only on top of its own frames (Seat.act): one the log never took held it back.
        seq, (_, frame) = min(self.own.unordered.items())
        return (f"the log does not hold its {wire.decode(frame).kind} (sequence number {seq}), sent before the claim, "
                "and it acts only once the log holds it")

    def check_claim(self, replica, envelope: wire.Envelope) -> None:
        """My replica's `claim_check`: a claim against my seat that my own view refutes is kept out of
        my log when it would take effect alone (a pending one changes nothing: `answer_claim`)."""
        if envelope.body["against"] != self.seat or self.seat is None:
            return
        why = self.own_view(time.monotonic())
        if not self.own.driver.orders_log and not replica.default_claims.alone(envelope.seat, self.seat):
            # My view as the claim comes, for `answer_claim`: the batch that brings it may bring the
            # witness that settles it too, and the wait it is about is over by then.
            self._views[len(replica.log)] = why
            return
        if why:
            raise Disputed(envelope.seat, f"{replica.who(self.seat)} disputes {replica.who(envelope.seat)}'s claim: {why}")

    def answer_claim(self, record) -> None:
        """A claim against my seat landed: dispute it in the log if my own view as it came refutes it,
        pending or already witnessed in the same batch (FAIRNESS.md §4: the accused's word is kept)."""
        why = self._views.pop(record.index, None)
        claim = next((c for c in self.replica.claims if c.index == record.index), None)
        if claim is None or claim.state == "lapsed" or claim.index in self._disputed:
            return  # lapsed: what the table waited for from me is in the log
        if why is None and claim.state == "pending":
            why = self.own_view(time.monotonic())
        if why:
            self.dispute(record.frame, record.index, record.seat, why)

    def dispute(self, frame: bytes, index: int, claimant: int, why: str) -> bytes | None:
        """Tell the player "disputed", naming the claimant, and sign a dispute of the claim at log index
        `index`, carrying my frames the log does not hold; returns the dispute (None if it cannot
        carry them all)."""
        self._disputed.add(index)
        self.emit(ClaimDisputed(claimant, phrase(self.replica.who(claimant), f" claims this seat is in default: {why}")))
        evidence = [sent for _, (_, sent) in sorted(self.own.unordered.items())]
        if len(evidence) > wire.MAX_EVIDENCE or len(frame) + sum(map(len, evidence)) > wire.MAX_FRAME - 4096:
            self.emit(Failed("too many frames the log does not hold to carry in a dispute"))
            return None
        dispute = self.author("dispute", wire.dispute_body(index, frame, why[:200], evidence))
        self.own.transcript.append_evidence(dispute, f"this seat's dispute of the claim at entry {index + 1}")
        return dispute
