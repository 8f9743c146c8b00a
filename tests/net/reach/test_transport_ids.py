"""Routing ids of table connections (net/reach/transport.py), over real sockets on 127.0.0.1: joiners
announce fresh random ids, an intruder announcing a live connection's id gets nothing of it, and a
client claiming the id libzmq would make up next does not abort a real `dicetable host`."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
import zmq
from zmq.utils import z85

from dicetable.core.game import Move
from dicetable.net.table.events import Dropped
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.reach.invite import Invite
from dicetable.net.table.joiner import PeerSession
from dicetable.net.reach.transport import ROUTING_ID_BYTES, HostSocket, PeerSocket, curve_keypair, fresh_routing_id, pack, unpack
from net_helpers import FAST, read_invite, spawn, wait_until

TABLE = bytes(range(100, 116))


class Intruder:
    """A client past the CurveZMQ handshake (it holds the invite) announcing the id it likes, or none."""

    def __init__(self, invite: Invite, routing_id: bytes | None = None) -> None:
        public, secret = curve_keypair()
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.curve_serverkey = z85.encode(invite.host_key)
        self.socket.curve_publickey = z85.encode(public)
        self.socket.curve_secretkey = z85.encode(secret)
        if routing_id is not None:
            self.socket.setsockopt(zmq.ROUTING_ID, routing_id)
        monitor = self.socket.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
        self.socket.connect(invite.endpoint)
        try:
            assert monitor.poll(3000), "the intruder's handshake never completed: the test would prove nothing"
        finally:
            self.socket.disable_monitor()
            monitor.close(0)

    def send(self, op: str, body: dict) -> None:
        self.socket.send(pack(op, body))

    def received(self, wait: float) -> list[str]:
        """The ops of every packet that reaches this intruder within `wait` seconds."""
        got, end = [], time.monotonic() + wait
        while self.socket.poll(int(max(end - time.monotonic(), 0) * 1000)):
            got.append(unpack(self.socket.recv())[0])
        return got

    def close(self) -> None:
        self.socket.close(0)


def test_joiners_announce_fresh_random_ids_that_never_start_with_zero():
    _, secret = curve_keypair()
    host = HostSocket(secret, "127.0.0.1", 0)
    invite = host.invite(TABLE)
    peers = [PeerSocket(invite) for _ in range(3)]
    try:
        for peer in peers:
            peer.connect(3.0)
            peer.send("ping", {"next": 0})
        seen = set()
        while len(seen) < 3:
            got = host.recv(3.0)
            assert got is not None, "a joiner's ping never arrived"
            seen.add(got[0])
        assert seen == {peer.routing_id for peer in peers}  # the ids the joiners chose, not libzmq's
        assert all(len(rid) == ROUTING_ID_BYTES and rid[0] != 0 for rid in seen)
    finally:
        for peer in peers:
            peer.close()
        host.close()
    ids = [fresh_routing_id() for _ in range(3000)]
    assert len(set(ids)) == len(ids) and all(len(rid) == ROUTING_ID_BYTES for rid in ids)
    assert not [rid for rid in ids if rid[0] == 0]  # 3000 plain random ids would hold ~12 such
    assert len({rid[0] for rid in ids}) > 200  # the first byte is random too, just never zero


def test_an_intruder_announcing_a_live_connections_id_gets_nothing_of_it():
    _, secret = curve_keypair()
    host = HostSocket(secret, "127.0.0.1", 0)
    invite = host.invite(TABLE)
    peer = PeerSocket(invite)
    intruder = None
    try:
        peer.connect(3.0)
        peer.send("ping", {"next": 0})
        victim, _ = host.recv(3.0)
        intruder = Intruder(invite, victim)
        intruder.send("ping", {"next": 0})
        assert host.recv(0.3) is None  # the intruder's packets never reach the host under that id
        for length in range(5):
            host.send(victim, "pong", {"length": length})
        assert [unpack(peer.recv(2.0)) for _ in range(5)] == [("pong", {"length": n}) for n in range(5)]
        assert intruder.received(0.3) == []
        peer.send("ping", {"next": 7})
        assert host.recv(2.0) == (victim, pack("ping", {"next": 7}))  # the real pipe still carries
    finally:
        if intruder is not None:
            intruder.close()
        peer.close()
        host.close()


def test_the_host_drops_packets_from_clients_without_a_joiner_id():
    _, secret = curve_keypair()
    host = HostSocket(secret, "127.0.0.1", 0)
    invite = host.invite(TABLE)
    strangers = [Intruder(invite), Intruder(invite, b"\x00" + bytes(4)), Intruder(invite, b"short")]
    peer = PeerSocket(invite)
    try:
        for stranger in strangers:
            stranger.send("ping", {"next": 0})
        time.sleep(0.2)  # their packets are in before the joiner's
        peer.connect(3.0)
        peer.send("ping", {"next": 1})
        assert host.recv(3.0) == (peer.routing_id, pack("ping", {"next": 1}))
        assert host.recv(0.3) is None
    finally:
        for stranger in strangers:
            stranger.close()
        peer.close()
        host.close()


def test_a_dropped_connection_comes_back_under_a_new_id():
    _, secret = curve_keypair()
    first = HostSocket(secret, "127.0.0.1", 0)
    invite = first.invite(TABLE)
    peer = PeerSocket(invite)
    second = None
    try:
        peer.connect(3.0)
        peer.send("ping", {"next": 0})
        old, _ = first.recv(3.0)
        assert old == peer.routing_id
        first.close()  # the host restarts on the same port and key
        second = HostSocket(secret, "127.0.0.1", invite.port, retry=5.0)
        got, end = None, time.monotonic() + 5.0
        while got is None and time.monotonic() < end:
            peer.send("ping", {"next": 0})
            peer.recv(0)
            got = second.recv(0.1)
        assert got is not None, "the joiner never came back"
        assert got[0] == peer.routing_id != old and got[0][0] != 0 and peer.renewals == 1
        second.send(got[0], "pong", {"length": 3})
        assert unpack(peer.recv(2.0)) == ("pong", {"length": 3})
    finally:
        peer.close()
        (second or first).close()


def test_what_the_host_sent_before_it_stopped_still_reaches_the_joiner():
    # A host sends its last entries and stops: the joiner replaces the broken connection's socket,
    # but the packets already queued on it are handed out first, not lost with it.
    _, secret = curve_keypair()
    host = HostSocket(secret, "127.0.0.1", 0)
    peer = PeerSocket(host.invite(TABLE))
    try:
        peer.connect(3.0)
        peer.send("ping", {"next": 0})
        joiner, _ = host.recv(3.0)
        for length in (1, 2):
            host.send(joiner, "pong", {"length": length})
        # The host goes once its packets are on the wire: the first has reached the joiner's socket, and
        # the second follows it on the same connection (the host's close lingers to send what it holds).
        wait_until(lambda: peer.socket.poll(0), what="the host's packets at the joiner")
        host.close()
        wait_until(lambda: peer._watch(0.05) or peer.renewals == 1, what="the joiner to see the drop")
        assert [unpack(peer.recv(1.0)) for _ in range(2)] == [("pong", {"length": 1}), ("pong", {"length": 2})]
        assert peer.recv(0.2) is None
    finally:
        peer.close()


def test_a_seat_intruder_with_the_seats_routing_id_gets_no_entries_and_keeps_nothing_present():
    events = []
    host = HostSession(Profile.generate("host"), "diceroom", 2, {"rolls": 0}, timing=FAST, on_event=events.append)
    invite = Invite.decode(host.open())
    threading.Thread(target=host.run, daemon=True).start()
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST)
    bob_thread = threading.Thread(target=bob.run, daemon=True)
    bob_thread.start()
    intruder = None
    try:
        wait_until(lambda: host.replica.phase == "playing" and bob.replica.phase == "playing", what="start")
        [route] = [peer for peer, seat in list(host.routes.items()) if seat == 1]
        intruder = Intruder(invite, route)
        intruder.send("ping", {"next": 0})
        host.move(Move("pass"))
        wait_until(lambda: len(bob.replica.log) == len(host.replica.log) and bob.replica.state.turn == 1, what="bob's turn")
        assert intruder.received(0.3) == []  # no entries, pongs or presence for the intruder
        bob.stop()
        bob_thread.join(5)
        stopped = time.monotonic()
        while Dropped(1) not in events:
            assert time.monotonic() - stopped < 3 * FAST.drop_after, "the intruder kept seat 1 present"
            intruder.send("ping", {"next": 0})
            time.sleep(0.05)
        assert intruder.received(0) == []
    finally:
        if intruder is not None:
            intruder.close()
        bob.stop()
        host.stop()


# What an unseeded process's libzmq would draw for its first ROUTERs' made-up id counters.
UNSEEDED_DRAWS = "import ctypes; c = ctypes.CDLL(None); print(*[(c.rand() | c.rand() << 31) & 0xffffffff for _ in range(4)])"


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the C library's rand() is reached on POSIX systems only")
def test_claiming_the_next_made_up_id_does_not_abort_a_real_host(tmp_path):
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--name", "alice", "--bot", "random")
    clients = []
    try:
        invite = Invite.decode(read_invite(host))
        draws = subprocess.run([sys.executable, "-c", UNSEEDED_DRAWS], capture_output=True, text=True, check=True)
        for value in map(int, draws.stdout.split()):
            clients.append(Intruder(invite, b"\x00" + value.to_bytes(4, "big")))  # libzmq's next ids, claimed
        clients.append(Intruder(invite))  # then a client without an id: libzmq makes one up
        for client in clients:
            client.send("ping", {"next": 0})
        time.sleep(0.5)
        assert host.poll() is None, f"the host died: {host.stderr.read()[-300:]}"
        peer = PeerSocket(invite)
        try:
            peer.connect(3.0)
            peer.send("ping", {"next": 0})
            data = peer.recv(3.0)
            assert data is not None and unpack(data)[0] == "who"  # still serving joiners
        finally:
            peer.close()
        assert all(client.received(0) == [] for client in clients)
        assert host.poll() is None
    finally:
        for client in clients:
            client.close()
        host.kill()
        host.communicate()
