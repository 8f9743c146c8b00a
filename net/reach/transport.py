"""ZeroMQ sockets of a table: the host's CurveZMQ ROUTER and a joiner's DEALER.

Every packet is one ZeroMQ frame holding msgpack `[op, body]` (op a short string, body a dict);
the table session (net/table/session.py) gives ops their meaning. Signed envelopes (net/log/wire.py) ride
inside packet bodies as opaque bytes, so this module never needs to trust or parse them.

Both sides are synchronous sockets polled by one thread: the session runs in a Textual thread
worker (or the main thread for headless commands) and owns its sockets alone, as ZeroMQ wants.

CurveZMQ encrypts every connection. The joiner's socket is told the host's public key from the
invite and completes the handshake only with the server holding the matching secret key; a wrong
key shows up on the joiner's socket monitor as a failed handshake, which is how `connect()` tells
"wrong host key" from "nothing listening" before its timeout.

Routing ids. The host's ROUTER keys each connection by the routing id the client announces, and the
session keys seats' routes and hello challenges by it, so a joiner announces a fresh random id on
every connection (`fresh_routing_id`: 16 bytes from `secrets`, first byte never zero) and makes a
new socket, with a new id, whenever an established connection drops (libzmq would otherwise
reconnect under the old id). The id never leaves the encrypted connection. ROUTER_HANDOVER is off:
honest joiners never reuse an id, so a second connection announcing a live connection's id can only
be an intruder, and libzmq then ignores that connection (it neither takes over the pipe nor gets
any packet). The host reads only packets from ids of the joiners' form; anything else (a client
announcing no id, or a zero-first-byte id) is dropped unanswered.

Known limit of libzmq 4.3.5 (as bundled with pyzmq 27): a ROUTER makes up an id `00 <uint32 counter>`
for a client that announces none, without checking that a client has already claimed that id; if
one has, the host aborts (assertion in socket_base.cpp add_out_pipe, SIGABRT). Nothing in libzmq
4.3.5 lets the host refuse such clients: the ROUTER accepts announced ids that start with a zero
byte, a ZAP handler is not shown the announced id (its identity frame is the server's own, empty),
ROUTER_NOTIFY is a draft option the bundled build refuses, and a ROUTER cannot drop one peer. The
counter starts at a value libzmq draws from the C library's rand() when the ROUTER is made; unseeded,
a process's first ROUTER always starts at 00 6b8b4567 (glibc). So the host seeds the process's
rand() from `secrets` just before making its ROUTER (`_seed_auto_ids`; Python itself never uses
rand()): the next made-up id is one of about 2**32 values, and nothing tells a client which (the
host answers no connection of that form). What is left: someone past the CurveZMQ handshake, i.e.
holding the invite (the host's public key), can still abort the host by luck, with odds of (ids
claimed at once, a few hundred at most) / 2**32 per try; the host then restarts with `--resume`.
"""

from __future__ import annotations

import ctypes
import errno
import secrets
import socket
import sys
import time
from collections import deque
from typing import Any

import msgpack
import zmq
from zmq.utils import z85

from dicetable.net.reach.invite import Invite
from dicetable.net.reach.sources import source_of

MAX_PACKET = 320 * 1024  # a 256 KiB envelope plus the packet's own few fields
DEFAULT_BIND = "127.0.0.1"  # a table is reachable from this machine only unless asked otherwise
ROUTING_ID_BYTES = 16  # a joiner connection's routing id: too many values to guess or collide
DROP_LIMIT = 1000  # foreign packets dropped in one recv before the caller gets its turn back
MAX_SOURCES_KEPT = 4096  # connections whose source address the host keeps (for seat holds: net/table/host.py)
# ZMTP heartbeats (libzmq >= 4.2), on both ends: a link that dies without a FIN or RST (Wi-Fi switched,
# NAT state expired, cable pulled) is otherwise never noticed by ZeroMQ, so the joiner never redials
# and the host keeps the dead pipe. libzmq's own I/O thread pings every HEARTBEAT_IVL and closes the
# connection when nothing at all arrives within HEARTBEAT_TIMEOUT of a ping; HEARTBEAT_TTL asks the
# other end to close after as long without hearing from us. Pings are answered by that C thread, not
# by Python, so a busy 2-core machine or a long fsync does not stall them. 1 s / 5 s: detected within
# about 6 s, after the session's own drop (Timing.drop_after 4 s) and so never a surprise to the
# players; a slow link only trips it if it carries nothing, not even the other end's pings, for 5 s
# (a whole packet counts, so a 320 KiB packet needs at least ~520 kbit/s).
HEARTBEAT_IVL_MS = 1000
HEARTBEAT_TIMEOUT_MS = 5000
# A renewed socket dials while the link may still be down: a SYN lost in silence would otherwise wait
# for the kernel's backoff (up to minutes), so an unanswered dial is dropped after 3 s and retried.
CONNECT_TIMEOUT_MS = 3000
# Once a dial is answered, the secure handshake is about three exchanges (greetings, HELLO/WELCOME,
# INITIATE/READY): each gets the connect timeout, so a 2 s link's handshake is not taken for no host (§3.4).
HANDSHAKE_EXCHANGES = 3
_PEER_EVENTS = (
    zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED
)


class TransportError(Exception):
    """A network problem a person can meet; the message says what happened and what to do."""


class HostUnreachable(TransportError):
    pass


class WrongHostKey(TransportError):
    pass


class BadPacket(TransportError):
    pass


def curve_keypair() -> tuple[bytes, bytes]:
    """A fresh CurveZMQ key pair as raw 32-byte (public, secret) keys."""
    public, secret = zmq.curve_keypair()
    return z85.decode(public), z85.decode(secret)


def curve_public(secret: bytes) -> bytes:
    """The raw public key that belongs to raw secret key `secret`."""
    return z85.decode(zmq.curve_public(z85.encode(secret)))


def fresh_routing_id() -> bytes:
    """A new joiner connection's routing id: random, its first byte never zero (libzmq's own start with 0)."""
    return bytes([1 + secrets.randbelow(255)]) + secrets.token_bytes(ROUTING_ID_BYTES - 1)


def is_joiner_id(routing_id: bytes) -> bool:
    """Whether `routing_id` has the form joiners announce (not one libzmq made up, nor a claim of one)."""
    return len(routing_id) == ROUTING_ID_BYTES and routing_id[0] != 0


def _seed_auto_ids() -> bool:
    """Seed the C library's rand() from `secrets`: libzmq draws a new ROUTER's id counter from it.

    Unseeded, the first ROUTER of a process makes up `00 6b8b4567` for its first client without an
    id, and a client that claimed that id beforehand makes libzmq 4.3.5 abort the host (module
    docstring). Returns whether the C library could be reached (not on Windows, whose libzmq may
    use another C runtime).
    """
    if sys.platform == "win32":
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: the rand() libzmq links to
        libc.srand(ctypes.c_uint(secrets.randbits(32)))
    except (OSError, AttributeError):
        return False
    return True


def _heartbeat(socket) -> None:
    """ZMTP heartbeats on `socket`, so a connection whose other end went silent is closed (see HEARTBEAT_IVL_MS)."""
    socket.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
    socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
    socket.setsockopt(zmq.HEARTBEAT_TTL, HEARTBEAT_TIMEOUT_MS)


def pack(op: str, body: dict[str, Any] | None = None) -> bytes:
    return msgpack.packb([op, body or {}], use_bin_type=True)


def unpack(data: bytes, limit: int = MAX_PACKET) -> tuple[str, dict[str, Any]]:
    """Decode one packet of at most `limit` bytes; anything but a well-formed `[op, body]` raises BadPacket."""
    if len(data) > limit:
        raise BadPacket(f"a packet of {len(data)} bytes is over the {limit}-byte limit")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True, max_bin_len=limit)
    except Exception as error:  # msgpack raises several unrelated types on garbage
        raise BadPacket(f"a packet that is not msgpack ({type(error).__name__})") from None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not isinstance(value[1], dict)
    ):
        raise BadPacket("a packet that is not [op, body]")
    return value[0], value[1]


class HostSocket:
    """The host's ROUTER: CurveZMQ server bound to `bind:port` (port 0: the OS picks one)."""

    def __init__(self, secret_key: bytes, bind: str = DEFAULT_BIND, port: int = 0, context=None, retry: float = 0.0):
        self.context = context or zmq.Context.instance()
        _seed_auto_ids()  # the ROUTER draws its made-up id counter when it is created
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 200)
        # No handover: joiners announce a fresh random id per connection, so a second connection
        # with a live connection's id is an intruder, and libzmq ignores it instead of giving it the pipe.
        self.socket.setsockopt(zmq.ROUTER_HANDOVER, 0)
        _heartbeat(self.socket)  # a joiner's dead connection is closed, freeing its pipe
        self.socket.curve_server = True
        self.socket.curve_secretkey = z85.encode(secret_key)
        self.socket.curve_publickey = z85.encode(curve_public(secret_key))
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_PACKET)
        self.public_key = curve_public(secret_key)
        self.port = bind_socket(self.socket, bind, port, retry, "a table")
        self.bind = bind
        self.sources: dict[bytes, str] = {}  # connection -> the address it came from (net/reach/sources.py)

    def invite(self, table_id: bytes, address: str | None = None) -> Invite:
        """The invite for this socket; `address` is what joiners dial (default: the bind address)."""
        return Invite(address or self.bind, self.port, self.public_key, table_id)

    def send(self, peer: bytes, op: str, body: dict[str, Any] | None = None) -> None:
        data = pack(op, body)
        try:  # two sends, not send_multipart: its Python loop costs more than the frames (8 seats: ~50 a roll)
            self.socket.send(peer, zmq.NOBLOCK | zmq.SNDMORE)
            self.socket.send(data, zmq.NOBLOCK)
        except zmq.Again:
            pass  # a peer too slow to drain its queue catches up by log index later

    def recv(self, timeout: float) -> tuple[bytes, bytes] | None:
        """One raw packet `(peer id, data)` from a joiner-form connection within `timeout` seconds, or None."""
        deadline = time.monotonic() + timeout
        for _ in range(DROP_LIMIT):
            if not self.socket.poll(max(int((deadline - time.monotonic()) * 1000), 0)):
                return None
            try:
                frames = self.socket.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                continue
            peer = frames[0].bytes
            if not is_joiner_id(peer):
                continue  # no dicetable joiner: it announced no id, or claimed one of libzmq's own
            if peer not in self.sources:
                if len(self.sources) >= MAX_SOURCES_KEPT:
                    self.sources.clear()  # bounded; a connection asked about later counts as from nowhere known
                self.sources[peer] = source_of(frame_address(frames[-1]))
            if len(frames) != 2:
                return peer, b""  # an unreadable packet; the session refuses it by op
            return peer, frames[1].bytes
        return None

    def source_of(self, peer: bytes) -> str | None:
        """Where connection `peer` comes from, as limits count it (net/reach/sources.py), or None if unknown."""
        return self.sources.get(peer)

    def close(self) -> None:
        """Close the socket and wait (up to a second) until its port stops listening: until then a
        joiner could still reach a table that is gone."""
        self.socket.close()
        wait_port_free(self.bind, self.port)


def frame_address(frame) -> str:
    """The source IP of the connection a received frame came on (libzmq's "Peer-Address"), or ""."""
    try:
        return frame.get("Peer-Address") or ""
    except zmq.ZMQError:
        return ""


def bind_socket(socket, bind: str, port: int, retry: float, what: str) -> int:
    """Bind `socket` to `bind:port` (0: a free port) and return the port, or close it and raise."""
    host = f"[{bind}]" if ":" in bind else bind
    if ":" in bind:
        socket.setsockopt(zmq.IPV6, 1)
    deadline = time.monotonic() + retry
    while True:
        try:
            if port:
                socket.bind(f"tcp://{host}:{port}")
                return port
            return socket.bind_to_random_port(f"tcp://{host}")
        except zmq.ZMQError as error:
            # A client redialling a closed server's port can hold it for a moment (a loopback
            # self-connection), so a restarted server tries again for a few seconds.
            if error.errno == zmq.EADDRINUSE and time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            socket.close(0)
            raise TransportError(f"cannot open {what} on {bind}:{port}: {error.strerror}") from None


def wait_port_free(bind: str, port: int, timeout: float = 1.0) -> None:
    """Wait (up to `timeout` s) until nothing listens on `bind:port`: libzmq closes a listener later,
    on its I/O thread, and until then a server restarted at once would find its port taken."""
    deadline = time.monotonic() + timeout
    while not _port_free(bind, port) and time.monotonic() < deadline:
        time.sleep(0.005)


def _port_free(bind: str, port: int) -> bool:
    """Whether nothing listens on `bind:port` (a bind with SO_REUSEADDR, as libzmq's own, succeeds)."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("" if bind == "*" else bind, port))
        except OSError as error:
            return error.errno != errno.EADDRINUSE  # any other failure is nothing to wait for
    return True


class PeerSocket:
    """A joiner's DEALER, connected to the host named in `invite` and authenticating it by key.

    Each connection announces its own fresh routing id: when an established connection drops, the
    socket is replaced by a new one with a new id (`renewals` counts it), and the host sees a
    connection it does not know, which proves its seat again with a hello (net/table/session.py).
    """

    def __init__(self, invite: Invite, secret_key: bytes | None = None, context=None, greeting: bytes | None = None,
                 max_packet: int = MAX_PACKET):
        self.context = context or zmq.Context.instance()
        self.invite = invite
        self.greeting = greeting  # sent first on every connection (through a relay: which table this is for)
        self.max_packet = max_packet
        self._public, self._secret = (curve_public(secret_key), secret_key) if secret_key else curve_keypair()
        self._reached = False  # the TCP connection was made at least once
        self._failed = False  # a secure handshake failed
        self.connected = False
        self.renewals = 0
        self._backlog: deque[bytes] = deque()  # packets read off a dropped connection, not yet handed out
        self._open()

    def _open(self) -> None:
        """A new DEALER with a fresh routing id and its own monitor, dialling the host."""
        socket = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 200)
        socket.setsockopt(zmq.RECONNECT_IVL, 100)
        socket.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        socket.setsockopt(zmq.CONNECT_TIMEOUT, CONNECT_TIMEOUT_MS)
        _heartbeat(socket)  # a silent dead link raises EVENT_DISCONNECTED, so `_watch` renews the socket
        socket.setsockopt(zmq.MAXMSGSIZE, self.max_packet)
        if ":" in self.invite.address:
            socket.setsockopt(zmq.IPV6, 1)
        socket.curve_serverkey = z85.encode(self.invite.host_key)
        socket.curve_publickey = z85.encode(self._public)
        socket.curve_secretkey = z85.encode(self._secret)
        self.routing_id = fresh_routing_id()
        socket.setsockopt(zmq.ROUTING_ID, self.routing_id)
        self.socket = socket
        self._monitor = socket.get_monitor_socket(_PEER_EVENTS)
        self._established = False  # this socket's connection completed a handshake
        socket.connect(self.invite.endpoint)
        if self.greeting is not None:
            socket.send(self.greeting, flags=zmq.NOBLOCK)  # queued for the connection being made

    def _renew(self) -> None:
        """Drop the socket whose connection broke and dial again on a new one, with a new id. What
        the host sent before the connection broke (e.g. its last entries before it stopped) is still
        queued on the old socket: it is kept and handed out first."""
        while self.socket.poll(0):
            self._backlog.append(self.socket.recv())
        self._close_socket()
        self.renewals += 1
        self._open()

    def connect(self, timeout: float) -> None:
        """Wait until the secure handshake with the host succeeds, or raise a clear error. `timeout` is for
        reaching the address; once a connection is made, the handshake's exchanges (ZMTP's greetings,
        CURVE's HELLO/WELCOME and INITIATE/READY) get `timeout` each: a slow link is not an absent host (§3.4)."""
        deadline = time.monotonic() + timeout
        reached = False
        while not self.connected and not self._failed:  # a wrong key fails every retry: no need to wait
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._watch(left)
            if self._reached and not reached:
                reached, deadline = True, time.monotonic() + HANDSHAKE_EXCHANGES * timeout
        if self.connected:
            return
        where = f"{self.invite.address}:{self.invite.port}"
        if self._failed:
            raise WrongHostKey(
                f"the host at {where} failed the secure handshake: it does not hold the key in the "
                "invite (wrong or outdated invite?)"
            )
        if self._reached:
            raise HostUnreachable(f"the host at {where} accepted the connection but never answered")
        raise HostUnreachable(f"no table answered at {where} within {timeout:g} s (is the host running?)")

    def _watch(self, timeout: float) -> None:
        """Handle the monitor events that arrive within `timeout` seconds (0: only those waiting)."""
        wait = int(max(timeout, 0) * 1000)
        while self._monitor.poll(wait):
            wait = 0
            # A monitor message's first frame is the event (uint16) and its value (uint32), native order.
            event = int.from_bytes(self._monitor.recv_multipart()[0][:2], sys.byteorder)
            if event == zmq.EVENT_CONNECTED:
                self._reached = True
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.connected = self._established = True
            elif event == zmq.EVENT_DISCONNECTED:
                if self._established:
                    self._renew()  # libzmq would redial under the old id; a new connection gets a new one
                    return
            else:
                self._failed = True

    def send(self, op: str, body: dict[str, Any] | None = None) -> None:
        self._watch(0)
        try:
            self.socket.send(pack(op, body), flags=zmq.NOBLOCK)
        except zmq.Again:
            pass  # the host is away; the session re-sends what matters after it returns

    def recv(self, timeout: float) -> bytes | None:
        """One raw packet within `timeout` seconds, or None."""
        self._watch(0)
        if self._backlog:
            return self._backlog.popleft()
        if not self.socket.poll(int(timeout * 1000)):
            return None
        return self.socket.recv()

    def _close_socket(self) -> None:
        try:
            self.socket.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(0)
        self.socket.close()

    def close(self) -> None:
        self._close_socket()
