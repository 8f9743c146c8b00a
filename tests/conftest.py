"""Shared fixtures for every layer's tests (tests/core, tests/net, tests/tui, tests/system).

This folder is on `sys.path` for the test modules, so they import the helper modules beside this
file by name: `net_helpers` (processes, namespaces, sync waits) and `tui_pilot` (the app's Pilot).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

IDLE_CAP = float(os.environ.get("DICETABLE_TEST_IDLE_CAP", "0.05"))  # seconds; 1 is Textual's own


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """The profile directory (DICETABLE_HOME) of this test and of every `dicetable` it starts
    without one of its own: never the real one. Not made yet, as on a first run; the test's own
    files sit beside it in `tmp_path`. This machine's lobby (DICETABLE_LOBBY_DIR) is the test's own too."""
    path = tmp_path / "home"
    monkeypatch.setenv("DICETABLE_HOME", str(path))
    monkeypatch.setenv("DICETABLE_LOBBY_DIR", str(tmp_path / "lobby"))
    return path


@pytest.fixture
def quick_idle(monkeypatch):
    """Pilot's waits for idle capped at IDLE_CAP (a module opts in with
    `pytestmark = pytest.mark.usefixtures("quick_idle")`).

    After every key and click Textual's Pilot waits until this process's CPU time stops advancing
    (up to 1 s). With bot threads or a second app and its network session in the process, it is
    rarely idle, so each key cost up to a second. Capped, events are still handled in order (Pilot
    then waits for the screen's message queues), and every test waits for the result it checks
    explicitly (its `wait_until`), so nothing proved is lost.
    """
    import textual._wait
    import textual.app
    import textual.pilot

    quick = functools.partial(textual._wait.wait_for_idle, max_sleep=IDLE_CAP)
    monkeypatch.setattr(textual.app, "wait_for_idle", quick)
    monkeypatch.setattr(textual.pilot, "wait_for_idle", quick)
