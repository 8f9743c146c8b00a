#!/usr/bin/env python3
"""Measure `dicetable serve-ssh` holding N sessions at once (default 20): every client logs in with
its own key and a pty of 80 × 24 and reaches the lobby (each login timed, from connecting to the
lobby drawn); then, per app process: resident memory (VmRSS), proportional share (Pss, shared pages
split), peak address space (VmPeak, what the RLIMIT_AS bound must allow); and over `--idle` seconds
with nobody pressing a key: CPU seconds per minute, wake-ups per minute (voluntary context switches
of all its threads) and bytes per minute sent to the client; and the server's own memory and CPU.

Usage: .venv/bin/python scripts/bench_serve_ssh.py [--sessions 20] [--settle 5] [--idle 60]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncssh

CONTROLS = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[()][0-9A-Za-z]|.)")


def status(pid: int, field: str) -> int:
    """A /proc/PID/status or smaps_rollup field in kB."""
    for name in ("status", "smaps_rollup"):
        try:
            for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        except OSError:
            pass
    return 0


def cpu_seconds(pid: int) -> float:
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wakeups(pid: int) -> int:
    """Voluntary context switches of every thread of `pid`: each one is a sleep that ended."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


async def login(port: int, n: int):
    key = asyncssh.generate_private_key("ssh-ed25519")
    conn = await asyncssh.connect("127.0.0.1", port, username=f"p{n}", client_keys=[key], known_hosts=None, agent_path=None)
    process = await conn.create_process(term_type="xterm-256color", term_size=(80, 24), encoding=None)
    seen = bytearray()
    async def until(word: bytes, timeout: float = 60):
        deadline = time.monotonic() + timeout
        while word not in CONTROLS.sub(b"", bytes(seen)):
            if time.monotonic() > deadline:
                raise SystemExit(f"session {n}: {word!r} never appeared")
            seen.extend(await asyncio.wait_for(process.stdout.read(65536), timeout))
    await until(b"Welcome")
    process.stdin.write(b"\r")
    await until(b"who is here now")
    received = [0]
    reader = asyncio.create_task(_drain(process, received))
    return conn, reader, received


async def _drain(process, received: list[int]) -> None:
    while data := await process.stdout.read(65536):
        received[0] += len(data)


async def main(args) -> None:
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen([sys.executable, "-m", "dicetable.tui.cli", "serve-ssh", "--port", "0", "--data", data],
                                  stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        print(server.stdout.readline().strip())
        started = time.monotonic()
        sessions, logins = [], []
        for n in range(args.sessions):  # one after another: logins compete for 2 cores otherwise
            began = time.monotonic()
            sessions.append(await login(port, n))
            logins.append(time.monotonic() - began)
        print(f"{args.sessions} sessions in the lobby after {time.monotonic() - started:.1f} s; one login "
              f"(connect to lobby drawn): median {statistics.median(logins):.2f} s, first {logins[0]:.2f} s, "
              f"max {max(logins):.2f} s")
        await asyncio.sleep(args.settle)
        apps = children(server.pid)
        rss = [status(p, "VmRSS") / 1024 for p in apps]
        pss = [status(p, "Pss") / 1024 for p in apps]
        peak = [status(p, "VmPeak") / 1024 for p in apps]
        cpu_before = {p: cpu_seconds(p) for p in [*apps, server.pid]}
        woke_before = {p: wakeups(p) for p in apps}
        sent_before = [received[0] for _, _, received in sessions]
        await asyncio.sleep(args.idle)
        minutes = args.idle / 60
        idle = [(cpu_seconds(p) - cpu_before[p]) / minutes for p in apps]
        woke = [(wakeups(p) - woke_before[p]) / minutes for p in apps]
        sent = [(received[0] - before) / minutes for (_, _, received), before in zip(sessions, sent_before)]
        print(f"apps running: {len(apps)}")
        print(f"per app: RSS median {statistics.median(rss):.0f} MB (max {max(rss):.0f}), "
              f"PSS median {statistics.median(pss):.0f} MB (sum {sum(pss):.0f} MB), "
              f"peak address space median {statistics.median(peak):.0f} MB (max {max(peak):.0f})")
        print(f"per app, idle in the lobby for {args.idle:g} s: CPU {statistics.median(idle):.2f} s a minute median "
              f"(max {max(idle):.2f}), {statistics.median(woke):.0f} wake-ups a minute median (max {max(woke):.0f}), "
              f"{statistics.median(sent):.0f} bytes a minute to the client median (max {max(sent):.0f})")
        print(f"server: RSS {status(server.pid, 'VmRSS') / 1024:.0f} MB, "
              f"CPU {(cpu_seconds(server.pid) - cpu_before[server.pid]) / minutes:.2f} s a minute while all idle")
        for conn, reader, _ in sessions:
            reader.cancel()
            conn.close()
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds to wait once all are in")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle measured (CPU, wake-ups, bytes)")
    asyncio.run(main(parser.parse_args()))
