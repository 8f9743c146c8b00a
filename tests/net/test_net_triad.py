"""TRIAD over real sockets on 127.0.0.1 (issue 6, "Must show"): two `dicetable` processes finish a
game whose transcripts verify, and the app joins a hosted TRIAD table and plays it by keys.
"""

from __future__ import annotations

import functools
import random
import subprocess
from pathlib import Path

import pytest

from dicetable.core import registry
from dicetable.core.triad import INDEX, act
from dicetable.net.transcript import read
from dicetable.net.verify import verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.screens.triad_screen import TriadScreen
from net_helpers import COMMAND, last_line, read_invite, spawn
from tui_pilot import paste_invite
from tui_pilot import wait_until as wait_a_while

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # a network table

TRIAD = registry.get("triad")


@pytest.mark.slow
def test_two_processes_finish_a_triad_game_whose_transcripts_verify(tmp_path):
    host = spawn(tmp_path, "alice", "host", "triad", "--port", "0", "--bind", "127.0.0.1", "--bot", "search",
                 "--seed", "1", "--name", "alice", "--transcript", str(tmp_path / "alice.dtt"))
    joiner = None
    try:
        invite = read_invite(host)
        joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "greedy", "--seed", "2", "--name", "bob",
                       "--transcript", str(tmp_path / "bob.dtt"))
        out_j, err_j = joiner.communicate(timeout=60)
        out_h, err_h = host.communicate(timeout=30)
    finally:
        for process in (host, joiner):
            if process is not None and process.poll() is None:
                process.kill()
    assert joiner.returncode == 0, err_j
    assert host.returncode == 0, err_h
    assert "joined: seat 1 bob" in out_h and "started" in out_j
    result = last_line(out_h, "result:")
    assert result == last_line(out_j, "result:")
    assert "took off a third die" in result or "draw" in result
    # Both transcripts hold the same log, and each verifies on its own.
    logs = []
    for name in ("alice", "bob"):
        path = tmp_path / f"{name}.dtt"
        verdict = verify(path)
        assert verdict.valid, verdict.line()
        logs.append(read(path).frames)
        check = subprocess.run([str(COMMAND), "verify", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        assert check.stdout.startswith("valid: triad,") and "moves, result:" in check.stdout
    assert logs[0] == logs[1]
    assert verdict.line() == check.stdout.strip()  # the command says what the module found


@pytest.mark.slow
async def test_the_app_joins_a_hosted_triad_table_and_plays_it_by_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host = spawn(tmp_path, "alice", "host", "triad", "--port", "0", "--bot", "greedy", "--seed", "3",
                 "--name", "alice", "--transcript", str(tmp_path / "alice.dtt"))
    try:
        invite = read_invite(host)
        app = DiceTableApp(profile_dir=tmp_path / "bob")
        async with app.run_test(size=(80, 24)) as pilot:
            await paste_invite(pilot, app, invite)
            await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen))
            screen = app.screen
            await wait_until(pilot, lambda: screen.view is not None and screen.view.state is not None
                             and screen.view.state.phase not in ("draw", "setup"))
            # The fairness panel lists both random events with each seat's reveal checked.
            events = screen.view.events
            assert [e.label for e in events] == ["draw for Black", "setup roll"]
            assert all(e.status == "verified" and len(e.reveals) == 2 for e in events)
            assert events[1].outcome.startswith("Black rolled ")
            me = random.Random(4)
            moves = 0
            while True:
                await wait_until(pilot, lambda: screen.view.result is not None or screen.view.my_turn())
                if screen.view.result is not None:
                    break
                state = screen.view.state
                move = me.choice(state.legal_moves())
                await play_by_keys(pilot, screen, move)
                await wait_until(pilot, lambda: screen.view.state is not state)
                moves += 1
                assert moves < 200
            await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
            await pilot.press("escape")
            await pilot.press("v")
            verdict = str(screen.query_one("#fair-verify").render())
            assert "valid: triad" in verdict, verdict
            transcript = Path(screen.view.transcript)
        out_h, err_h = host.communicate(timeout=30)
    finally:
        if host.poll() is None:
            host.kill()
    assert host.returncode == 0, err_h
    assert read(transcript).frames == read(tmp_path / "alice.dtt").frames
    assert verify(tmp_path / "alice.dtt").valid


async def play_by_keys(pilot, screen, move) -> None:
    """The cursor to the die, Enter, the value's digit, the cursor to the landing square, Enter."""
    async def cursor_to(square: int) -> None:
        (r0, c0), (r1, c1) = divmod(screen.cursor, 6), divmod(square, 6)
        await pilot.press(*["right" if c1 > c0 else "left"] * abs(c1 - c0),
                          *["up" if r1 > r0 else "down"] * abs(r1 - r0))

    if move.kind == "pass":
        await pilot.press("enter")
        return
    await cursor_to(INDEX[move.args[0]])
    await pilot.press("enter")
    if move.kind == "remove":
        return
    if move.kind in ("move", "turn"):
        await pilot.press(str(move.args[1]))
    await cursor_to(act(screen.view.state.board, move)[1])
    await pilot.press("enter")
