"""Loopback figures of the networked table: fair-roll latency and relay rate, beside raw pyzmq.

    .venv/bin/python scripts/bench_net.py [--rolls 200] [--chats 300] [--peers 2,8] [--profile DIR]

For each table size it runs, in the same run and on the same sockets setup (CurveZMQ, 127.0.0.1):
- raw: a ROUTER sends one message of a reveal's size to every DEALER, each answers at once; the
  time until all answers are in (p50/p99) is the floor any protocol over ZeroMQ pays (taken just
  before the table: rounds taken after it met the table's processes still winding down);
- fair roll: a dice room where every seat's bot rolls in turn; the host times each roll from the
  moment the roll is in its log to the moment every seat's reveal is in and the dice are derived
  (one round trip plus checks and the relays; host and joiner write a loop turn's records, send,
  then fsync them in the background, net/log/transcript.py `sync_soon`);
- relay: every joiner sends signed chat messages as fast as it can; the host checks, logs and relays
  each to every seat; the figure is accepted messages per second.
It also prints the CPU the rolls cost: every process's CPU time from the room's start to its last roll,
summed over the processes and divided by the rolls (on a 2-core machine, with 8 processes, the roll's
latency cannot be below about half of it). `--profile DIR` runs the host and seat 1 of each table
under cProfile during the rolls and writes DIR/host-N.prof and DIR/seat-N.prof (N: seats).
Every seat runs in its own process (the host in this one). Transcripts go to a temporary directory.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# -- raw pyzmq baseline -------------------------------------------------------------------------------
def _raw_dealer(port: int, server_key: bytes, size: int, count: int) -> None:
    import zmq

    context = zmq.Context()
    dealer = context.socket(zmq.DEALER)
    public, secret = zmq.curve_keypair()
    dealer.curve_serverkey, dealer.curve_publickey, dealer.curve_secretkey = server_key, public, secret
    dealer.connect(f"tcp://127.0.0.1:{port}")
    dealer.send(b"ready")
    for _ in range(count):
        message = dealer.recv()
        dealer.send(message[:size])
    dealer.close(0)
    context.term()


def raw_pingpong(dealers: int, size: int, count: int) -> list[float]:
    import zmq

    context = zmq.Context()
    router = context.socket(zmq.ROUTER)
    public, secret = zmq.curve_keypair()
    router.curve_server, router.curve_secretkey, router.curve_publickey = True, secret, public
    port = router.bind_to_random_port("tcp://127.0.0.1")
    spawn = mp.get_context("spawn")
    children = [spawn.Process(target=_raw_dealer, args=(port, public, size, count)) for _ in range(dealers)]
    for child in children:
        child.start()
    peers = [router.recv_multipart()[0] for _ in range(dealers)]
    payload = os.urandom(size)
    times = []
    for _ in range(count):
        start = time.perf_counter()
        for peer in peers:
            router.send_multipart([peer, payload])
        for _ in peers:
            router.recv_multipart()
        times.append(time.perf_counter() - start)
    for child in children:
        child.join()
    router.close(0)
    context.term()
    return times


# -- the table -----------------------------------------------------------------------------------------
def _no_fsync() -> None:
    os.fsync = lambda fd: None  # --no-fsync: what the protocol costs without the disk


def _peer(invite: str, home: str, chats: int, start_chats, no_fsync: bool, cpu=None, profile: str | None = None) -> None:
    os.environ["DICETABLE_HOME"] = home
    if no_fsync:
        _no_fsync()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    from dicetable.core import registry
    from dicetable.net.identity import Profile
    from dicetable.net.table.joiner import PeerSession
    from dicetable.net.table.session import bot_chooser

    session = PeerSession(Profile.generate("bench"), invite)
    session.chooser = bot_chooser(registry.get("diceroom"), "roller", 0)
    session.connect()
    sent, started = 0, None
    while not session.stopped and not session.finished:
        if started is None and session.replica is not None and session.replica.phase == "playing":
            started = time.process_time()  # the rolls' CPU: from the room's start to the last roll
            if profiler is not None:
                profiler.enable()
        session.step(0.01 if chats else 0.05)  # as PeerSession.run steps; the flood looks for its start often
        if chats and start_chats.is_set() and sent < chats:
            for _ in range(min(50, chats - sent)):
                session.chat(f"message {sent}")
                sent += 1
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    if cpu is not None:  # the room is over: its last roll is decided (the host lingers for the last acks)
        cpu.put(time.process_time() - started if started is not None else 0.0)
    session.close()


def table_run(seats: int, rolls: int, chats: int, no_fsync: bool = False,
              profile: str | None = None) -> tuple[list[float], float, int, tuple[float, float, float], float]:
    from dicetable.core.game import Move
    from dicetable.net.table.events import Recorded
    from dicetable.net.table.host import HostSession
    from dicetable.net.identity import Profile
    from dicetable.net.table.session import bot_chooser
    from dicetable.core import registry

    home = tempfile.mkdtemp(prefix="dicetable-bench-")
    os.environ["DICETABLE_HOME"] = home
    latencies: list[float] = []
    chat_times: list[float] = []
    roll_start = {}
    host_cpu: list[float] = []  # the host's CPU time and clock at its first roll, then at the last roll decided
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()

    def on_event(event) -> None:
        if not isinstance(event, Recorded):
            return
        record = event.record
        now = time.perf_counter()
        if record.kind == "move" and record.move.kind == "roll":
            roll_start[0] = now
            if not host_cpu:
                host_cpu.extend((time.process_time(), now))
                if profiler is not None:
                    profiler.enable()
        elif record.event is not None and 0 in roll_start:
            latencies.append(now - roll_start.pop(0))
            host_cpu[2:] = [time.process_time(), now]
        elif record.kind == "chat":
            chat_times.append(now)

    host = HostSession(Profile.generate("host"), "diceroom", seats, {"expr": "3d6", "rolls": rolls}, on_event=on_event)
    host.chooser = bot_chooser(registry.get("diceroom"), "roller", 0)
    invite = host.open()
    spawn = mp.get_context("spawn")
    start_chats = spawn.Event()
    cpu = spawn.Queue()
    children = [spawn.Process(target=_peer, args=(invite, tempfile.mkdtemp(dir=home), 0, start_chats, no_fsync, cpu,
                                                  f"{profile}/seat-{seats}.prof" if profile and n == 0 else None))
                for n in range(seats - 1)]
    for child in children:
        child.start()
    host.run()  # the room closes itself after `rolls` rolls
    total = host_cpu[2] - host_cpu[0] if len(host_cpu) == 4 else 0.0
    wall = host_cpu[3] - host_cpu[1] if len(host_cpu) == 4 else 0.0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(f"{profile}/host-{seats}.prof")
    for child in children:
        child.join(30)
    joiners = [cpu.get(timeout=5) for _ in children]
    total += sum(joiners)

    # Relay rate: a room that stays open (rolls=0) while joiners flood it with signed chats.
    chat_times.clear()
    flood = HostSession(Profile.generate("host"), "diceroom", seats, {"expr": "3d6", "rolls": 0}, on_event=on_event)
    invite = flood.open()
    start_chats = spawn.Event()
    children = [spawn.Process(target=_peer, args=(invite, tempfile.mkdtemp(dir=home), chats, start_chats, no_fsync)) for _ in range(seats - 1)]
    for child in children:
        child.start()
    while flood.replica.phase != "playing":
        flood.step(0.01)
    start_chats.set()  # the host's seat holds the turn (no bot): the room does nothing but relay
    expected = chats * (seats - 1)
    deadline = time.monotonic() + 60
    while len(chat_times) < expected and time.monotonic() < deadline:
        flood.step(0.01)
    flood.move(Move("close"))
    flood.run()
    for child in children:
        child.join(30)
    span = chat_times[-1] - chat_times[0] if len(chat_times) > 1 else float("nan")
    rate = (len(chat_times) - 1) / span if span else float("nan")
    per = max(1, len(latencies) - 1)  # the intervals between the first roll and the last decision
    return latencies, rate, len(chat_times), (total / per, (total - sum(joiners)) / per, sum(joiners) / len(joiners) / per), wall / per


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=200)
    parser.add_argument("--chats", type=int, default=300, help="chat messages per joiner in the relay run")
    parser.add_argument("--peers", default="2,8", help="table sizes, comma-separated")
    parser.add_argument("--no-fsync", action="store_true", help="skip the transcripts' fsync (to see its share)")
    parser.add_argument("--profile", metavar="DIR", help="cProfile the host and seat 1 during the rolls, into DIR")
    args = parser.parse_args()
    if args.no_fsync:
        _no_fsync()
    from dicetable.net.log import wire

    # The raw messages are as big as the packet that carries a reveal to the host.
    from dicetable.net.reach.transport import pack

    sample = wire.make_frame(None, bytes(16), 7, 12345, "reveal", wire.reveal_body(1234, bytes(32)),
                             wire.Link(12345, bytes(32)), sign=False)
    size = len(pack("submit", {"frame": sample}))
    disk = "transcripts without fsync" if args.no_fsync else "transcripts fsync'ed per batch (in the background, after the sends)"
    print(f"loopback, CurveZMQ, message size {size} bytes; every seat in its own process; {disk}")
    for seats in [int(n) for n in args.peers.split(",")]:
        raw = raw_pingpong(seats - 1, size, args.rolls)
        rolls, rate, relayed, cpu, wall = table_run(seats, args.rolls, args.chats, args.no_fsync, args.profile)
        raw50, raw99 = percentile(raw, 50) * 1e3, percentile(raw, 99) * 1e3
        roll50, roll99 = percentile(rolls, 50) * 1e3, percentile(rolls, 99) * 1e3
        print(f"{seats} peers: raw ping-pong to all   p50 {raw50:7.3f} ms  p99 {raw99:7.3f} ms  ({len(raw)} rounds)")
        print(f"{seats} peers: fair roll               p50 {roll50:7.3f} ms  p99 {roll99:7.3f} ms  ({len(rolls)} rolls)")
        print(f"{seats} peers: ratio fair/raw          p50 {roll50 / raw50:7.1f} x   p99 {roll99 / raw99:7.1f} x")
        print(f"{seats} peers: CPU per roll          {cpu[0] * 1e3:7.2f} ms  (all {seats} processes, from the first roll to the "
              f"last: the host {cpu[1] * 1e3:.2f} ms, each joiner {cpu[2] * 1e3:.2f} ms; {wall * 1e3:.1f} ms of wall time per roll)")
        print(f"{seats} peers: host relays {rate:8.0f} messages/s "
              f"({relayed} signed chats checked, logged, sent to {seats - 1} joiners each)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
