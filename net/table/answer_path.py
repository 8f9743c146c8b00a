"""Answers the orderer cannot hide (FAIRNESS.md §3c, PROTOCOL.md §10.10): a seat's reveals and
disputes also go to every other seat, boxed to that seat's key, so a seat holds the others' answers
whether or not the orderer orders them.

The box: `crypto_box` (X25519 + XSalsa20-Poly1305, PyNaCl's `Box`) from the sender's Ed25519 key
mapped to X25519 to the receiver's, over `table ‖ from ‖ to ‖ frame` padded to a multiple of
`PAD` bytes; the orderer relays it as it came (`forward {to, box}` from a joiner, `forwarded {from,
box}` to a seat; a joiner's boxes of one answer travel in one packet) and can neither read it nor tell a reveal's box from a dispute's. Only the two seats
hold the key, so a box opens only for its receiver and proves its sender.

`HeldAnswers` is one seat's store of what it holds: the reveals of other seats by (seat, event) and
their disputes by claim; at most `MAX_HELD` per seat (a seat flooding boxes pushes out only its own
oldest ones). What it is for (net/table/defaults.py): a seat never claims or witnesses a default
against a seat whose answer to the table's wait it holds, and it submits that answer to the orderer
itself (a reveal authenticates itself, so anyone may carry it); what the log never takes it keeps in
its transcript as evidence (`evidence` records, net/log/transcript.py) that `verify` shows. A dispute
is held only if it answers a claim of this table against its sender, signed by its claimant, one per
claim (the first); it is kept as evidence once the log holds that claim, and carried to the log once
the claim took effect (`keep_disputes`): so a dispute the orderer, or the relay on the way to it,
never took reaches every copy the boxes reached, and the log through them (issue 37).
"""

from __future__ import annotations

import struct
from collections import OrderedDict

from nacl.exceptions import CryptoError
from nacl.public import Box, PublicKey

from dicetable.net.log import wire
from dicetable.net.refusals import Refusal
from dicetable.net.table.host_packets import seat_box_public
from dicetable.net.table.seat_part import SeatPart

FORWARDED = ("reveal", "dispute")  # the answers a seat also sends to every seat itself
PAD = 512  # a box's plaintext is padded to a multiple of this: a reveal's box and a small dispute's look alike
MAX_BOX = wire.MAX_FRAME + 1024  # a box holds one frame and its few fields
MAX_HELD = 64  # answers held per seat


def _box(profile, key: bytes) -> Box | None:
    public = seat_box_public(key)
    return None if public is None else Box(profile.signing_key.to_curve25519_private_key(), PublicKey(public))


def seal(box: Box, table: bytes, sender: int, receiver: int, frame: bytes) -> bytes:
    """`frame` boxed from seat `sender` to seat `receiver` (`box`: their two keys, `_box`)."""
    data = table + bytes((sender, receiver)) + struct.pack(">I", len(frame)) + frame
    return bytes(box.encrypt(data + bytes(-len(data) % PAD)))


def open_box(box: Box, table: bytes, sender: int, receiver: int, sealed: bytes) -> bytes | None:
    """The frame in a box from seat `sender` to me, seat `receiver`; None unless it opens under our two
    keys (`box`) and names this table and both seats."""
    if type(sealed) is not bytes or len(sealed) > MAX_BOX:
        return None
    try:
        data = box.decrypt(sealed)
    except (CryptoError, ValueError, TypeError):
        return None
    head = wire.TABLE_BYTES + 2 + 4
    if len(data) < head or data[:wire.TABLE_BYTES] != table or data[wire.TABLE_BYTES:wire.TABLE_BYTES + 2] != bytes((sender, receiver)):
        return None
    (size,) = struct.unpack(">I", data[wire.TABLE_BYTES + 2:head])
    return data[head:head + size] if head + size <= len(data) else None


class HeldAnswers(SeatPart):
    """The other seats' reveals and disputes this seat holds, whatever the orderer did with them."""

    def __init__(self, seat) -> None:
        self.own = seat
        self.held: dict[int, OrderedDict] = {}  # sender seat -> {(kind, event or claim index): frame}
        self.carried: set[tuple[int, int]] = set()  # (claim index, seat) whose held reveal I submitted
        self.kept: set[tuple[int, int]] = set()  # (claim index, seat) whose held dispute my transcript keeps
        self.carried_disputes: set[tuple[int, int]] = set()  # ... and which I submitted (or the log holds)
        self._boxes: dict[bytes, Box | None] = {}  # another seat's Ed25519 key -> our box (one X25519 each)
        self._opens: tuple = (None, b"", {})  # (replica, its log's head hash, held reveal -> whether it opens): `opens`

    def box(self, key: bytes) -> Box | None:
        if key not in self._boxes:
            self._boxes[key] = _box(self.own.profile, key)
        return self._boxes[key]

    # -- sending -------------------------------------------------------------------------------
    def boxes(self, frame: bytes, orderer: int | None) -> list[list]:
        """My `frame` boxed to every other seat but the one ordering the log: `[[seat, box], ...]`."""
        replica = self.replica
        out = []
        for seat, info in enumerate(replica.seats):
            box = self.box(info.key) if info is not None and seat not in (self.seat, orderer) else None
            if box is not None:
                out.append([seat, seal(box, replica.table, self.seat, seat, frame)])
        return out

    # -- receiving -----------------------------------------------------------------------------
    def take(self, sender, sealed) -> bool:
        """A box from seat `sender` (through the orderer, the relay or a direct link): kept, and True, if it
        opens and holds that seat's answer."""
        replica = self.replica
        if replica is None or self.seat is None or type(sender) is not int or not 0 <= sender < len(replica.seats):
            return False
        info = replica.seats[sender]
        if info is None or sender == self.seat:
            return False
        box = self.box(info.key)
        frame = open_box(box, replica.table, sender, self.seat, sealed) if box is not None else None
        if frame is None:
            return False
        try:
            env = replica.decoded(frame)  # kept: the same frame in the orderer's entries is not decoded again
        except wire.WireError:
            return False
        if env.table != replica.table or env.seat != sender or env.kind not in FORWARDED:
            return False
        if env.signature and not env.signed_by(info.key):
            return False
        if env.kind == "dispute" and (not env.signature or self._claimant(env) is None):
            return False
        which = (env.kind, env.body["k"] if env.kind == "reveal" else env.body["claim"])
        mine = self.held.setdefault(sender, OrderedDict())
        if env.kind == "dispute" and which in mine:
            return True  # one dispute per claim and seat: the first it sent me stands
        mine[which] = frame
        mine.move_to_end(which)
        while len(mine) > MAX_HELD:
            mine.popitem(last=False)
        if env.kind == "dispute":
            self.keep_disputes()
        return True

    def _claimant(self, dispute: wire.Envelope) -> int | None:
        """The seat whose claim `dispute` answers, if that claim is a claim of this table against the
        dispute's author signed by a seat of it (PROTOCOL.md §5.7); else None: it is kept nowhere."""
        replica = self.replica
        try:
            claim = wire.decode(dispute.body["frame"])
        except wire.WireError:
            return None
        seats = replica.seats
        if claim.kind != "claim" or claim.table != replica.table or claim.body["against"] != dispute.seat \
                or not 0 <= claim.seat < len(seats) or claim.seat == dispute.seat or seats[claim.seat] is None:
            return None
        return claim.seat if claim.signed_by(seats[claim.seat].key) else None

    def answer(self, seat: int) -> bytes | None:
        """The answer of `seat` I hold to the table's wait now: its reveal that opens its chain for the
        open event, or its dispute of the claim pending against it; None if I hold none."""
        replica, mine = self.replica, self.held.get(seat)
        if not mine or replica is None:
            return None
        pending = replica.pending
        if pending is not None and pending.reveals[seat] is None:
            frame = mine.get(("reveal", pending.number))
            if frame is not None and self.opens(frame):
                return frame
        claim = replica.pending_claim(seat)
        if claim is not None:
            return mine.get(("dispute", claim.index))
        return None

    def opens(self, frame: bytes) -> bool:
        """The reveal opens its seat's chain for the open event in my replica (checked, nothing applied);
        worked out once per frame and log (its head hash: the deadline watch asks every loop turn)."""
        replica = self.replica
        head = replica.head_at(len(replica.log)) if replica.log else b""
        of, at, known = self._opens
        if of is not replica or at != head:
            known = {}
            self._opens = (replica, head, known)
        if frame not in known:
            try:
                replica.play.reveal(replica.decoded(frame))
                known[frame] = True
            except (Refusal, wire.WireError):
                known[frame] = False
        return known[frame]

    def keep_disputes(self) -> None:
        """Every dispute I hold of a claim my log holds at its index: kept in my transcript as evidence
        (`verify` says the claim is disputed), and once the claim has taken effect, carried to the log,
        once (a signed frame: anyone may carry it; every copy then holds it). Not while it is pending: the
        dispute would use up the sequence numbers of the answers it shows, which the log may still take
        (a held reveal, carried by `carry`), and the claim lapses then. Called when a dispute comes and
        when a claim or a witness lands (a box may come before the orderer's entries)."""
        replica = self.replica
        log, states = replica.log, {c.index: c.state for c in replica.claims}
        in_log = {(d.seat, d.claim) for d in replica.disputes if d.held}
        for sender, mine in self.held.items():
            for (kind, index), frame in mine.items():
                if kind != "dispute" or (index, sender) in self.carried_disputes or index >= len(log) \
                        or log[index].frame != wire.decode(frame).body["frame"]:
                    continue
                if (sender, index) in in_log:  # every copy holds it already
                    self.carried_disputes.add((index, sender))
                    continue
                if (index, sender) not in self.kept:
                    self.kept.add((index, sender))
                    self.own.transcript.append_evidence(frame, f"seat {sender}'s dispute of seat {log[index].seat}'s "
                                                               f"claim at entry {index + 1}, boxed to this seat by seat {sender}")
                if states.get(index) in ("out", "answered") and not self.own.driver.orders_log:
                    self.carried_disputes.add((index, sender))
                    self.own.driver.submit(frame)

    def carry(self, now: float) -> None:
        """A claim is pending against a seat whose reveal I hold: the orderer lacks it (or hides it). I
        send it to the log myself (anyone may carry a reveal), once per claim, and keep it as evidence."""
        replica = self.replica
        for claim in replica.claims:
            if claim.state != "pending" or (claim.index, claim.against) in self.carried:
                continue
            frame = self.answer(claim.against)
            if frame is None or wire.decode(frame).kind != "reveal":  # a dispute: `keep_disputes`
                continue
            self.carried.add((claim.index, claim.against))
            self.own.transcript.append_evidence(frame, f"seat {claim.against}'s answer, held while seat {claim.seat} "
                                                       "claimed it in default")
            if not self.own.driver.orders_log:
                self.own.driver.submit(frame)
