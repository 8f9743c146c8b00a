"""What one relay process holds and carries, beside a minimal pyzmq forwarder in the same run as the floor.

    .venv/bin/python scripts/bench_relay.py [--idle 10000] [--lived 3600] [--hold 60] [--keepalive 0]
                                            [--flood 10,100,300,1000] [--busy 100,1000] [--rate 10] [--procs 2] [--seconds 3]

The relay runs as `dicetable relay` in its own process, pinned to one core (`taskset -c
--relay-core`); the floor forwarder (scripts/relay_load.py: a CurveZMQ ROUTER sending every packet
on, checking nothing) is pinned likewise. The load is made by `--procs` processes pinned to the
other core (`--load-core`), each holding its share of the tables on plain CurveZMQ DEALERs and
sending packets built before the run, so the middle, not the load, is what runs out.

- tables held: `--idle` hosts each serve a table at the relay (proving their key) and stay
  connected, sending it nothing more, as a host does (net/reach/relay_link.py; `--keepalive 1`: a
  keepalive a second, the old design, for the figures before); the relay's resident memory before,
  once they are served, and once settled: every connection has carried what an idle host sends in
  `--lived` seconds (sent at once: libzmq's inbound pipe of a connection writes its 256-message chunks
  in turn and keeps two, both written through after 512 packets, which is where a keepalive a second
  took an idle table in some nine minutes) and `--hold` real seconds have passed with every
  connection's ZMTP heartbeats running; split into libzmq's I/O thread heap and the rest. Then the
  forwarder with as many connections, each carrying as many packets, likewise. Per table in KB, and
  scaled to 10,000 tables (the relay's memory with none, plus 10,000 times a table's);
- the knee: `--flood` stages of that many tables, each a host and a joiner ping-ponging 200-byte
  packets as fast as they answer each other (`--window` in flight per table), through the forwarder and then the relay; packets
  carried per second (each hop joiner -> host and back counts one) and the middle's CPU (of one
  core). The knee is the stage where the packets per second stop rising;
- added latency: `--busy` stages of tables each doing `--rate` round trips a second (a lively game),
  timed joiner to joiner: directly to a host's own ROUTER, through the forwarder, through the relay;
  p50 and p99, and what the relay adds at p99 over the direct round trip.
The machine may be shared: the middle's CPU share says how much of its core it had, and the load's
(all its processes, of their one core) whether the load, not the middle, ran out: a middle well
under its core while its load is near all of its own is the load's ceiling, not the middle's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOAD = Path(__file__).resolve().with_name("relay_load.py")
TICKS = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime, every thread (libzmq's I/O thread too)


def pinned(core: int, *argv: str, **options) -> subprocess.Popen:
    return subprocess.Popen(["taskset", "-c", str(core), *argv], stdout=subprocess.PIPE, text=True, **options)


def start_relay(home: Path, core: int) -> tuple[subprocess.Popen, str]:
    command = Path(sys.executable).with_name("dicetable")
    process = pinned(core, str(command), "relay", "--port", "0", env={**os.environ, "DICETABLE_HOME": str(home)})
    line = process.stdout.readline()
    if not line.startswith("relay: "):
        raise SystemExit(f"the relay did not start: {line!r}")
    return process, line.split()[1]


def start_forwarder(core: int) -> tuple[subprocess.Popen, str, str]:
    process = pinned(core, sys.executable, str(LOAD), "forwarder")
    _, port, key = process.stdout.readline().split()
    return process, f"tcp://127.0.0.1:{port}", key


class Load:
    """`procs` load processes sharing `count` tables of one mode; `run()` returns their packets and times."""

    made = 0  # tables made so far in this run: each gets source addresses of its own (relay_load.source_address),
    # so no stage's tables count against the per-source cap with an earlier stage's, still held at the relay

    def __init__(self, core: int, procs: int, count: int, spec: dict):
        shares = [count // procs + (i < count % procs) for i in range(procs)]
        firsts = [Load.made + sum(shares[:i]) for i in range(procs)]
        Load.made += count
        self.workers = [pinned(core, sys.executable, str(LOAD), "worker", json.dumps({**spec, "count": share, "first": first}),
                               stdin=subprocess.PIPE) for share, first in zip(shares, firsts) if share]
        for worker in self.workers:
            line = worker.stdout.readline()
            if line.strip() != "ready":
                self.close()
                raise SystemExit(f"a load process did not start: {line!r}")

    def settle(self, pings: int, rate: float) -> None:
        for worker in self.workers:
            worker.stdin.write(f"settle {pings} {rate / len(self.workers)}\n")
            worker.stdin.flush()
        for worker in self.workers:
            if worker.stdout.readline().strip() != "settled":
                raise SystemExit("a load process did not settle")

    def go(self) -> None:
        for worker in self.workers:
            worker.stdin.write("go\n")
            worker.stdin.flush()

    def results(self) -> tuple[int, list[float]]:
        packets, times = 0, []
        for worker in self.workers:
            result = json.loads(worker.stdout.readline())
            packets += result["packets"]
            times += result["times"]
        return packets, times

    def close(self) -> None:
        for worker in self.workers:
            try:
                worker.stdin.write("stop\n")
                worker.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
        for worker in self.workers:
            try:
                worker.wait(30)
            except subprocess.TimeoutExpired:
                worker.kill()


def thread_heaps_mb(pid: int) -> float:
    """Resident MB in glibc's per-thread heaps (64 MiB-aligned anonymous mappings): in the relay and the
    forwarder these are libzmq's I/O thread's, where every connection's pipes, buffers and CurveZMQ state
    live; the rest of the process (Python's objects, the main heap, the libraries) is everything else."""
    total, counted = 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and ":" in head[3]:  # a mapping's first line: start-end perms offset dev inode [name]
            counted = len(head) == 5 and int(head[0].split("-")[0], 16) % (64 << 20) == 0
        elif counted and head[0] == "Rss:":
            total += int(head[1])
    return total / 1024


def hold_idle(args, middle: subprocess.Popen, spec: dict, name: str) -> list[float]:
    """`args.idle` idle tables at `middle`: its memory once they are served, and once settled (every host
    has sent what an idle host sends in `args.lived` seconds, and `args.hold` seconds have passed).
    Returns the MB and the KB per table at each point."""
    packets = int(args.lived / args.keepalive) if args.keepalive else 0
    def memory() -> str:
        rss, heaps = rss_mb(middle.pid), thread_heaps_mb(middle.pid)
        per_table = (rss - base) * 1024 / args.idle
        held_mb.append(rss)
        held_kb.append(per_table)
        return (f"{rss:.0f} MB ({per_table:.1f} KB per table: {(heaps - base_heaps) * 1024 / args.idle:.1f} "
                f"in libzmq's I/O thread heap, {(rss - heaps - base + base_heaps) * 1024 / args.idle:.1f} in the rest; "
                f"{base + per_table * 10_000 / 1024:.0f} MB for 10,000 tables)")

    held_mb: list[float] = []
    held_kb: list[float] = []
    base, base_heaps, start = rss_mb(middle.pid), thread_heaps_mb(middle.pid), time.monotonic()
    held = Load(args.load_core, args.procs, args.idle, spec)
    try:
        took = time.monotonic() - start
        time.sleep(1.0)
        fresh, cpu = memory(), cpu_seconds(middle.pid)
        time.sleep(2.0)
        idle_cpu = (cpu_seconds(middle.pid) - cpu) / 2.0
        print(f"{name}: {args.idle:,} idle tables held in {took:.0f} s, from {base:.0f} MB to {fresh}; holding them "
              f"costs {idle_cpu:.0%} of a core (ZMTP heartbeats{', and keepalives' if args.keepalive else ''})")
        start = time.monotonic()
        held.settle(packets, args.settle_rate)  # what each host sends in `lived` seconds, sent now
        time.sleep(max(0.0, args.hold - (time.monotonic() - start)))  # and real time, heartbeats running
        print(f"  {name} settled ({packets} packets from every host, as in {args.lived:g} s idle, and "
              f"{time.monotonic() - start:.0f} s held): {memory()}")
    finally:
        held.close()
    return held_mb, held_kb


def run_stage(args, middle: subprocess.Popen | None, spec: dict, count: int, rate: float) -> dict:
    """One stage: `count` tables of `spec`'s mode for `args.seconds` after a warm-up; packets/s, times, CPU."""
    load = Load(args.load_core, args.procs, count, {**spec, "rate": rate, "seconds": args.seconds, "warmup": args.warmup,
                                                    "window": args.window})
    try:
        load.go()
        time.sleep(args.warmup)
        load_cpu = lambda: sum(cpu_seconds(worker.pid) for worker in load.workers)  # noqa: E731
        cpu_start, load_start, wall_start = (cpu_seconds(middle.pid) if middle else 0.0), load_cpu(), time.monotonic()
        time.sleep(args.seconds)
        wall = time.monotonic() - wall_start
        cpu = (cpu_seconds(middle.pid) - cpu_start) / wall if middle else float("nan")
        load_share = (load_cpu() - load_start) / wall
        packets, times = load.results()
    finally:
        load.close()
    return {"rate": packets / args.seconds, "times": times, "cpu": cpu, "load": load_share}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=10_000, help="idle tables the relay holds")
    parser.add_argument("--flood", default="10,100,300,1000", help="table counts of the knee's stages")
    parser.add_argument("--lived", type=float, default=3600.0,
                        help="seconds of idle life each table's connection has carried the packets of when settled")
    parser.add_argument("--hold", type=float, default=60.0, help="real seconds the idle tables are held before the settled figure")
    parser.add_argument("--keepalive", type=float, default=0.0,
                        help="seconds between an idle host's keepalives (0: none, as hosts do now; 1: the old design)")
    parser.add_argument("--settle-rate", type=float, default=20_000.0, help="keepalives a second while settling, in all")
    parser.add_argument("--busy", default="100,1000", help="table counts of the latency stages")
    parser.add_argument("--rate", type=float, default=10.0, help="round trips a second per table in the latency stages")
    parser.add_argument("--window", type=int, default=8, help="pings in flight per flooding table")
    parser.add_argument("--procs", type=int, default=2, help="load processes")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each stage is counted")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds each stage runs before it is counted")
    parser.add_argument("--relay-core", type=int, default=0)
    parser.add_argument("--load-core", type=int, default=1)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-relay-"))
    relay, line = start_relay(home, args.relay_core)
    forwarder, forward_endpoint, forward_key = start_forwarder(args.relay_core)
    from dicetable.net.reach.relay_address import RelayAddress

    address = RelayAddress.decode(line)
    via_relay = {"mode": "relay", "endpoint": address.endpoint, "key": address.key.hex()}
    via_forwarder = {"mode": "forward", "endpoint": forward_endpoint, "key": forward_key}
    print(f"relay pinned to core {args.relay_core}, {args.procs} load processes to core {args.load_core}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared with whatever else runs)")
    try:
        summary = []
        if args.idle:
            idle = {"keepalive": args.keepalive}
            held, kb = hold_idle(args, relay, {**via_relay, **idle, "mode": "idle"}, "relay")
            floor_held, floor_kb = hold_idle(args, forwarder, {**via_forwarder, **idle, "mode": "forward-idle"}, "forwarder")
            summary.append(f"{args.idle:,} idle tables ({'a keepalive every %g s' % args.keepalive if args.keepalive else 'no keepalive'}, "
                           f"settled as after {args.lived:g} s): relay " + " / ".join(f"{mb:.0f}" for mb in held)
                           + " MB (served / settled), " + " / ".join(f"{k:.1f}" for k in kb) + " KB per table; forwarder "
                           + " / ".join(f"{mb:.0f}" for mb in floor_held) + " MB, " + " / ".join(f"{k:.1f}" for k in floor_kb)
                           + f" KB per table; relay settled at 10,000 tables: {held[0] - kb[0] * args.idle / 1024 + kb[-1] * 10_000 / 1024:.0f} MB")
        knee, efficiency = {}, {}  # tables -> (forwarder, relay): packets/s, and packets per CPU-second of the middle
        for count in [int(n) for n in args.flood.split(",") if n]:
            floor = run_stage(args, forwarder, via_forwarder, count, 0.0)
            ours = run_stage(args, relay, via_relay, count, 0.0)
            knee[count] = (floor["rate"], ours["rate"])
            efficiency[count] = (floor["rate"] / max(floor["cpu"], 1e-9), ours["rate"] / max(ours["cpu"], 1e-9))
            print(f"flood {count:>5} tables: forwarder {floor['rate']:>8,.0f} packets/s ({floor['cpu']:.0%} of a core, its load "
                  f"{floor['load']:.0%}); relay {ours['rate']:>8,.0f} packets/s ({ours['cpu']:.0%} of a core, its load "
                  f"{ours['load']:.0%}); relay/forwarder "
                  f"{ours['rate'] / floor['rate']:.0%}; per CPU-second {ours['rate'] / max(ours['cpu'], 1e-9):,.0f} "
                  f"vs {floor['rate'] / max(floor['cpu'], 1e-9):,.0f}")
        if knee:
            best = max(knee, key=lambda n: knee[n][1])
            summary.append(f"knee {knee[best][1]:,.0f} packets/s at {best} tables, "
                           f"{knee[best][1] / max(f for f, _ in knee.values()):.0%} of the forwarder's best (whose load core may run "
                           f"out first: per CPU-second of the middle at {best} tables, relay {efficiency[best][1]:,.0f} vs "
                           f"forwarder {efficiency[best][0]:,.0f}, {efficiency[best][1] / efficiency[best][0]:.0%})")
            print(f"knee: the relay carries at most {knee[best][1]:,.0f} packets/s (at {best} flooding tables); "
                  f"the forwarder at most {max(f for f, _ in knee.values()):,.0f}: "
                  f"{knee[best][1] / max(f for f, _ in knee.values()):.0%}")
        secret = os.urandom(32).hex()
        for count in [int(n) for n in args.busy.split(",") if n]:
            figures = {}
            for name, spec, middle in (("direct", {"mode": "direct", "endpoint": "", "key": "", "secret": secret}, None),
                                       ("forwarder", via_forwarder, forwarder), ("relay", via_relay, relay)):
                figures[name] = run_stage(args, middle, spec, count, args.rate)
            d99 = percentile(figures["direct"]["times"], 99)
            summary.append(f"added p99 at {count:,} busy tables: relay {percentile(figures['relay']['times'], 99) - d99:+.2f} ms, "
                           f"forwarder {percentile(figures['forwarder']['times'], 99) - d99:+.2f} ms")
            shown = "; ".join(f"{name} p50 {percentile(f['times'], 50):.2f} p99 {percentile(f['times'], 99):.2f} ms"
                              for name, f in figures.items())
            print(f"busy {count:>5} tables at {args.rate:g} round trips/s each ({figures['relay']['rate']:,.0f} packets/s, "
                  f"relay {figures['relay']['cpu']:.0%} of a core, its load {figures['relay']['load']:.0%}): {shown}; added p99: relay "
                  f"{percentile(figures['relay']['times'], 99) - d99:+.2f} ms, forwarder "
                  f"{percentile(figures['forwarder']['times'], 99) - d99:+.2f} ms")
        print("summary: " + "; ".join(summary))
    finally:
        forwarder.kill()
        relay.terminate()
        relay.wait(10)
        forwarder.wait(10)


if __name__ == "__main__":
    main()
