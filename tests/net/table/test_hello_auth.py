"""A hello must prove the seat's key on its own connection (net/table/session.py): impostors, replays and
seat hogging over real sockets on 127.0.0.1, and the honest seat that reconnects and plays on."""

from __future__ import annotations

import secrets
import time

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.log import wire
from dicetable.net.table.events import Dropped
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.reach.invite import Invite
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import bot_chooser
from dicetable.net.log.transcript import read
from dicetable.net.reach.transport import PeerSocket
from dicetable.net.log.verify import verify
from net_helpers import FAST, hello_body, host_link, host_packet, in_thread, wait_until


class Recording(PeerSession):
    """An honest joiner that remembers the challenges it signed (what a wiretap could have kept)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.nonces: list[bytes] = []
        self.boxes: list[bytes] = []
        made = self.link.box_for

        def box_for(challenge: bytes, key: bytes) -> bytes:  # the box goes in the clear too
            self.boxes.append(made(challenge, key))
            return self.boxes[-1]

        self.link.box_for = box_for

    def hello(self, nonce: bytes) -> None:
        self.nonces.append(nonce)
        super().hello(nonce)


class Raw:
    """A bare connection to the host that sends what the test says and keeps every packet it gets."""

    def __init__(self, invite: Invite) -> None:
        self.invite = invite
        self.socket = PeerSocket(invite)
        self.socket.connect(3.0)
        self.link = host_link(invite)
        self.got: list[tuple[str, dict]] = []

    def ask(self, op: str, body: dict, want: set[str], timeout: float = 3.0) -> tuple[str, dict]:
        self.socket.send(*((op, body) if op == "hello" else self.link.seal(op, body)))  # tagged as a seat's, once answered
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            data = self.socket.recv(max(end - time.monotonic(), 0))
            if data is None:
                break
            packet = host_packet(self.link, data)
            self.got.append(packet)
            if packet[0] in want:
                return packet
        raise AssertionError(f"no {want} answer to {op}")

    def nonce(self) -> bytes:
        op, body = self.ask("ping", {"next": 0}, {"who"})
        return body["nonce"]

    def hello(self, profile: Profile, nonce: bytes | None = None, seat: int = -1, proof: bytes | None = None):
        nonce = self.nonce() if nonce is None else nonce
        return self.ask("hello", hello_body(profile, self.invite, self.link, nonce, seat, proof), {"welcome", "full", "who"})

    def close(self) -> None:
        self.socket.close()


def routes_of(host: HostSession, seat: int) -> list[bytes]:
    return [peer for peer, s in list(host.routes.items()) if s == seat]


def test_an_impostor_with_a_seats_key_cannot_take_its_route_or_keep_it_present():
    events = []
    host = HostSession(Profile.generate("host"), "diceroom", 2, {"rolls": 0}, timing=FAST, on_event=events.append)
    invite = Invite.decode(host.open())
    in_thread(host)
    bob_profile = Profile.generate("bob")
    bob = Recording(bob_profile, invite, timing=FAST)
    bob_thread = in_thread(bob)
    impostor = None
    try:
        wait_until(lambda: host.replica.phase == "playing" and bob.replica.phase == "playing", what="start")
        [bob_route] = routes_of(host, 1)
        key, table, host_key = bob_profile.public_key, invite.table_id, invite.host_key
        impostor = Raw(invite)
        mine = impostor.nonce()
        assert mine not in bob.nonces  # the challenge is the connection's own
        bobs, box = bob.nonces[-1], bob.boxes[-1]
        bobs_proof = bob_profile.sign(wire.hello_bytes(table, host_key, bobs, key, box))  # Ed25519 is deterministic
        mallory = Profile.generate("mallory")
        tries = [
            # (what, hello body, the answer it gets)
            ("no proof", {"seat": 1, "key": key, "next": 0}, "full"),
            ("random proof", {"seat": 1, "key": key, "next": 0, "nonce": mine, "proof": secrets.token_bytes(64), "box": box}, "full"),
            ("signed by another key", {"seat": 1, "key": key, "next": 0, "nonce": mine,
                                       "proof": mallory.sign(wire.hello_bytes(table, host_key, mine, key, box)), "box": box}, "full"),
            ("bob's proof on this connection's nonce", {"seat": 1, "key": key, "next": 0, "nonce": mine,
                                                       "proof": bobs_proof, "box": box}, "full"),
            ("bob's hello replayed as it was", {"seat": 1, "key": key, "next": 0, "nonce": bobs, "proof": bobs_proof, "box": box}, "who"),
            ("signed for another host", {"seat": 1, "key": key, "next": 0, "nonce": mine, "proof": bob_profile.sign(
                wire.hello_bytes(table, secrets.token_bytes(32), mine, key, box)), "box": box}, "full"),
            ("oversized nonce", {"seat": 1, "key": key, "next": 0, "nonce": mine + b"x", "proof": bobs_proof, "box": box}, "full"),
            ("a stray field", {"seat": 1, "key": key, "next": 0, "nonce": mine, "proof": bobs_proof, "box": box, "x": 1}, "full"),
        ]
        for what, body, answer in tries:
            op, reply = impostor.ask("hello", body, {"welcome", "full", "who"})
            assert op == answer, (what, op, reply)
            if op == "full":
                assert reply["reason"].count(":") <= 1 and len(reply["reason"]) < 120, reply  # one sentence
            else:
                assert reply["nonce"] == mine  # asked again to sign its own challenge
            assert routes_of(host, 1) == [bob_route], what  # the real seat's route never moved
        assert "does not prove its key" in next(r["reason"] for op, r in impostor.got if op == "full" and "prove" in r["reason"])
        # The real seat still hears the log; the impostor never got a seat's packets.
        host.move(Move("pass"))
        wait_until(lambda: len(bob.replica.log) == len(host.replica.log) and bob.replica.state.turn == 1, what="bob's turn")
        assert not [op for op, _ in impostor.got if op in ("welcome", "entries", "presence", "pong")]
        assert Dropped(1) not in events  # bob stayed present all along
        # Bob really leaves; the impostor's hellos and pings in his name do not keep seat 1 present.
        bob.stop()
        bob_thread.join(5)
        stopped = time.monotonic()
        while Dropped(1) not in events:
            assert time.monotonic() - stopped < 3 * FAST.drop_after, "seat 1 stayed present without bob"
            impostor.ask("hello", {"seat": 1, "key": key, "next": 0, "nonce": bobs, "proof": bobs_proof, "box": box}, {"who"})
            impostor.ask("ping", {"next": 0}, {"who"})
            time.sleep(0.05)
        assert routes_of(host, 1) == [bob_route]
    finally:
        if impostor is not None:
            impostor.close()
        bob.stop()
        host.stop()


def test_the_real_seat_reconnects_on_a_new_connection_and_the_game_finishes(tmp_path):
    room = registry.get("diceroom")
    host = HostSession(Profile.generate("host"), "diceroom", 2, {"expr": "d6", "rolls": 6}, timing=FAST,
                       chooser=bot_chooser(room, "roller"), think=0.05, transcript=tmp_path / "host.dtt")
    invite = host.open()
    host_thread = in_thread(host)
    bob_profile = Profile.generate("bob")
    first = PeerSession(bob_profile, invite, timing=FAST, chooser=bot_chooser(room, "roller"), think=0.05,
                        transcript=tmp_path / "bob.dtt")
    thread = in_thread(first)
    wait_until(lambda: len(first.replica.events) >= 2, what="two rolls")
    [old_route] = routes_of(host, 1)
    first.stop()  # the process goes; its seat comes back on a new connection, proving its key again
    thread.join(5)
    assert first.replica.result is None, "the game ended before the reconnect: nothing to test"
    again = PeerSession(bob_profile, resume=tmp_path / "bob.dtt", timing=FAST, chooser=bot_chooser(room, "roller"))
    result = again.run()
    host_thread.join(10)
    assert result is not None and again.seat == 1 and len(again.replica.state.rolls) == 6
    assert host.replica.result == result
    assert not routes_of(host, 1) or routes_of(host, 1) != [old_route]
    for path in (tmp_path / "host.dtt", tmp_path / "bob.dtt"):
        assert verify(path).valid, verify(path).line()
    assert read(tmp_path / "host.dtt").frames == read(tmp_path / "bob.dtt").frames


def test_seats_are_reserved_only_for_proven_keys_one_per_key():
    host = HostSession(Profile.generate("host"), "diceroom", 3, {"rolls": 0}, timing=FAST)
    invite = Invite.decode(host.open())
    in_thread(host)
    connections = []
    try:
        stranger = Raw(invite)
        connections.append(stranger)
        op, body = stranger.hello(Profile.generate("x"), proof=secrets.token_bytes(64))
        assert op == "full" and "does not prove its key" in body["reason"]
        assert host.door.reserved == {}  # nobody reserves a seat in another key's name
        carol = Profile.generate("carol")
        first = Raw(invite)
        connections.append(first)
        op, body = first.hello(carol)
        assert op == "welcome" and body["seat"] == 1
        # Carol reconnects on new connections: she keeps her one reservation, nothing more.
        for _ in range(3):
            again = Raw(invite)
            connections.append(again)
            op, body = again.hello(carol)
            assert op == "welcome" and body["seat"] == 1
        assert sorted(host.door.reserved) == [1] and len(routes_of(host, 1)) == 1
        dave = Profile.generate("dave")
        daves = Raw(invite)
        connections.append(daves)
        op, body = daves.hello(dave)
        assert op == "welcome" and body["seat"] == 2
        # Dave's join for carol's reserved seat is refused; carol's own join lands.
        steal = wire.make_frame(dave, invite.table_id, 1, 0, "join",
                                wire.join_body("dave", dave.public_key, secrets.token_bytes(32), 16), host.replica.head)
        op, body = daves.ask("submit", {"frame": steal}, {"refused"})
        assert body["reason"].startswith("bad join: seat 2:"), body
        assert len(host.replica.log) == 2 and host.replica.seats[1] is None
        own = wire.make_frame(carol, invite.table_id, 1, 0, "join",
                              wire.join_body("carol", carol.public_key, secrets.token_bytes(32), 16), host.replica.head)
        latest = connections[-2]  # carol's latest connection
        latest.socket.send(*latest.link.seal("submit", {"frame": own}))
        wait_until(lambda: host.replica.seats[1] is not None, what="carol's join")
        assert host.replica.seats[1].key == carol.public_key and 1 not in host.door.reserved
    finally:
        for connection in connections:
            connection.close()
        host.stop()
