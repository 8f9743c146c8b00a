"""A networked game over a slow link: game time against its chance steps × the round-trip time.

    .venv/bin/python scripts/bench_delay.py [--rtt-ms 160] [--game dicebreaker] [--seed 1]

A user-space TCP proxy between the joiner and the host adds half the round-trip time to every byte in
each direction (ordered, as a long line would); host and joiner are real sessions with greedy bots,
the joiner in its own thread. The protocol's floor is one round trip per chance step (the seats'
reveals answer the roll in one exchange) and one per move that crosses the link; the script prints
the game time beside chance steps × RTT and (chance steps + the joiner's moves) × RTT.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path


class DelayProxy:
    """127.0.0.1:port → 127.0.0.1:target, each direction delayed by `delay` seconds, order kept."""

    def __init__(self, target: int, delay: float):
        self.target, self.delay = target, delay
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0
        threading.Thread(target=self._run, daemon=True).start()
        self.ready.wait(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, reader, writer) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pump(reader, upstream_writer), self._pump(upstream_reader, writer))

    async def _pump(self, reader, writer) -> None:
        loop = asyncio.get_running_loop()
        while True:
            data = await reader.read(65536)
            if not data:
                loop.call_later(self.delay, writer.close)
                return
            loop.call_later(self.delay, writer.write, data)  # same delay for all: order is kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=160.0)
    parser.add_argument("--game", default="dicebreaker")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("DICETABLE_HOME", tempfile.mkdtemp(prefix="bench-delay-"))
    from dicetable.core import registry
    from dicetable.net.table.deadlines import Timing
    from dicetable.net.table.host import HostSession
    from dicetable.net.identity import Profile
    from dicetable.net.reach.invite import Invite
    from dicetable.net.table.joiner import PeerSession
    from dicetable.net.table.session import bot_chooser

    rtt = args.rtt_ms / 1000
    info = registry.get(args.game)
    folder = Path(tempfile.mkdtemp(prefix="bench-delay-"))
    timing = Timing(heartbeat=max(1.0, 4 * rtt), drop_after=max(4.0, 16 * rtt), connect_timeout=30.0)
    host = HostSession(Profile.generate("host"), args.game, 2, {}, timing=timing, transcript=folder / "host.dtt")
    host.chooser = bot_chooser(info, "greedy", args.seed)
    code = Invite.decode(host.open())
    proxy = DelayProxy(code.port, rtt / 2)
    invite = Invite("127.0.0.1", proxy.port, code.host_key, code.table_id)
    threading.Thread(target=host.run, daemon=True).start()
    peer = PeerSession(Profile.generate("joiner"), invite, timing=timing, transcript=folder / "joiner.dtt")
    peer.connect()
    peer.chooser = bot_chooser(info, "greedy", args.seed + 1)
    start = time.perf_counter()
    result = peer.run()
    took = time.perf_counter() - start
    replica = peer.replica
    chances = len(replica.events)
    joiner_moves = sum(1 for r in replica.log if r.kind == "move" and r.seat == 1)
    print(f"{args.game} over a {args.rtt_ms:g} ms link: {took:.1f} s, {replica.moves} moves, {chances} chance steps "
          f"({joiner_moves} of the moves the joiner's); result: {result.reason if result else 'none'}")
    print(f"chance steps x RTT {chances * rtt:.1f} s: ratio {took / (chances * rtt):.2f} x; "
          f"(chance steps + joiner moves) x RTT {(chances + joiner_moves) * rtt:.1f} s: "
          f"ratio {took / ((chances + joiner_moves) * rtt):.2f} x")


if __name__ == "__main__":
    main()
