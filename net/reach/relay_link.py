"""A host's table through a relay: the same face as the host's own socket (`HostSocket`), dialled out.

`RelayHostSocket` connects to the relay (net/reach/relay.py) as a client, proves on every new connection
that it holds the table's owner key, or a seat's key the owner named (`serve`, with the owner's signed
list of seats once there is one: net/table/deputies.py), and then looks to the host session exactly like its
own ROUTER: `recv()` gives `(joiner id, packet)` as the joiner sent it, `send()` reaches one joiner,
and `source_of(joiner id)` is the relay's tag of where that joiner comes from (for seat holds: net/table/host.py).
The joiners' hellos are bound to the key of the server they reached, which is the relay's
(`public_key`), so a hello made for one relay connection is worthless on any other.

A host that loses the relay keeps going: the link renews itself and serves the table again, and the
joiners catch up by log index. A table may name a second relay (`fallback`, carried in its invite:
net/reach/invite.py): when its relay has not served it for MOVE_AFTER seconds (the relay is gone,
not just restarting), the link moves the table there, and back again should that one go too; the
joiners move the same way when they stop hearing their orderer (net/table/joiner.py), and find it
there by the same hello and catch-up as after any drop. The short-code mailbox (net/reach/codes.py) uses the same connection:
its replies and rings go to `on_mail`, and a ring with no nameplate each time the table is served anew.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from dicetable.net.table import deputies
from dicetable.net.identity import fingerprint
from dicetable.net.reach import relay_key
from dicetable.net.reach.handshake_clock import HandshakeClock
from dicetable.net.reach.invite import Invite
from dicetable.net.reach.relay import TABLE_BYTES, WRAP, serve_bytes
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.transport import (
    MAX_PACKET, MAX_SOURCES_KEPT, BadPacket, HostUnreachable, PeerSocket, TransportError, WrongHostKey, is_joiner_id,
    pack, unpack,
)

# Until the relay serves the table, the greeting is sent again this often (it may have been lost). Once
# served, an idle host sends the relay nothing: the relay counts it present while its connection is open
# (PROTOCOL.md §12.4), and the ZMTP heartbeats keep that connection, or close it when it dies
# (net/reach/transport.py) — a packet a second used to double an idle table's memory at the relay within
# minutes (net/reach/relay_presence.py).
GREET_AGAIN = 1.0
MOVE_AFTER = 8.0  # seconds a table goes unserved (its relay unreachable) before it moves to its second relay


class RelayRefused(TransportError):
    pass


class RelayTaken(RelayRefused):
    """Another key of the table (a seat that took over ordering, net/table/succession.py) serves it at the relay."""

    def __init__(self, text: str, key: bytes):
        super().__init__(text)
        self.key = key


def dial_relay(relay: RelayAddress, table: bytes, timeout: float, context=None, **options: Any) -> PeerSocket:
    """A connection to the relay, its key checked, or one clear error."""
    where = f"{relay.address}:{relay.port}"
    link = PeerSocket(Invite(relay.address, relay.port, relay.key, table), context=context, **options)
    try:
        link.connect(timeout)
    except WrongHostKey:
        link.close()
        raise TransportError(relay_key.explain_wrong_key(relay.address, relay.port, relay.key)) from None
    except HostUnreachable:
        link.close()
        raise TransportError(f"no relay answered at {where} within {timeout:g} s (is it running?)") from None
    return link


class RelayHostSocket:
    def __init__(self, profile, relay: RelayAddress, table: bytes, timeout: float = 5.0, context=None,
                 listing: dict | None = None, fallback: RelayAddress | None = None):
        if len(table) != TABLE_BYTES:
            raise ValueError("a table id is 16 bytes")
        self.profile, self.relay, self.table = profile, relay, table
        self.public_key = relay.key  # what joiners' hellos name: the server they reached
        self.bind, self.port = relay.address, relay.port
        self.on_mail: Callable[[str, dict], None] | None = None
        self.serving = False
        self.refusal: str | None = None
        self.taken: bytes | None = None  # the key serving the table in this one's place, once the relay says so
        self.listing = listing  # the owner's signed list of its seats' keys (net/table/deputies.py), shown in every serve
        self.fallback = fallback  # the table's second relay, where it moves if this one stops serving it
        self.moves = 0  # how often the table moved between its relays
        self._context = context
        self._served_at = time.monotonic()  # when the relay last served the table (a move counts from then)
        self._last_sent = 0.0
        self._early: list[tuple[bytes, bytes]] = []  # joiner packets that came before the relay took the table
        self.sources: dict[bytes, str] = {}  # joiner connection -> the relay's tag of its source address
        where = f"{relay.address}:{relay.port}"
        # each step that shows progress (the secure handshake, the relay's `relay_who`) restarts the clock,
        # and a step gets `timeout` plus twice the link's slowest exchange so far (PROTOCOL.md §3.4)
        self.handshake: HandshakeClock | None = HandshakeClock(timeout)
        self.link = dial_relay(relay, table, timeout, context, greeting=pack("relay_hello"), max_packet=MAX_PACKET + WRAP)
        self.handshake.answered("handshake", asked_at=self.handshake.since)
        self.handshake.asked()  # the greeting, relay_hello, went out with the handshake
        self._renewals = self.link.renewals  # the link's renewals this socket has seen (each one ends the serving)
        while not self.serving:
            if self.taken is not None:
                self.close()
                raise RelayTaken(f"the relay at {where} has another seat serving the table "
                                 f"({fingerprint(self.taken)}): it orders the log now", self.taken)
            if self.refusal is not None:
                self.close()
                raise RelayRefused(f"the relay at {where} refused the table: {self.refusal}")
            left = self.handshake.left()
            if left <= 0:
                self.close()
                raise TransportError(f"the relay at {where} did not take the table {self.handshake.within()}")
            packet = self.recv(min(left, 0.1))
            if packet is not None:
                self._early.append(packet)
        self.handshake = None
        self._served_at = time.monotonic()

    def source_of(self, peer: bytes) -> str | None:
        """Where joiner connection `peer` comes from, as the relay tags it (PROTOCOL.md §12.2), or None
        (a relay that tags nothing)."""
        return self.sources.get(peer)

    def invite(self, table_id: bytes, address: str | None = None) -> Invite:
        """A relay invite: the relay's address and key, the table, the owner key that opened it, and the
        second relay if the table has one."""
        second = self.fallback and (self.fallback.address, self.fallback.port, self.fallback.key)
        return Invite(self.relay.address, self.relay.port, self.relay.key, table_id, owner=self.profile.public_key,
                      fallback=second or None)

    def name_deputies(self, replica) -> dict | None:
        """As the table's owner, once every seat has joined: sign the list of the seats' keys that may
        serve the table while this host is gone (net/table/deputies.py) and give it to the relay; every serve
        shows it again from then on. Returns the list this connection holds (a successor's: the owner's)."""
        if self.serving and replica.phase not in ("new", "joining") and replica.opener == self.profile.public_key:
            keys = deputies.seats_of(replica)
            if self.listing is None or frozenset(self.listing["keys"]) != keys:
                self.listing = deputies.sign(self.profile, self.table, keys)
                self._send("deputies", self.listing)
        return self.listing

    def send(self, peer: bytes, op: str, body: dict[str, Any] | None = None) -> None:
        self._send("to", {"peer": peer, "data": pack(op, body)})

    def send_relay(self, op: str, body: dict[str, Any]) -> None:
        """A packet for the relay itself (the short-code mailbox)."""
        self._send(op, body)

    def _send(self, op: str, body: dict[str, Any]) -> None:
        self._last_sent = time.monotonic()
        self.link.send(op, body)

    def recv(self, timeout: float) -> tuple[bytes, bytes] | None:
        """One joiner packet `(joiner id, data)` within `timeout` seconds, or None; relay packets are handled here."""
        if self._early and self.serving:
            return self._early.pop(0)
        deadline = time.monotonic() + timeout
        while True:
            if not self.serving and time.monotonic() - self._last_sent >= GREET_AGAIN:  # the greeting was lost
                self._send("relay_hello", {})
            data = self.link.recv(max(deadline - time.monotonic(), 0))
            if self.link.renewals != self._renewals:  # a new connection (renewed here or in a send): it serves again
                self._renewals, self.serving = self.link.renewals, False
            if self.serving:
                self._served_at = time.monotonic()
            elif self._should_move():
                self._move()
            if data is None:
                return None
            packet = self._handle(data)
            if packet is not None:
                return packet
            if time.monotonic() >= deadline:
                return None

    def _should_move(self) -> bool:
        """Unserved for MOVE_AFTER s with a second relay to go to, and no other seat serving the table here."""
        return (self.fallback is not None and self.taken is None
                and time.monotonic() - self._served_at > MOVE_AFTER)

    def _move(self) -> None:
        """Serve the table at its second relay from now on; the first becomes the second. The new link
        dials without waiting (the loop goes on), greets the relay, and serves when it answers."""
        self.link.close()
        self.relay, self.fallback = self.fallback, self.relay
        self.public_key, self.bind, self.port = self.relay.key, self.relay.address, self.relay.port
        self.link = PeerSocket(Invite(self.relay.address, self.relay.port, self.relay.key, self.table), context=self._context,
                               greeting=pack("relay_hello"), max_packet=MAX_PACKET + WRAP)
        self.serving, self.refusal, self._served_at, self._renewals = False, None, time.monotonic(), 0
        self.moves += 1

    def _handle(self, data: bytes) -> tuple[bytes, bytes] | None:
        try:
            op, body = unpack(data, limit=MAX_PACKET + WRAP)
        except BadPacket:
            return None
        if op == "from":
            peer, inner, source = body.get("peer"), body.get("data"), body.get("source")
            if type(peer) is bytes and is_joiner_id(peer) and type(inner) is bytes:
                if type(source) is bytes and len(source) <= 32 and self.sources.get(peer) != source:
                    if len(self.sources) >= MAX_SOURCES_KEPT:
                        self.sources.clear()
                    self.sources[peer] = "relay:" + source.hex()
                return peer, inner
        elif op == "relay_who":
            nonce = body.get("nonce")
            if type(nonce) is bytes and len(nonce) == 32:
                proof = self.profile.sign(serve_bytes(self.table, self.relay.key, nonce))
                serve = {"table": self.table, "key": self.profile.public_key, "proof": proof}
                if self.listing is not None:  # a relay that lost the list (it restarted) learns it back
                    serve["deputies"] = self.listing
                self._send("serve", serve)
                if self.handshake is not None:
                    self.handshake.answered("relay_who")  # the relay is there: the serve's step starts
                    self.handshake.asked()
        elif op == "serving" and body.get("table") == self.table:
            self.serving = True
            if self.on_mail is not None:  # a new connection: the relay rings the last one that fetched (§13.1)
                self.on_mail("mb_ring", {"nameplate": None})
        elif op == "relay_taken" and type(body.get("key")) is bytes:
            self.taken, self.serving = body["key"], False
        elif op == "relay_refused":
            self.refusal = str(body.get("reason", "no reason given"))[:200]
        elif op.startswith("mb_") and self.on_mail is not None:
            self.on_mail(op, body)
        return None

    def close(self) -> None:
        self.link.close()


class RelayClient:
    """A plain connection to a relay for its own services (a joiner claiming a short code's invite)."""

    def __init__(self, relay: RelayAddress, timeout: float = 5.0, context=None):
        self.link = dial_relay(relay, bytes(TABLE_BYTES), timeout, context)

    def send(self, op: str, body: dict[str, Any]) -> None:
        self.link.send(op, body)

    def recv(self, timeout: float) -> tuple[str, dict] | None:
        deadline = time.monotonic() + timeout
        while True:
            data = self.link.recv(max(deadline - time.monotonic(), 0))
            if data is None:
                return None
            try:
                return unpack(data)
            except BadPacket:
                if time.monotonic() >= deadline:
                    return None

    def close(self) -> None:
        self.link.close()

    def __enter__(self) -> "RelayClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def invite_for_code(relay: RelayAddress, code: str, timeout: float = 30.0) -> str:
    """The invite a short code stands for, agreed with its host through `relay` (net/reach/codes.py);
    CodeError or TransportError with one line for a person."""
    from dicetable.net.reach import codes

    codes.parse_code(code)
    with RelayClient(relay, timeout=min(timeout, 10.0)) as link:
        return codes.claim_invite(link, code, timeout)
