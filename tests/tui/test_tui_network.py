"""Two app instances play TRICE against each other over loopback sockets, through their screens:
host a table, paste the invite, wait in the room, play by key presses, verify the transcript."""

import functools
import random

import pytest
from textual.widgets import Input

from dicetable.core import registry
from dicetable.core.bots import RandomBot
from dicetable.core.dice_expr import parse
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.screens.net_screens import HostScreen
from dicetable.tui.screens.trice_screen import TriceScreen, pool_slots
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from tui_pilot import click_cell, paste_invite, until_shown
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # two apps and a network session

TRICE = registry.get("trice")


async def press_move(pilot, screen, move):
    arg = move.args[0]
    if move.kind == "choose":
        await pilot.press(arg[0].lower(), arg[1])
    else:
        await pilot.press(arg[0], arg[1])
    await pilot.press("enter")


async def click_move(pilot, screen, move):
    arg = move.args[0]
    if move.kind == "choose":
        assert await click_cell(pilot, f"pool-{pool_slots(screen.view.state).index(arg)}")
    else:
        assert await click_cell(pilot, f"sq-{arg}")


@pytest.mark.slow
async def test_two_apps_play_trice_over_loopback(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host_app = DiceTableApp(profile_dir=tmp_path / "ann")
    join_app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with host_app.run_test(size=(80, 24)) as host, join_app.run_test(size=(80, 24)) as join:
        pilots = (host, join)
        # The host opens a table on 127.0.0.1 and a free port; the room shows the invite.
        await host.press("h")
        assert isinstance(host_app.screen, HostScreen)
        await host.press("ctrl+o")  # Open (the focus is on the game: its Enter opens nothing)
        await wait_until(pilots, lambda: isinstance(host_app.screen, WaitingRoomScreen) and host_app.screen.table.invite)
        invite = host_app.screen.table.invite
        assert invite.startswith("dt1-")
        await wait_until(pilots, lambda: host_app.screen.query_one("#room-invite-code").text == invite)
        # The joiner pastes it.
        await paste_invite(join, join_app, invite)
        # Both rooms fill, and both turn into the TRICE table.
        await wait_until(pilots, lambda: isinstance(host_app.screen, TriceScreen) and isinstance(join_app.screen, TriceScreen))
        screens = {"host": host_app.screen, "join": join_app.screen}
        await wait_until(pilots, lambda: all(s.view is not None and s.view.state is not None and s.view.state.phase != "setup" for s in screens.values()))
        # The keys belong to the board: neither the tabs nor the chat log took the focus.
        assert host_app.focused is None and join_app.focused is None
        # Each seat's fairness panel lists the setup roll with every seat's reveal checked.
        for screen in screens.values():
            event = screen.view.events[0]
            assert event.status == "verified" and len(event.reveals) == 2
            assert all(r.status == "verified" for r in event.reveals)
        # Both people pick at random among legal moves: such games end within a few turns.
        me = RandomBot(TRICE, random.Random(5))
        turns = 0
        while True:
            await wait_until(pilots, lambda: any(s.view.result is not None or s.view.my_turn() for s in screens.values()))
            if all(s.view.result is not None for s in screens.values()):
                break
            ready = [(n, s) for n, s in screens.items() if s.view.result is None and s.view.my_turn()]
            if not ready:
                continue
            name, screen = ready[0]
            pilot = host if name == "host" else join
            state = screen.view.state
            # The first move by keys, the rest by clicks (one event each: quicker on a busy machine).
            await (press_move if turns == 0 else click_move)(pilot, screen, me.choose(state))
            other = screens["join" if name == "host" else "host"]
            await wait_until(pilots, lambda: screen.view.state is not state and other.view.state == screen.view.state)
            turns += 1
            assert turns < 300
        results = {n: s.view.result for n, s in screens.items()}
        assert results["host"] == results["join"]
        # Both sides saw the same log and both may verify their transcript from the panel.
        await wait_until(pilots, lambda: isinstance(host_app.screen, GameOverDialog))
        await host.press("escape")
        await host.press("v")
        verdict = str(screens["host"].query_one("#fair-verify").render())
        assert "valid: trice" in verdict, verdict
        # The joiner verifies with a click on the panel's "verify now".
        await wait_until(pilots, lambda: isinstance(join_app.screen, GameOverDialog))
        await join.press("escape")
        await join.press("f")
        await until_shown(join, "#fair-head")
        assert await join.click("#fair-head", offset=(2, 0))
        await wait_until(pilots, lambda: "valid: trice" in str(screens["join"].query_one("#fair-verify").render()))
        assert screens["host"].view.log == screens["join"].view.log


@pytest.mark.slow
async def test_two_apps_share_a_dice_room_over_loopback(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host_app = DiceTableApp(profile_dir=tmp_path / "ann")
    join_app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with host_app.run_test(size=(80, 24)) as host, join_app.run_test(size=(80, 24)) as join:
        pilots = (host, join)
        await host.press("d", "h")  # dice room, host a room (2 seats by default)
        assert isinstance(host_app.screen, HostScreen) and host_app.screen.game == "diceroom"
        host_app.screen.query_one("#host-clock", Input).value = "90"  # seconds per move: seat clocks
        await until_shown(host, "#open")
        assert await host.click("#open")
        await wait_until(pilots, lambda: isinstance(host_app.screen, WaitingRoomScreen) and host_app.screen.table.invite)
        await paste_invite(join, join_app, host_app.screen.table.invite)
        await wait_until(pilots, lambda: all(app.screen.__class__.__name__ == "DiceRoomScreen" for app in (host_app, join_app)))
        rooms = {"host": host_app.screen, "join": join_app.screen}
        # Anyone rolls at any moment (the app's room is free): nobody is due, so no seat has a clock.
        for room in rooms.values():
            await wait_until(pilots, lambda: room.view is not None and room.view.state.free and
                             not room.query_one("#roll-input", Input).disabled)
            assert all(seat.deadline is None for seat in room.view.seats)
        # The joiner rolls first; then both roll at once, without waiting for each other.
        await join.press(*"d20+2", "enter")
        await wait_until(pilots, lambda: all(len(r.view.state.rolls) == 1 for r in rooms.values()))
        assert rooms["host"].view.state.rolls[0].seat == 1 and rooms["host"].view.state.rolls[0].expr == str(parse("d20+2"))
        await host.press(*"3d6", "enter")
        await join.press(*"4d6kh3", "enter")
        await wait_until(pilots, lambda: all(len(r.view.state.rolls) == 3 for r in rooms.values()))
        assert {(r.seat, r.expr) for r in rooms["join"].view.state.rolls[1:]} == {(0, str(parse("3d6"))), (1, str(parse("4d6kh3")))}
        assert rooms["host"].view.state.rolls == rooms["join"].view.state.rolls
        # A malformed expression: one line naming what is wrong, nothing rolled.
        await join.press(*"2x", "enter")
        await wait_until(pilots, lambda: any(n.title == "Not a roll" and "2x" in n.message for n in join_app._notifications))
        for room in rooms.values():
            assert len(room.view.state.rolls) == 3
            assert [e.status for e in room.view.events] == ["verified"] * 3
            # the people in the room revealed; the room's free places (it is open: PROTOCOL.md §5.2) count as zeros
            assert all(r.status == ("out" if room.view.seats[r.seat].kind == "free" else "verified")
                       for e in room.view.events for r in e.reveals)
            # The history: who rolled what, the dice, each seat's reveal checked.
            names = room.view.names
            history = room.query_one("#roll-history").shown
            assert history[0].startswith(f"  1. {names[1]} rolled {parse('d20+2')}: ")
            assert all(f"reveals {names[0]} ✓ {names[1]} ✓" in line for line in history)
        # F5 shares the last roll in one line that any seat's transcript confirms (net/log/roll_line.py).
        await join.press("f5")
        await wait_until(pilots, lambda: any(n.title == "Share this roll" for n in join_app._notifications))
        shared = next(n.message for n in join_app._notifications if n.title == "Share this roll").splitlines()[-1]
        from dicetable.net.log.roll_line import check

        assert check(shared, rooms["host"].controller.session.replica) == shared and ", event 3, " in shared
        # Only the host closes the room.
        assert not rooms["join"].query_one("#close").display and not rooms["join"].query_one("#pass").display
        # ...and a free room has no turn to pass: the footers offer only what each seat can do.
        assert "f2" not in rooms["host"].active_bindings and "f3" in rooms["host"].active_bindings
        assert "f2" not in rooms["join"].active_bindings and "f3" not in rooms["join"].active_bindings
        await host.press("f3")
        await wait_until(pilots, lambda: all(r.view.result is not None for r in rooms.values()))
        assert "closed the room after 3 rolls" in rooms["join"].view.result.reason


@pytest.mark.slow
async def test_a_seat_that_stays_away_past_its_clock_loses_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host_app = DiceTableApp(profile_dir=tmp_path / "ann")
    join_app = DiceTableApp(profile_dir=tmp_path / "bob")
    told = {host_app: [], join_app: []}  # every notice each app gave, kept: a toast is gone in seconds
    notify = DiceTableApp.notify

    def keep(app, message, *args, **kwargs):
        told[app].append(str(message))
        return notify(app, message, *args, **kwargs)

    monkeypatch.setattr(DiceTableApp, "notify", keep)
    async with host_app.run_test(size=(80, 24)) as host, join_app.run_test(size=(80, 24)) as join:
        pilots = (host, join)
        await host.press("h")
        # Six seconds per move: a seat disputes a claim that its own clock refutes (FAIRNESS.md §4) with a
        # slack of min(heartbeat, clock / 4); at two seconds (0.5 s slack) a loaded machine that showed
        # the joiner its turn half a second late made it dispute and leave, and the game never ended.
        host_app.screen.query_one("#host-clock", Input).value = "6"
        await until_shown(host, "#open")
        assert await host.click("#open")
        await wait_until(pilots, lambda: isinstance(host_app.screen, WaitingRoomScreen) and host_app.screen.table.invite)
        await paste_invite(join, join_app, host_app.screen.table.invite)
        await wait_until(pilots, lambda: all(isinstance(app.screen, (TriceScreen, GameOverDialog)) for app in (host_app, join_app)))
        screens = [next(s for s in app.screen_stack if isinstance(s, TriceScreen)) for app in (host_app, join_app)]
        # Nobody moves: the seat due to choose runs out of time and the other claims the game.
        await wait_until(pilots, lambda: all(s.view is not None and s.view.result is not None for s in screens))
        results = [s.view.result for s in screens]
        assert results[0] == results[1] and "in default" in results[0].reason
        loser = next(seat for seat in (0, 1) if seat not in results[0].winners)
        for screen in screens:
            names = screen.view.names
            assert f"{names[loser]} in default" in str(screen.query_one("#status").render())
            assert any("claims the game" in entry.words(names) for entry in screen.view.log)
        winner_app = (host_app, join_app)[1 - loser]
        await wait_until(pilots, lambda: any("is in default" in message for message in told[winner_app]))


@pytest.mark.slow
async def test_esc_asks_before_leaving_and_resign_is_a_visible_confirmed_key(tmp_path, monkeypatch):
    """issue 34: at a network game in play, Esc asks (stay, leave and come back, resign) with the focus
    on Stay; F9 (shown in the footer) resigns after a confirmation; both seats see the end."""
    from textual.widgets import Button

    from dicetable.tui.screens.dialogs import LeaveDialog

    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host_app = DiceTableApp(profile_dir=tmp_path / "ann")
    join_app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with host_app.run_test(size=(80, 24)) as host, join_app.run_test(size=(80, 24)) as join:
        pilots = (host, join)
        await host.press("h")
        await host.press("ctrl+o")
        await wait_until(pilots, lambda: isinstance(host_app.screen, WaitingRoomScreen) and host_app.screen.table.invite)
        await paste_invite(join, join_app, host_app.screen.table.invite)
        await wait_until(pilots, lambda: isinstance(host_app.screen, TriceScreen) and isinstance(join_app.screen, TriceScreen))
        table, other = join_app.screen, host_app.screen
        await wait_until(pilots, lambda: table.view is not None and table.view.state is not None and table.view.state.phase != "setup")
        assert "f9" in table.active_bindings and table.check_action("resign", ())
        await join.press("escape")  # asked, never left by a blind Esc
        await wait_until(pilots, lambda: isinstance(join_app.screen, LeaveDialog))
        asked = join_app.screen
        assert asked.focused is asked.query_one("#stay", Button) and asked.query("#leave")
        assert f"{table.view.names[0]} wins at once" in str(asked.query_one("#over-detail").render())
        await join.press("escape")  # stay
        await wait_until(pilots, lambda: join_app.screen is table)
        assert table.view.result is None
        await join.press("f9")
        await wait_until(pilots, lambda: isinstance(join_app.screen, LeaveDialog))
        assert not join_app.screen.query("#leave")  # resigning only: nothing to come back to
        await join.press("r")
        await wait_until(pilots, lambda: table.view.result is not None and other.view.result is not None)
        assert table.view.result == other.view.result and table.view.result.winners == (0,)
        assert "resigned" in table.view.result.reason
        await wait_until(pilots, lambda: not table.check_action("resign", ()))  # the game is over: no resign key
