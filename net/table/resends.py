"""The orderer's side of idempotent resends (PROTOCOL.md §10.6): it decides each frame once. A copy of a
frame its log holds is ignored; a copy of one it refused is told the same refusal, never recorded
again; a frame ahead of its seat's next sequence number waits for the ones before it; and once a
seat's own frame was refused, what that seat signed after it before it knew never lands, so the seat
decides again from there without forking the log."""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from dicetable.net.log import wire
from dicetable.net.refusals import Disputed, ForkedLog

MAX_AHEAD = 32  # frames of one seat held ahead of its next sequence number: two `submit`s' worth (§10.6)
AHEAD_COPIES = 2  # different frames held at one (seat, sequence number): the seat's, and one a carrier made up
REFUSALS_KEPT = 64  # refused frames whose copies are told the same refusal again, not recorded again
AGAIN = (ForkedLog, Disputed)  # refusals a copy may not meet again (this log was behind; my clock moved on): checked again
UNSEQUENCED = ("open", "join", "dispute")  # kinds whose sequence number the replica does not check in turn


def _digest(frame: bytes) -> bytes:
    return hashlib.blake2b(frame, digest_size=16).digest()


class Resends:
    """One orderer's memory of what it decided for frames that may come again."""

    def __init__(self, orderer) -> None:
        self.orderer = orderer
        self.ahead: dict[int, dict[int, list[tuple[bytes, bytes]]]] = {}  # seat -> seq -> [(frame, origin)]
        self.refused_told: OrderedDict[bytes, dict | None] = OrderedDict()  # refused frame's digest -> the
        # `refused` told, to tell a copy again (None: a copy is checked again, AGAIN)
        self.redecides: dict[int, tuple[int, int]] = {}  # seat -> (seq, log length) of its last frame refused

    def refused(self, frame: bytes, origin: bytes, told: dict | None) -> None:
        """A joiner's frame refused: when it is the submitting seat's own (it is told), that seat decides
        again from its sequence number once its copy is as long as this log (§10.6), so what it signed
        after it before it knew never counts. (Another seat's refused frame, carried, changes nothing
        for that seat: it was not told.)"""
        digest = _digest(frame)
        self.refused_told[digest] = told
        self.refused_told.move_to_end(digest)
        while len(self.refused_told) > REFUSALS_KEPT:
            self.refused_told.popitem(last=False)
        try:
            env = self.orderer.replica.decoded(frame)
        except wire.WireError:
            return
        if env.kind not in UNSEQUENCED and self.orderer.routes.get(origin) == env.seat:
            self.redecides[env.seat] = (env.seq, len(self.orderer.replica.log))
            self.ahead.pop(env.seat, None)

    def again(self, frame: bytes, origin: bytes) -> bool:
        """A joiner's frame this orderer does not decide now (PROTOCOL.md §10.6); True when it is one:
        a copy of a frame in the log (ignored: the seat catches up by its pings), a copy of one refused
        (told the same refusal, not recorded again), a frame its seat signed before it could know one
        of its frames was refused (at or after that one's sequence number, on a shorter log: ignored),
        or a frame ahead of its seat's next sequence number (held until the ones before it arrive: a
        path that reorders, or a lost packet the seat resends)."""
        replica = self.orderer.replica
        try:
            env = replica.decoded(frame)
        except wire.WireError:
            return False  # the replica refuses it, with the reason
        digest = _digest(frame)
        index = replica.entry_of(env.seat, env.seq)
        if index is not None:
            there = replica.log[index].frame
            if there == frame or digest in self.refused_told or _digest(there) in self.refused_told:
                return True  # a copy; or one of the two was refused and its seat told: it decided again, no fork
        if self.refused_told.get(digest) is not None:
            self.orderer.tell(origin, "refused", self.refused_told[digest])
            return True
        seats = replica.seats
        if env.kind in UNSEQUENCED or env.table != replica.table or not 0 <= env.seat < len(seats) \
                or seats[env.seat] is None:
            return False
        if index is None and env.seq < replica.next_seq(env.seat):
            return True  # a number the seat's dispute passed over: the frame is in the log inside it (§5.7)
        refused_seq, refused_at = self.redecides.get(env.seat, (None, 0))
        if refused_seq is not None and env.seq >= refused_seq and env.prev.entries < refused_at and digest not in self.refused_told:
            return True  # signed before its seat knew of the refusal: it decides again from there
        if env.seq <= replica.next_seq(env.seat):
            return False
        held = self.ahead.setdefault(env.seat, {})
        copies = held.setdefault(env.seq, [])
        if len(copies) < AHEAD_COPIES and all(f != frame for f, _ in copies):
            copies.append((frame, origin))
        while sum(map(len, held.values())) > MAX_AHEAD:  # the furthest ahead goes first: the least likely to be filled
            del held[max(held)]
        return True

    def release(self, seat: int, seq: int) -> None:
        """A frame of `seat` landed at `seq`: its held frames with the next sequence number are ordered now
        (those behind it, filled by other copies, go; a frame whose connection is gone waits for its seat's
        resend). The frame its seat decided again after a refusal sends those held away: they may be
        ones it signed after the refused one before it knew (it resends its own)."""
        held = self.ahead.get(seat)
        if not held:
            return
        if self.redecides.get(seat, (None,))[0] == seq:
            del self.ahead[seat]
            return
        after = self.orderer.replica.next_seq(seat)
        for behind in [n for n in held if n < after]:
            del held[behind]
        copies = held.pop(after, [])
        if not held:
            del self.ahead[seat]
        for frame, origin in copies:
            if origin in self.orderer.routes:
                self.orderer.order(frame, origin)
