#!/usr/bin/env python3
"""Measure the app as a person feels it, in a real pseudo-terminal of 80 × 24:

- start: from launching `dicetable play trice` to the first painted frame (the table on screen),
  beside a bare Textual app with one widget started the same way in the same run (the baseline:
  what any Textual app costs on this machine); medians of --starts launches each;
- CPU to the first frame: the processor time the app (all its threads, /proc/PID/task/*/schedstat)
  had used when its first frame was read, beside the bare app's: on a machine busy with other work
  the wall-clock times include waiting for a core and the CPU times do not (though a reading that
  comes late also counts what the app did just after its frame);
- key: the median time from a key press (cursor left/right) to the end of the repaint it causes.

Before timing, the package's bytecode is compiled (`compileall`, as `pip install` does): Textual's
was compiled when it was installed, and under PYTHONDONTWRITEBYTECODE=1 (set on the machines this
runs on) Python would otherwise compile every dicetable module afresh at each launch, about 40 ms
that no installed app pays. `--source` skips it: then every module without current bytecode in
its __pycache__ is compiled at each launch (remove the __pycache__ folders to see the whole cost).

Usage: .venv/bin/python scripts/bench_tui.py [--keys 40] [--starts 5]
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUIET = 0.03  # seconds without output that end a repaint


def read_until(fd: int, predicate, timeout: float) -> tuple[bytes, float]:
    """Read until predicate(all bytes read) holds; returns the bytes and the time it held."""
    data = b""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            data += chunk
            if predicate(data):
                return data, time.perf_counter()
    raise SystemExit(f"bench_tui: the app did not paint in {timeout:.0f} s")


def repaint_time(fd: int, key: bytes) -> float:
    """Seconds from writing `key` to the last byte of the repaint it caused."""
    start = time.perf_counter()
    os.write(fd, key)
    last = None
    while True:
        ready, _, _ = select.select([fd], [], [], QUIET if last else 2.0)
        if not ready:
            if last is None:
                raise SystemExit("bench_tui: a key press caused no repaint")
            return last - start
        os.read(fd, 65536)
        last = time.perf_counter()


# The baseline: a bare Textual app with one widget, painted as the app's table is detected.
BARE = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("Pool: act")

Bare().run()
"""
APP = [str(ROOT / ".venv/bin/dicetable"), "play", "trice", "--vs", "human", "--seed", "1"]
PYTHON = str(ROOT / ".venv/bin/python")


def launch(command: list[str]) -> tuple[int, int, float]:
    """Start `command` in an 80 × 24 pseudo-terminal: (pid, fd, the moment it was started)."""
    home = tempfile.mkdtemp()
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command in an 80 × 24 terminal
        fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        os.environ.update(TERM="xterm-256color", DICETABLE_HOME=home, COLUMNS="80", LINES="24")
        os.execv(command[0], command)
    return pid, fd, started


HUNG = []  # apps that did not end within 5 s of SIGTERM (killed)


def stop(pid: int, fd: int) -> None:
    """SIGTERM, as a closed terminal's app gets, reading what it still writes as a terminal would
    (an app whose output nobody reads blocks in its last write and never ends); SIGKILL after 5 s
    (counted in HUNG)."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return
        if select.select([fd], [], [], 0.01)[0]:
            try:
                os.read(fd, 65536)
            except OSError:
                pass
    HUNG.append(pid)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def painted(data: bytes) -> bool:
    return b"Pool:" in data and b"act" in data


def cpu_seconds(pid: int) -> float:
    """Processor time used so far by every thread of `pid` (nanoseconds in schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9


def first_frame(command: list[str]) -> tuple[float, float]:
    """Seconds from launch to the first painted frame, and the CPU seconds the app used until then."""
    pid, fd, started = launch(command)
    try:
        _, at = read_until(fd, painted, 30.0)
        cpu = cpu_seconds(pid)
    finally:
        stop(pid, fd)
        os.close(fd)
    return at - started, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=40, help="key presses to time")
    parser.add_argument("--starts", type=int, default=5, help="launches of each app to take the median of")
    parser.add_argument("--source", action="store_true",
                        help="do not compile the package's bytecode first (each launch compiles what has none)")
    args = parser.parse_args()
    if not args.source:
        for package in ("core", "net", "tui"):
            compileall.compile_dir(ROOT / package, quiet=1)
    print("bytecode: " + ("not compiled first (--source): each launch compiles what has none" if args.source else
                          "the package's compiled first, as an install does"))
    app, bare, app_cpu, bare_cpu = [], [], [], []
    for _ in range(args.starts):  # interleaved, so both see the same machine
        for times, cpus, command in ((app, app_cpu, APP), (bare, bare_cpu, [PYTHON, "-c", BARE])):
            took, cpu = first_frame(command)
            times.append(took)
            cpus.append(cpu)
    pid, fd, _ = launch(APP)
    try:
        read_until(fd, painted, 30.0)
        # Let the first frame settle before timing keys.
        while select.select([fd], [], [], 0.3)[0]:
            os.read(fd, 65536)
        times = [repaint_time(fd, b"l" if i % 2 == 0 else b"h") for i in range(args.keys)]
    finally:
        stop(pid, fd)
    a, b = statistics.median(app) * 1000, statistics.median(bare) * 1000
    print(f"start to first frame: median {a:.0f} ms (min {min(app) * 1000:.0f}, max {max(app) * 1000:.0f}, "
          f"{len(app)} starts)")
    print(f"bare Textual app:     median {b:.0f} ms (min {min(bare) * 1000:.0f}, max {max(bare) * 1000:.0f})")
    print(f"first frame ratio: {a / b:.2f} x (app {a:.0f} ms / bare Textual {b:.0f} ms)")
    ac, bc = statistics.median(app_cpu) * 1000, statistics.median(bare_cpu) * 1000
    print(f"CPU to the first frame: app median {ac:.0f} ms, bare Textual {bc:.0f} ms: ratio {ac / bc:.2f} x")
    print(f"key press to repaint: median {statistics.median(times) * 1000:.1f} ms "
          f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}, {len(times)} keys)")
    if HUNG:
        print(f"{len(HUNG)} app(s) did not end within 5 s of SIGTERM (killed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
