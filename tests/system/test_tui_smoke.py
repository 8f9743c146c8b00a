"""The real app in a real terminal: scripts/tui_smoke.sh drives `dicetable play` inside tmux."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tui_smoke.sh"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed; the smoke test drives the app in tmux")
def test_tui_smoke_script_plays_in_tmux():
    # A terminal's own environment, not the test runner's: with pytest's variables inherited by the
    # tmux server the app did not redraw on a resize (seen when no tmux server was already running).
    env = {k: os.environ[k] for k in ("PATH", "HOME", "TERM", "LANG", "NO_COLOR") if k in os.environ}
    done = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("tui_smoke: ok")
