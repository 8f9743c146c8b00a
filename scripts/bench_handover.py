"""What a table pays when its host seat is gone for good (issue 16, net/table/succession.py), against the host
seat coming back, in the same run.

    .venv/bin/python scripts/bench_handover.py [--rounds 5] [--grace 2]

Each round, on 127.0.0.1, a relay and a 2-seat TRICE table (greedy bots). The host seat's session
stops mid-game, then:
- hand-over: after the grace (and the relay's HOST_AWAY, shortened here to 1 s) the joiner takes over
  ordering; measured from the moment the clocks allow it to the first frame its own log gains (its
  move, or its claim against the absent host seat);
- baseline: the host seat comes back at once (`resume`); measured from the resume to the first frame
  the joiner's log gains.
Prints the medians in milliseconds and the hand-over's ratio to the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from dicetable.core import registry
from dicetable.net.table import succession
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.reach.relay import RelayServer
from dicetable.net.table.session import bot_chooser
from dicetable.net.reach.transport import curve_keypair

HOST_AWAY = 1.0
TRICE = registry.get("trice")


def wait(condition, timeout: float = 30.0) -> float:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return time.monotonic()
        time.sleep(0.002)
    raise SystemExit("bench_handover: the table did not go on in time")


def table(relay_line: str, folder: Path, timing: Timing):
    host = HostSession(Profile.generate("ann"), "trice", 2, {}, timing=timing, relay=relay_line,
                       transcript=folder / "ann.dtt", chooser=bot_chooser(TRICE, "greedy", 1), think=0.02)
    invite = host.open()
    peer = PeerSession(Profile.generate("bob"), invite, timing=timing, transcript=folder / "bob.dtt",
                       chooser=bot_chooser(TRICE, "greedy", 2), think=0.02)
    host_thread = threading.Thread(target=host.run, daemon=True)
    host_thread.start()
    peer.connect()
    threading.Thread(target=peer.run, daemon=True).start()
    wait(lambda: len(host.replica.log) > 8)
    host.stop()
    host_thread.join(5)
    return host, peer


def one_round(relay_line: str, folder: Path, timing: Timing, hand_over: bool) -> float:
    host, peer = table(relay_line, folder, timing)
    length = len(peer.replica.log)
    try:
        if hand_over:
            gone = wait(lambda: peer.orderer_presence.away_since is not None)
            allowed = peer.orderer_presence.away_since + max(timing.grace, HOST_AWAY)
            gained = wait(lambda: len(peer.replica.log) > length)
            return gained - max(allowed, gone)
        back = HostSession(host.profile, resume=folder / "ann.dtt", timing=timing,
                           chooser=bot_chooser(TRICE, "greedy", 1))
        start = time.monotonic()
        back.open()
        threading.Thread(target=back.run, daemon=True).start()
        gained = wait(lambda: len(peer.replica.log) > length)
        back.stop()
        return gained - start
    finally:
        peer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--grace", type=float, default=2.0)
    args = parser.parse_args()
    succession.HOST_AWAY = HOST_AWAY  # the seats know the relay's (shortened) clock
    timing = replace(Timing(), heartbeat=0.1, drop_after=0.6, grace=args.grace, connect_timeout=3.0)
    server = RelayServer(curve_keypair()[1], "127.0.0.1", 0, host_away=HOST_AWAY)
    threading.Thread(target=server.run, daemon=True).start()
    line = server.address().encode()
    times = {"hand-over": [], "host back": []}
    with tempfile.TemporaryDirectory() as temp:
        for n in range(args.rounds):
            for name, hand_over in (("host back", False), ("hand-over", True)):
                folder = Path(temp) / f"{name}-{n}"
                folder.mkdir()
                times[name].append(one_round(line, folder, timing, hand_over))
    server.stopped = True
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    print(f"rounds: {args.rounds}, grace {args.grace:g} s, relay HOST_AWAY {HOST_AWAY:g} s")
    for name, value in medians.items():
        print(f"{name}: median {value:.0f} ms to the table's next frame "
              f"({'after the clocks allow a successor' if name == 'hand-over' else 'after the resume'})")
    print(f"hand-over / host back: {medians['hand-over'] / medians['host back']:.2f}x")


if __name__ == "__main__":
    main()
