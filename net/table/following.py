"""A joiner following the orderer's log (PROTOCOL.md §10.5, §10.6, §11.4).

Each entry the orderer relays is taken through the seat's own replica, in order, and written to its
transcript; a gap is asked for again (`ping {next}`). An entry this replica refuses means the orderer
(or the log it orders) is lying: the seat names it (the tag on the packet names the seat that orders)
and leaves with its copy rather than play on a log it cannot trust — through a relay, only after
asking again a few times, since a dropped or moved packet may be the relay's doing. A claim against
this seat that it disputes and that would take effect alone: its copy holds its signed dispute in the
claim's place, and it leaves.

A host seat rejoining its table (net/table/succession.py) may cut its own copy's tail (`Rejoin`).

Another seat's fault the orderer refused (a `fault` packet, net/table/orderer.py) is shown as a `fault`
event once that seat's signature on the refused frame checks out with this seat's own replica.
"""

from __future__ import annotations

import time

from dicetable.net.log import wire
from dicetable.net.refusals import Disputed, Refusal
from dicetable.net.table.seat_file import load_seat
from dicetable.net.table.seat_transcript import replayed
from dicetable.net.table.session import SessionError
from dicetable.core.phrase import Phrase
from dicetable.net.table.events import Cut, Refused
from dicetable.net.table.seat_part import SeatPart

MAX_FAULTS_TOLD = 64  # faults of other seats this seat checks and shows
AHEAD_KINDS = frozenset({"reveal", "seal", "unseal"})  # frames of mine a next step is tried on before they are ordered
TRIED_KINDS = AHEAD_KINDS | {"move"}  # frames of mine checked on a tentative copy while they are on their way
MAX_AHEAD = 4  # steps of mine one loop turn takes ahead
RELAY_DOUBTS = 3  # packets through a relay that do not fit the log before the table is left


class Rejoin:
    """A host seat rejoining as a joiner: its copy's tail past what any seat saw may be cut (net/table/succession.py)."""

    def __init__(self, copy: int) -> None:
        self.copy: int | None = copy  # its copy's length, while its tail may be cut
        self.handed: int | None = None  # the successor's log length at the hand-over (its welcome says)
        self.agreed = 0  # entries of its copy the orderer's match

    def agree(self, index: int) -> None:
        """The orderer's entry `index` is my copy's: a rejoining host's cut may only start after it."""
        self.agreed = max(self.agreed, index + 1)
        if self.copy is not None and self.agreed >= self.copy:
            self.copy = None  # all of my copy is the table's: nothing to cut

    def unseen(self, index: int) -> bool:
        """A rejoining host seat's copy may be cut from `index` on: past the successor's log at the
        hand-over (all any seat held of what this seat relayed) and past every entry agreed on since."""
        return (self.copy is not None and self.handed is not None
                and max(self.handed, self.agreed) <= index < self.copy)

    def checked(self, length: int) -> bool:
        """Nothing of mine is signed on a tail I may still cut: my copy is checked up to `length`."""
        return self.copy is None or self.agreed >= length


class Following(SeatPart):
    """A joiner's copy of the orderer's log, entry by entry; it leaves a log it cannot follow."""

    def __init__(self, peer) -> None:
        self.peer, self.own = peer, peer.own
        self.emit = peer.emit
        self.rejoin: Rejoin | None = None  # a host seat rejoining its table
        self.disputed_at: tuple[int, int] | None = None  # (log index, claimant) of a claim I refused
        self._doubts = 0  # packets through a relay that did not fit the log (net/reach/relay.py)
        self.tried: tuple | None = None  # (tentative copy, my frames it took): my last frames sent, checked ahead

    def take(self, start: int, frames: list) -> None:
        """The orderer's entries from `start` on (PROTOCOL.md §10.5, §10.6)."""
        records = self._adopt(start, frames)
        try:
            for offset, frame in enumerate(frames):
                index = start + offset
                have = len(self.replica.log)
                if index < have:
                    mine = self.replica.log[index]
                    if mine.kind == "dispute" and mine.seat == self.seat and mine.envelope.body["frame"] == frame:
                        self.disputed_at = (index, wire.decode(frame).seat)  # resumed after my dispute
                        break
                    if mine.frame == frame:  # already in our log
                        if self.rejoin is not None:
                            self.rejoin.agree(index)
                        continue
                    if records or type(frame) is not bytes or not (self.rejoin is not None and self.rejoin.unseen(index)):
                        if self._doubt_relay(have):
                            return
                        self._leave_forked(frame, f"forked log: {self._orderer()} sent another entry {index + 1} than "
                                                  "the one this seat holds: it shows seats different logs",
                                           self.peer.link.orderer, records)
                    self._cut(index)
                    have = index  # the orderer's entry takes the place of my cut one
                if index > have or type(frame) is not bytes:
                    self.peer.to_orderer("ping", {"next": have})  # a gap: ask for what is missing
                    return
                try:
                    mine = any(frame == sent for _, sent in self.own.unordered.values())  # relayed back unchanged
                    record = self.replica.accept(frame, signed_here=mine)
                except Disputed as refusal:  # a claim against this seat that would take effect alone
                    with self.own.transcript.batch():  # the records before it first, then the refusal, then my dispute
                        for earlier in records:
                            self.own.applied(earlier)
                    records.clear()
                    self.own.record_refusal(frame, str(refusal))
                    leaving = self._disputed_claim(frame, index, refusal)
                    if leaving is not None:
                        records.append(leaving)
                    break
                except Refusal as refusal:
                    if self._doubt_relay(have):
                        return
                    self._leave_forked(frame, f"{self._orderer()} relayed a message this seat refuses: {refusal}",
                                       refusal.seat, records)
                self.own.own_frame_landed(record)
                records.append(record)
            if records and self.disputed_at is None and len(self.replica.log) >= self.peer.host_length:
                # Reveal first, write after: the host's log is the durable one and a crash here is
                # repaired by catch-up, so this seat's fsync stays off the roll's round trip; and sent
                # at once, with what it opens for me: the records' writes and events and the loop turn's
                # clocks follow it.
                self.own.reveal_if_due()
                self.peer.send_turn()
        finally:
            with self.own.transcript.batch():  # the packet's records, after my reveal
                for record in records:
                    self.own.applied(record)
        if self.disputed_at is not None:
            index, claimant = self.disputed_at
            self.peer.close()
            raise SessionError(f"{self.replica.who(claimant)} claimed this seat in default at entry {index + 1} and "
                               "this seat disputes it: the host's log holds the claim, so this seat leaves the table; "
                               "its transcript keeps the game as it stood, with its signed dispute")

    def act_ahead(self, sent: list[bytes]) -> None:
        """My frames of this loop turn (`sent`: just sent), tried on a tentative copy of my replica: the
        next steps of mine they open, if they need nobody's choice but a bot's (my reveal, my sealed
        answer's opening, a bot's sealed answer: `Seat.act_ahead`), follow at once instead of a round
        trip later (PROTOCOL.md §10.5). E.g. the last revealer of a roll that opens a sealed step seals
        right behind its reveal, and the last to open a sealed step with the default answer reveals for the
        event it opens (never behind another answer: `_is_default`).
        Tried after the send, so a turn with nothing ahead (most) waits for nothing; only when every
        frame of mine not yet in the log is of this turn and a reveal or sealed answer. A frame
        authored ahead builds on the log as this seat holds it, so whatever the orderer orders before
        it leaves its link valid: only the state at its place decides, as for any frame."""
        own, peer = self.own, self.peer
        if not sent:
            return  # what was tried stays: the orderer may not have relayed it yet
        self.tried = None
        if self.rejoin is not None or self.disputed_at is not None:
            return
        waiting = self.replica.waiting_for  # cheap first: only a turn that answers what the table waits for from me alone
        if waiting.action not in TRIED_KINDS or waiting.seats != (self.seat,):
            return
        mine = [frame for _, (_, frame) in sorted(own.unordered.items())]  # in the order sent
        if not mine or any(frame not in sent for frame in mine):
            return  # a frame of an earlier turn is not in the log yet: the orderer may have ordered others first
        decks = bool(getattr(self.replica.deal_handler, "formed", None))  # a move may pay hidden cards, which
        real = own.replica  # feeds the deal handler the copy shares: not tried then
        tentative, tried = real.tentative(), 0
        for _ in range(MAX_AHEAD):
            frames = [*mine, *peer.submits]
            ahead = True
            try:
                for frame in frames[tried:]:
                    env = tentative.decoded(frame)
                    if env.kind not in TRIED_KINDS or env.kind == "move" and decks:
                        return
                    # nothing goes ahead behind a move or an opening of an answer but the default (`_is_default`)
                    ahead = ahead and env.kind in AHEAD_KINDS and (env.kind != "unseal" or _is_default(tentative, env))
                    tentative.accept(frame, signed_here=True)
                    tried += 1
                    self.tried = (tentative, frames[:tried])
            except (Refusal, wire.WireError):
                return
            if not ahead:
                return
            own.replica = tentative  # only while the step is chosen; the app reading `session.replica` from its
            try:  # own thread in that moment sees a snapshot that already holds this seat's sent frames
                acted = own.act_ahead()
            finally:
                own.replica = real
            if not acted:
                return

    def _adopt(self, start: int, frames: list) -> list:
        """The orderer relays first my frames as `act_ahead` tried them, on the very log they were tried
        on: my tentative copy holds that log already, every check run against the same state, so it
        becomes my replica and they are not checked twice. Returns their records (none: no such copy)."""
        tried, self.tried = self.tried, None
        if tried is None or self.rejoin is not None or self.disputed_at is not None:
            return []
        copy, mine = tried
        have = len(self.replica.log)
        if start != have or copy.built_on != self.replica.head or frames[:len(mine)] != mine \
                or len(copy.log) != have + len(mine):
            return []
        copy.built_on = None  # its own log's head from now on
        self.own.replica = copy
        adopted = list(copy.log[have:])
        for record in adopted:
            self.own.own_frame_landed(record)
        return adopted

    def _cut(self, index: int) -> None:
        """Cut my copy's tail from `index` on: the transcript rewritten atomically with the cut frames
        kept as refused records, the replica replayed from what is left; the orderer's entries follow.
        Safe: frames nobody saw cannot have influenced anyone, my own among them are signed again only
        after the cut, and a reveal is fixed by its hash chain (the one re-sent holds the same value)."""
        reason = (f"cut on rejoining: written by this host seat and never relayed before it was away; the table's "
                  f"entry {index + 1} is {self._orderer()}'s")
        own = self.own
        removed = own.transcript.writer.cut(index, reason)
        kept = [record.frame for record in self.replica.log[:index]]
        own.replica = replayed(own.transcript.path, load_seat(own.transcript.path), self.replica.table, kept)
        own.replica.claim_check = own.defaults.check_claim
        self.rejoin.copy, own.unordered = None, {}
        own.series.replayed()
        self.emit(Cut(self.seat, f"{len(removed)} entries of this seat's copy from entry {index + 1} on "
                                              "were never relayed: cut (kept as evidence in the transcript); "
                                              "following the table's log"))

    def _disputed_claim(self, frame: bytes, index: int, refusal: Disputed):
        """Refuse the claim at `index` of the host's log: my copy holds my signed dispute in its place
        (sent to the host too), and I leave a log that holds a claim I dispute. Returns its record."""
        self.disputed_at = (index, refusal.seat)
        dispute = self.own.defaults.dispute(frame, index, refusal.seat, self.own.defaults.own_view(time.monotonic()))
        if dispute is None:
            return None
        record = self.replica.accept(dispute)  # my own copy: the claim's place holds my dispute
        self.own.own_frame_landed(record)
        return record

    def _orderer(self) -> str:
        """Who sent the packet just opened: its tag names the seat (net/table/host_packets.py)."""
        seat = self.peer.link.orderer
        if seat in (None, 0):
            return "seat 0: the host"
        return f"{self.replica.who(seat)}, ordering the log in the host seat's place,"

    def _doubt_relay(self, have: int) -> bool:
        """Through a relay, a packet that does not fit the log may be the relay's doing (a dropped or
        moved packet), not the host's: ask again, a few times, before leaving. True: asked again."""
        if self.peer.invite.owner is None or self._doubts >= RELAY_DOUBTS:
            return False
        self._doubts += 1
        self.peer.to_orderer("ping", {"next": have})
        return True

    def _leave_forked(self, frame: bytes, reason: str, seat: int | None = 0, accepted: list | None = None) -> None:
        """A log this seat cannot follow: say who, keep the evidence in the transcript, and leave (the
        `accepted` records of the same packet written first: the transcript closes here)."""
        with self.own.transcript.batch():
            for record in accepted or ():
                self.own.applied(record)
        if accepted:
            accepted.clear()
        self.own.record_refusal(frame, reason)
        self.emit(Refused(seat, Phrase.read(reason)))
        self.peer.close()
        raise SessionError(reason + "; leaving a table whose log cannot be trusted")

    def fault_told(self, body: dict) -> None:
        """Another seat's frame the host refused as a fault: shown once the seat's signature on it checks."""
        seat, reason, frame = body.get("seat"), body.get("reason"), body.get("frame")
        if type(seat) is not int or type(reason) is not str or type(frame) is not bytes or seat == self.seat:
            return
        if len(self.own.faults_said) >= MAX_FAULTS_TOLD:
            return  # a host flooding notices costs this seat no more signature checks
        seats = self.replica.seats
        info = seats[seat] if 0 <= seat < len(seats) else None
        try:
            envelope = wire.decode(frame)
        except wire.WireError:
            return
        if info is None or envelope.seat != seat or envelope.table != self.replica.table or not envelope.signed_by(info.key):
            return  # not words of that seat's own signing: the host's say-so alone names nobody
        reason = reason[:300]
        if (seat, reason) not in self.own.faults_said:
            self.own.record_refusal(frame, reason)
        self.own.fault(seat, reason)


def _is_default(replica, unseal: wire.Envelope) -> bool:
    """Whether an opening answers what the table would give by default. Nothing goes ahead behind one
    that does not: the orderer would read my reveal of the event it opens before ordering it, and could
    refuse it and claim me late, choosing between my answer and the default knowing the roll
    (PROTOCOL.md §19 point 15)."""
    default = replica.state.default_move() if replica.state is not None else None
    return default is not None and default.to_data() == unseal.body["move"]
