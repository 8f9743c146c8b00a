"""Direct links between the seats of a direct table (LAN, an invite with the host's own address;
PROTOCOL.md §10.10): the path of a seat's answers the host does not carry.

Each joiner listens on a port of its own, bound on the address it reaches the host from (the one its
route to the host leaves by), CurveZMQ with its profile's curve key, which its signed `join` names.
It offers the endpoint signed (`offer {endpoint, proof}` to the orderer, proof = Ed25519 signature by
its seat key of LINK_LABEL ‖ table ‖ endpoint), the orderer passes every offer to every other seat
(`offered {seat, endpoint, proof}`, `pass_offer` below): it can withhold an offer, never rewrite one.
A seat that holds another seat's offer, signed by that seat's key, connects to it with that seat's
curve key from its join (so only that seat's process answers) and sends `link_hi`; the link carries
boxes once it answered `link_ok`. A box travels as `box {from, box}`; it opens only under the two seats' keys
(net/table/answer_path.py), so the receiver trusts nothing else about the sender.

What a stranger or a seat can do to a listener is bounded: packets of at most MAX_LINK_PACKET bytes,
at most QUEUED of them queued per connection, a budget of LINK_RATE bytes a second (LINK_BURST at
once) for each of the MAX_PEERS connections heard last (a new one pushes out the stalest); a box
that does not open is dropped. A link that has not answered within LINK_WAIT counts as none. An offer is taken only for an address of the same kind
as the host's (loopback, private, or public), so a seat cannot aim the others at another kind of
network; where no link is made the boxes go through the orderer and the player is told
(net/table/seat_links.py).
"""

from __future__ import annotations

import ipaddress
import re
import socket as sockets
import time
from collections import OrderedDict

import zmq
from zmq.utils import z85

from dicetable.net.identity import verify_signature
from dicetable.net.reach.transport import BadPacket, pack, unpack

LINK_LABEL = b"dicetable/seat-link/v1\x00"
MAX_ENDPOINT = 64  # "tcp://[IPv6]:port"
MAX_LINK_PACKET = 260 * 1024  # one box (a frame of at most 256 KiB and a few fields)
MAX_PEERS = 16  # connections a listener keeps a budget for (a table has at most 16 seats): the least recently heard goes
LINK_RATE = 512 * 1024  # bytes a second a connection may send a listener
LINK_BURST = 4 * 1024 * 1024
TURN_PACKETS = 64  # packets a listener reads in one loop turn
QUEUED = 8  # packets queued per connection to a listener (at most 260 KiB each), or per link
OFFER_EVERY = 1.0  # seconds between two new endpoints of one seat that the orderer passes on
LINK_WAIT = 2.0  # seconds a link may take to answer before its seat's boxes count as going through the orderer alone
_ENDPOINT = re.compile(r"tcp://(\[[0-9a-fA-F:.]+\]|[0-9.]+):([0-9]{1,5})")


def offer_bytes(table: bytes, endpoint: str) -> bytes:
    return LINK_LABEL + table + endpoint.encode()


def route_address(host: str, port: int) -> str:
    """The local address this machine reaches `host` from (a UDP socket's route; nothing is sent)."""
    family = sockets.AF_INET6 if ":" in host else sockets.AF_INET
    with sockets.socket(family, sockets.SOCK_DGRAM) as probe:
        probe.connect((host, port))
        return probe.getsockname()[0]


def _kind(address) -> str:
    return "loopback" if address.is_loopback else "private" if address.is_private else "public"


def endpoint_address(endpoint, host: str) -> str | None:
    """The endpoint's address when it is `tcp://ADDRESS:PORT` of the same kind as the host's; else None."""
    if type(endpoint) is not str or len(endpoint) > MAX_ENDPOINT:
        return None
    match = _ENDPOINT.fullmatch(endpoint)
    if match is None or not 1 <= int(match.group(2)) <= 65535:
        return None
    try:
        address = ipaddress.ip_address(match.group(1).strip("[]"))
        ours = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.version != ours.version or address.is_multicast or address.is_unspecified or _kind(address) != _kind(ours):
        return None
    return str(address)


class _Budget:
    __slots__ = ("left", "at")

    def __init__(self, now: float) -> None:
        self.left, self.at = float(LINK_BURST), now

    def spend(self, size: int, now: float) -> bool:
        self.left, self.at = min(LINK_BURST, self.left + (now - self.at) * LINK_RATE), now
        if self.left < size:
            return False
        self.left -= size
        return True


class _Link:
    """My connection to another seat's listener."""

    def __init__(self, context, endpoint: str, server_key: bytes, profile) -> None:
        self.endpoint, self.up, self.since = endpoint, False, time.monotonic()
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.RECONNECT_IVL, 200)
        socket.setsockopt(zmq.RECONNECT_IVL_MAX, 2000)
        socket.setsockopt(zmq.SNDHWM, QUEUED)  # boxes for a link that stalls: past a few they are dropped
        socket.setsockopt(zmq.MAXMSGSIZE, 1024)  # it only ever answers `link_ok`
        if endpoint.startswith("tcp://["):
            socket.setsockopt(zmq.IPV6, 1)
        socket.curve_serverkey = z85.encode(server_key)
        socket.curve_publickey = z85.encode(profile.curve_public)
        socket.curve_secretkey = z85.encode(profile.curve_secret)
        socket.connect(endpoint)
        self.socket = socket
        self.send("link_hi", {})

    def heard(self) -> None:
        while True:
            try:
                data = self.socket.recv(zmq.NOBLOCK)
            except zmq.ZMQError:
                return
            try:
                op, _ = unpack(data, limit=1024)
            except BadPacket:
                continue
            self.up = self.up or op == "link_ok"

    def send(self, op: str, body: dict) -> None:
        try:
            self.socket.send(pack(op, body), zmq.NOBLOCK)
        except zmq.ZMQError:
            self.up = False  # full or gone: the next boxes go through the orderer until it answers again

    def close(self) -> None:
        self.socket.close(0)


class DirectLinks:
    """A joiner's listener, its signed offer, and its links to the other seats' listeners."""

    def __init__(self, session, context=None) -> None:
        self.session = session
        self.context = context or zmq.Context.instance()
        self.listener = None
        self.offer: dict | None = None  # my signed offer, sent to the orderer after every welcome
        self.offers: dict[int, dict] = {}  # seat -> its offer, as the orderer passed it (checked once the seat joined)
        self.links: dict[int, _Link] = {}
        self.heard: OrderedDict[bytes, _Budget] = OrderedDict()  # connection to my listener -> its budget
        self.broken = False  # no listener could be made: the others reach me through the orderer only
        self.taken = 0  # boxes my listener heard that held another seat's answer

    # -- my listener and offer -------------------------------------------------------------------
    def _listen(self) -> None:
        session = self.session
        invite = session.invite
        try:
            address = route_address(invite.address, invite.port)
        except OSError:
            self.broken = True
            return
        listener = self.context.socket(zmq.ROUTER)
        listener.setsockopt(zmq.LINGER, 0)
        listener.setsockopt(zmq.MAXMSGSIZE, MAX_LINK_PACKET)
        listener.setsockopt(zmq.RCVHWM, QUEUED)
        listener.curve_server = True
        listener.curve_secretkey = z85.encode(session.profile.curve_secret)
        listener.curve_publickey = z85.encode(session.profile.curve_public)
        if ":" in address:
            listener.setsockopt(zmq.IPV6, 1)
        try:
            listener.bind(f"tcp://[{address}]:0" if ":" in address else f"tcp://{address}:0")
        except zmq.ZMQError:
            listener.close(0)
            self.broken = True
            return
        self.listener = listener
        endpoint = listener.getsockopt(zmq.LAST_ENDPOINT).decode()
        self.offer = {"endpoint": endpoint, "proof": session.profile.sign(offer_bytes(session.invite.table_id, endpoint))}

    def welcomed(self) -> None:
        """The orderer seated me (again): it hears my offer, and answers with the others' (`pass_offer`)."""
        if self.listener is None and not self.broken:
            self._listen()
        if self.offer is not None:
            self.session.to_orderer("offer", self.offer)

    def offered(self, body: dict) -> None:
        seat = body.get("seat")
        if type(seat) is not int or not 0 <= seat < 16 or seat == self.session.own.seat:
            return
        link = self.links.get(seat)
        if link is None or link.endpoint != body.get("endpoint"):  # new, or the seat listens anew (it restarted)
            self.offers[seat] = body

    # -- each loop turn --------------------------------------------------------------------------
    def step(self, now: float) -> None:
        self._connect()
        self._hear(now)
        for link in self.links.values():
            if not link.up:  # a link only ever hears `link_ok`: once up, nothing to read (no poll each turn)
                link.heard()

    def _connect(self) -> None:
        """Link to each offer whose seat has joined: signed by its key, with its join's curve key."""
        replica, host = self.session.replica, self.session.invite.address
        for seat, body in list(self.offers.items()):
            info = replica.seats[seat] if seat < len(replica.seats) else None
            if info is None:
                continue  # its join is not in my log yet
            del self.offers[seat]
            old = self.links.pop(seat, None)
            if old is not None:
                old.close()
            endpoint, proof = body.get("endpoint"), body.get("proof")
            if type(proof) is not bytes or type(info.curve) is not bytes or len(info.curve) != 32 \
                    or endpoint_address(endpoint, host) is None \
                    or not verify_signature(info.key, offer_bytes(replica.table, endpoint), proof):
                continue  # not that seat's offer, or an address the table does not use: its boxes go by the orderer
            self.links[seat] = _Link(self.context, endpoint, info.curve, self.session.profile)

    def _hear(self, now: float) -> None:
        listener = self.listener
        if listener is None:
            return
        for _ in range(TURN_PACKETS):
            try:
                peer, data = listener.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            except ValueError:  # not [id, packet]
                continue
            budget = self.heard.get(peer)
            if budget is None:
                if len(self.heard) >= MAX_PEERS:  # many connections (a stranger's, or old ones): the stalest goes
                    self.heard.popitem(last=False)
                budget = self.heard[peer] = _Budget(now)
            self.heard.move_to_end(peer)
            if not budget.spend(len(data), now):
                continue
            try:
                op, body = unpack(data, limit=MAX_LINK_PACKET)
            except BadPacket:
                continue
            if op == "link_hi":
                try:
                    listener.send_multipart([peer, pack("link_ok", {})], zmq.NOBLOCK)
                except zmq.ZMQError:
                    pass
            elif op == "box":
                self.taken += self.session.own.held.take(body.get("from"), body.get("box"))  # kept if it opens as that seat's

    # -- sending -----------------------------------------------------------------------------------
    def send(self, boxes: list[list]) -> tuple[list[list], list[list]]:
        """Each box on my link to its seat; returns (boxes also for the orderer: the link has not answered
        yet, so it may not hold; boxes only the orderer carries: no link)."""
        self._connect()  # a seat whose join just came: its link queues this box until it is made
        also, only, now = [], [], time.monotonic()
        for seat, box in boxes:
            link = self.links.get(seat)
            if link is not None:
                link.send("box", {"from": self.session.own.seat, "box": box})
            if link is None or not link.up and now - link.since > LINK_WAIT:
                only.append([seat, box])  # no link, or one that never answered (a firewall, a listener flooded)
            elif not link.up:
                also.append([seat, box])
        return also, only

    def handle(self, op: str, body: dict) -> bool:
        return False  # nothing of this path comes untagged on the orderer's connection

    def close(self) -> None:
        for link in self.links.values():
            link.close()
        self.links.clear()
        if self.listener is not None:
            self.listener.close(0)
            self.listener = None


def pass_offer(orderer, seat: int, body: dict) -> None:
    """The orderer's part (§10.10): a seat's signed offer goes to every other seat as it came, and that
    seat hears every offer the orderer holds. The orderer checks only its shape (each seat checks the
    signature against the offering seat's key)."""
    endpoint, proof = body.get("endpoint"), body.get("proof")
    if type(endpoint) is not str or len(endpoint) > MAX_ENDPOINT or type(proof) is not bytes or len(proof) != 64:
        return
    offers, now = orderer.offers, time.monotonic()
    old = offers.get(seat)
    if old is not None and (old["endpoint"] == endpoint or now - old["at"] < OFFER_EVERY):
        if old["proof"] != proof or old["endpoint"] != endpoint:
            return  # a new endpoint at most once in OFFER_EVERY s: a seat cannot make the orderer flood the others
        routes = {routed: peer for peer, routed in orderer.routes.items()}
        for other, offer in offers.items():  # the same offer again (a reconnect): it hears the others' again
            if other != seat and seat in routes:
                orderer.tell(routes[seat], "offered", _told(offer))
        return
    offers[seat] = {"seat": seat, "endpoint": endpoint, "proof": proof, "at": now}
    routes = {routed: peer for peer, routed in orderer.routes.items()}
    for other, peer in routes.items():
        if other != seat:
            orderer.tell(peer, "offered", _told(offers[seat]))
    if seat in routes:
        for other, offer in offers.items():
            if other != seat:
                orderer.tell(routes[seat], "offered", _told(offer))


def _told(offer: dict) -> dict:
    return {"seat": offer["seat"], "endpoint": offer["endpoint"], "proof": offer["proof"]}
