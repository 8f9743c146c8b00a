#!/usr/bin/env python3
"""Measure `dicetable serve-ssh` holding N sessions at once (default 20): every client logs in with
its own key and a pty of 80 × 24 and reaches the lobby (each login timed, from connecting to the
lobby drawn), beside the same app started locally (`dicetable` in a pty of its own, its lobby
directory set as the server sets it: the same screens, no SSH) in the same run; then, per app
process: resident memory (VmRSS), proportional share (Pss, shared pages split), its own pages
(Private_Clean + Private_Dirty), peak address space (VmPeak, what the RLIMIT_AS bound must allow),
and per session all of it together: the apps' and the preloaded parent's (tui/zygote.py) Pss summed
and divided by the sessions; and over `--idle` seconds with nobody pressing a key: CPU seconds per
minute, wake-ups per minute (voluntary context switches of all its threads) and bytes per minute
sent to the client; and the server's own memory and CPU. `--no-preload` measures apps started as a
fresh Python each (the server's `--no-preload`). `--ksm` switches the kernel's same-page merging on
for the run (root only; /sys/kernel/mm/ksm, put back as it was after), as an operator may: the apps
opt in (tui/zygote.py) and KSM shares again the pages they hold alike; give it `--settle` time to
scan (about 30 s a pass for 200 apps). `--returning` measures members who have been here before: each
key logs in once (its name asked), leaves and logs in again, straight to the lobby, as a club's members
mostly do. As root it also says where an app's private pages come from (/proc/PID/pagemap): pages of
the preloaded parent the app wrote to after fork (reference counts, caches, specialised bytecode), how
many of those hold the parent's bytes again (what KSM merges), and the app's own new pages.

Usage: .venv/bin/python scripts/bench_serve_ssh.py [--sessions 20] [--settle 5] [--idle 60] [--no-preload] [--ksm]
       [--returning]
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


def _pfns(pid: int, start: int, end: int) -> list[int | None]:
    """The physical page of each page in [start, end) of `pid` (None: not present); all 0 without root."""
    import struct

    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(start // 4096 * 8)
        data = pagemap.read((end - start) // 4096 * 8)
    return [v & ((1 << 55) - 1) if v >> 63 else None for (v,) in struct.iter_unpack("<Q", data)]


def private_origin(parent: int, app: int) -> tuple[float, float, float] | None:
    """Where an app's private pages come from, in MB: (copied from the preloaded parent: a page of the
    parent's the app wrote to after fork; of those, holding the same bytes as the parent's again: a
    count raised and lowered, what KSM merges; the app's own new pages). None without root (the
    kernel hides physical pages)."""
    def writable(pid: int) -> list[tuple[int, int]]:
        spans = []
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            fields = line.split()
            if "w" in fields[1]:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                spans.append((start, end))
        return spans

    try:
        theirs = writable(parent)
        copied = same = new = 0
        with open(f"/proc/{app}/mem", "rb") as app_mem, open(f"/proc/{parent}/mem", "rb") as parent_mem:
            for start, end in writable(app):
                mine = _pfns(app, start, end)
                inherited = any(a <= start and end <= b for a, b in theirs)
                parents = _pfns(parent, start, end) if inherited else [None] * len(mine)
                for i, (page, their_page) in enumerate(zip(mine, parents)):
                    if page is None:
                        continue
                    if page == 0:
                        return None  # not root: no physical pages to compare
                    if their_page is None:
                        new += 1
                    elif page != their_page:
                        copied += 1
                        address = start + i * 4096
                        app_mem.seek(address)
                        parent_mem.seek(address)
                        same += app_mem.read(4096) == parent_mem.read(4096)
    except OSError:
        return None
    return copied * 4 / 1024, same * 4 / 1024, new * 4 / 1024


def children(pid: int) -> tuple[list[int], list[int]]:
    """The server's apps, and its preloaded parent (tui/zygote.py) if any."""
    apps, zygote = [], []
    for entry in Path("/proc").iterdir():
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                is_zygote = (entry / "comm").read_text().strip() == "dt-zygote"
                (zygote if is_zygote else apps).append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return apps, zygote


def local_start(lobby: Path, returning: bool = False) -> float:
    """Seconds from starting `dicetable` in an 80 × 24 pty (a fresh home) to its lobby drawn, with
    the name asked for answered by Enter, as a served login does; `returning`: a profile made before
    (no name asked), as for a member's second login."""
    import fcntl
    import os
    import pty
    import select
    import signal
    import struct
    import termios

    home = Path(tempfile.mkdtemp())
    if returning:
        from dicetable.net import identity

        identity.load_or_create(name="local", directory=home)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "HOME": str(home), "DICETABLE_HOME": str(home), "USER": "local", "DICETABLE_SERVED": str(lobby)}
    began = time.monotonic()
    pid, master = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            os.execve(sys.executable, [sys.executable, "-m", "dicetable.tui.cli"], env)
        finally:
            os._exit(127)
    seen, answered = b"", returning
    try:
        while b"who is here now" not in CONTROLS.sub(b"", seen):
            if not select.select([master], [], [], 60)[0]:
                raise SystemExit("the local app drew no lobby within 60 s")
            seen += os.read(master, 65536)
            if not answered and b"Welcome" in CONTROLS.sub(b"", seen):
                os.write(master, b"\r")
                answered = True
        return time.monotonic() - began
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(master)


async def login(port: int, n: int, key=None):
    """Session `n` logged in to the lobby drawn; with `key` (a member who has been here before) the
    name is not asked again."""
    first = key is None
    key = key or asyncssh.generate_private_key("ssh-ed25519")
    conn = await asyncssh.connect("127.0.0.1", port, username=f"p{n}", client_keys=[key], known_hosts=None, agent_path=None)
    process = await conn.create_process(term_type="xterm-256color", term_size=(80, 24), encoding=None)
    seen = bytearray()
    async def until(word: bytes, timeout: float = 60):
        deadline = time.monotonic() + timeout
        while word not in CONTROLS.sub(b"", bytes(seen)):
            if time.monotonic() > deadline:
                raise SystemExit(f"session {n}: {word!r} never appeared")
            seen.extend(await asyncio.wait_for(process.stdout.read(65536), timeout))
    if first:
        await until(b"Welcome")
        process.stdin.write(b"\r")
    await until(b"who is here now")
    received = [0]
    reader = asyncio.create_task(_drain(process, received))
    return conn, reader, received, key


async def returning(port: int, n: int):
    """A member's second login: the first (name chosen) is left with ctrl+q, then the same key again."""
    conn, reader, _, key = await login(port, n)
    conn.close()
    await conn.wait_closed()
    reader.cancel()
    await asyncio.sleep(0.2)  # the server sees the first session end before the same key comes back
    began = time.monotonic()
    return await login(port, n, key), time.monotonic() - began


async def _drain(process, received: list[int]) -> None:
    while data := await process.stdout.read(65536):
        received[0] += len(data)


KSM = Path("/sys/kernel/mm/ksm")


def ksm(settings: dict[str, str]) -> dict[str, str]:
    """Write KSM's settings; returns what they were."""
    before = {name: (KSM / name).read_text().strip() for name in settings}
    for name, value in settings.items():
        (KSM / name).write_text(value)
    return before


async def main(args) -> None:
    if args.ksm:
        before = ksm({"run": "1", "pages_to_scan": "2000", "sleep_millisecs": "20"})
        try:
            await measure(args)
        finally:
            ksm(before)  # run=0 stops the scanning (the apps that had merged pages have ended)
            print(f"KSM put back as it was: run={before['run']}")
    else:
        await measure(args)


async def measure(args) -> None:
    with tempfile.TemporaryDirectory() as data:
        flags = ["--max-sessions", str(args.sessions)] + (["--no-preload"] if args.no_preload else [])
        server = subprocess.Popen([sys.executable, "-m", "dicetable.tui.cli", "serve-ssh", "--port", "0", "--data", data,
                                   *flags], stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        print(server.stdout.readline().strip())
        started = time.monotonic()
        sessions, logins, locals_ = [], [], []
        for n in range(args.sessions):  # one after another: logins compete for 2 cores otherwise
            if n < args.local:  # the yardstick, interleaved with the first logins so both see the same machine
                locals_.append(local_start(Path(data) / "lobby", args.returning))
            if args.returning:
                session, took = await returning(port, n)
            else:
                began = time.monotonic()
                session = await login(port, n)
                took = time.monotonic() - began
            sessions.append(session[:3])
            logins.append(took)
        print(f"{args.sessions} sessions in the lobby after {time.monotonic() - started:.1f} s; one login "
              f"(connect to lobby drawn): median {statistics.median(logins):.2f} s, first {logins[0]:.2f} s, "
              f"max {max(logins):.2f} s")
        first = statistics.median(logins[:len(locals_)])
        print(f"a local start to the same lobby: median {statistics.median(locals_):.2f} s ({len(locals_)} starts); "
              f"the logins beside them median {first:.2f} s: login / local {first / statistics.median(locals_):.2f} x")
        await asyncio.sleep(args.settle)
        if args.ksm:
            print(f"KSM: {(KSM / 'pages_sharing').read_text().strip()} pages shared again, "
                  f"{(KSM / 'full_scans').read_text().strip()} full scans so far")
        apps, zygote = children(server.pid)
        rss = [status(p, "VmRSS") / 1024 for p in apps]
        pss = [status(p, "Pss") / 1024 for p in apps]
        own = [(status(p, "Private_Clean") + status(p, "Private_Dirty")) / 1024 for p in apps]
        parent = sum(status(p, "Pss") / 1024 for p in zygote)
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
              f"PSS median {statistics.median(pss):.1f} MB (sum {sum(pss):.0f} MB), "
              f"own pages median {statistics.median(own):.1f} MB, "
              f"peak address space median {statistics.median(peak):.0f} MB (max {max(peak):.0f})")
        origins = [o for o in (private_origin(zygote[0], p) for p in apps[:3]) if o] if zygote else []
        if origins:
            copied, same, new = (statistics.median(o[i] for o in origins) for i in range(3))
            print(f"an app's private pages ({len(origins)} apps, median): {copied:.1f} MB copied from the preloaded "
                  f"parent (written after fork; {same:.1f} MB of them hold the parent's bytes again, what KSM "
                  f"merges), {new:.1f} MB its own new pages")
        print(f"per session, apps and preloaded parent ({parent:.0f} MB) together: "
              f"{(sum(pss) + parent) / len(apps):.1f} MB proportional ({sum(pss) + parent:.0f} MB for {len(apps)})")
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
    parser.add_argument("--local", type=int, default=5, help="local starts timed as the yardstick (default 5)")
    parser.add_argument("--no-preload", action="store_true", help="serve each app as a fresh Python")
    parser.add_argument("--returning", action="store_true",
                        help="members who have logged in before (no name asked): each key logs in, leaves, and is measured on its second login")
    parser.add_argument("--ksm", action="store_true", help="switch KSM on for the run (root; put back after)")
    asyncio.run(main(parser.parse_args()))
