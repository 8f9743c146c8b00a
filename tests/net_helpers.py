"""`dicetable` processes and shared pieces for the network tests (imported by them; not a test module)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from net.session import Timing

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).with_name("dicetable")
# Session clocks quick enough for tests to see drops and returns within a second.
FAST = Timing(heartbeat=0.1, drop_after=0.6, grace=30.0, reveal_deadline=30.0, connect_timeout=3.0)


def wait_until(condition, timeout: float = 10.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def spawn(tmp_path: Path, who: str, *args: str) -> subprocess.Popen:
    """A `dicetable` process with its own profile directory (each player is a different person)."""
    env = {**os.environ, "DICETABLE_HOME": str(tmp_path / who)}
    return subprocess.Popen([str(COMMAND), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env)


def read_invite(process: subprocess.Popen) -> str:
    for line in process.stdout:
        if line.startswith("invite: "):
            return line.split()[1]
    raise AssertionError(f"no invite printed: {process.stderr.read()}")


def last_line(out: str, prefix: str) -> str:
    found = [line for line in out.splitlines() if line.startswith(prefix)]
    assert found, f"no {prefix!r} line in {out!r}"
    return found[-1][len(prefix):].strip()
