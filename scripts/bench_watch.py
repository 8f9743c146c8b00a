"""Does a crowd of watchers slow a table? The seats' fair-roll time with and without watchers (issue 35).

    .venv/bin/python scripts/bench_watch.py [--rolls 200] [--watchers 100] [--rounds 4]

A two-seat dice room (the host in this process, the joiner in its own) rolls `--rolls` times; the host
times each roll from the roll in its log to every seat's reveal in and the dice derived (as
scripts/bench_net.py does). After a warm-up room, each round runs the room once without watchers and once with `--watchers`
watcher connections (net/table/watching.py) made in one more process: each proves its own key with a
watch hello, takes the entries the host sends it and pings what it holds, as a real watcher does, but
does not re-check the frames (one of them does: a full WatchSession, whose copy's verdict is printed).
Rounds alternate which run goes first, since the machine's load drifts. That
process runs at the lowest CPU priority (nice 19): on a real table watchers are other machines, and
here the point is what the host's fan-out costs the seats, not the watchers' own checking competing for
this machine's cores. The figure is the p50 ratio with / without, per round and over all rounds.
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
sys.path.insert(0, str(ROOT / "scripts"))

from bench_net import _peer, percentile  # noqa: E402  (the same joiner and percentile as the network bench)


def _watchers(invite: str, count: int, home: str, ready, done) -> None:
    """`count` watcher connections in this process (one checking its copy fully), until `done` is set."""
    os.nice(19)
    os.environ["DICETABLE_HOME"] = home
    import zmq

    from dicetable.net.identity import Profile
    from dicetable.net.reach.invite import Invite
    from dicetable.net.reach.transport import PeerSocket, unpack
    from dicetable.net.table.deadlines import Timing
    from dicetable.net.table.session import SessionError
    from dicetable.net.table.watcher import WatchSession
    from dicetable.net.table.watching import watch_bytes
    from dicetable.net.table import host_packets

    parsed = Invite.decode(invite)
    full = WatchSession(Profile.generate("checker"), parsed, transcript=Path(home) / "watcher.dtt", timing=Timing())
    full.connect()
    light = []
    for i in range(count - 1):
        profile = Profile.generate(f"w{i}")
        socket = PeerSocket(parsed, profile.curve_secret)
        socket.connect(10.0)
        socket.send("ping", {"next": 0})
        light.append([socket, profile, host_packets.HostLink(parsed.table_id, host_packets.host_box_public(parsed)), 0])
    poller = zmq.Poller()
    for entry in light:
        poller.register(entry[0].socket, zmq.POLLIN)
    by_socket = {entry[0].socket: entry for entry in light}
    welcomed = set()
    last_ping = time.monotonic()
    while not done.is_set():
        if full.socket is not None:
            try:
                full.step(0)
            except SessionError as error:  # e.g. dropped: this process ran too seldom (nice 19 on a busy machine)
                print(f"  the checking watcher stopped: {error}", flush=True)
        for sock, _ in poller.poll(10):
            entry = by_socket[sock]
            data = sock.recv()
            op, body = unpack(data)
            if op == "who":
                socket, profile, link, _ = entry
                box = link.box_for(body["nonce"], profile.public_key)
                proof = profile.sign(watch_bytes(parsed.table_id, parsed.host_key, body["nonce"], profile.public_key, box))
                socket.send("watch", {"key": profile.public_key, "nonce": body["nonce"], "proof": proof, "box": box,
                                      "next": entry[3], "name": profile.name})
            elif op == "tagged":
                opened = entry[2].open(body)  # the host's tag checked, as a watcher does
                if opened and opened[0] == "welcome":
                    welcomed.add(id(entry))
                elif opened and opened[0] == "entries":
                    entry[3] = max(entry[3], opened[1]["start"] + len(opened[1]["frames"]))
        if len(welcomed) == len(light) and full.welcomed:
            ready.set()
        now = time.monotonic()
        if now - last_ping >= 0.5:
            last_ping = now
            for socket, _, _, holds in light:
                socket.send("ping", {"next": holds})
    for socket, *_ in light:
        socket.close()
    full.close()
    from dicetable.net.log.verify import verify

    if (Path(home) / "watcher.dtt").exists():
        print(f"  the checking watcher's copy: {verify(Path(home) / 'watcher.dtt').line()}", flush=True)


def room(rolls: int, watchers: int, home: str) -> tuple[list[float], int]:
    """One dice room of `rolls` rolls with `watchers` watchers: the roll times, and watchers the host held."""
    from dicetable.core import registry
    from dicetable.net.identity import Profile
    from dicetable.net.table.events import Recorded
    from dicetable.net.table.host import HostSession
    from dicetable.net.table.session import bot_chooser

    latencies: list[float] = []
    roll_start: dict[int, float] = {}

    def on_event(event) -> None:
        if not isinstance(event, Recorded):
            return
        record, now = event.record, time.perf_counter()
        if record.kind == "move" and record.move.kind == "roll":
            roll_start[0] = now
        elif record.event is not None and 0 in roll_start:
            latencies.append(now - roll_start.pop(0))

    host = HostSession(Profile.generate("host"), "diceroom", 2, {"expr": "3d6", "rolls": rolls}, on_event=on_event)
    host.chooser = bot_chooser(registry.get("diceroom"), "roller", 0)
    invite = host.open()
    spawn = mp.get_context("spawn")
    ready, done = spawn.Event(), spawn.Event()
    crowd = None
    if watchers:
        crowd = spawn.Process(target=_watchers, args=(invite, watchers, tempfile.mkdtemp(dir=home), ready, done))
        crowd.start()
        deadline = time.monotonic() + 120
        while not ready.is_set() and time.monotonic() < deadline:  # every watcher in before the first roll
            host.step(0.01)
        if not ready.is_set():
            raise SystemExit("the watchers did not all get in within 120 s")
    held = len(host.watchers)
    joiner = spawn.Process(target=_peer, args=(invite, tempfile.mkdtemp(dir=home), 0, None, False))  # no chats
    joiner.start()
    host.run()  # the room closes itself after `rolls` rolls
    joiner.join(30)
    done.set()
    if crowd is not None:
        crowd.join(30)
    return latencies, held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=200)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="dicetable-bench-watch-")
    os.environ["DICETABLE_HOME"] = home
    sys.stdout.reconfigure(line_buffering=True)
    print(f"loopback, CurveZMQ; 2-seat dice room, {args.rolls} rolls per run; watchers at nice 19 in one process")
    room(20, 0, home)  # warm-up, not counted: the first room in a process pays for imports and sockets
    alone_all, watched_all = [], []
    for number in range(1, args.rounds + 1):
        if number % 2:  # alternate which goes first: the machine's load drifts
            alone, _ = room(args.rolls, 0, home)
            watched, held = room(args.rolls, args.watchers, home)
        else:
            watched, held = room(args.rolls, args.watchers, home)
            alone, _ = room(args.rolls, 0, home)
        alone_all += alone
        watched_all += watched
        a50, w50 = percentile(alone, 50) * 1e3, percentile(watched, 50) * 1e3
        print(f"round {number}: roll p50 {a50:7.3f} ms alone, {w50:7.3f} ms with {held} watchers: "
              f"ratio {w50 / a50:5.2f}  (p99 {percentile(alone, 99) * 1e3:.3f} / {percentile(watched, 99) * 1e3:.3f} ms)")
        sys.stdout.flush()
    a50, w50 = percentile(alone_all, 50) * 1e3, percentile(watched_all, 50) * 1e3
    print(f"all rounds: roll p50 {a50:7.3f} ms alone, {w50:7.3f} ms with {args.watchers} watchers: ratio {w50 / a50:5.2f} "
          f"({len(alone_all)} / {len(watched_all)} rolls)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
