"""Direct links between the seats of a direct table (net/table/direct_links.py, PROTOCOL.md §10.10) over
real sockets on 127.0.0.1: the offers the orderer passes on are signed, so a host that rewrites one
to aim a seat at its own port gets no link made (the boxes then go through the host, and the seat's
player is told); an endpoint of another kind of network than the host's is never dialled; a flood of
packets at a seat's listener holds nothing and stops nothing."""

from __future__ import annotations

import zmq
from zmq.utils import z85

from dicetable.core import registry
from dicetable.net.identity import Profile
from dicetable.net.reach.transport import pack
from dicetable.net.table.direct_links import LINK_BURST, endpoint_address
from dicetable.net.table.events import AnswerPath
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import bot_chooser
from dicetable.net.table.deadlines import Timing

from net_helpers import in_thread, stop_all, wait_until

ROOM = registry.get("diceroom")
TIMING = Timing(heartbeat=0.1, drop_after=3.0, grace=30.0, reveal_deadline=5.0, connect_timeout=3.0)


def test_an_offer_is_taken_only_for_the_host_s_kind_of_address():
    assert endpoint_address("tcp://127.0.0.1:5000", "127.0.0.1") == "127.0.0.1"
    assert endpoint_address("tcp://[::1]:5000", "::1") == "::1"
    assert endpoint_address("tcp://192.168.1.9:5000", "192.168.1.2") == "192.168.1.9"
    for endpoint, host in [("tcp://10.0.0.1:5000", "127.0.0.1"),  # a private network from a loopback table
                           ("tcp://8.8.8.8:53", "192.168.1.2"),  # the internet from a LAN table
                           ("tcp://[::1]:5000", "127.0.0.1"),  # another family
                           ("tcp://0.0.0.0:5000", "0.0.0.0"), ("tcp://224.0.0.1:5000", "127.0.0.1"),
                           ("tcp://127.0.0.1:0", "127.0.0.1"), ("tcp://127.0.0.1:70000", "127.0.0.1"),
                           ("ipc:///tmp/x", "127.0.0.1"), ("tcp://localhost:5000", "127.0.0.1"),
                           ("tcp://127.0.0.1:5000" + " " * 60, "127.0.0.1"), (b"tcp://127.0.0.1:1", "127.0.0.1")]:
        assert endpoint_address(endpoint, host) is None, endpoint


class RewritingHost(HostSession):
    """A host that passes seat 2's link offer on with an endpoint of its own (a port it listens on)."""

    decoy = ""

    def handle_packet(self, peer, seat, op, body, now):
        if op == "offer" and seat == 2:
            body = {**body, "endpoint": self.decoy}
        super().handle_packet(peer, seat, op, body, now)


def test_a_rewritten_offer_makes_no_link_and_the_seat_is_told(tmp_path):
    decoy = zmq.Context.instance().socket(zmq.ROUTER)  # the host's own port, where it would read the boxes
    decoy.setsockopt(zmq.LINGER, 0)
    decoy.curve_server = True
    secret = Profile.generate("Eve").curve_secret
    decoy.curve_secretkey = z85.encode(secret)
    port = decoy.bind_to_random_port("tcp://127.0.0.1")
    # 12 rolls, not 2: the room is still on when a busy machine gets round to looking at Cy's link
    host = RewritingHost(Profile.generate("Ann"), "diceroom", 3, {"rolls": 12}, timing=TIMING,
                         chooser=bot_chooser(ROOM, "roller"), transcript=tmp_path / "ann.dtt")
    host.decoy = f"tcp://127.0.0.1:{port}"
    invite = host.open()
    in_thread(host)
    bob = PeerSession(Profile.generate("Bob"), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                      transcript=tmp_path / "bob.dtt")
    bob.connect()
    cy = PeerSession(Profile.generate("Cy"), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                     transcript=tmp_path / "cy.dtt")
    cy.connect()
    told = []
    bob.on_event = told.append
    in_thread(bob)
    in_thread(cy)
    try:
        wait_until(lambda: [e for e in told if isinstance(e, AnswerPath)], 20, "Bob told his answers reach Cy only through the host")
        assert [e.seat for e in told if isinstance(e, AnswerPath)] == [2]
        assert 2 not in bob.paths.path.links  # the rewritten offer was not Cy's signature: never dialled
        wait_until(lambda: 1 in cy.paths.path.links and cy.paths.path.links[1].up, 10,
                   "Cy's link to Bob (Bob's own offer came through)")
        assert not decoy.poll(0)
        wait_until(lambda: host.replica.result is not None, 30, "the room to finish")  # through the host, as before
    finally:
        stop_all(host, bob, cy)
        decoy.close(0)


def test_a_flood_at_a_seat_s_listener_holds_nothing_and_stops_nothing(tmp_path):
    host = HostSession(Profile.generate("Ann"), "diceroom", 3, {"rolls": 3}, timing=TIMING,
                       chooser=bot_chooser(ROOM, "roller"), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    seats = []
    for name in ("Bob", "Cy"):
        seat = PeerSession(Profile.generate(name), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                           transcript=tmp_path / f"{name}.dtt")
        seat.connect()
        seats.append(seat)
    bob, cy = seats
    try:
        wait_until(lambda: bob.paths.path.offer is not None, 10, "Bob's listener")
        flood = zmq.Context.instance().socket(zmq.DEALER)  # a stranger who learned Bob's endpoint
        flood.setsockopt(zmq.LINGER, 0)
        flood.curve_serverkey = z85.encode(bob.profile.curve_public)
        stranger = Profile.generate("Eve")
        flood.curve_publickey, flood.curve_secretkey = z85.encode(stranger.curve_public), z85.encode(stranger.curve_secret)
        flood.connect(bob.paths.path.offer["endpoint"])
        junk = pack("box", {"from": 2, "box": b"j" * (200 * 1024)})
        for _ in range(64):
            flood.send(junk)
        in_thread(bob)
        in_thread(cy)
        wait_until(lambda: host.replica.result is not None, 30, "the room to finish despite the flood")
        links = bob.paths.path
        assert links.taken >= 1  # Cy's real answers still came over its link; the junk opened as nobody's
        assert min(budget.left for budget in links.heard.values()) < LINK_BURST / 2  # the flooder spent its budget
        flood.close(0)
    finally:
        stop_all(host, *seats)
