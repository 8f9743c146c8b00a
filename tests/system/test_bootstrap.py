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
    assert len(lines) == 1 and "installing" in lines[0] and "about 11 s" in lines[0], first.stderr
    assert NOISE not in first.stderr + first.stdout
    assert NOISE in (root / ".venv" / "install.log").read_text()  # kept, for whoever wants it
    calls = (root / ".venv" / "pip-calls").read_text().splitlines()
    assert [call.split()[2] for call in calls] == ["pip", "pip", "compileall"], calls  # pip upgraded, project
    assert calls[2].endswith(f"{root}/core {root}/net {root}/tui"), calls  # installed, its bytecode compiled
    again = play(root)  # installed: nothing is said, nothing is redone
    assert again.returncode == 0 and again.stderr == "" and again.stdout == first.stdout
    assert len((root / ".venv" / "pip-calls").read_text().splitlines()) == 3


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


def test_play_runs_the_command_in_the_callers_directory(tmp_path):
    """`scripts/play verify games/x.dtt` from the caller's directory: the command runs there, so a
    relative path means what it says (the bootstrap's own work is done from the project's root)."""
    root = project(tmp_path)
    (root / ".venv" / "bin" / "dicetable").write_text('#!/bin/sh\necho "in $PWD with: $*"\n')
    elsewhere = tmp_path / "games"
    elsewhere.mkdir()
    ran = subprocess.run([str(root / "scripts" / "play"), "verify", "x.dtt"], capture_output=True, text=True,
                         cwd=elsewhere, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"in {elsewhere} with: verify x.dtt\n"


def test_the_test_script_still_runs_pytest_from_the_root(tmp_path):
    """scripts/test, run from anywhere, runs pytest in the project's root (its config, its test paths)."""
    root = project(tmp_path)
    shutil.copy2(ROOT / "scripts" / "test", root / "scripts" / "test")
    (root / ".venv" / ".dicetable-installed").touch()  # installed: only pytest runs
    fake = root / ".venv" / "bin" / "python"
    fake.write_text('#!/bin/sh\necho "in $PWD: python $*"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = subprocess.run([str(root / "scripts" / "test"), "-q"], capture_output=True, text=True, cwd=elsewhere,
                         env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(f"in {root}: python -m pytest "), ran.stdout


def test_play_reads_and_writes_relative_paths_of_the_caller(tmp_path):
    """The real scripts/play and its .venv, from another directory: a transcript recorded to a
    relative folder lands there, and `verify` finds it by its relative path."""
    stamp = ROOT / ".venv" / ".dicetable-installed"
    if not stamp.exists() or (ROOT / "pyproject.toml").stat().st_mtime > stamp.stat().st_mtime:
        pytest.skip("scripts/play would install into the project's .venv first: run it once (or scripts/test)")
    env = {**os.environ, "DICETABLE_HOME": str(tmp_path / "home")}

    def play_here(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "scripts" / "play"), *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)

    recorded = play_here("selfplay", "trice", "--games", "1", "--seed", "3", "--record", "games")
    assert recorded.returncode == 0, recorded.stderr
    (transcript,) = (tmp_path / "games").iterdir()
    checked = play_here("verify", f"games/{transcript.name}")
    assert checked.returncode == 0 and checked.stdout.startswith("valid: trice,"), checked
