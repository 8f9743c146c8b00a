"""Short 3-seat games over slow and uneven links, on the product's default clocks (issue 37).

    .venv/bin/python scripts/slow_links.py [--quick] [--rtt 0.3 1 2.5 5] [--jitter 0.5] [--stall 3]
        [--stall-every 15] [--game diceroom] [--rolls 10] [--seed 1] [--code]

Real processes, all on 127.0.0.1: a `dicetable relay`, and a `dicetable host` and two `dicetable join`
with greedy bots, each with its own profile. Every one of them reaches the relay through the
user-space proxy of scripts/bench_delay.py (`DelayProxy`, its own process), which holds each chunk
a quarter of the round trip ± `jitter` of that (per chunk, order kept) and, every `stall-every`
seconds (the first half that after it starts), stops the link for `stall` seconds and then delivers
what it held. A seat's packets to the
host cross the proxy twice each way (seat → relay → host), so a seat's round trip to the host is
the case's RTT. The game is a dice room of `rolls` rolls in turn (or Dice Breaker to 3 points).

Per case it prints: how long seating took; the game time (host's `started` to its result) against
the floor, what the round trips alone cost ((chance steps + the joiners' moves) × RTT, as
scripts/bench_delay.py counts it); whether every seat finished; and from the three transcripts
(dicetable.net.log.transcript.read / verify): the verdict of each copy, whether they agree, claims
and defaults, refused records and the equivocation records among them, evidence kept aside. The
target (issue 37): every case finishes with no default and no refused record.
`--quick` runs the 0.3 s and 1 s cases only (a minute or two). `--code`: the joiners join by the
host's short code at the relay (net/reach/codes.py's exchange first), not by its invite.

Measured 2026-11-27 (branch slowlinks, before the idempotent-resend fix; 2 cores shared by other
runs, load about 1): every case finished and every seat joined on the default clocks (seated in
1.7 / 7.9 / 15.9 / 29.8 s at 0.3 / 1 / 2.5 / 5 s; game time 1.87 / 1.39 / 1.57 / 1.51 x the floor),
with no claim, no default and no equivocation record, and every copy agreeing; the host's copy held
4 / 0 / 28 / 61 refused records, all `out of order: ... (repeated or replayed)` (identical resends:
issue 37, finding 4). With the handshake's fixed 5 s clock, at 2.5 s no joiner got through the
secure handshake (`the relay ... accepted the connection but never answered`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_delay import DelayProxy  # noqa: E402

COMMAND = str(Path(sys.executable).with_name("dicetable"))
EQUIVOCATION = ("equivocation", "two different frames")


class Process:
    """One `dicetable` process, its output lines kept with the time each came."""

    def __init__(self, name: str, home: Path, *args: str):
        self.name = name
        self.lines: list[tuple[float, str]] = []
        env = {**os.environ, "DICETABLE_HOME": str(home)}
        self.started = time.monotonic()
        self.process = subprocess.Popen([COMMAND, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=env, cwd=ROOT)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def first(self, prefix: str) -> tuple[float, str] | None:
        return next(((t, line) for t, line in self.lines if line.startswith(prefix)), None)

    def wait_for(self, prefix: str, timeout: float) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = self.first(prefix)
            if found is not None:
                return found[1]
            if self.process.poll() is not None:
                time.sleep(0.2)  # its last lines
                found = self.first(prefix)
                if found is not None:
                    return found[1]
                break
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} printed no {prefix!r} line: {self.tail()}")

    def tail(self, n: int = 3) -> str:
        return " | ".join(line for _, line in self.lines[-n:]) or "(nothing)"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def copy_report(path: Path) -> dict:
    """What one seat's transcript holds: verdict, claims and defaults, refused and equivocation records."""
    from dicetable.net.log.transcript import read
    from dicetable.net.log.verify import people, verify

    if not path.exists():
        return {"missing": True}
    transcript = read(path)
    verdict = verify(path)
    replica = verdict.replica
    claims = list(replica.claims) if replica is not None else []
    refused = [reason for _, reason in transcript.refused]
    return {
        "missing": False,
        "transcript": transcript,
        "verdict": verdict.line(),
        "finished": transcript.result is not None,
        "claims": len(claims),
        "defaults": [c for c in claims if c.state in ("out", "answered")],
        "refused": refused,
        "equivocation": [r for r in refused if any(w in r for w in EQUIVOCATION)]
                        + [why for _, why in transcript.evidence if any(w in why for w in EQUIVOCATION)],
        "evidence": [why for _, why in transcript.evidence],
        "replica": replica,
        "names": people(replica),
    }


def floor_of(replica, rtt: float) -> tuple[int, int, float]:
    """The game's chance steps, the joiners' moves, and what their round trips alone cost."""
    chances = len(replica.events)
    joiner_moves = sum(1 for r in replica.log if r.kind == "move" and r.seat != 0)
    return chances, joiner_moves, (chances + joiner_moves) * rtt


def play(args, rtt: float) -> dict:
    """One case: a relay, a proxy of round trip `rtt` in front of it, a host and two joiners."""
    from dicetable.net.log.verify import compare

    folder = Path(tempfile.mkdtemp(prefix=f"slow-links-{rtt:g}-"))
    relay = Process("relay", folder / "relay", "relay", "--bind", "127.0.0.1", "--port", "0")
    procs = [relay]
    proxy = None
    try:
        line = relay.wait_for("relay: ", 30).split(" ", 1)[1]
        address, key = line.split("/", 1)
        port = int(address.rsplit(":", 1)[1])
        proxy = DelayProxy(port, rtt / 4, jitter=args.jitter, stall=args.stall, stall_every=args.stall_every,
                           seed=args.seed)
        through = f"127.0.0.1:{proxy.port}/{key}"
        if args.game == "diceroom":
            game = ["diceroom", "--option", f"rolls={args.rolls}"]
        else:
            game = ["dicebreaker", "--option", "mode=battle", "--option", "target=3"]
        host = Process("host", folder / "host", "host", *game, "--relay", through, "--seats", "3", "--bot", "greedy",
                       "--seed", str(args.seed), "--transcript", str(folder / "host.dtt"))
        procs.append(host)
        invite = host.wait_for("invite: ", 60 + 10 * rtt).split(" ", 1)[1]
        by = [host.wait_for("code: ", 60 + 10 * rtt).split(" ", 1)[1], "--relay", through] if args.code else [invite]
        joiners = [Process(f"joiner {k}", folder / f"j{k}", "join", *by, "--bot", "greedy", "--seed",
                           str(args.seed + k), "--transcript", str(folder / f"j{k}.dtt")) for k in (1, 2)]
        procs += joiners
        seats = [host, *joiners]
        limit = 120 + 60 * rtt
        end = time.monotonic() + limit
        while time.monotonic() < end and any(p.process.poll() is None for p in seats):
            if all(j.process.poll() not in (None, 0) for j in joiners):
                break  # no joiner is left to play: the host would wait for them until the end
            time.sleep(0.2)
        timed_out = any(p.process.poll() is None for p in seats)
    finally:
        for p in procs[1:] + procs[:1]:
            p.stop()
        if proxy is not None:
            proxy.close()
    for p in procs:  # every process's lines beside the transcripts, with seconds since the case began
        (folder / f"{p.name.replace(' ', '')}.out").write_text("".join(f"{t - relay.started:8.2f} {line}\n" for t, line in p.lines))
    copies = {p.name: copy_report(folder / name) for p, name in zip(seats, ("host.dtt", "j1.dtt", "j2.dtt"))}
    present = [c["transcript"] for c in copies.values() if not c["missing"]]
    agreement = compare(present).line() if len(present) > 1 else "fewer than two copies"
    started = host.first("started")
    result = host.first("result:")
    return {"rtt": rtt, "folder": folder, "seats": seats, "joiners": joiners, "timed_out": timed_out,
            "started": started, "result": result, "copies": copies, "agreement": agreement, "limit": limit}


def report(case: dict, args) -> None:
    rtt, seats, copies = case["rtt"], case["seats"], case["copies"]
    stalls = f"a {args.stall:g} s stall every {args.stall_every:g} s" if args.stall else "no stalls"
    print(f"== round trip {rtt:g} s ± {args.jitter:.0%}, {stalls} (transcripts and output in {case['folder']})")
    joined_at = min(j.started for j in case["joiners"])
    if case["started"] is not None:
        print(f"  seated: the game started {case['started'][0] - joined_at:.1f} s after the joiners were launched "
              f"(the handshake is about 2 round trips: {2 * rtt:.1f} s)")
    else:
        print("  seated: the game never started")
    host_copy = copies["host"]
    if case["started"] is not None and case["result"] is not None and not host_copy["missing"] and host_copy["replica"]:
        took = case["result"][0] - case["started"][0]
        chances, moves, floor = floor_of(host_copy["replica"], rtt)
        print(f"  game: {took:.1f} s against a floor of {floor:.1f} s ({chances} chance steps + {moves} joiner moves "
              f"x {rtt:g} s): ratio {took / floor:.2f} x" if floor else f"  game: {took:.1f} s")
    finished = all(p.process.returncode == 0 and p.first("result:") for p in seats)
    print(f"  finished: {'yes, every seat' if finished else 'NO'}"
          + (" (stopped: " + ("every joiner had left" if all(j.process.returncode not in (None, 0) for j in case["joiners"])
                             else f"over {case['limit']:g} s") + ")" if case["timed_out"] else ""))
    for p in seats:
        kinds = Counter(line.split(":", 1)[0] for _, line in p.lines if ":" in line and line.split(":", 1)[0].isalpha())
        told = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()) if k not in ("joined", "invite", "code", "transcript",
                                                                                   "waiting", "result", "rematch"))
        print(f"  {p.name}: exit {p.process.returncode}; lines: {told or 'none besides joins and the result'}; "
              f"last: {p.tail(1)[:160]}")
    totals = Counter()
    for name, c in copies.items():
        if c["missing"]:
            print(f"  {name}'s copy: missing")
            continue
        defaults = "; ".join(f"seat {d.against} ({d.state}, claim by seat {d.seat}: {d.reason.words(c['names'])})"
                             for d in c["defaults"]) or "none"
        print(f"  {name}'s copy: {c['verdict'][:200]}")
        print(f"    claims {c['claims']}, defaults: {defaults[:200]}; refused records {len(c['refused'])} "
              f"(equivocation {len(c['equivocation'])}); evidence kept aside {len(c['evidence'])}")
        for reason, n in Counter(r[:150] for r in c["refused"]).most_common(3):
            print(f"      {n} x refused: {reason}")
        totals.update(defaults=len(c["defaults"]), refused=len(c["refused"]), equivocation=len(c["equivocation"]))
    print(f"  copies: {case['agreement']}")
    target = finished and not totals["defaults"] and not totals["refused"]
    print(f"  target (finished, no default, no refused record): {'met' if target else 'NOT met'} "
          f"(defaults {totals['defaults']}, refused {totals['refused']}, equivocation {totals['equivocation']})",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt", type=float, nargs="+", default=[0.3, 1.0, 2.5, 5.0], help="round trips, seconds")
    parser.add_argument("--quick", action="store_true", help="only the 0.3 s and 1 s cases")
    parser.add_argument("--jitter", type=float, default=0.5, help="± this fraction of each hop's delay (default 0.5)")
    parser.add_argument("--stall", type=float, default=3.0, help="seconds of each stall burst (default 3; 0: none)")
    parser.add_argument("--stall-every", type=float, default=15.0,
                        help="seconds between stall bursts, the first half that after the proxy starts (default 15)")
    parser.add_argument("--game", choices=("diceroom", "dicebreaker"), default="diceroom")
    parser.add_argument("--rolls", type=int, default=10, help="a dice room's rolls (default 10)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", action="store_true", help="the joiners join by the host's short code, not its invite")
    args = parser.parse_args()
    rtts = [r for r in args.rtt if r <= 1.0] if args.quick else args.rtt
    print(f"slow links: 3 seats ({args.game}), relay, host and joiners (by {'code' if args.code else 'invite'}) "
          f"in their own processes on 127.0.0.1, "
          f"default clocks; load {os.getloadavg()[0]:.1f}", flush=True)
    try:
        for rtt in rtts:
            report(play(args, rtt), args)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
