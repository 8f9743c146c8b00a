"""What one relay process holds and carries on this machine, beside a direct host in the same run.

    .venv/bin/python scripts/bench_relay.py [--idle 1000] [--busy 100] [--rounds 200]

- tables held: `--idle` hosts each serve a table at the relay (a real RelayHostSocket, proving its
  key) and stay connected; the relay's resident memory is read before and after;
- busy tables: `--busy` tables, each a host and a joiner through the relay, exchange packets of a
  signed frame's size (200 bytes) as fast as they answer each other; the figure is packets carried
  per second by the relay (joiner -> host and back count two);
- added latency: one table's round trip joiner -> relay -> host -> relay -> joiner against the same
  round trip to a host's own socket (CurveZMQ, 127.0.0.1), p50 and p99 of `--rounds` each, measured
  while the busy tables run and again while they do not.
The relay runs as `dicetable relay` in its own process; hosts and joiners share this one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = b"x" * 200


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_relay(home: Path) -> tuple[subprocess.Popen, str]:
    command = Path(sys.executable).with_name("dicetable")
    process = subprocess.Popen([str(command), "relay", "--port", "0"], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "DICETABLE_HOME": str(home)})
    line = process.stdout.readline()
    if not line.startswith("relay: "):
        raise SystemExit(f"the relay did not start: {line!r}")
    return process, line.split()[1]


class Table:
    """A host through the relay and one joiner dialled to its table; `ping()` times one round trip."""

    def __init__(self, relay, profile):
        import secrets

        from dicetable.net.reach.invite import Invite
        from dicetable.net.reach.relay_link import RelayHostSocket
        from dicetable.net.reach.transport import PeerSocket, pack

        self.table = secrets.token_bytes(16)
        self.host = RelayHostSocket(profile, relay, self.table, timeout=10.0)
        invite = Invite(relay.address, relay.port, relay.key, self.table, owner=profile.public_key)
        self.joiner = PeerSocket(invite, greeting=pack("dial", {"table": self.table}))
        self.joiner.connect(10.0)
        self.peer = None

    def echo(self, timeout: float) -> bool:
        """The host answers one packet, if one comes within `timeout`."""
        packet = self.host.recv(timeout)
        if packet is None:
            return False
        self.peer = packet[0]
        self.host.send(packet[0], "pong", {"data": PAYLOAD})
        return True

    def close(self) -> None:
        self.joiner.close()
        self.host.close()


class Direct:
    """The same round trip to a host's own CurveZMQ socket."""

    def __init__(self):
        from dicetable.net.reach.invite import Invite
        from dicetable.net.reach.transport import HostSocket, PeerSocket, curve_keypair

        self.host = HostSocket(curve_keypair()[1], "127.0.0.1", 0)
        self.joiner = PeerSocket(Invite("127.0.0.1", self.host.port, self.host.public_key, bytes(16)))
        self.joiner.connect(10.0)

    def echo(self, timeout: float) -> bool:
        from dicetable.net.reach.transport import pack

        packet = self.host.recv(timeout)
        if packet is None:
            return False
        self.host.socket.send_multipart([packet[0], pack("pong", {"data": PAYLOAD})])
        return True

    def close(self) -> None:
        self.joiner.close()
        self.host.close()


def round_trips(table, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        table.joiner.send("ping", {"data": PAYLOAD})
        while not table.echo(1.0):
            table.joiner.send("ping", {"data": PAYLOAD})  # lost (e.g. the host was counted away): again
        while table.joiner.recv(1.0) is None:
            pass
        times.append((time.perf_counter() - start) * 1000)
    return times


def busy_load(tables: list, stop: threading.Event, counter: list[int]) -> None:
    """Every busy table keeps one packet in flight each way, answered as soon as it arrives."""
    for table in tables:
        table.joiner.send("ping", {"data": PAYLOAD})
    while not stop.is_set():
        for table in tables:
            if table.echo(0):
                counter[0] += 1
            if table.joiner.recv(0) is not None:
                counter[0] += 1
                table.joiner.send("ping", {"data": PAYLOAD})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--busy", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0, help="how long the busy tables run")
    args = parser.parse_args()
    import zmq

    from dicetable.net.identity import Profile
    from dicetable.net.reach.relay import RelayAddress

    zmq.Context.instance().set(zmq.MAX_SOCKETS, 16 * (args.idle + 2 * args.busy) + 64)  # each end: a socket and a monitor pair

    home = Path(tempfile.mkdtemp(prefix="bench-relay-"))
    relay_process, line = start_relay(home)
    relay = RelayAddress.decode(line)
    profile = Profile.generate("bench")
    try:
        base = rss_mb(relay_process.pid)
        from dicetable.net.reach.relay_link import RelayHostSocket
        import secrets

        from concurrent.futures import ThreadPoolExecutor

        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:  # each host waits ~0.1 s on its handshake: eight at a time
            idle = list(pool.map(lambda _: RelayHostSocket(profile, relay, secrets.token_bytes(16), timeout=60.0),
                                 range(args.idle)))
        held = time.perf_counter() - start
        time.sleep(1.0)
        per_table = (rss_mb(relay_process.pid) - base) * 1024 / max(args.idle, 1)
        print(f"tables held: {args.idle} idle tables served in {held:.1f} s; relay memory "
              f"{rss_mb(relay_process.pid):.0f} MB ({per_table:.1f} KB per table with its connection)")
        direct = Direct()
        one = Table(relay, profile)
        quiet_direct, quiet_relay = round_trips(direct, args.rounds), round_trips(one, args.rounds)

        with ThreadPoolExecutor(8) as pool:
            busy = list(pool.map(lambda _: Table(relay, profile), range(args.busy)))
        stop, counter = threading.Event(), [0]
        worker = threading.Thread(target=busy_load, args=(busy, stop, counter), daemon=True)
        worker.start()
        time.sleep(0.5)
        counted, start = counter[0], time.perf_counter()
        loaded_relay = round_trips(one, args.rounds)
        loaded_direct = round_trips(direct, args.rounds)
        time.sleep(max(0.0, args.seconds - (time.perf_counter() - start)))
        rate = (counter[0] - counted) / (time.perf_counter() - start)
        stop.set()
        worker.join(5)
        print(f"busy tables: {args.busy} through the relay at once; {rate:,.0f} packets/s carried "
              f"(one Python thread drives all {2 * args.busy} ends, so this is a floor)")
        for name, direct_times, relay_times in (("idle", quiet_direct, quiet_relay), ("busy", loaded_direct, loaded_relay)):
            d50, d99 = percentile(direct_times, 50), percentile(direct_times, 99)
            r50, r99 = percentile(relay_times, 50), percentile(relay_times, 99)
            print(f"round trip ({name} relay): direct p50 {d50:.3f} ms p99 {d99:.3f} ms; through the relay "
                  f"p50 {r50:.3f} ms p99 {r99:.3f} ms; added p50 {r50 - d50:+.3f} ms p99 {r99 - d99:+.3f} ms "
                  f"(ratio p50 {r50 / d50:.2f} x)")
        for socket in [*idle]:
            socket.close()
        for table in [*busy, one]:
            table.close()
        direct.close()
    finally:
        relay_process.terminate()
        relay_process.wait(10)


if __name__ == "__main__":
    main()
