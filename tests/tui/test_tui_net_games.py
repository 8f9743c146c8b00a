"""The app at network tables: it joins a hosted TRIAD table and a three-seat Dice Breaker battle (hosted
by `dicetable` processes) and plays them by keys (issues 6 and 7, "Must show"), and joins a TRICE table
from its LAN list, which shows each table's trust (LAN discovery, net/reach/lan.py).
"""

from __future__ import annotations

import functools
import random
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable

from dicetable.core import registry
from dicetable.core.dicebreaker import LATENT, THROW, TRUMP_THROW
from dicetable.core.triad import INDEX, act
from dicetable.net.reach import announcement, lan
from dicetable.net.reach.announcement import FORGED, UNVERIFIED, VERIFIED, KnownHosts
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.session import bot_chooser
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.screens.dicebreaker_screen import DiceBreakerScreen
from dicetable.tui.screens.lan_screen import LanScreen
from dicetable.tui.screens.triad_screen import TriadScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from net_helpers import last_line, read_invite, spawn
from tui_pilot import paste_invite
from tui_pilot import wait_until as wait_a_while

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # a network table


# -- TRIAD, hosted by a `dicetable` process ---------------------------------------------------------
@pytest.mark.slow
async def test_the_app_joins_a_hosted_triad_table_and_plays_it_by_keys(tmp_path):
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
            names = screen.view.names
            assert [e.label.words(names) for e in events] == ["draw for Black", "setup roll"]
            assert all(e.status == "verified" and len(e.reveals) == 2 for e in events)
            assert events[1].outcome.words(names).startswith("Black rolled ")
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


# -- Dice Breaker, hosted by a `dicetable` process with a bot at a second seat -------------------
@pytest.mark.slow
async def test_the_app_joins_a_three_seat_battle_and_plays_it_by_keys(tmp_path):
    host = spawn(tmp_path, "ann", "host", "dicebreaker", "--seats", "3", "--option", "mode=battle",
                 "--option", "target=4", "--option", "spinning_num=1", "--option", "spinning_den=3",
                 "--port", "0", "--bot", "greedy", "--seed", "3", "--name", "ann",
                 "--transcript", str(tmp_path / "ann.dtt"))
    joiner = None
    try:
        invite = read_invite(host)
        joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "greedy", "--seed", "4", "--name", "bob",
                       "--transcript", str(tmp_path / "bob.dtt"))
        app = DiceTableApp(profile_dir=tmp_path / "cy")
        async with app.run_test(size=(80, 24)) as pilot:
            await paste_invite(pilot, app, invite)
            await wait_until(pilot, lambda: isinstance(app.screen, DiceBreakerScreen))
            screen = app.screen
            answered = thrown = 0
            while True:
                await wait_until(pilot, lambda: screen.view.result is not None or screen.view.my_turn())
                if screen.view.result is not None:
                    break
                state = screen.view.state
                if state.phase == LATENT:
                    # Asked with every other seat's answer still sealed: none is opened yet.
                    sealing = screen.controller.session.replica.sealing
                    assert sealing is not None and not any(sealing.answers), sealing
                    await pilot.press("y" if answered % 2 else "n")
                    answered += 1
                else:
                    assert state.phase in (THROW, TRUMP_THROW)
                    await pilot.press("enter" if thrown % 2 and screen.targets() else "r")
                    thrown += 1
                await wait_until(pilot, lambda: screen.view.state is not state or screen.view.result is not None)
                assert thrown + answered < 200
            assert thrown
            await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
            await pilot.press("escape")
            # The fairness panel lists every throw with each of the three seats' reveals checked.
            events = screen.view.events
            assert events and all(e.status == "verified" and len(e.reveals) == 3 for e in events)
            assert any(" shows " in e.outcome.words(screen.view.names) for e in events)
            await pilot.press("v")
            verdict = str(screen.query_one("#fair-verify").render())
            assert "valid: dicebreaker" in verdict, verdict
            transcript = Path(screen.view.transcript)
        out_h, err_h = host.communicate(timeout=30)
        out_j, err_j = joiner.communicate(timeout=30)
    finally:
        for process in (host, joiner):
            if process is not None and process.poll() is None:
                process.kill()
    assert host.returncode == 0, err_h
    assert joiner.returncode == 0, err_j
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    assert read(transcript).frames == read(tmp_path / "ann.dtt").frames
    assert verify(tmp_path / "bob.dtt").valid


# -- the LAN list (fed announcements directly: browsing would open mDNS on this machine) ------------
@pytest.mark.slow
async def test_the_lan_list_shows_trust_and_joins_with_enter(tmp_path):
    ann = Profile.generate("Ann")
    host = HostSession(ann, "trice", 2, bind="127.0.0.1", port=0, chooser=bot_chooser(registry.get("trice"), "random", 1))
    host.open()
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    port, table = host.socket.port, host.replica.table
    real = announcement.parse(f"Ann trice {table.hex()[:8]}.{lan.SERVICE_TYPE}",
                           announcement.properties(ann, "trice", 1, 2, table, port), port, ["127.0.0.1"])
    impostor = Profile.generate("Ann")  # right name, wrong key
    forged = announcement.parse(f"Ann trice 00000000.{lan.SERVICE_TYPE}",
                             announcement.properties(impostor, "trice", 1, 2, bytes(16), port), port, ["127.0.0.1"])
    elsewhere = bytes(range(16))  # another table: a host never met, and a full one
    stranger, full = (announcement.parse(f"{who.name} trice {elsewhere.hex()[:8]}.{lan.SERVICE_TYPE}",
                                      announcement.properties(who, "trice", taken, 2, elsewhere, 40000), 40000, ["127.0.0.1"])
                      for who, taken in ((Profile.generate("Cy"), 1), (Profile.generate("Di"), 2)))
    bob = tmp_path / "bob"
    KnownHosts(bob).pin(ann.public_key, ann.curve_public, "Ann")
    app = DiceTableApp(profile_dir=bob)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = LanScreen(browse=False)
            await app.push_screen(screen)
            screen.show([forged, stranger, real, full])
            await pilot.pause()
            grid = screen.query_one(DataTable)
            rows = [[str(cell) for cell in grid.get_row_at(i)] for i in range(grid.row_count)]
            assert [r[0] for r in rows] == [FORGED, UNVERIFIED, VERIFIED]  # the full table is not listed
            assert rows[2][1:] == ["trice", "1/2", "Ann", ann.fingerprint, f"127.0.0.1:{port}"]
            note = str(screen.query_one("#lan-note").render())
            assert "forged" in note and "calls itself Ann" in note  # the highlighted row, in words
            await pilot.press("enter")  # on the forged row: refused, nothing joined
            assert app.screen is screen and "Not joining" in str(screen.query_one("#lan-note").render())
            await pilot.press("down", "down", "enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen))
            assert app.screen.controller.session.replica.seats[0].key == ann.public_key
            await pilot.press("ctrl+q")
    finally:
        host.stop()
        thread.join(10)
