"""ZeroMQ sockets of a table: the host's CurveZMQ ROUTER and a joiner's DEALER.

Every packet is one ZeroMQ frame holding msgpack `[op, body]` (op a short string, body a dict);
the table session (net/session.py) gives ops their meaning. Signed envelopes (net/wire.py) ride
inside packet bodies as opaque bytes, so this module never needs to trust or parse them.

Both sides are synchronous sockets polled by one thread: the session runs in a Textual thread
worker (or the main thread for headless commands) and owns its sockets alone, as ZeroMQ wants.

CurveZMQ encrypts every connection. The joiner's socket is told the host's public key from the
invite and completes the handshake only with the server holding the matching secret key; a wrong
key shows up on the joiner's socket monitor as a failed handshake, which is how `connect()` tells
"wrong host key" from "nothing listening" before its timeout.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import msgpack
import zmq
from zmq.utils import z85

from net.invite import Invite

MAX_PACKET = 320 * 1024  # a 256 KiB envelope plus the packet's own few fields
DEFAULT_BIND = "127.0.0.1"  # a table is reachable from this machine only unless asked otherwise


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


def pack(op: str, body: dict[str, Any] | None = None) -> bytes:
    return msgpack.packb([op, body or {}], use_bin_type=True)


def unpack(data: bytes) -> tuple[str, dict[str, Any]]:
    """Decode one packet; anything but a well-formed `[op, body]` raises BadPacket."""
    if len(data) > MAX_PACKET:
        raise BadPacket(f"a packet of {len(data)} bytes is over the {MAX_PACKET}-byte limit")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True, max_bin_len=MAX_PACKET)
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
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 200)
        self.socket.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a reconnecting peer takes over its identity
        self.socket.curve_server = True
        self.socket.curve_secretkey = z85.encode(secret_key)
        self.socket.curve_publickey = z85.encode(curve_public(secret_key))
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_PACKET)
        self.public_key = curve_public(secret_key)
        host = f"[{bind}]" if ":" in bind else bind
        if ":" in bind:
            self.socket.setsockopt(zmq.IPV6, 1)
        deadline = time.monotonic() + retry
        while True:
            try:
                if port:
                    self.socket.bind(f"tcp://{host}:{port}")
                    self.port = port
                else:
                    self.port = self.socket.bind_to_random_port(f"tcp://{host}")
                break
            except zmq.ZMQError as error:
                # A joiner redialling a dead host's port can hold it for a moment (a loopback
                # self-connection), so a resumed host tries again for a few seconds.
                if error.errno == zmq.EADDRINUSE and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                self.socket.close(0)
                raise TransportError(f"cannot open a table on {bind}:{port}: {error.strerror}") from None
        self.bind = bind

    def invite(self, table_id: bytes, address: str | None = None) -> Invite:
        """The invite for this socket; `address` is what joiners dial (default: the bind address)."""
        return Invite(address or self.bind, self.port, self.public_key, table_id)

    def send(self, peer: bytes, op: str, body: dict[str, Any] | None = None) -> None:
        try:
            self.socket.send_multipart([peer, pack(op, body)], flags=zmq.NOBLOCK)
        except zmq.Again:
            pass  # a peer too slow to drain its queue catches up by log index later

    def recv(self, timeout: float) -> tuple[bytes, bytes] | None:
        """One raw packet `(peer id, data)` within `timeout` seconds, or None."""
        if not self.socket.poll(int(timeout * 1000)):
            return None
        frames = self.socket.recv_multipart()
        if len(frames) != 2:
            return frames[0], b""  # an unreadable packet; the session refuses it by op
        return frames[0], frames[1]

    def close(self) -> None:
        self.socket.close()


class PeerSocket:
    """A joiner's DEALER, connected to the host named in `invite` and authenticating it by key."""

    def __init__(self, invite: Invite, secret_key: bytes | None = None, context=None):
        self.context = context or zmq.Context.instance()
        self.invite = invite
        public, secret = (curve_public(secret_key), secret_key) if secret_key else curve_keypair()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 200)
        self.socket.setsockopt(zmq.RECONNECT_IVL, 100)
        self.socket.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_PACKET)
        if ":" in invite.address:
            self.socket.setsockopt(zmq.IPV6, 1)
        self.socket.curve_serverkey = z85.encode(invite.host_key)
        self.socket.curve_publickey = z85.encode(public)
        self.socket.curve_secretkey = z85.encode(secret)
        self._monitor = self.socket.get_monitor_socket(
            zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
            | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
            | zmq.EVENT_CONNECTED
        )
        self.socket.connect(invite.endpoint)
        self._reached = False  # the TCP connection was made at least once
        self._failed = False  # a secure handshake failed
        self.connected = False

    def connect(self, timeout: float) -> None:
        """Wait until the secure handshake with the host succeeds, or raise a clear error."""
        deadline = time.monotonic() + timeout
        while not self.connected and not self._failed:  # a wrong key fails every retry: no need to wait
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._watch(left)
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
        if not self._monitor.poll(int(max(timeout, 0) * 1000)):
            return
        # A monitor message's first frame is the event (uint16) and its value (uint32), native order.
        event = int.from_bytes(self._monitor.recv_multipart()[0][:2], sys.byteorder)
        if event == zmq.EVENT_CONNECTED:
            self._reached = True
        elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self.connected = True
        else:
            self._failed = True

    def send(self, op: str, body: dict[str, Any] | None = None) -> None:
        try:
            self.socket.send(pack(op, body), flags=zmq.NOBLOCK)
        except zmq.Again:
            pass  # the host is away; the session re-sends what matters after it returns

    def recv(self, timeout: float) -> bytes | None:
        """One raw packet within `timeout` seconds, or None."""
        if not self.socket.poll(int(timeout * 1000)):
            return None
        return self.socket.recv()

    def close(self) -> None:
        try:
            self.socket.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(0)
        self.socket.close()
