"""A networked game over a slow link: game time against its chance steps × the round-trip time.

    .venv/bin/python scripts/bench_delay.py [--rtt-ms 20 160] [--game dicebreaker] [--seed 1]

A user-space TCP proxy between the joiner and the host, in its own process, adds half the round-trip
time to every byte in each direction (ordered, as a long line would); it can also jitter each chunk's
delay and stop the link in bursts (`DelayProxy`'s `jitter` and `stall`, used by scripts/slow_links.py:
this machine's kernel has no `tc netem`). Host and joiner are real
sessions with greedy bots, the joiner in its own thread. One game per RTT given (default 20 and 160 ms),
each printed with a bare round trip through the same kind of proxy, measured in the same run. The protocol's floor is one round trip per chance step (the seats'
reveals answer the roll in one exchange) and one per move that crosses the link; the script prints
the game time beside chance steps × RTT and (chance steps + the joiner's moves) × RTT.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


class DelayProxy:
    """127.0.0.1:port → 127.0.0.1:target, each direction delayed by `delay` seconds, order kept.

    `jitter`: each chunk's delay varies by ± this fraction of `delay` (uniformly, seeded by `seed`); a
    stream keeps its order, so a chunk never overtakes the one before it (as TCP over a jittery path).
    `stall`: every `stall_every` seconds (the first `stall_every` / 2 after the proxy starts) the link
    stops for `stall` seconds in both directions, then delivers what it held, in order.

    It runs in its own process (`--proxy`), its timing off the game's interpreter lock: in the game's
    process a packet's timer waited for whichever seat's thread held the lock (a bot thinking), and an
    event loop's millisecond polling added up to 1 ms more per hop, so the link itself came out slower
    than the RTT the floor counts."""

    def __init__(self, target: int, delay: float, jitter: float = 0.0, stall: float = 0.0, stall_every: float = 0.0,
                 seed: int = 1):
        shape = [repr(jitter), repr(stall), repr(stall_every), str(seed)] if jitter or stall else []
        self.process = subprocess.Popen([sys.executable, __file__, "--proxy", str(target), repr(delay), *shape],
                                        stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()


class LinkShape:
    """When a chunk that arrives now leaves: `delay` ± `jitter` × delay, never before the chunk ahead
    of it, and held to the end of any stall burst it falls in (the bursts are the proxy's, on one clock)."""

    def __init__(self, delay: float, jitter: float = 0.0, stall: float = 0.0, stall_every: float = 0.0,
                 start: float | None = None):
        self.delay, self.jitter, self.stall, self.stall_every = delay, jitter, stall, stall_every
        self.start = time.monotonic() if start is None else start

    def due(self, now: float, chance: random.Random, last: float) -> float:
        at = max(now + self.delay * (1 + chance.uniform(-self.jitter, self.jitter)) if self.jitter else now + self.delay, last)
        if self.stall and self.stall_every:
            into = (at - self.start - self.stall_every / 2) % self.stall_every
            if at - self.start >= self.stall_every / 2 and into < self.stall:
                at += self.stall - into  # the burst holds it; it leaves when the link comes back
        return at


# Seconds before a chunk is due its writer stops sleeping and yields until the moment instead: a thread
# asleep for the whole delay woke 0.1-0.4 ms late on this 2-core machine (timer slack, a busy core), which
# made the link itself slower than the RTT the floor counts (a bare round trip of 20.4-20.6 ms for 20 ms).
# A chunk still never leaves before it is due.
WAKE_EARLY = 0.0005


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux: the kernel stamps each read with the data's arrival


def _stamp_arrivals(source: socket.socket) -> bool:
    """Ask the kernel to stamp what `source` receives (False where it cannot)."""
    try:
        source.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        return True
    except OSError:
        return False


def _arrived(notes) -> float:
    """When the chunk just read reached this machine, on the monotonic clock: the kernel's stamp of its
    last bytes, not when the reader thread woke to read it (up to a few tenths of a millisecond later on
    a busy machine, which the link's delay would otherwise add to itself); now if there is no stamp."""
    now = time.monotonic()
    for level, kind, data in notes:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            ago = time.time() - (seconds + nanoseconds / 1e9)  # the stamp is on the wall clock
            if 0 <= ago < 0.01:  # a wall clock stepped meanwhile: the stamp says nothing
                return now - ago
    return now


def _pump(source: socket.socket, sink: socket.socket, shape: LinkShape, chance: random.Random) -> None:
    """Copy `source` to `sink`, each chunk when `shape` says (a reader and a writer thread, so a chunk
    waiting out its delay never holds back the reading of the next)."""
    due: queue.SimpleQueue = queue.SimpleQueue()

    def write() -> None:
        while True:
            at, data = due.get()
            wait = at - time.monotonic()
            if wait > WAKE_EARLY:
                time.sleep(wait - WAKE_EARLY)
            while time.monotonic() < at:  # the last moments yielding, not asleep: a sleeping thread wakes late
                time.sleep(0)
            try:
                if data is None:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(data)
            except OSError:  # the other end went: so does this direction
                return

    threading.Thread(target=write, daemon=True).start()
    stamped = _stamp_arrivals(source)
    last = 0.0
    while True:
        try:
            data, notes, _, _ = source.recvmsg(65536, socket.CMSG_SPACE(16)) if stamped else (source.recv(65536), (), 0, None)
        except OSError:
            data, notes = b"", ()
        last = shape.due(_arrived(notes), chance, last)
        due.put((last, data or None))
        if not data:
            return


def serve_proxy(target: int, shape: LinkShape, seed: int = 1) -> None:
    """The proxy process: prints its port, then forwards every connection it accepts to `target`."""
    server = socket.create_server(("127.0.0.1", 0))
    print(server.getsockname()[1], flush=True)
    pumps = 0
    while True:
        client, _ = server.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", target))
        except OSError:
            client.close()  # nothing there (yet): the dialler sees a closed connection and dials again
            continue
        for end in (client, upstream):
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for ends in ((client, upstream), (upstream, client)):
            pumps += 1
            threading.Thread(target=_pump, args=(*ends, shape, random.Random(f"{seed}/{pumps}")), daemon=True).start()


def link_rtt(delay: float, rounds: int = 20) -> float:
    """The median round trip of a few bytes through a proxy of `delay` to an echo server: the link as built."""
    echo = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = echo.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while data := conn.recv(64):
            conn.sendall(data)

    threading.Thread(target=answer, daemon=True).start()
    proxy = DelayProxy(echo.getsockname()[1], delay)
    times = []
    with socket.create_connection(("127.0.0.1", proxy.port)) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(rounds):
            start = time.perf_counter()
            conn.sendall(b"x")
            conn.recv(64)
            times.append(time.perf_counter() - start)
    proxy.close()
    echo.close()
    return statistics.median(times)


def timing_for(rtt: float):
    from dicetable.net.table.deadlines import Timing

    return Timing(heartbeat=max(1.0, 4 * rtt), drop_after=max(4.0, 16 * rtt), connect_timeout=30.0)


def run_host(game: str, seed: int, rtt: float, folder: Path, invites) -> None:
    """The host seat, with its greedy bot: in a thread of this process, or (`--apart`) its own process."""
    from dicetable.core import registry
    from dicetable.net.identity import Profile
    from dicetable.net.table.host import HostSession
    from dicetable.net.table.session import bot_chooser

    host = HostSession(Profile.generate("host"), game, 2, {}, timing=timing_for(rtt), transcript=folder / "host.dtt")
    host.chooser = bot_chooser(registry.get(game), "greedy", seed)
    invites.put(host.open())
    host.run()


def play(args, rtt: float) -> None:
    """One game over a link of `rtt` seconds, and its time against the floor."""
    import multiprocessing

    from dicetable.core import registry
    from dicetable.net.identity import Profile
    from dicetable.net.reach.invite import Invite
    from dicetable.net.table.joiner import PeerSession
    from dicetable.net.table.session import bot_chooser

    measured = link_rtt(rtt / 2)
    info = registry.get(args.game)
    folder = Path(tempfile.mkdtemp(prefix="bench-delay-"))
    timing = timing_for(rtt)
    host_args = (args.game, args.seed, rtt, folder)
    if args.apart:
        invites = multiprocessing.get_context("spawn").Queue()
        multiprocessing.get_context("spawn").Process(target=run_host, args=(*host_args, invites), daemon=True).start()
    else:
        invites = queue.SimpleQueue()
        threading.Thread(target=run_host, args=(*host_args, invites), daemon=True).start()
    code = Invite.decode(invites.get(timeout=60))
    proxy = DelayProxy(code.port, rtt / 2)
    invite = Invite("127.0.0.1", proxy.port, code.host_key, code.table_id)
    class Counted(PeerSession):
        """The joiner, counting its loop turns that sent frames: each is one exchange with the host on the
        game's path (what a turn opens for it may follow in a second packet of the same turn)."""

        submitted = 0
        _sent = False

        def to_orderer(self, op, body):
            self._sent = self._sent or op == "submit"
            super().to_orderer(op, body)

        def step(self, timeout):
            self._sent = False
            super().step(timeout)
            self.submitted += self._sent

    peer = Counted(Profile.generate("joiner"), invite, timing=timing, transcript=folder / "joiner.dtt")
    peer.connect()
    peer.chooser = bot_chooser(info, "greedy", args.seed + 1)
    start = time.perf_counter()
    result = peer.run()
    took = time.perf_counter() - start
    proxy.close()
    replica = peer.replica
    chances = len(replica.events)
    joiner_moves = sum(1 for r in replica.log if r.kind == "move" and r.seat == 1)
    rtt_ms = rtt * 1000
    where = "host and joiner in two processes" if args.apart else "host and joiner in one process"
    print(f"{args.game} over a {rtt_ms:g} ms link ({where}; a bare round trip through it: {measured * 1000:.2f} ms): "
          f"{took:.1f} s, {replica.moves} moves, {chances} chance steps ({joiner_moves} of the moves the joiner's); "
          f"result: {result.reason if result else 'none'}")
    print(f"  chance steps x RTT {chances * rtt:.1f} s: ratio {took / (chances * rtt):.2f} x; "
          f"(chance steps + joiner moves) x RTT {(chances + joiner_moves) * rtt:.1f} s: "
          f"ratio {took / ((chances + joiner_moves) * rtt):.2f} x")
    print(f"  exchanges: the joiner sent frames in {peer.submitted} loop turns (the floor counts {chances + joiner_moves}); "
          f"{took / peer.submitted * 1000:.2f} ms each, {took / peer.submitted * 1000 - measured * 1000:.2f} ms over the "
          f"bare round trip (both seats' work and the link's jitter)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, nargs="+", default=[20.0, 160.0])
    parser.add_argument("--game", default="dicebreaker")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--apart", action="store_true",
                        help="the host in its own process (as on two machines), not a thread beside the joiner's")
    parser.add_argument("--proxy", nargs="+", metavar="TARGET DELAY [JITTER STALL EVERY SEED]", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.proxy:
        target, delay, *shape = args.proxy
        jitter, stall, every, seed = (float(shape[0]), float(shape[1]), float(shape[2]), int(shape[3])) if shape else (0.0, 0.0, 0.0, 1)
        try:
            serve_proxy(int(target), LinkShape(float(delay), jitter, stall, every), seed)
        except KeyboardInterrupt:
            pass
        return
    os.environ.setdefault("DICETABLE_HOME", tempfile.mkdtemp(prefix="bench-delay-"))
    for rtt_ms in args.rtt_ms:
        play(args, rtt_ms / 1000)


if __name__ == "__main__":
    main()
