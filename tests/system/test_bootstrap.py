"""scripts/play's first run, as a newcomer sees it: one line saying it installs and how long that
usually takes; pip's output kept in .venv/install.log and shown only when the install fails.

The scripts run in a copy of the project whose .venv holds a fake `python` (it stands for pip and
prints what pip prints) and a fake `dicetable`, so nothing is downloaded or installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOISE = "Package 'dicetable.tui.rules' is absent from the packages configuration (a setuptools warning)"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "dicetable"
    (root / "scripts").mkdir(parents=True)
    for name in ("play", "_bootstrap.sh"):
        shutil.copy2(ROOT / "scripts" / name, root / "scripts" / name)
    (root / "pyproject.toml").write_text("[project]\nname = 'dicetable'\n")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    fake_pip = bin_dir / "python"
    fake_pip.write_text(f'#!/bin/sh\necho "{NOISE}"\necho "pip $*" >> "$(dirname "$0")/../pip-calls"\n'
                        'exit "${FAKE_PIP_STATUS:-0}"\n')
    app = bin_dir / "dicetable"
    app.write_text('#!/bin/sh\necho "the app opens with: $*"\n')
    for script in (fake_pip, app):
        script.chmod(0o755)
    return root


def play(root: Path, status: int = 0) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "FAKE_PIP_STATUS": str(status)}
    return subprocess.run([str(root / "scripts" / "play"), "rules", "trice"], capture_output=True, text=True,
                          env=env, timeout=60)


def test_the_first_run_says_it_installs_in_one_line_and_keeps_pip_quiet(tmp_path):
    root = project(tmp_path)
    first = play(root)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "the app opens with: rules trice\n"
    lines = first.stderr.splitlines()
    assert len(lines) == 1 and "installing" in lines[0] and "30 s" in lines[0], first.stderr
    assert NOISE not in first.stderr + first.stdout
    assert NOISE in (root / ".venv" / "install.log").read_text()  # kept, for whoever wants it
    assert len((root / ".venv" / "pip-calls").read_text().splitlines()) == 2  # pip upgraded, project installed
    again = play(root)  # installed: nothing is said, nothing is redone
    assert again.returncode == 0 and again.stderr == "" and again.stdout == first.stdout
    assert len((root / ".venv" / "pip-calls").read_text().splitlines()) == 2


def test_a_failed_install_shows_pips_output_and_stops(tmp_path):
    root = project(tmp_path)
    failed = play(root, status=1)
    assert failed.returncode == 1
    assert "the app opens" not in failed.stdout
    assert NOISE in failed.stderr and "the install failed" in failed.stderr
    assert not (root / ".venv" / ".dicetable-installed").exists()  # the next run tries again


def test_another_users_checkout_says_what_is_wrong_in_one_line():
    """A shared host: the checkout and its .venv belong to root, and `nobody` runs scripts/play when
    an install is due (pyproject.toml is newer than the last install): one line naming the owner and
    what to do, no pip, nothing changed."""
    runuser = shutil.which("runuser")
    if os.geteuid() != 0 or runuser is None:
        pytest.skip("needs root and runuser to run the script as another user")
    shared = Path(tempfile.mkdtemp(prefix="dicetable-shared-"))  # tmp_path's parents are root's own (0700)
    shared.chmod(0o755)
    try:
        root = project(shared)
        assert play(root).returncode == 0  # installed by its owner
        later = time.time() + 5  # an update pulled: pyproject.toml is newer than the install
        os.utime(root / "pyproject.toml", (later, later))
        calls = (root / ".venv" / "pip-calls").read_text()
        other = subprocess.run([runuser, "-u", "nobody", "--", str(root / "scripts" / "play"), "rules", "trice"],
                               capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
        assert other.returncode == 1 and other.stdout == ""
        lines = other.stderr.strip().splitlines()
        assert len(lines) == 1 and "belongs to root, not to you (nobody)" in lines[0], other.stderr
        assert "One machine, many users" in lines[0]
        assert (root / ".venv" / "pip-calls").read_text() == calls  # no install attempted
    finally:
        shutil.rmtree(shared)
