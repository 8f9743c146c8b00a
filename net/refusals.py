"""Every error of the net layer that names the seat at fault (STYLE.md: errors name the faulty party).

Two kinds. A `Refusal` is a message refused on arrival: its author is at fault (`seat`, None when
the message names no one) and nothing changed; `str()` is "<fault>: seat <n>: <reason>". The Replica
(net/log/replica.py) raises the frame refusals, the card deal (net/cards/deal.py, net/cards/points.py, net/cards/table_deals.py)
raises `DealRefused` and its subclasses, and a table's Replica passes them on as they are.
A `DealError` is found in a deal whose messages were each fine: `DealFault` names a cheating seat
(live, or by the end-of-deal replay), a plain DealError says the deal cannot be checked yet.
"""

from __future__ import annotations

from dicetable.core.phrase import Phrase, Seat, phrase


class Refusal(Exception):
    fault = "refused"

    def __init__(self, seat: int | None, reason: str) -> None:
        self.seat = seat
        self.reason = reason
        super().__init__(str(self.said))

    @property
    def said(self) -> Phrase:
        """The refusal in words, its seats kept as seats: `<fault>: seat <n>: <reason>` (a reason is
        free text, a peer's too: its seats are read)."""
        return phrase(f"{self.fault}: ", Seat(self.seat) if self.seat is not None else "an unknown author", ": ",
                      Phrase.read(self.reason))


class MalformedFrame(Refusal):
    fault = "malformed frame"


class WrongTable(Refusal):
    fault = "wrong table"


class NotSeated(Refusal):
    fault = "not seated"


class SeatTaken(Refusal):
    fault = "seat taken"


class BadSignature(Refusal):
    fault = "bad signature"


class OutOfOrder(Refusal):
    fault = "out of order"


class ForkedLog(Refusal):
    """A frame whose parent is not in this log, or that goes back behind its author's own: the log
    was forked (the orderer showed seats different logs) or the author signed a log it never saw."""

    fault = "forked log"


class Equivocation(Refusal):
    """Two different frames signed by one seat with one sequence number: signed proof of a fork."""

    fault = "equivocation"


class NotDue(Refusal):
    fault = "not due"


class IllegalMoveRefused(Refusal):
    fault = "illegal move"


class BadReveal(Refusal):
    fault = "bad reveal"


class BadAnchor(Refusal):
    fault = "bad anchor"


class BadOpen(Refusal):
    fault = "bad open"


class BadJoin(Refusal):
    fault = "bad join"


class BadClaim(Refusal):
    fault = "bad claim"


class Disputed(BadClaim):
    """A default claim against this peer's own seat that its own view refutes (FAIRNESS.md §4): by its
    clock the deadline had not passed, or it had answered and the log does not hold its answer. The
    claimant is the seat at fault, by this peer's word; the peer answers with a signed "dispute"."""

    fault = "disputed"


class BadSeal(Refusal):
    fault = "bad seal"


class BadRematch(Refusal):
    """A rematch consent for options the previous game's end does not give (net/log/rematch.py)."""

    fault = "bad rematch"


class BadUnveil(Refusal):
    fault = "bad unveil"


class DealRefused(Refusal):
    """A deal message (or a move paying hidden cards) refused on arrival; the deal's state is unchanged."""

    fault = "deal refused"


class BadPoint(DealRefused):
    """A point from a peer that is off the curve, non-canonical or not in the prime-order subgroup."""


class BadScalar(DealRefused):
    """A key from a peer that is not a canonical non-zero scalar."""


class DealError(Exception):
    """Something wrong in a deal; `seat` is the seat at fault (None when the log cannot tell yet)."""

    def __init__(self, seat: int | None, reason: str) -> None:
        self.seat = seat
        self.reason = reason
        super().__init__(str(self.said))

    @property
    def said(self) -> Phrase:
        """The error in words, its seats kept as seats: `seat <n> <reason>` (a free-text reason: its seats are read)."""
        reason = Phrase.read(self.reason)
        return phrase(Seat(self.seat), " ", reason) if self.seat is not None else reason


class DealFault(DealError):
    """Cheating found by the checks (live, or by the end-of-deal replay), naming the seat at fault."""
