#!/usr/bin/env python3
"""Measure the app as a person feels it, in a real pseudo-terminal of 80 × 24:

- start: from launching `dicetable play trice` to the first painted frame (the table on screen);
- key: the median time from a key press (cursor left/right) to the end of the repaint it causes.

Usage: .venv/bin/python scripts/bench_tui.py [--keys 40]
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=40, help="key presses to time")
    args = parser.parse_args()
    command = [str(ROOT / ".venv/bin/dicetable"), "play", "trice", "--vs", "human", "--seed", "1"]
    home = tempfile.mkdtemp()
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app in an 80 × 24 terminal
        fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        os.environ.update(TERM="xterm-256color", DICETABLE_HOME=home, COLUMNS="80", LINES="24")
        os.execv(command[0], command)
    try:
        _, painted = read_until(fd, lambda data: b"Pool:" in data and b"act" in data, 30.0)
        # Let the first frame settle before timing keys.
        while select.select([fd], [], [], 0.3)[0]:
            os.read(fd, 65536)
        times = [repaint_time(fd, b"l" if i % 2 == 0 else b"h") for i in range(args.keys)]
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    print(f"start to first frame: {(painted - started) * 1000:.0f} ms")
    print(f"key press to repaint: median {statistics.median(times) * 1000:.1f} ms "
          f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}, {len(times)} keys)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
