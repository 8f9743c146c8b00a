"""A joiner's own paths for its answers' boxes, around the orderer (PROTOCOL.md §10.10, §12.8).

Boxes through the orderer (`forward`) do not stop an orderer that holds all of one seat's packets,
reads its reveal in the `submit`, then drops the boxes with it: the others hold nothing and witness.
So a joiner sends its boxes by a path the orderer does not carry:

- on a relay table, on its own relay connection: the relay delivers each box to the receiving seat's
  own connection (`RelayBoxes` here, the relay's side net/reach/seat_boxes.py); the seat first proves
  its key to the relay by signing the relay's challenge, as a host proves its serve;
- on a direct table, over direct links between the seats (net/table/direct_links.py).

The boxes leave right after the loop turn's `submit`, not before: the orderer carries neither path,
so it gains nothing by reading the answer first, and the roll's round trip does not wait for them
(on a relay both share the seat's connection, so the relay passes the boxes on just after the submit).

A box no such path can carry now (the relay has not taken this seat's key yet, the receiver has none
proven there, no direct link to it) goes through the orderer as before, and the player is told once
per seat (`AnswerPath`), since against that seat the orderer could then decide a default.
"""

from __future__ import annotations

import time

from dicetable.core.phrase import phrase
from dicetable.net.reach.seat_boxes import seat_bytes
from dicetable.net.table.events import AnswerPath

ASK_EVERY = 1.0  # seconds between a joiner's tries to prove its seat key to the relay


class RelayBoxes:
    """This seat's boxes through its own relay connection (PROTOCOL.md §12.8)."""

    def __init__(self, session) -> None:
        self.session = session
        self.proven_on: tuple[int, int] | None = None  # (socket, renewals) the relay took this seat's key on
        self.asked_at = float("-inf")
        self.listing: dict | None = None  # the owner's list of its seats, as this seat last heard it
        self.sent: dict[bytes, tuple[int, bytes]] = {}  # receiver key -> (seat, its last box), for `box_missed`

    def _connection(self) -> tuple[int, int] | None:
        socket = self.session.socket
        return None if socket is None else (id(socket), socket.renewals)

    def ready(self) -> bool:
        return self.proven_on is not None and self.proven_on == self._connection()

    def step(self, now: float) -> None:
        """Until the relay took this seat's key on this connection: ask its challenge, each ASK_EVERY s
        (from the welcome on, so that it is done before the first roll)."""
        again = self.session.listing is not self.listing  # the owner named its seats (to the relay first):
        self.listing = self.session.listing  # prove my key again, as a named one no stranger can push out
        if not again and (self.ready() or now - self.asked_at < ASK_EVERY):
            return
        self.asked_at = now
        self.session.socket.send("relay_hello", {})

    def handle(self, op: str, body: dict) -> bool:
        """A relay packet of this path: True when it was one (it is the relay's word, never the host's)."""
        session = self.session
        if op == "relay_who":
            nonce = body.get("nonce")
            if type(nonce) is bytes and len(nonce) == 32:
                proof = session.profile.sign(seat_bytes(session.invite.table_id, session.invite.host_key, nonce))
                session.socket.send("seat_key", {"key": session.profile.public_key, "proof": proof})
        elif op == "seat_proven":
            self.proven_on = self._connection()
        elif op == "box_from":
            seat = _seat_of(session.replica, body.get("from"))
            if seat is not None:
                session.own.held.take(seat, body.get("box"))
        elif op == "box_missed":
            missed = self.sent.pop(body.get("to"), None) if type(body.get("to")) is bytes else None
            if missed is not None:
                session.paths.through_orderer([list(missed)], warn=[list(missed)])
        elif op != "seat_refused":  # refused: the relay does not know the seats yet; asked again later
            return False
        return True

    def send(self, boxes: list[list]) -> tuple[list[list], list[list]]:
        """Each box to the relay for its seat; returns (boxes also for the orderer, boxes only it carries):
        before the relay took my key, all of them go only through the orderer."""
        if not self.ready():
            return [], boxes
        seats = self.session.replica.seats
        for seat, box in boxes:
            key = seats[seat].key
            self.session.socket.send("box_to", {"to": key, "box": box})
            self.sent[key] = (seat, box)
        return [], []

    def welcomed(self) -> None:
        pass  # the relay's challenge is asked once the table has started (`step`)

    def offered(self, body: dict) -> None:
        pass  # direct links only (net/table/direct_links.py)

    def close(self) -> None:
        pass


def _seat_of(replica, key) -> int | None:
    if type(key) is not bytes:
        return None
    for seat, info in enumerate(replica.seats):
        if info is not None and info.key == key:
            return seat
    return None


class SeatPaths:
    """Which path each of this joiner's boxes takes: its own (relay or direct links), else the orderer's."""

    def __init__(self, session, own_path) -> None:
        self.session = session
        self.path = own_path  # RelayBoxes or DirectLinks
        self.told: set[int] = set()  # seats whose boxes went through the orderer, told once each
        self.queued: list[bytes] = []  # my answers of this loop turn, boxed after its `submit` (`flush`)

    def forward(self, frame: bytes) -> None:
        """My answer, to be boxed to each other seat but the orderer once this loop turn's `submit` is
        sent (`flush`): the orderer is not on my own path, so it gains nothing from seeing the answer
        first, and sealing and sending the boxes stay off the roll's round trip."""
        self.queued.append(frame)

    def flush(self) -> None:
        """The answers of this loop turn boxed and sent: by my own path, else through the orderer."""
        frames, self.queued = self.queued, []
        session = self.session
        link = session.link
        for frame in frames:
            boxes = session.own.held.boxes(frame, link.orderer if link.orderer is not None else 0)
            if boxes and session.socket is not None:
                also, only = self.path.send(boxes)
                if also or only:
                    self.through_orderer(also + only, warn=only)

    def through_orderer(self, boxes: list[list], warn: list[list]) -> None:
        """Boxes my path may not carry: through the orderer too, unread (PROTOCOL.md §10.10); those `warn`
        names went by it alone, which the player is told once a seat."""
        session = self.session
        session.to_orderer("forward", {"boxes": boxes})
        for seat, _ in warn:
            if seat not in self.told:
                self.told.add(seat)
                session.emit(AnswerPath(seat, phrase("my answers reach ", session.replica.who(seat),
                                                     " only through the host: no link of our own (yet)")))

    def handle(self, op: str, body: dict) -> bool:
        return self.path.handle(op, body)

    def welcomed(self) -> None:
        self.path.welcomed()

    def offered(self, body: dict) -> None:
        self.path.offered(body)

    def step(self) -> None:
        if self.session.own.seat is not None:
            self.path.step(time.monotonic())

    def close(self) -> None:
        self.path.close()
