"""Seat-to-seat boxes at the relay (net/reach/seat_boxes.py, PROTOCOL.md §12.8) over real sockets on
127.0.0.1: a seat that proved its key gets the boxes for it on its own connection and the table's host
never sees them; a stranger, a key the owner did not name, or a proof copied onto another connection
takes no part; and a seat flooding boxes gets a bounded share through."""

from __future__ import annotations

import os
import secrets

import pytest

from dicetable.net.identity import Profile
from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.relay_link import RelayHostSocket, dial_relay
from dicetable.net.reach.seat_boxes import BOX_BURST, MAX_KEYS, seat_bytes
from dicetable.net.reach.transport import curve_keypair, pack, unpack
from dicetable.net.table import deputies
from net_helpers import Running, wait_until


@pytest.fixture
def relay():
    running = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0))
    yield running
    running.stop()


class Dialled:
    """One connection that dialled the table, as a seat's: what it heard from the relay, by op."""

    def __init__(self, relay, table: bytes) -> None:
        self.link = dial_relay(relay.server.address(), table, 5.0, greeting=pack("dial", {"table": table}))
        self.heard: list[tuple[str, dict]] = []

    def send(self, op: str, body: dict) -> None:
        self.link.send(op, body)

    def hear(self, op: str, timeout: float = 5.0) -> dict:
        def arrived():
            data = self.link.recv(0.05)
            if data is not None:
                self.heard.append(unpack(data, limit=1 << 20))
            return any(o == op for o, _ in self.heard)
        wait_until(arrived, timeout, f"a {op}")
        at = next(i for i, (o, _) in enumerate(self.heard) if o == op)
        return self.heard.pop(at)[1]

    def nonce(self) -> bytes:
        self.send("relay_hello", {})
        return self.hear("relay_who")["nonce"]

    def prove(self, profile, table: bytes, relay_key: bytes) -> str:
        proof = profile.sign(seat_bytes(table, relay_key, self.nonce()))
        self.send("seat_key", {"key": profile.public_key, "proof": proof})
        return self.hear_one("seat_proven", "seat_refused")

    def hear_one(self, *ops: str) -> str:
        def arrived():
            data = self.link.recv(0.05)
            if data is not None:
                self.heard.append(unpack(data, limit=1 << 20))
            return any(o in ops for o, _ in self.heard)
        wait_until(arrived, 5.0, " or ".join(ops))
        at = next(i for i, (o, _) in enumerate(self.heard) if o in ops)
        return self.heard.pop(at)[0]

    def close(self) -> None:
        self.link.close()


def served(relay, seats: int):
    """A table served at `relay` by its owner, who names `seats` seat keys: (owner's socket, table, seat profiles)."""
    owner, table = Profile.generate("Ann"), os.urandom(16)
    host = RelayHostSocket(owner, relay.server.address(), table)
    profiles = [Profile.generate(f"seat{n}") for n in range(seats)]
    host.listing = deputies.sign(owner, table, [p.public_key for p in profiles])
    host.send_relay("deputies", host.listing)
    wait_until(lambda: relay.server.tables[table].deputies, 5, "the relay to learn the seats")
    return host, table, profiles


def test_a_box_goes_seat_to_seat_and_never_to_the_host(relay):
    host, table, (bob, cy) = served(relay, 2)
    key = relay.server.public_key
    one, two = Dialled(relay, table), Dialled(relay, table)
    try:
        assert one.prove(bob, table, key) == "seat_proven" and two.prove(cy, table, key) == "seat_proven"
        box = secrets.token_bytes(600)
        one.send("box_to", {"to": cy.public_key, "box": box})
        one.send("ping", {"next": 0})  # a packet for the host, behind the box on the same connection
        assert two.hear("box_from") == {"from": bob.public_key, "box": box}
        got = []
        wait_until(lambda: (p := host.recv(0.05)) is not None and got.append(unpack(p[1])) is None, 5, "the ping at the host")
        assert [op for op, _ in got] == ["ping"]  # the host heard the seat's own packet, not its box
        assert relay.server.seat_boxes.carried == 1
        # To a key with no proven connection here: missed, so the sender sends it by the host.
        nobody = os.urandom(32)
        one.send("box_to", {"to": nobody, "box": box})
        assert one.hear("box_missed")["to"] == nobody
    finally:
        one.close()
        two.close()
        host.close()


def test_strangers_and_copied_proofs_take_no_part(relay):
    host, table, (bob, cy) = served(relay, 2)
    key = relay.server.public_key
    seat, thief, stranger = Dialled(relay, table), Dialled(relay, table), Dialled(relay, table)
    try:
        assert seat.prove(bob, table, key) == "seat_proven"
        # A key the owner did not name is refused once the seats are named.
        assert stranger.prove(Profile.generate("Eve"), table, key) == "seat_refused"
        # Cy's proof made for one connection is worthless on another: the thief cannot take Cy's boxes.
        honest = Dialled(relay, table)
        nonce = honest.nonce()
        copied = {"key": cy.public_key, "proof": cy.sign(seat_bytes(table, key, nonce))}
        thief.send("seat_key", copied)
        assert thief.hear_one("seat_proven", "seat_refused") == "seat_refused"
        honest.send("seat_key", copied)
        assert honest.hear_one("seat_proven", "seat_refused") == "seat_proven"
        seat.send("box_to", {"to": cy.public_key, "box": b"x" * 512})
        assert honest.hear("box_from")["from"] == bob.public_key
        # An unproven connection sends nothing seat to seat: it is asked to prove a key, and its box is missed.
        stranger.send("box_to", {"to": bob.public_key, "box": b"y" * 512})
        assert stranger.hear("box_missed")["to"] == bob.public_key
        assert stranger.hear("relay_who")
        assert relay.server.seat_boxes.carried == 1
        honest.close()
    finally:
        for dialled in (seat, thief, stranger):
            dialled.close()
        host.close()


def test_a_seat_flooding_boxes_gets_a_bounded_share_through(relay):
    host, table, (bob, cy) = served(relay, 2)
    key = relay.server.public_key
    flooder, target = Dialled(relay, table), Dialled(relay, table)
    try:
        assert flooder.prove(bob, table, key) == "seat_proven" and target.prove(cy, table, key) == "seat_proven"
        box = b"z" * (64 * 1024)
        sent = 2 * BOX_BURST // len(box)
        for _ in range(sent):
            flooder.send("box_to", {"to": cy.public_key, "box": box})
        flooder.hear("box_missed", 10)  # past its budget, the relay stops carrying its boxes
        carried = relay.server.seat_boxes.carried
        assert BOX_BURST // len(box) <= carried < sent  # the burst and a little of the rate went through, no more
    finally:
        flooder.close()
        target.close()
        host.close()


def test_strangers_proving_keys_before_the_seats_are_named_keep_no_seat_out(relay):
    owner, table = Profile.generate("Ann"), os.urandom(16)
    host = RelayHostSocket(owner, relay.server.address(), table)
    key = relay.server.public_key
    strangers = [Dialled(relay, table) for _ in range(MAX_KEYS)]
    seat = Dialled(relay, table)
    try:
        for dialled in strangers:  # before the owner names its seats, any key may be proven, up to MAX_KEYS
            assert dialled.prove(Profile.generate("Eve"), table, key) == "seat_proven"
        bob = Profile.generate("Bob")
        host.listing = deputies.sign(owner, table, [bob.public_key])
        host.send_relay("deputies", host.listing)
        wait_until(lambda: relay.server.tables[table].deputies, 5, "the relay to learn the seats")
        assert seat.prove(bob, table, key) == "seat_proven"  # a named key pushes out an unnamed one
        assert len(relay.server.seat_boxes.seats[table]) == MAX_KEYS
        # Unnamed keys carry nothing, to anyone: a stranger's box to Bob is missed.
        strangers[-1].send("box_to", {"to": bob.public_key, "box": b"s" * 512})
        assert strangers[-1].hear("box_missed")["to"] == bob.public_key
        assert relay.server.seat_boxes.carried == 0
    finally:
        for dialled in (*strangers, seat):
            dialled.close()
        host.close()
