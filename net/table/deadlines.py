"""Deadlines and defaults at a networked table (FAIRNESS.md §4): the table's clocks, whether a seat
that keeps the table waiting is in default by one seat's clock, and whether the accused agrees.

No clock is read here: the seat (net/table/defaults.py) says how long the table has waited for the
thing it waits for (one `waiting_key` per thing), how long a seat has been away, and, for its own
seat, when it sent an answer the log does not hold.

Who decides a default
---------------------
No one party's clock. A default claim is a signed statement that every peer checks against its own
view (the log rules are net/log/claims.py's):
- a seat claims when its own clock says the seat awaited is in default (`default_reason`);
- while 3 or more seats are in, the claim takes effect only once a majority of the seats in, the
  accused excepted, have signed it: the claimant and "witness" frames, which a session sends only
  when its own clock agrees. Until then it is pending, and it lapses when the accused does what the
  table waits for. With 2 seats the claim alone takes effect (there is no one else to ask), and
  `dicetable verify` says that the result rests on an unwitnessed claim;
- the accused, if alive, checks the claim against its own clock and its own frames (`disputes`). A
  claim that would take effect alone and that it disputes never enters its log: the host keeps it
  out of the log (the claimant hears why), a joiner leaves the host's log with its copy ending in its
  signed "dispute". A pending claim it disputes stays in the log, answered by a "dispute" there.
  Either way the player is told "disputed", naming the claimant, and verify says "disputed".
Each clock starts when its seat saw the wait begin, up to one delivery after another's, so the
accused lets a claim come `slack` early: min(heartbeat, deadline / 4).

Presence is not lateness (FAIRNESS.md §5b; PROTOCOL.md §7.5)
------------------------------------------------------------
A relay may hold every packet for seconds: a seat whose pings arrive is present, however late its
answers. So a seat awaited is *due* for a claim only when it provably received the wait and the
deadline has passed for it with its link's time added, by the orderer's clock (`Receipts`): its
acknowledged log length (the `next` of its pings) covers the length at which the wait began, and
deadline + its measured round trip + a heartbeat have passed since that acknowledgement arrived, and
it is not kept behind (it acknowledged the log as it stood a round trip and two heartbeats ago: an
honest seat acts only on a log as long as the orderer says). A seat away past `grace`, or that has
not received the wait (or stays behind) for `grace` while present, is due all the same: a relay that
starves a seat that long could as well cut it. The orderer tells the joiners the seats due in each
`pong`; a joiner claims or witnesses against another seat only when the orderer says it is due and
its own clock agrees, and against the orderer's seat with its own ping-to-pong round trip added to
the deadline. The orderer orders no claim or witness against another seat that is not due by its
view (a race, not a fault: it tells the claimant, records nothing). The person's deadline stays as
it was set; the protocol adds the link's time, never the person's.
The host orders the log and can still delay or drop a seat's frames; the victim's dispute then
carries, as evidence, its own frames the log does not hold, and the transcripts show the dispute.

What withholding still buys (the written bound of FAIRNESS.md §4)
-----------------------------------------------------------------
Whoever reveals last for an event sees every other reveal for it first and can work out the outcome
both with its value and with its value counted as 32 zero bytes (what the seed takes for a seat out
of the game). A seat that withholds its reveal until it is claimed in default thus gives its
coalition a choice between those two outcomes: one bit of choice, on that one event — the redraw
with zeros in its place. What it pays: the withholder is out of the game for good (it never acts
again, every later seed counts it as zeros, it cannot win), after the table has waited the whole
reveal deadline, and only when a majority of the other seats' clocks agree (a co-signed claim);
with 2 seats withholding loses the game. A coalition of w seats buys at most w such bits in a whole
game, one seat each. The same holds for a sealed answer withheld after seeing others' openings (the
default answer instead of its own, the seat stays in) and for a card deal's part (a card game cannot
go on without a seat's keys: the claim ends it, scored as it stands).
Escrow was weighed and is not used: each seat would deal verifiable shares (Feldman commitments over
Ed25519) of its chain seed to the others at join, with threshold t, so that t of them could open a
withheld value. Opening without a coalition of c seats needs t <= n - c (the withholder's partners
refuse), and keeping the coalition from reading an honest seat's future values needs t > c (any t
shareholders rebuild the seed, hence every future outcome): both hold only when n >= 2c + 1. At 3
seats a 2-seat coalition — the one that profits from a withholding — breaks it whichever t is
chosen, so escrow would cost a share round and commitments per chain for a guarantee that fails
where the attack lives.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from statistics import median
from typing import Any

from dicetable.core.game import Move
from dicetable.core.phrase import Phrase, Seat, phrase


@dataclass(frozen=True)
class Timing:
    """Clocks of a table, in seconds (the host's values reach the joiners in its welcome)."""

    heartbeat: float = 1.0  # between pings
    drop_after: float = 4.0  # silence after which a seat counts as dropped
    grace: float = 120.0  # how long a dropped seat may stay away before it is in default
    turn_deadline: float = 0.0  # for a move; 0: no per-turn deadline
    reveal_deadline: float = 60.0  # for a reveal once the table waits for chance
    connect_timeout: float = 5.0
    answer_deadline: float = 20.0  # for a move with a default answer (state.default_move()); 0: none
    seat_hold: float = 10.0  # how long a hello holds a free seat for the signed join that should follow

    def to_data(self) -> dict:
        return asdict(self)

    @classmethod
    def from_data(cls, data: Any) -> "Timing":
        known = {k: float(v) for k, v in (data or {}).items() if k in cls.__dataclass_fields__ and isinstance(v, (int, float))}
        return cls(**known)


TRIPS_KEPT = 8  # round-trip samples per seat: the median of the latest is the estimate
ACKS_KEPT = 64  # acknowledgement advances per seat, and relayed lengths, remembered


def round_trip(samples, limit: float, timing: "Timing") -> float:
    """A seat's round trip as the deadline counts it: the median of its latest samples (0 with
    none), capped at the larger of the deadline and two heartbeats (a seat that pings late on
    purpose buys at most that much)."""
    return min(median(samples), max(limit, 2 * timing.heartbeat)) if samples else 0.0


class Receipts:
    """What each seat provably received, by the orderer's clock: when the entries that made each log
    length were relayed, and when each seat's acknowledgement first covered a length, from which
    its round trip is measured (from the relay of length L to the first ping acknowledging L; a
    ping may lag up to a heartbeat behind, which only makes the estimate lenient)."""

    def __init__(self) -> None:
        self.relayed_at: dict[int, float] = {}
        self.acks: dict[int, deque] = {}  # seat -> (length, when first acknowledged), in order
        self.trips: dict[int, deque] = {}

    def relayed(self, length: int, now: float) -> None:
        if length not in self.relayed_at:
            self.relayed_at[length] = now
            while len(self.relayed_at) > ACKS_KEPT:
                del self.relayed_at[next(iter(self.relayed_at))]

    def acked(self, seat: int, length: int, now: float) -> None:
        acks = self.acks.setdefault(seat, deque(maxlen=ACKS_KEPT))
        if acks and length <= acks[-1][0]:
            return
        acks.append((length, now))
        sent = self.relayed_at.get(length)
        if sent is not None:
            self.trips.setdefault(seat, deque(maxlen=TRIPS_KEPT)).append(now - sent)

    def received_at(self, seat: int, length: int) -> float | None:
        """When `seat`'s acknowledgement first covered `length` (None: it has not, as far as remembered)."""
        return next((when for acked, when in self.acks.get(seat, ()) if acked >= length), None)

    def behind(self, seat: int, before: float) -> bool:
        """Whether `seat` has not acknowledged the log as it stood at `before` (entries kept from it: an
        honest seat acts only on a log as long as the orderer says it is, net/table/joiner.py)."""
        acks = self.acks.get(seat)
        held = max((length for length, when in self.relayed_at.items() if when <= before), default=0)
        return not acks or acks[-1][0] < held

    def round_trip(self, seat: int, limit: float, timing: "Timing") -> float:
        return round_trip(self.trips.get(seat, ()), limit, timing)


class PingClock:
    """A joiner's round trip to the orderer, timed by the counter (`echo`) each ping carries and its pong sends back."""

    def __init__(self) -> None:
        self.count = 0
        self.sent: dict[int, float] = {}  # ping number -> when sent (the latest few)
        self.trips: deque = deque(maxlen=TRIPS_KEPT)

    def ping(self, now: float) -> int:
        self.count += 1
        self.sent[self.count] = now
        self.sent.pop(self.count - 32, None)
        return self.count

    def pong(self, echo: Any, now: float) -> None:
        sent = self.sent.pop(echo, None) if type(echo) is int else None
        if sent is not None:
            self.trips.append(now - sent)

    def round_trip(self, limit: float, timing: "Timing") -> float:
        return round_trip(self.trips, limit, timing)


def answer_default(replica) -> Move | None:
    """The move the seat due to act is taken to make if it does not answer in time, or None."""
    state = replica.state
    return state.default_move() if state is not None and replica.pending is None else None


def waiting_key(replica) -> tuple:
    """One key per thing awaited: a state step or an event (not the seats still missing); a deal
    step's clock restarts when the seats it waits for change (a shuffle pass goes seat by seat)."""
    waiting = replica.waiting_for
    return (waiting.action, replica.steps, len(replica.events)) + ((waiting.seats,) if waiting.action == "deal" else ())


def deadline(replica, timing: Timing) -> float:
    """Seconds the table gives the seats it waits for now (0: no deadline; a seat away past the grace
    period is in default all the same)."""
    action = replica.waiting_for.action
    limit = timing.turn_deadline if action == "move" else timing.reveal_deadline
    if action in ("move", "seal", "unseal") and answer_default(replica) is not None:  # a late answer is given for the seat
        limit = min(x for x in (limit, timing.answer_deadline, float("inf")) if x)
        return 0.0 if limit == float("inf") else limit
    return limit


def default_reason(replica, timing: Timing, seat: int, waited: float, away: float | None) -> Phrase:
    """Why `seat` is in default after the table has waited `waited` s for what it waits for and the
    seat has been away `away` s (None: it is here), or an empty phrase when it is not."""
    if seat not in replica.waiting_for.seats:
        return phrase()
    if away is not None and away > timing.grace:
        return phrase(Seat(seat), f" dropped and did not return within {timing.grace:g} s")
    limit = deadline(replica, timing)
    if not limit or waited <= limit:
        return phrase()
    action = replica.waiting_for.action
    default = answer_default(replica)
    if action in ("move", "seal", "unseal") and default is not None:
        return phrase(Seat(seat), f" did not answer within {limit:g} s: {default}")
    what = {"move": "move", "reveal": "reveal", "deal": "deliver its part of the card deal"}.get(action, action)
    return phrase(Seat(seat), f" did not {what} within {limit:g} s")


# The kinds of frame that answer what the table waits for (a move that pays cards first shows them
# in "deal" frames; a reveal may need a fresh chain first).
ANSWERS = {"move": ("move", "deal"), "reveal": ("reveal", "anchor"), "deal": ("deal",), "seal": ("seal",),
           "unseal": ("unseal",)}


def disputes(replica, timing: Timing, seat: int, waited: float, away: float | None, answered: float | None) -> str:
    """Why `seat`, claimed against, is not in default by its own view, or "" when it agrees it is.

    `waited`: seconds since it saw the wait begin; `away`: how long it was cut off from the table
    since (None: it was not); `answered`: when, in seconds into the wait, it sent an answer that the
    log does not hold (None: it sent none)."""
    limit = deadline(replica, timing)
    slack = min(timing.heartbeat, (limit or timing.grace) / 4)
    if answered is not None and (not limit or answered <= limit + slack):
        return f"it answered {answered:.1f} s into the wait and the log does not hold its answer"
    if default_reason(replica, timing, seat, waited + slack, None if away is None else away + slack):
        return ""
    action = replica.waiting_for.action
    what = {"reveal": "reveal", "deal": "part of the card deal", "seal": "sealed answer", "unseal": "opening"}
    text = f"by its own clock the table had waited {waited:.1f} s for its {what.get(action, action)}"
    text += f" (deadline {limit:g} s)" if limit else " (no deadline)"
    if away is not None:
        text += f" and it was cut off for {away:.1f} s (grace {timing.grace:g} s)"
    return text
