"""Stalls said aloud (PROTOCOL.md §10.6, issue 37): a link that carries pings but not the game stops a
table, and the seats it stops say so within seconds instead of waiting in silence.

A relay (or a bad link) can drop a seat's submissions and carry its pings, or drop the orderer's entries
to a seat and carry its pongs: every seat looks present, nothing moves. Two watches, one per side,
each a `Lag` per thing that should catch up:
- a joiner (net/table/joiner.py) that hears the orderer says when its own frames stay unordered, or
  when its copy stays behind the length the orderer's pongs give, for `STALL_AFTER` seconds (longer
  on a link whose normal is slower, `Lag.patience`, up to `STALL_LIMIT`);
- an orderer (net/table/orderer.py) says the same of a seat whose pings arrive but whose acknowledged
  length stays behind the log, or whose submissions it holds back (they sit on entries it lacks).
Each stall is told once, with what the person can do, and told again when it clears. What is told
changes nothing in the log: the deadlines and claims (net/table/defaults.py) go on as before.
"""

from __future__ import annotations

from typing import Callable

from dicetable.core.phrase import Phrase, phrase
from dicetable.net.table.events import StallCleared, Stalled

STALL_AFTER = 2.5  # seconds stuck before it is said: past a resend (2 heartbeats)...
STALL_LIMIT = 4.0  # ...or longer on a link slow by nature (`Lag.patience`), never past this: said within 5 s
WHAT_TO_DO = ("; you can wait (it goes on when the link carries it), or leave the table: your transcript keeps "
              "what was sent and seen, for a dispute")


def entries(count: int) -> str:
    return f"{count} log entr{'y' if count == 1 else 'ies'}"


class Lag:
    """A length that should reach a mark (the orderer's log): since when it is behind and not moving, and
    how long it usually is when nothing is wrong (a slow link's normal is no stall)."""

    def __init__(self, base: float = STALL_AFTER) -> None:
        self.base = min(base, STALL_LIMIT)  # the least patience (an orderer's: a seat acknowledges once a heartbeat)
        self.at = -1  # where it was at the last look
        self.since: float | None = None  # since when it is behind without moving on (None: caught up)
        self.usual = 0.0  # how long it lasted when it was no stall: a max that decays

    def patience(self) -> float:
        return min(STALL_LIMIT, max(self.base, 1.5 * self.usual))

    def took(self, seconds: float) -> None:
        """A wait that ended: the link's normal (a stall counts too: patience stays within STALL_LIMIT)."""
        self.usual = max(0.9 * self.usual, seconds)

    def behind(self, now: float, at: int, mark: int) -> bool:
        """Where it is (`at`) against where it should be (`mark`): True once it has been behind for its
        `patience` without moving on. A slow catch-up that moves, or a seat that keeps up with a log
        that grows, is no stall."""
        if self.since is not None and (at >= mark or at > self.at):
            self.took(now - self.since)
        if at >= mark:
            self.since = None
        elif self.since is None or at > self.at:
            self.since = now
        self.at = at
        return self.since is not None and now - self.since >= self.patience()

    def clear(self) -> bool:
        """Not counted (the other side is away: that is told as a drop); False, as `behind` would say."""
        self.since, self.at = None, -1
        return False


class Stalls:
    """One session's stall notices by subject (seat, what): each stall said once, and its end."""

    def __init__(self, session) -> None:
        self.session = session
        self.told: set[tuple[int, str]] = set()
        self.lags: dict[tuple[int, str], Lag] = {}

    def lag(self, seat: int, what: str, base: float = STALL_AFTER) -> Lag:
        return self.lags.setdefault((seat, what), Lag(base))

    def check(self, seat: int, what: str, stuck: bool, caught_up: bool, said: Callable[[], Phrase],
              cleared: Callable[[], Phrase]) -> None:
        """`said` and `cleared` make the words only when they are told (this runs every loop turn)."""
        key = (seat, what)
        if stuck and key not in self.told:
            self.told.add(key)
            self.session.emit(Stalled(seat, what, said()))
        elif caught_up and key in self.told:  # caught up, not merely paused (a dropped orderer is told apart)
            self.told.discard(key)
            self.session.emit(StallCleared(seat, what, cleared()))


class SeatStalls(Stalls):
    """A joiner's own stalls, while it hears the orderer (an orderer gone silent is `Dropped`, told apart)."""

    def __init__(self, session) -> None:
        super().__init__(session)
        self.first_sent: dict[int, float] = {}  # seq -> when my frame first went out (a resend keeps the first)
        self.stuck_seq: int | None = None  # the frame a told stall waits on

    def watch(self, now: float) -> None:
        session = self.session
        seat, presence, replica = session.seat, session.orderer_presence, session.replica
        if seat is None or not session.welcomed or not replica.seats:
            return
        heard = presence.away_since is None and now - presence.last_heard < STALL_AFTER
        orderer = session.link.orderer if session.link.orderer is not None else 0
        who = replica.who(orderer)
        unordered, sending = session.own.unordered, self.lag(seat, "unordered")
        for seq in set(self.first_sent) - set(unordered):  # ordered (or refused): how long the link took
            sending.took(now - self.first_sent[seq])
        # the clock runs while the orderer is heard: a frame sent while it was away is counted from its return
        self.first_sent = {seq: self.first_sent.get(seq, now) if heard else now for seq in unordered}
        oldest = min(self.first_sent, key=self.first_sent.get, default=None)
        length, host_length = len(replica.log), session.host_length
        # unordered while the orderer's pongs say its log is no longer than mine: not in entries I lack
        stuck = oldest is not None and now - self.first_sent[oldest] >= sending.patience() and host_length <= length
        if stuck and (seat, "unordered") not in self.told:
            self.stuck_seq = oldest
        self.check(seat, "unordered", heard and stuck, heard and self.stuck_seq not in unordered,
                   lambda: phrase(who, " answers this seat but has not taken what it sent "
                                       f"{now - self.first_sent[oldest]:.0f} s ago into the log (the relay or the link "
                                       "may be dropping it; it is sent again)", WHAT_TO_DO),
                   lambda: phrase(who, " takes what this seat sends into the log again: the game goes on"))
        lag = self.lag(seat, "behind")
        behind = lag.behind(now, length, host_length) if heard else lag.clear()
        self.check(seat, "behind", behind, heard and not behind,
                   lambda: phrase(who, f"'s log is {entries(host_length - length)} ahead of this seat's copy and they "
                                       "do not arrive (the relay or the link may be dropping them)", WHAT_TO_DO),
                   lambda: phrase("this seat gets ", who, "'s log again: the game goes on"))


class OrdererStalls(Stalls):
    """An orderer's view of its seats: here (pinging) but behind the log, or its submissions held back."""

    def __init__(self, session) -> None:
        super().__init__(session)
        self.held_since: dict[int, float] = {}  # seat -> when its submissions were first held back

    def held_back(self, seat: int, now: float) -> None:
        """A submission of `seat` that sits on entries this orderer lacks (net/table/orderer.py)."""
        self.held_since.setdefault(seat, now)

    def watch(self, now: float) -> None:
        session = self.session
        replica, length = session.replica, len(session.replica.log)
        away = session.own.defaults.away_since
        for seat in sorted(set(session.routes.values())):
            if seat == session.seat or seat >= len(replica.seats) or replica.seats[seat] is None \
                    or seat in replica.out:
                continue
            here = seat not in away and now - session.last_seen.get(seat, 0.0) < STALL_AFTER  # its pings arrive
            who = replica.who(seat)
            acked = session.acked.get(seat, 0)
            lag = self.lag(seat, "behind", STALL_AFTER + session.timing.heartbeat)  # its acks come once a heartbeat
            behind = lag.behind(now, acked, length) if here else lag.clear()  # an away seat's lag starts on its return
            self.check(seat, "behind", behind, here and not behind,
                       lambda: phrase(who, f" is here (its pings arrive) but {entries(length - acked)} behind the "
                                           "log, which does not reach it (the relay or its link may be dropping it); "
                                           "the game waits for it", WHAT_TO_DO),
                       lambda: phrase(who, " gets the log again: the game goes on"))
            if acked <= length or not here:
                self.held_since.pop(seat, None)
            since = self.held_since.get(seat)
            self.check(seat, "held", here and since is not None and now - since >= STALL_AFTER, here and since is None,
                       lambda: phrase(who, f"'s moves cannot be ordered: they build on its copy of {acked} entries, "
                                           f"longer than this log of {length}", WHAT_TO_DO),
                       lambda: phrase(who, "'s moves are ordered again: the game goes on"))
