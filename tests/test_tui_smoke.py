"""The real app in a real terminal: scripts/tui_smoke.sh drives `dicetable play` inside tmux."""

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "tui_smoke.sh"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed; the smoke test drives the app in tmux")
def test_tui_smoke_script_plays_in_tmux():
    done = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("tui_smoke: ok")
