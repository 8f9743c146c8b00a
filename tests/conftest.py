"""Shared fixtures for every layer's tests (tests/core, tests/net, tests/tui, tests/system).

This folder is on `sys.path` for the test modules, so they import the helper modules beside this
file by name: `net_helpers` (processes, namespaces, sync waits) and `tui_pilot` (the app's Pilot).
"""

from __future__ import annotations

import asyncio
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


@pytest.fixture(autouse=True, scope="session")
def settled_pilot():
    """Every Pilot step (`press`, `click`, `pause`) returns only once the key or click has been
    handled all the way: Textual's own wait covers the messages queued when it starts, but a key
    hops from the app to the focused widget and bubbles up to the screen's binding (a click posts
    `Pressed`, whose handler pushes a screen), each hop a message queued after that wait began. On a
    quiet machine the CPU-idle wait hides the gap; on a busy one the process is descheduled, looks
    idle, and a test asserted the screen before the key had reached it. Here the wait goes on until
    no message pump of the app, its screens and their widgets holds a message, twice in a row
    (bounded: a pump that never settles, such as a running clock, costs at most SETTLE_CAP)."""
    import textual.pilot

    original = textual.pilot.Pilot._wait_for_screen

    async def wait_for_screen(self, timeout: float = 30.0) -> bool:
        done = await original(self, timeout)
        loop = asyncio.get_running_loop()
        end = loop.time() + SETTLE_CAP
        calm = 0  # a handler that awaits holds no message while it runs: ask for two calm looks in a row
        while calm < 2 and loop.time() < end:
            await asyncio.sleep(0)
            calm = calm + 1 if settled(self.app) else 0
            if not calm:
                done = await original(self, timeout)
        return done

    textual.pilot.Pilot._wait_for_screen = wait_for_screen
    yield
    textual.pilot.Pilot._wait_for_screen = original


SETTLE_CAP = 5.0  # seconds; only a pump kept busy for good (an animation, a clock) meets it


def settled(app) -> bool:
    """No message waits for the app or any widget of its screens."""
    pumps = [app]
    for screen in app._screen_stack:
        pumps.extend(screen.walk_children(with_self=True))
    return all(pump._message_queue.empty() and pump._pending_message is None for pump in pumps)
