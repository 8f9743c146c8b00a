"""The networked TRIAD rematch in the app (issue 19): a `dicetable host --games 2` process offers a
rematch at the game's end; the app, joined by its invite, sees the offer in the game-over dialog and
accepts it by key (the next game starts with the colours kept and the other player first) or declines
it by key; every copy of the one log verifies (net/log/rematch.py). 80 × 24.
"""

from __future__ import annotations

import contextlib
import functools
import random
from pathlib import Path

import pytest

from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.screens.triad_screen import TriadScreen
from net_helpers import last_line, read_invite, spawn
from test_fit_80x24 import cut_lines
from test_tui_net_games import play_by_keys
from tui_pilot import paste_invite
from tui_pilot import wait_until as wait_a_while

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # a network table


@contextlib.asynccontextmanager
async def joined_a_host_of_two(tmp_path, seed: int):
    """The app joined to `dicetable host triad --games 2` (alice, a bot), its first game played out by
    keys: (pilot, app, its TRIAD screen, the host process, a random source for the rest)."""
    host = spawn(tmp_path, "alice", "host", "triad", "--port", "0", "--bot", "greedy", "--seed", "3", "--name",
                 "alice", "--games", "2", "--heartbeat", "0.2", "--transcript", str(tmp_path / "alice.dtt"))
    try:
        invite = read_invite(host)
        app = DiceTableApp(profile_dir=tmp_path / "bob")
        async with app.run_test(size=(80, 24)) as pilot:
            await paste_invite(pilot, app, invite)
            await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen))
            screen, rng = app.screen, random.Random(seed)
            await play_out(pilot, screen, rng)
            yield pilot, app, screen, host, rng
    finally:
        if host.poll() is None:
            host.kill()


async def play_out(pilot, screen, rng: random.Random) -> None:
    """Play this terminal's seat by keys until the game shown ends."""
    for _ in range(200):
        await wait_until(pilot, lambda: screen.view.result is not None or screen.view.my_turn())
        if screen.view.result is not None:
            return
        state = screen.view.state
        await play_by_keys(pilot, screen, rng.choice(state.legal_moves()))
        await wait_until(pilot, lambda: screen.view.state is not state)
    raise AssertionError("the game did not end within 200 moves")


async def offered_dialog(pilot, app) -> GameOverDialog:
    """The game-over dialog once it shows the host's rematch offer, with its keys."""
    said = "alice offers a rematch (game 2): r accepts, n declines"
    await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog) and app.screen.query("#over-offer")
                     and said in str(app.screen.query_one("#over-offer").render()))
    dialog = app.screen
    assert dialog.query_one("#rematch").display and dialog.query_one("#decline").display
    assert str(dialog.query_one("#rematch").label) == "Accept (r)"
    await pilot.pause()
    assert cut_lines(dialog) == [] and cut_lines(dialog.app.screen_stack[-2]) == []  # 80 × 24, the board too
    return dialog


@pytest.mark.slow
async def test_the_app_accepts_a_rematch_by_key_and_the_other_player_starts_with_the_same_colours(tmp_path):
    async with joined_a_host_of_two(tmp_path, 4) as (pilot, app, screen, host, rng):
        first = screen.view.state
        await offered_dialog(pilot, app)
        await pilot.press("r")
        await wait_until(pilot, lambda: app.screen is screen and screen.view.result is None
                         and screen.view.state is not first and screen.view.state.first >= 0)
        second = screen.view.state
        assert second.black == first.black and second.first == 1 - first.first  # triad.md, Setup 3
        assert any("agrees to a rematch: game 2 starts" in entry.words(screen.view.names) for entry in screen.view.log)
        await play_out(pilot, screen, rng)
        # The host (two games asked for) declines a third: said on the status line; r is gone.
        await wait_until(pilot, lambda: screen.view.rematch == "declined")
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog) and not app.screen.can_rematch)
        dialog = app.screen
        assert dialog.said == "alice declined a rematch" and not dialog.query_one("#decline").display
        await pilot.press("escape")  # back to the board: its status line says it
        await wait_until(pilot, lambda: app.screen is screen)
        status = str(screen.query_one("#status").render())
        assert "alice declined a rematch" in status and not screen.controller.can_rematch()
        assert not app.screen.check_action("rematch", ())
        transcript = Path(screen.view.transcript)
        out_h, err_h = host.communicate(timeout=30)
    assert host.returncode == 0, err_h
    assert last_line(out_h, "game 1:") and last_line(out_h, "game 2:") == last_line(out_h, "result:")
    assert read(transcript).frames == read(tmp_path / "alice.dtt").frames
    verdict = verify(transcript)
    assert verdict.valid and "; game 2: " in verdict.result, verdict.line()


@pytest.mark.slow
async def test_the_app_declines_a_rematch_by_key_and_the_host_stops_after_one_game(tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "player")  # the login name the app's new profile takes, with or without $USER here
    async with joined_a_host_of_two(tmp_path, 5) as (pilot, app, screen, host, _):
        await offered_dialog(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: screen.view.rematch == "declined")
        assert app.screen is screen and "You declined a rematch" in str(screen.query_one("#status").render())
        transcript = Path(screen.view.transcript)
        out_h, err_h = host.communicate(timeout=30)  # the host's series ends with the app's refusal
    assert host.returncode == 0, err_h
    assert "rematch: seat 1 (player) declines a rematch" in out_h and "game 2:" not in out_h
    assert read(transcript).frames == read(tmp_path / "alice.dtt").frames
    assert verify(transcript).valid
