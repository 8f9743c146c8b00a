"""The load generator of scripts/bench_relay.py, one process of several, and the floor it compares with.

    python scripts/relay_load.py worker '{"mode": ..., ...}'   one load process (bench_relay.py starts them)
    python scripts/relay_load.py forwarder                     a minimal pyzmq forwarder: no checks at all

A worker holds its share of the tables with plain DEALER sockets (CurveZMQ, as seats use them, but
without the per-socket monitor a seat keeps), says `ready` on stdout, waits for a `go` line on stdin,
then runs for `seconds` and prints one JSON line of what it counted. Every packet it sends is
built once before the run, so per packet it only polls, receives, and sends: the relay's core, not
this one, should be what runs out. Modes:

- idle: `count` hosts each serve a table at the relay (relay_hello, the relay's nonce signed, serve)
  and stay connected, sending the relay nothing more, as a host does (net/reach/relay_link.py), or,
  with `keepalive` K > 0, a keepalive every K seconds (the old design, K = 1);
- forward-idle: `count` connections to the forwarder, each used once, then, with `keepalive`, a
  keepalive to an id nobody holds likewise (what libzmq alone keeps per connection).
Every socket has a seat's ZMTP heartbeats (a ping a second, net/reach/transport.py), whatever `keepalive`.
An idle worker told `settle PINGS RATE` sends PINGS keepalives from every host at once, RATE packets
a second in all, and says `settled`: how an idle table's connection looks once it has carried PINGS
keepalives (PINGS 0: it only answers `settled`).
- relay: `count` tables, a host and a joiner each, through the relay (dial; from/to);
- forward: the same ends through the floor forwarder (`[to, data]` in, `[from, data]` out);
- direct: `count` joiners to this process's own ROUTER, which answers at once (no middle at all).

A relay serves at most TABLES_PER_SOURCE tables per source address (net/reach/relay.py, PROTOCOL.md
§12.5), so each group of that many tables leaves from an address of its own in 127.1.0.0/16 (every
127/8 address is loopback on Linux; connections still go to 127.0.0.1, as tests/stranger.py does):
the load looks like many players' machines, and the relay's cap stays as it is. The forwarder's
ends leave from the same addresses, so both middles see the same connections.

Each table's joiner sends a 200-byte ping and its host answers with a pong of the same size, `rate`
times a second (0: as soon as the last came back); a round trip is timed joiner to joiner.
"""

from __future__ import annotations

import heapq
import json
import os
import random
import secrets
import select
import sys
import time

import msgpack
import zmq
from zmq.utils import z85

PAYLOAD = b"x" * 200
CONNECT_BATCH = 250  # hosts connecting at once: thousands of CurveZMQ handshakes together time out on a busy core
RENEW = 10.0  # seconds before a host not yet served tries again on a new connection
NOBODY = b"\x00nobody"  # a routing id no connection has: the forwarder drops what is sent to it
RESEND = 2.0  # seconds before a ping not answered is sent again (none are lost on loopback; a guard)


_NOBLOCK, _MORE = int(zmq.NOBLOCK), int(zmq.SNDMORE)  # plain ints: pyzmq's flag enums cost a call each use


def send(socket, frames: list[bytes]) -> None:
    """send_multipart without its per-frame enum arithmetic (this process's core is the load's budget)."""
    for frame in frames[:-1]:
        socket.send(frame, _MORE)
    socket.send(frames[-1], 0)


def receive(socket) -> list:
    """The frames of one message waiting on `socket` (zmq.Again if none), as zero-copy Frames."""
    frames = [socket.recv(_NOBLOCK, copy=False)]
    while frames[-1].more:
        frames.append(socket.recv(_NOBLOCK, copy=False))
    return frames


def pack(op: str, body: dict) -> bytes:
    return msgpack.packb([op, body], use_bin_type=True)


def source_address(table: int) -> str:
    """The loopback address the host of the load's `table`-th table (counted over every process) leaves from."""
    from dicetable.net.reach.relay import TABLES_PER_SOURCE

    group = table // TABLES_PER_SOURCE
    return f"127.1.{group // 250}.{group % 250 + 1}"


def dealer(context, endpoint: str, server_key: bytes, routing_id: bytes | None = None, source: str | None = None):
    from dicetable.net.reach.transport import _heartbeat, curve_keypair, fresh_routing_id

    public, secret = curve_keypair()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    _heartbeat(socket)  # as a seat's socket: a ZMTP ping a second each way, answered by libzmq's own thread
    socket.curve_serverkey, socket.curve_publickey, socket.curve_secretkey = (
        z85.encode(server_key), z85.encode(public), z85.encode(secret))
    socket.setsockopt(zmq.ROUTING_ID, routing_id or fresh_routing_id())
    socket.connect(f"tcp://{source}:0;{endpoint.removeprefix('tcp://')}" if source else endpoint)
    return socket


def serve_all(context, endpoint: str, relay_key: bytes, tables: list[bytes], profile, sources: list[str],
              timeout: float = 600.0) -> list:
    """A host for each table that proves its key on its connection and serves the table (net/reach/relay.py
    `serve`); a connection not served within RENEW seconds is replaced by a new one, as a seat's socket
    renews itself (net/reach/transport.py), and the hosts are returned in the tables' order."""
    from dicetable.net.reach.relay import serve_bytes

    hosts: list = [None] * len(tables)
    waiting: dict[int, tuple[object, int, float]] = {}  # socket id -> (socket, index, when it was made)
    poller = zmq.Poller()

    def fresh(index: int) -> None:
        socket = dealer(context, endpoint, relay_key, source=sources[index])
        socket.send(pack("relay_hello", {}))
        poller.register(socket, zmq.POLLIN)
        waiting[id(socket)] = (socket, index, time.monotonic())
        hosts[index] = socket

    for index in range(len(tables)):
        fresh(index)
    deadline = time.monotonic() + timeout
    while waiting:
        now = time.monotonic()
        if now > deadline:
            raise SystemExit(f"{len(waiting)} tables not served within {timeout:g} s")
        for socket, index, made in [entry for entry in waiting.values() if now - entry[2] > RENEW]:
            del waiting[id(socket)]
            poller.unregister(socket)
            socket.close(0)
            fresh(index)
        for socket, _ in poller.poll(500):
            op, body = msgpack.unpackb(socket.recv(), raw=False)
            entry = waiting.get(id(socket))
            if entry is None:
                continue
            if op == "relay_who":
                proof = profile.sign(serve_bytes(tables[entry[1]], relay_key, body["nonce"]))
                socket.send(pack("serve", {"table": tables[entry[1]], "key": profile.public_key, "proof": proof}))
            elif op == "serving":
                del waiting[id(socket)]
                poller.unregister(socket)
            elif op in ("relay_refused", "relay_wait"):
                raise SystemExit(f"the relay refused a table: {body}")
    return hosts


class Ends:
    """One process's tables: joiner sockets, what each sends, and how each host end answers."""

    def __init__(self, spec: dict, context):
        from dicetable.net.identity import Profile

        mode, count, endpoint = spec["mode"], spec["count"], spec["endpoint"]
        key = bytes.fromhex(spec["key"])
        self.mode, self.joiners, self.hosts = mode, [], []
        self.ping: dict[int, list[bytes]] = {}  # joiner socket id -> the frames of its ping
        self.pong: dict[int, list[bytes]] = {}  # host socket id -> the frames of its answer
        self.router = None
        if mode == "direct":
            self.router = context.socket(zmq.ROUTER)
            self.router.setsockopt(zmq.LINGER, 0)
            secret = bytes.fromhex(spec["secret"])
            from dicetable.net.reach.transport import curve_public

            self.router.curve_server = True
            self.router.curve_secretkey, self.router.curve_publickey = z85.encode(secret), z85.encode(curve_public(secret))
            port = self.router.bind_to_random_port("tcp://127.0.0.1")
            endpoint, key = f"tcp://127.0.0.1:{port}", curve_public(secret)
        profile = Profile.generate("load") if mode in ("relay", "idle") else None
        tables = [secrets.token_bytes(16) for _ in range(count)]
        sources = [source_address(spec.get("first", 0) + index) for index in range(count)]
        for first in range(0, count if mode != "direct" else 0, CONNECT_BATCH):
            chunk = tables[first:first + CONNECT_BATCH]
            if mode in ("forward", "forward-idle"):
                self.hosts += [dealer(context, endpoint, key, source=source) for source in sources[first:first + CONNECT_BATCH]]
            else:
                self.hosts += serve_all(context, endpoint, key, chunk, profile, sources[first:first + CONNECT_BATCH])
        if mode == "forward-idle":  # each host sends itself one packet through the forwarder: its connection is in use
            for socket in self.hosts:
                socket.send_multipart([socket.getsockopt(zmq.ROUTING_ID), b"x"])
            for socket in self.hosts:
                socket.recv_multipart()
        if mode in ("idle", "forward-idle"):
            return
        for index, table in enumerate(tables):
            joiner_id = secrets.token_bytes(16)
            joiner_id = bytes([joiner_id[0] | 1]) + joiner_id[1:]
            joiner = dealer(context, endpoint, key, joiner_id)
            self.joiners.append(joiner)
            if mode == "relay":
                joiner.send(pack("dial", {"table": table}))
                self.ping[id(joiner)] = [pack("ping", {"data": PAYLOAD})]
                self.pong[id(self.hosts[index])] = [pack("to", {"peer": joiner_id, "data": pack("pong", {"data": PAYLOAD})})]
            elif mode == "forward":
                host_id = self.hosts[index].getsockopt(zmq.ROUTING_ID)
                self.ping[id(joiner)] = [host_id, pack("ping", {"data": PAYLOAD})]
                self.pong[id(self.hosts[index])] = [joiner_id, pack("pong", {"data": PAYLOAD})]
            else:
                self.ping[id(joiner)] = [pack("ping", {"data": PAYLOAD})]
        if mode == "forward":  # the forwarder routes by id: wait until every connection is known to it
            time.sleep(1.0 + count / 2000)
        if mode == "direct":
            self.direct_pong = pack("pong", {"data": PAYLOAD})

    def run(self, rate: float, seconds: float, warmup: float, window: int = 1) -> dict:
        """Ping-pong on every table for `warmup` + `seconds`; counts and times only the last `seconds`.
        Paced (`rate`): one ping in flight per table, timed. A flood (rate 0): `window` pings in flight per
        table, each answered one sent again, so the middle always has work waiting (not timed).

        It waits on the sockets' ZMQ_FDs with epoll, not zmq.Poller: a poll over thousands of sockets
        costs as much per call as they are many, and made this load, not the middle, the ceiling at 1,000
        tables. A ZMQ_FD only tells that the socket has news, and a send may take that news in, so a
        socket is drained (until zmq.Again) whenever it was sent on or its FD fires."""
        sockets = self.joiners + self.hosts + ([self.router] if self.router is not None else [])
        by_fd = {socket.getsockopt(zmq.FD): socket for socket in sockets}
        ready = select.epoll(len(by_fd))
        for fd in by_fd:
            ready.register(fd, select.EPOLLIN)
        joiner_of = {id(s): s for s in self.joiners}
        host_of = {id(s): s for s in self.hosts}
        period = 1.0 / rate if rate else 0.0
        start = time.monotonic()
        counting_from, end = start + warmup, start + warmup + seconds
        spread = random.Random(os.getpid())
        sent_at = dict.fromkeys(joiner_of, 0.0)
        next_at = {key: start + spread.random() * period for key in joiner_of}  # spread over the period
        due = sorted((at, key) for key, at in next_at.items())
        times: list[float] = []
        packets = 0

        def drain(socket) -> None:
            nonlocal packets
            key = id(socket)
            while True:
                try:
                    frames = receive(socket)
                except zmq.Again:
                    return
                now = time.monotonic()
                counting = counting_from <= now < end
                packets += counting
                if socket is self.router:
                    send(socket, [frames[0].bytes, self.direct_pong])
                elif key in host_of:
                    send(socket, self.pong[key])
                else:
                    if period and counting and sent_at[key]:
                        times.append((now - sent_at[key]) * 1000)
                    if period:
                        sent_at[key] = 0.0
                        next_at[key] = max(next_at[key] + period, now)
                        heapq.heappush(due, (next_at[key], key))
                    else:
                        send(socket, self.ping[key])
                        sent_at[key] = now

        for socket in sockets:  # what came before the FDs were watched
            drain(socket)
        checked = start
        while True:
            now = time.monotonic()
            if now >= end:
                break
            while due and due[0][0] <= now:  # pings due (paced, or all at once to start a flood)
                key = heapq.heappop(due)[1]
                for _ in range(1 if period else window):
                    send(joiner_of[key], self.ping[key])
                sent_at[key] = now
                drain(joiner_of[key])
            if period and now - checked > RESEND:  # a guard: nothing is lost on loopback, but a lost ping must not stop a table
                checked = now
                for key, at in sent_at.items():
                    if at and now - at > RESEND:
                        send(joiner_of[key], self.ping[key])
                        sent_at[key] = now
                        drain(joiner_of[key])
            wait = min(due[0][0] - now, 0.05) if due else 0.05
            for fd, _ in ready.poll(max(0.0, wait)):
                drain(by_fd[fd])
        ready.close()
        return {"packets": packets, "times": times}


def keepalive(mode: str) -> list[bytes]:
    """What an idle host sends its middle a second: the relay's keepalive, or, through the forwarder, a
    packet to an id nobody holds (dropped there, as the relay answers no keepalive): each crosses the
    middle's inbound pipe of that connection once, as a seat's pings do."""
    return [pack("relay_ping", {})] if mode in ("idle", "relay") else [NOBODY, b"k"]


def settle(ends: Ends, mode: str, pings: int, rate: float) -> None:
    """`pings` keepalives from every idle host, `rate` a second from this process in all, one round over
    the hosts at a time: what an idle table's connection has carried after `pings` seconds."""
    if not pings:
        return
    frames, period, start = keepalive(mode), len(ends.hosts) / rate, time.monotonic()
    for done in range(1, pings + 1):
        for socket in ends.hosts:
            send(socket, frames)
        time.sleep(max(0.0, start + done * period - time.monotonic()))
    # Then until the middle has read them all (a middle behind leaves them in the kernel's buffers, which
    # its memory does not show): each host asks for an answer after them, and a connection keeps its order.
    for socket in ends.hosts:
        send(socket, [pack("relay_hello", {})] if mode == "idle" else [socket.getsockopt(zmq.ROUTING_ID), b"m"])
    for socket in ends.hosts:
        if not socket.poll(600_000):
            raise SystemExit("the middle did not answer after the keepalives")
        socket.recv_multipart()


def worker(spec: dict) -> None:
    context = zmq.Context.instance()
    context.set(zmq.MAX_SOCKETS, 4 * spec["count"] + 64)
    ends = Ends(spec, context)
    print("ready", flush=True)
    idle = spec["mode"] in ("idle", "forward-idle")
    frames = keepalive(spec["mode"])
    every = spec.get("keepalive", 0.0) if idle else 0.0
    pinging = ends.hosts if every else []
    while True:  # an idle host sends nothing (the relay counts it present while connected), or the old keepalive
        for socket in pinging:
            send(socket, frames)
        if select.select([sys.stdin], [], [], every or 1.0)[0]:
            command = sys.stdin.readline().split()
            if command[:1] != ["settle"] or not idle:
                break
            settle(ends, spec["mode"], int(command[1]), float(command[2]))
            print("settled", flush=True)
    if command == ["go"]:
        result = ends.run(spec.get("rate", 0.0), spec.get("seconds", 3.0), spec.get("warmup", 1.0), spec.get("window", 1))
        print(json.dumps(result), flush=True)
        sys.stdin.readline()
    context.destroy(0)


def forwarder() -> None:
    """The floor: a CurveZMQ ROUTER that sends every `[to, data]` on as `[from, data]`, checking nothing,
    in the relay's own loop (every waiting packet per poll, int flags): only the relay's checks and
    wrapping are left out."""
    from dicetable.net.reach.transport import curve_keypair

    public, secret = curve_keypair()
    context = zmq.Context.instance()
    socket = context.socket(zmq.ROUTER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.curve_server = True
    socket.curve_secretkey, socket.curve_publickey = z85.encode(secret), z85.encode(public)
    port = socket.bind_to_random_port("tcp://127.0.0.1")
    print(f"forwarder: {port} {public.hex()}", flush=True)
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)
    recv, send_frame = socket.recv, socket.send
    while True:  # the relay's own loop (net/reach/relay.py `step`) with nothing but the forwarding
        poller.poll()
        while True:
            try:
                source = recv(_NOBLOCK)
            except zmq.Again:
                break
            target, data = recv(_NOBLOCK), recv(_NOBLOCK)
            send_frame(target, _MORE | _NOBLOCK)
            send_frame(source, _MORE | _NOBLOCK)
            send_frame(data, _NOBLOCK)


if __name__ == "__main__":
    if sys.argv[1] == "forwarder":
        try:
            forwarder()
        except KeyboardInterrupt:
            pass
    else:
        worker(json.loads(sys.argv[2]))
