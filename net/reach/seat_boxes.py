"""Seat-to-seat boxes at the relay (PROTOCOL.md §12.8, §10.10): the path of a seat's answers the host
does not carry.

A seat's reveals and disputes go boxed to every other seat (net/table/answer_path.py). Through the
host, a host that holds all of one seat's packets could read its reveal in the `submit` and then drop
its boxes too; so on a relay table a seat sends its boxes on its own relay connection and the relay
delivers each straight to the receiving seat's own connection. The relay never sees inside a box
(they are sealed seat to seat), and the host is not on the path.

A connection first proves a seat key as a host proves its serve (§12.2): it asks `relay_hello`, and
signs the relay's challenge for that connection:

    seat -> relay   seat_key {key, proof}     proof: Ed25519 signature by key of
                                              SEAT_LABEL ‖ table ‖ relay key ‖ nonce
    relay -> seat   seat_proven {} | seat_refused {reason}
    seat -> relay   box_to {to: key, box}      a box for the seat of key `to` at this connection's table
    relay -> seat   box_from {from: key, box}  delivered to the connection that proved `to` last
    relay -> seat   box_missed {to}            `to` has no proven connection here (or the sender is over
                                              its budget): the sender sends that box through the host

A key may be proven at a table from a seat's welcome on (at most MAX_KEYS a table; before the owner
names its seats the oldest unnamed one goes), but boxes travel only between keys the table's owner
names as its seats in its signed list (net/table/deputies.py, learned from the host's `deputies` and
every `serve`; the owner's own key among them), so no stranger takes part; nobody but a key's holder
can take its deliveries (the challenge is per connection). The relay keeps no boxes: each is
sent on at once or missed. What a seat can send is budgeted per connection (BOX_RATE bytes a second,
BOX_BURST at once), so a seat flooding boxes costs the relay and the receivers a bounded rate, and
the relay holds at most one proven key per seat of a table.
"""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.net.identity import verify_signature

SEAT_LABEL = b"dicetable/relay-seat/v1\x00"
OPS = ("seat_key", "box_to")  # the packets of a dialled connection the relay takes for itself, not its host
BOX_RATE = 512 * 1024  # bytes of boxes a connection may send a second
BOX_BURST = 4 * 1024 * 1024  # ... and at once (a dispute boxed to 15 seats)
MAX_BOX = 260 * 1024  # a box holds one frame (at most 256 KiB) and a few fields
MAX_KEYS = 16  # seat keys proven at one table (a table has at most 16 seats)


def _named(entry) -> frozenset[bytes]:
    """The keys the table's owner named as its seats (net/table/deputies.py), the owner's among them."""
    return frozenset() if entry is None else entry.deputies | {entry.owner}


def seat_bytes(table: bytes, relay_key: bytes, nonce: bytes) -> bytes:
    """What a seat signs to prove its key on the relay connection challenged with `nonce`."""
    return SEAT_LABEL + table + relay_key + nonce


@dataclass(slots=True)
class _Proven:
    table: bytes
    key: bytes
    budget: float  # bytes it may still send now
    at: float  # when the budget was last topped up


class SeatBoxes:
    """The relay's seat keys by table and the boxes it carries between them."""

    def __init__(self, relay) -> None:
        self.relay = relay
        self.seats: dict[bytes, dict[bytes, bytes]] = {}  # table -> seat key -> the connection that proved it last
        self.proven: dict[bytes, _Proven] = {}  # connection -> what it proved
        self.carried = 0  # boxes delivered

    def handle(self, peer: bytes, conn, op: str, body: dict, now: float) -> None:
        if op == "seat_key":
            self._prove(peer, conn, body, now)
        else:
            self._box(peer, body, now)

    def _prove(self, peer: bytes, conn, body: dict, now: float) -> None:
        relay, key, proof = self.relay, body.get("key"), body.get("proof")
        entry = relay.tables.get(conn.table) if conn.table is not None else None
        if type(key) is not bytes or len(key) != 32 or type(proof) is not bytes or len(proof) != 64:
            return
        named = _named(entry)
        if entry is None or (entry.deputies and key not in named):
            relay.send(peer, "seat_refused", {"reason": "the table's owner does not name that key as a seat here"})
            return
        if not verify_signature(key, seat_bytes(conn.table, relay.public_key, relay._challenge(peer)), proof):
            relay.send(peer, "seat_refused", {"reason": "the seat key is not proven on this connection"})
            return
        self.forget(peer)
        seats = self.seats.setdefault(conn.table, {})
        if key not in seats and len(seats) >= MAX_KEYS:  # before the owner named its seats: the oldest unnamed goes
            unnamed = [k for k in seats if k not in named]
            if not unnamed:
                relay.send(peer, "seat_refused", {"reason": "the table has its most seat keys here"})
                return
            self.forget(seats[unnamed[0]])
        old = seats.get(key)
        if old is not None:
            self.proven.pop(old, None)  # the seat's newest connection takes its deliveries
        seats[key] = peer
        self.proven[peer] = _Proven(conn.table, key, BOX_BURST, now)
        relay.send(peer, "seat_proven", {})

    def _box(self, peer: bytes, body: dict, now: float) -> None:
        relay, to, box = self.relay, body.get("to"), body.get("box")
        if type(to) is not bytes or len(to) != 32 or type(box) is not bytes or len(box) > MAX_BOX:
            return
        mine = self.proven.get(peer)
        if mine is None:  # not proven here (a relay restart, a new connection): prove it, and send this one by the host
            relay.send(peer, "relay_who", {"nonce": relay._challenge(peer)})
            relay.send(peer, "box_missed", {"to": to})
            return
        mine.budget = min(BOX_BURST, mine.budget + (now - mine.at) * BOX_RATE)
        mine.at = now
        target = self.seats.get(mine.table, {}).get(to)
        named = _named(relay.tables.get(mine.table))
        if target is None or target == peer or mine.budget < len(box) or not {mine.key, to} <= named:
            relay.send(peer, "box_missed", {"to": to})
            return
        mine.budget -= len(box)
        self.carried += 1
        relay.send(target, "box_from", {"from": mine.key, "box": box})

    def forget(self, peer: bytes) -> None:
        """A connection gone (or proving anew): its key takes no more deliveries on it."""
        mine = self.proven.pop(peer, None)
        if mine is None:
            return
        seats = self.seats.get(mine.table)
        if seats is not None and seats.get(mine.key) == peer:
            del seats[mine.key]
            if not seats:
                del self.seats[mine.table]
