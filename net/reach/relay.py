"""The relay: one reachable port through which hosts and joiners behind NAT reach each other's tables.

Every party dials OUT to the relay (CurveZMQ; the relay is authenticated by the key in its address,
`RelayAddress`), so no router needs a forwarded port. The relay serves many tables at once. For
each table it only carries packets between the table's host seat and its joiners, and it keeps the
mailboxes of short codes (net/reach/mailbox.py, net/reach/codes.py). It holds no seat and is trusted for
delivery only: the host still orders the log and every seat checks every frame (net/table/host.py,
net/table/joiner.py), frames are signed by their seats, the log is hash-linked, and a joiner leaves a table
whose opening is not signed by the owner key its invite names (net/reach/invite.py `dr1-`). So a relay can
delay or drop packets, which the seats see as a slow or absent host, but it cannot forge a frame,
bias a roll, read a hidden card (a card's keys travel boxed to their seat's own key: net/cards/deal.py),
seat itself at a table, or show two seats two different logs without the hash links telling. It
does read what is not sealed: table chat and moves, as every seat does.

Packets are the table's own `[op, body]` (net/reach/transport.py). Between the relay and a host:

    host  -> relay  relay_hello {}                       on every new connection
    relay -> host   relay_who {nonce}                    HMAC of the connection id (no state kept)
    host  -> relay  serve {table, key, proof[, deputies]}  proof: the host's Ed25519 signature of
                                                         SERVE_LABEL ‖ table ‖ relay key ‖ nonce;
                                                         deputies: the owner's signed list (net/table/deputies.py)
    relay -> host   serving {table} | relay_refused {reason}
    relay -> host   from {peer, data, source}            a joiner's packet, as it sent it, and a tag of
                                                         its source address (net/reach/sources.py), the same
                                                         for every connection from there
    host  -> relay  to {peer, data}                      a packet for one joiner of this table
    host  -> relay  relay_ping {}                        accepted, never needed: an idle host sends nothing
    host  -> relay  deputies {owner, keys, proof}        the owner's signed list of its seats' keys
    relay -> host   relay_taken {key}                    another key of the table serves it now

A table belongs to the first key that serves it (or, with a signed list, to the list's signer); a
host that comes back (a new connection, or a restarted relay) proves the same key again. Once the
table has started, its owner names the other seats' keys in a list it signs (net/table/deputies.py), which
whoever serves the table presents again in every `serve`, so a restarted relay learns it back; while
no key is serving it (the serving host silent past `host_away`, or the relay started less than
`host_away` ago), one of those keys, or the owner's, may serve it: a seat that takes over ordering
the log when the host seat is gone (net/table/succession.py). A second key never displaces a present one
(it hears `relay_taken`, as does a displaced host when it speaks again), and a key the owner did not
name never serves. A joiner's connection first sends `dial {table}`; the
relay then carries its packets to that table's host (`relay_wait {reason}` tells it when the table
has no host right now, and its packets are dropped until the host is back). A host reaches only
connections that dialled its table. Everything the relay keeps is capped, and closed or idle
connections and hostless tables are forgotten, so a flood of connections or tables costs bounded memory. What one stranger
can take from everyone is capped by its source address, whatever number of connections and keys it
uses (net/reach/sources.py): short codes only for a table it serves here, a few at a time, and a few tries
at other people's codes (net/reach/mailbox.py); each joiner's packet reaches its host with a tag of its
source, so a host can limit seat holds per source too (net/table/host.py).

A relay restart loses nothing that matters: the seats hold the log. The host's and joiners'
connections renew themselves (net/reach/transport.py), the host serves its table again, and the joiners
catch up by log index as after any drop. The relay's key is kept in a file, so its address stays the
same across restarts; it also tells that key on the next port, so `HOST:PORT` alone reaches it
(net/reach/relay_key.py).

A host is present while its connection is open, and an idle one sends nothing: the relay hears a
connection close from libzmq (net/reach/relay_presence.py; PROTOCOL.md §12.4), not from keepalives,
so an idle table's connection stays as small as when it was served.

Scale (scripts/bench_relay.py, its load in other processes on the other core): an idle table costs
~30 KB, 1.5 KB of it the relay's own and the rest libzmq's per connection (as a bare forwarder's),
for as long as it stays idle: 10,000 in about 320 MB (a keepalive a second used to take each to ~59 KB
within minutes: net/reach/relay_memory.py); and 73,000-89,000 packets/s on one core of a busy machine. Relays scale out side by side: each is its own process, port and
key (its own RELAY line), tables and codes live at the relay that took them, and relays share
nothing, so an operator runs as many as the load needs and gives each group of players one line (a
code's number is only meaningful at the relay that issued it). A table may name a second relay to
move to if its own dies (net/reach/relay_link.py; PROTOCOL.md §12.6).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field

import zmq
from zmq.utils import z85

from dicetable.net.table import deputies
from dicetable.net.reach import mailbox, relay_key, relay_memory, relay_presence
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach import sources
from dicetable.net.reach import seat_boxes
from dicetable.net.identity import verify_signature
from dicetable.net.reach.transport import (
    MAX_PACKET, BadPacket, _seed_auto_ids, bind_socket, curve_public,
    frame_address, is_joiner_id, pack, unpack, wait_port_free,
)

SERVE_LABEL = b"dicetable/relay-serve/v1\x00"
TABLE_BYTES = 16
WRAP = 1024  # bytes a `from`/`to` wrapping adds around a table packet, at most
MAX_TABLES = 20_000  # tables held at once (an idle one costs a few hundred bytes)
MAX_CONNECTIONS = 50_000  # connections remembered at once
TABLES_PER_SOURCE = 16  # tables one source address holds at once (a new one past it evicts its oldest hostless one)
MAX_DIALLED = 64  # joiner connections per table (a table has at most 16 seats; reconnects leave stale ones)
CONNECTION_IDLE = 120.0  # seconds after which a silent connection is forgotten, unless it serves a table
# A host is present while its connection is open (net/reach/relay_presence.py, PROTOCOL.md §12.4); a dead
# host's connection closes at once (a process that dies) or within 6 s (a link gone silent: the host's
# heartbeats, net/reach/transport.py), so a seat may count on a table being free HOST_AWAY after its host
# fell silent (net/table/succession.py). A restarted relay also waits that long for owners to come back.
HOST_AWAY = 10.0
TABLE_IDLE = 7 * 24 * 3600.0  # seconds a table without its host is remembered (its owner key kept)
SWEEP_EVERY = 1.0
KEEPALIVE_IDLE, KEEPALIVE_EVERY, KEEPALIVE_PROBES = 30, 10, 3  # TCP keepalive, for clients without heartbeats
BATCH = 4096  # packets handled in one step before the sweep gets its turn
_NOBLOCK = int(zmq.NOBLOCK)  # plain ints: pyzmq's flag enums cost a Python call on every use
_MORE = int(zmq.NOBLOCK | zmq.SNDMORE)


def serve_bytes(table: bytes, relay_key: bytes, nonce: bytes) -> bytes:
    """What a host signs to serve `table` on the connection the relay challenged with `nonce`."""
    return SERVE_LABEL + table + relay_key + nonce


@dataclass(slots=True)  # no per-object __dict__: a relay holds thousands
class _Table:
    owner: bytes  # the Ed25519 key that first served it
    host: bytes | None = None  # the serving connection
    host_seen: float = 0.0
    dialled: set[bytes] = field(default_factory=set)
    touched: float = 0.0
    server: bytes = b""  # the key serving it now: the owner's, or a deputy's
    deputies: frozenset[bytes] = frozenset()  # the seats' keys the owner named (net/table/succession.py)
    source: str = ""  # where the connection that made it came from: tables are capped per source (§12.5)


@dataclass(slots=True)
class _Connection:
    seen: float
    caller: mailbox.Caller  # its source, and the codes it took and tried (net/reach/mailbox.py)
    table: bytes | None = None  # the table it dialled, for a joiner
    serves: bytes | None = None  # the table it serves, for a host
    address: str = ""  # the source address its packets come from
    tag: bytes = b""  # what the host of its table is told of that address (PROTOCOL.md §12.2)


class RelayServer:
    """The relay's ROUTER and its tables; `step()` handles what arrives, `run()` until stopped."""

    def __init__(self, secret_key: bytes, bind: str = "127.0.0.1", port: int = 0, context=None, clock=time.monotonic,
                 host_away: float = HOST_AWAY):
        self.context = context or zmq.Context.instance()
        self.clock, self.host_away = clock, host_away
        self.public_key = curve_public(secret_key)
        _seed_auto_ids()
        socket = self.context.socket(zmq.ROUTER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.ROUTER_HANDOVER, 0)  # an id already in use belongs to its first connection
        # Seats' sockets ping every second with a 5 s TTL (net/reach/transport.py), which closes a dead link
        # here; the relay answers their pings but sends none of its own. Its own pings (every 10 s, a 30 s
        # timeout) were most of an idle relay's work: each armed a timer that the next packet cancelled, and
        # libzmq cancels a timer by walking its I/O thread's timers (poller_base_t::cancel_timer), the 30 s
        # one from the far end, so that work grew with the square of the connections: 45 % of a core at
        # 6,000 idle tables, behind at 10,000; without them 8 % (scripts/bench_relay.py). More I/O threads
        # split it too, but on the relay's one core they cost two thirds of its packets a second.
        # A client that never pings is closed by the kernel's TCP keepalive instead, within 60 s of going
        # silent and dead; it probes only a connection that carries nothing, so never a seat's.
        socket.setsockopt(zmq.TCP_KEEPALIVE, 1)
        socket.setsockopt(zmq.TCP_KEEPALIVE_IDLE, KEEPALIVE_IDLE)
        socket.setsockopt(zmq.TCP_KEEPALIVE_INTVL, KEEPALIVE_EVERY)
        socket.setsockopt(zmq.TCP_KEEPALIVE_CNT, KEEPALIVE_PROBES)
        socket.curve_server = True
        socket.curve_secretkey = z85.encode(secret_key)
        socket.curve_publickey = z85.encode(self.public_key)
        socket.setsockopt(zmq.MAXMSGSIZE, MAX_PACKET + WRAP)
        self.port, self.key_service = relay_key.bind_beside(  # HOST:PORT alone: the key told on PORT + 1 (§12.6)
            socket, bind, port, self.public_key, lambda s, b, p: bind_socket(s, b, p, 5.0 if p else 0.0, "a relay"))
        self.socket, self.bind = socket, bind
        self._poller = zmq.Poller()  # made once: socket.poll() makes a new Poller on every call
        self._poller.register(socket, zmq.POLLIN)
        self.presence = relay_presence.Presence(socket, self.forget, self._poller)  # which connections are open
        self.tables: dict[bytes, _Table] = {}
        self._tables_from: dict[str, set[bytes]] = {}  # source -> the tables its connections made (TABLES_PER_SOURCE)
        self.connections: dict[bytes, _Connection] = {}
        self.boxes = mailbox.Mailboxes(clock=clock)
        self.seat_boxes = seat_boxes.SeatBoxes(self)  # answers seat to seat, not through the host (§12.8)
        self._secret = secrets.token_bytes(32)
        self._swept = self.started = clock()
        self._trimmer = relay_memory.Trimmer(self.started)  # closed connections' memory back to the system
        self.stopped = False
        self.forwarded = 0  # packets carried between hosts and joiners

    def address(self, advertise: str | None = None) -> RelayAddress:
        return RelayAddress(advertise or self.bind, self.port, self.public_key)

    # -- the loop --------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            while not self.stopped:
                self.step(0.2)
        finally:
            self.close()

    def step(self, timeout: float) -> None:
        """Wait up to `timeout` s for packets, then handle every one waiting (up to BATCH) without polling
        between them: a poll per packet was a third of the relay's time (scripts/bench_relay.py)."""
        if not self._poller.poll(int(timeout * 1000)):
            self._maybe_sweep()
            return
        recv, handle, fds, tie = self.socket.recv, self.handle, self.presence.fds, self.presence.tie
        for _ in range(BATCH):
            try:
                head = recv(_NOBLOCK, copy=False)
            except zmq.Again:
                break
            if not head.more:
                continue
            body = recv(_NOBLOCK, copy=False)
            if body.more:  # more than [id, packet]: not a packet of ours; its frames are read and dropped
                while recv(_NOBLOCK, copy=False).more:
                    pass
                continue
            peer, fd = head.bytes, body.get(relay_presence.SRCFD)
            if fds.get(peer) != fd and not tie(peer, fd):
                continue  # sent before its connection closed: nobody is there to answer
            if is_joiner_id(peer):
                handle(peer, body.bytes, frame_address(body))
        self.presence.read_closings()
        self._maybe_sweep()

    def _maybe_sweep(self) -> None:
        now = self.clock()
        if now - self._swept >= SWEEP_EVERY:
            self._swept = now
            self.sweep(now)

    def close(self) -> None:
        self.key_service.close()
        self.presence.close()
        self.socket.close(0)
        wait_port_free(self.bind, self.port)

    def send(self, peer: bytes, op: str, body: dict) -> None:
        self._send_raw(peer, pack(op, body))

    def _send_raw(self, peer: bytes, data: bytes) -> None:
        try:  # two plain sends with int flags: send_multipart's enum arithmetic cost as much as the send
            self.socket.send(peer, _MORE)
            self.socket.send(data, _NOBLOCK)
        except zmq.ZMQError as error:  # a full queue: delivery is all the relay promises, and the seats resend
            if error.errno == zmq.EHOSTUNREACH:  # ROUTER_MANDATORY: the connection is gone (relay_presence.py)
                self.presence.unreachable(peer)

    # -- packets ---------------------------------------------------------------------------------
    def handle(self, peer: bytes, data: bytes, address: str = "") -> None:
        """One packet from connection `peer`, which came from the source `address` (its IP)."""
        try:
            op, body = unpack(data, limit=MAX_PACKET + WRAP)
        except BadPacket:
            return
        now = self.clock()
        conn = self.connections.get(peer)
        if conn is None:
            if len(self.connections) >= MAX_CONNECTIONS:
                self.sweep(now)
                if len(self.connections) >= MAX_CONNECTIONS:
                    return  # full: the newest connection waits (it retries on its own)
            conn = self.connections[peer] = _Connection(now, mailbox.Caller("", peer=peer))
        conn.seen = now
        if address != conn.address or not conn.caller.source:
            conn.address, conn.caller.source, conn.tag = address, sources.source_of(address), b""
        if op == "relay_hello":
            self.send(peer, "relay_who", {"nonce": self._challenge(peer)})
        elif op == "serve":
            self._serve(peer, conn, body, now)
        elif conn.serves is not None:
            self._from_host(peer, conn, op, body, now)
        elif op in seat_boxes.OPS:
            self.seat_boxes.handle(peer, conn, op, body, now)
        elif op == "dial":
            self._dial(peer, conn, body, now)
        elif op.startswith("mb_"):
            conn.caller.table = None
            self._mail(peer, op, body, conn.caller)
        elif conn.table is not None and len(data) <= MAX_PACKET:
            self._to_host(peer, conn, data, now)

    def _challenge(self, peer: bytes) -> bytes:
        return hmac.new(self._secret, b"dicetable/relay-challenge/v1" + peer, hashlib.sha256).digest()

    def _serve(self, peer: bytes, conn: _Connection, body: dict, now: float) -> None:
        table, key, proof = body.get("table"), body.get("key"), body.get("proof")
        if type(table) is not bytes or len(table) != TABLE_BYTES or type(key) is not bytes or len(key) != 32 \
                or type(proof) is not bytes or len(proof) != 64:
            self.send(peer, "relay_refused", {"reason": "a malformed serve: it has a 16-byte table, a key and a proof"})
            return
        if not verify_signature(key, serve_bytes(table, self.public_key, self._challenge(peer)), proof):
            self.send(peer, "relay_refused", {"reason": "the serve does not prove its key on this connection"})
            return
        owner, named = key, frozenset()
        if "deputies" in body:
            listing = deputies.read(body["deputies"], table)
            if listing is None:
                self.send(peer, "relay_refused", {"reason": "the serve's deputies list is not signed for this table"})
                return
            owner, named = listing
        entry = self.tables.get(table)
        if entry is not None and "deputies" in body:
            if owner != entry.owner:
                self.send(peer, "relay_refused", {"reason": "the serve's deputies list is not signed by this table's owner key"})
                return
            entry.deputies = named
        if entry is not None:
            owner, named = entry.owner, entry.deputies
        if key != owner and key not in named:
            self.send(peer, "relay_refused", {"reason": "this table belongs to another key at this relay"})
            return
        if entry is not None and entry.server not in (b"", key) and self._host_present(entry, now):
            self.send(peer, "relay_taken", {"key": entry.server})  # one key orders at a time: the present one
            return
        if key != owner and now - self.started <= self.host_away:  # a restarted relay: its owner may be on its way back
            self.send(peer, "relay_wait", {"reason": "the relay has just started: it lets a seat serve the table only "
                                                     "once its owner has had time to come back"})
            return
        if entry is None:
            if not self._room_from(conn.caller.source, now):
                self.send(peer, "relay_refused", {"reason": f"your address serves {TABLES_PER_SOURCE} tables at this "
                                                            "relay already; close one first"})
                return
            if len(self.tables) >= MAX_TABLES:
                self.sweep(now)
            if len(self.tables) >= MAX_TABLES:
                self.send(peer, "relay_refused", {"reason": f"the relay holds its most tables ({MAX_TABLES}); try later"})
                return
            entry = self.tables[table] = _Table(owner, deputies=named, source=conn.caller.source)
            self._tables_from.setdefault(entry.source, set()).add(table)
        entry.host, entry.host_seen, entry.touched, entry.server = peer, now, now, key
        if conn.serves not in (None, table):  # a connection serves one table: its last one has no host now
            self._leave(peer, conn.serves)
        conn.serves = table
        self.send(peer, "serving", {"table": table})

    def _dial(self, peer: bytes, conn: _Connection, body: dict, now: float) -> None:
        table = body.get("table")
        if type(table) is not bytes or len(table) != TABLE_BYTES or conn.table is not None:
            return  # one table per connection; a joiner that wants another dials anew
        entry = self.tables.get(table)
        if entry is not None:
            if len(entry.dialled) >= MAX_DIALLED:
                self._forget_stale(entry, now)
            if len(entry.dialled) >= MAX_DIALLED:
                self.send(peer, "full", {"reason": "too many connections to this table at the relay"})
                return
            entry.dialled.add(peer)
        conn.table = table
        if not self._host_present(entry, now):
            self._tell_wait(peer)

    def _host_present(self, entry: _Table | None, now: float) -> bool:
        """Whether the table's host is here: its connection is open (PROTOCOL.md §12.4), however long silent."""
        return entry is not None and entry.host is not None

    def _tell_wait(self, peer: bytes) -> None:
        self.send(peer, "relay_wait", {"reason": "the relay has no host for this table right now: "
                                                 "the host is offline or the table has closed"})

    def _to_host(self, peer: bytes, conn: _Connection, data: bytes, now: float) -> None:
        entry = self.tables.get(conn.table)
        if entry is not None and peer not in entry.dialled:  # dialled before the table was served
            if len(entry.dialled) >= MAX_DIALLED:
                return
            entry.dialled.add(peer)
        if not self._host_present(entry, now):
            return  # dropped: the joiner's session resends what matters when the host is back
        entry.touched = now
        self.forwarded += 1
        if not conn.tag:  # per table: a host learns which of its joiners share an address, nothing more
            label = b"dicetable/relay-source/v1" + conn.table + conn.caller.source.encode()
            conn.tag = hmac.new(self._secret, label, hashlib.sha256).digest()[:8]
        self.send(entry.host, "from", {"peer": peer, "data": data, "source": conn.tag})

    def _from_host(self, peer: bytes, conn: _Connection, op: str, body: dict, now: float) -> None:
        entry = self.tables.get(conn.serves)
        if entry is None or entry.host != peer:
            conn.serves = None
            if entry is not None:  # displaced while silent: it learns who serves now
                self.send(peer, "relay_taken", {"key": entry.server})
            return
        entry.host_seen = entry.touched = now
        if op == "deputies":
            self._deputies(conn.serves, entry, body)
        elif op == "to":
            target, data = body.get("peer"), body.get("data")
            if type(target) is bytes and type(data) is bytes and len(data) <= MAX_PACKET and target in entry.dialled:
                self.forwarded += 1
                self._send_raw(target, data)
        elif op.startswith("mb_"):
            conn.caller.table = conn.serves  # a code is taken for the table this connection serves
            self._mail(peer, op, body, conn.caller)

    def _mail(self, peer: bytes, op: str, body: dict, caller: mailbox.Caller) -> None:
        """A mailbox request: its answer, and a ring to the host whose box it posted to (PROTOCOL.md §13.1)."""
        answer = mailbox.answer(self.boxes, op, body, caller)
        if answer is not None:
            self.send(peer, *answer)
        for host, nameplate in self.boxes.rings:
            self.send(host, "mb_ring", {"nameplate": nameplate})
        self.boxes.rings.clear()

    def _deputies(self, table: bytes, entry: _Table, body: dict) -> None:
        """The owner's signed word on which seats' keys may serve its table while nobody serves it."""
        listing = deputies.read(body, table)
        if listing is not None and listing[0] == entry.owner:  # only the owner names them: nobody lets a stranger in
            entry.deputies = listing[1]

    # -- forgetting --------------------------------------------------------------------------------
    def sweep(self, now: float) -> None:
        """Forget silent connections and long-hostless tables (bounded memory under any flood)."""
        hosts = {e.host for e in self.tables.values()}  # an idle host is silent, and open: it is kept
        for peer in [p for p, c in self.connections.items() if now - c.seen > CONNECTION_IDLE and p not in hosts]:
            self.forget(peer)
        for table in [t for t, e in self.tables.items() if e.host is None and now - e.touched > TABLE_IDLE]:
            self._drop_table(table)
        self.boxes.expire()
        self._trimmer.maybe(now)

    def forget(self, peer: bytes) -> None:
        """Forget connection `peer` (silent too long, or closed); a table it served has no host from now."""
        conn = self.connections.pop(peer, None)
        if conn is None:
            return
        self.seat_boxes.forget(peer)
        for table in (conn.table, conn.serves):
            self._leave(peer, table)

    def _leave(self, peer: bytes, table: bytes | None) -> None:
        entry = self.tables.get(table) if table is not None else None
        if entry is not None:
            entry.dialled.discard(peer)
            if entry.host == peer:
                entry.host, entry.touched = None, self.clock()  # TABLE_IDLE counts from the host's leaving

    def _room_from(self, source: str, now: float) -> bool:
        """Whether `source` may make one more table: under TABLES_PER_SOURCE, or once its least recently
        used table with no present host is forgotten (as a relay restart forgets it: its owner serves it
        again, and its seats keep the log). A stranger with fresh keys holds at most that many tables, so
        it cannot fill the relay's MAX_TABLES and keep every host from its codes (PROTOCOL.md §12.5)."""
        made = self._tables_from.get(source, set())
        if len(made) < TABLES_PER_SOURCE:
            return True
        idle = [t for t in made if not self._host_present(self.tables[t], now)]
        if not idle:
            return False
        self._drop_table(min(idle, key=lambda t: self.tables[t].touched))
        return True

    def _drop_table(self, table: bytes) -> None:
        entry = self.tables.pop(table)
        made = self._tables_from.get(entry.source)
        if made is not None:
            made.discard(table)
            if not made:
                del self._tables_from[entry.source]

    def _forget_stale(self, entry: _Table, now: float) -> None:
        for peer in list(entry.dialled):
            conn = self.connections.get(peer)
            if conn is None or now - conn.seen > 3 * self.host_away:
                entry.dialled.discard(peer)
