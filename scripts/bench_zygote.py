#!/usr/bin/env python3
"""What would a zygote save `dicetable serve-ssh`? N served apps (80 × 24 pseudo-terminals, each
taken to the lobby as a first login is: Enter at the name prompt) started as serve-ssh starts them
now (`exec`: a fresh Python each), or forked from one parent that imported the app first and froze
its objects (`fork`: gc.freeze, the zygote idea). Prints each mode's proportional memory (Pss) per
app, their sum with the parent's, and the time from start to the lobby drawn.

Usage: .venv/bin/python scripts/bench_zygote.py [--apps 16] [--mode exec|fork|both]
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import os
import pty
import re
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

CONTROLS = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[()][0-9A-Za-z]|.)")
APP = "import sys; from dicetable.tui.app import run_app; sys.exit(run_app())"  # as tui/ssh_server.py runs it


def pss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start(mode: str, data: Path, n: int) -> tuple[int, int, float]:
    home = data / f"p{n}"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "HOME": str(home), "DICETABLE_HOME": str(home), "USER": f"p{n}", "MALLOC_ARENA_MAX": "2",
           "DICETABLE_SERVED": str(data / "lobby")}
    began = time.monotonic()
    pid, master = pty.fork()
    if pid == 0:
        try:
            if mode == "fork":
                os.environ.clear()
                os.environ.update(env)
                from dicetable.tui.app import run_app

                os._exit(run_app() or 0)
            os.execve(sys.executable, [sys.executable, "-c", APP], env)
        finally:
            os._exit(127)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    seen, answered = b"", False
    while b"who is here now" not in CONTROLS.sub(b"", seen):
        if not select.select([master], [], [], 60)[0]:
            raise SystemExit(f"app {n}: no lobby within 60 s")
        seen += os.read(master, 65536)
        if not answered and b"Welcome" in CONTROLS.sub(b"", seen):
            os.write(master, b"\r")  # the login name offered as the player's name
            answered = True
    return pid, master, time.monotonic() - began


def measure(mode: str, apps: int, settle: float) -> None:
    if mode == "fork":  # the zygote: everything the lobby needs imported once, its objects kept out of the GC
        import dicetable.net.identity  # noqa: F401
        import dicetable.tui.app  # noqa: F401
        import dicetable.tui.screens.home_screen  # noqa: F401
        import dicetable.tui.screens.lobby_screen  # noqa: F401
        import dicetable.tui.screens.welcome_screen  # noqa: F401

        gc.freeze()
    with tempfile.TemporaryDirectory() as data:
        started = [start(mode, Path(data), n) for n in range(apps)]  # one after another, as logins come
        time.sleep(settle)
        for _, master, _ in started:  # what they drew meanwhile
            while select.select([master], [], [], 0)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    break
        each = [pss(pid) for pid, _, _ in started]
        parent = pss(os.getpid()) if mode == "fork" else 0.0
        print(f"{mode}: {apps} apps, Pss per app median {statistics.median(each):.1f} MB, sum with the parent "
              f"{sum(each) + parent:.0f} MB (parent {parent:.0f} MB); to the lobby median "
              f"{statistics.median(t for *_, t in started):.2f} s", flush=True)
        for pid, master, _ in started:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=16)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds in the lobby before measuring")
    parser.add_argument("--mode", choices=("exec", "fork", "both"), default="both")
    args = parser.parse_args()
    if args.mode != "both":
        measure(args.mode, args.apps, args.settle)
        return
    for mode in ("exec", "fork"):  # each in a process of its own: the fork mode's imports would taint exec's
        subprocess.run([sys.executable, __file__, "--apps", str(args.apps), "--settle", str(args.settle), "--mode", mode],
                       check=True)


if __name__ == "__main__":
    main()
