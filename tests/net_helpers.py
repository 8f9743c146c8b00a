"""`dicetable` processes for the network tests (imported by them; not a test module)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).with_name("dicetable")


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
