"""Watching a table in the app (issue 35): Join's Watch action (Ctrl+O) opens a TRICE table under way on
its own screen without a seat, follows it to the end through real sockets, and the seats hear who
watches; the watcher's transcript verifies."""

import functools

import pytest
from textual.widgets import DataTable, Input

from dicetable.core import registry
from dicetable.net.identity import Profile
from dicetable.net.log.verify import verify
from dicetable.net.table.events import Watching
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import bot_chooser
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.net_screens import JoinScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.widgets.seats import SeatsPanel
from net_helpers import FAST, in_thread, stop_all
from net_helpers import wait_until as wait_here
from test_tui_same_machine import close_tables
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

wait_until = functools.partial(wait_a_while, timeout=60.0, step=0.05)


async def test_watch_in_the_join_screen_follows_a_table_under_way_without_a_seat(tmp_path):
    trice, events = registry.get("trice"), []
    host = HostSession(Profile.generate("ann"), "trice", 2, timing=FAST, chooser=bot_chooser(trice, "random", 1),
                       think=0.3, on_event=events.append, transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, chooser=bot_chooser(trice, "random", 2), think=0.3,
                      transcript=tmp_path / "bob.dtt")
    in_thread(bob)
    app = DiceTableApp(profile_dir=tmp_path / "wendy")
    try:
        wait_here(lambda: host.replica.phase == "playing" and len(host.replica.log) > 8, 30, "the game under way")
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                await pilot.press("j")
                assert isinstance(app.screen, JoinScreen)
                app.screen.query_one("#join-invite", Input).value = invite
                await pilot.press("ctrl+o")
                def watched():  # the game's screen, under the game-over dialog once the game ends
                    return next((s for s in app.screen_stack if isinstance(s, TriceScreen)), None)

                await wait_until((pilot,), lambda: watched() is not None and watched().view is not None
                                 and watched().view.state is not None)
                view = watched().view
                assert view.local_seats == frozenset()  # no seat of its own: nothing to play
                assert [s.name for s in view.seats][:2] == ["ann", "bob"]
                table = watched().controller
                await wait_until((pilot,), lambda: table.session.finished)
                assert table.session.replica.result == host.replica.result or host.replica.result is None
                path = table.session.transcript_path
            finally:
                close_tables(app)
        wait_here(lambda: host.finished, 30, "the game's end")
    finally:
        stop_all(host, bob)
    assert any(isinstance(e, Watching) and e.count == 1 for e in events)  # the seats heard someone watch
    # (the app's seats show it as a notice: tui/tables/net_table.py)
    verdict = verify(path)
    assert verdict.valid and verdict.line() == verify(tmp_path / "ann.dtt").line()


async def test_the_host_in_the_app_is_told_who_watches_its_table(tmp_path):
    from dicetable.net.table.watcher import WatchSession
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
    from test_tui_same_machine import host_with

    app = DiceTableApp(profile_dir=tmp_path / "ann")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        try:
            await host_with(pilot, app)
            await wait_until((pilot,), lambda: isinstance(app.screen, WaitingRoomScreen) and app.screen.table.invite)
            watcher = WatchSession(Profile.generate("wendy"), app.screen.table.invite, timing=FAST)
            watcher.connect()  # the game is known from the log's opening: a table still waiting for players
            in_thread(watcher)
            await wait_until((pilot,), lambda: any("1 watching: wendy (" in str(n.message) for n in app._notifications))
            # ... and its seats panel says it for as long as they watch, under the seats
            panel = app.screen.query_one(SeatsPanel)
            await wait_until((pilot,), lambda: str(panel.render()).splitlines()[-1].startswith("1 watching: wendy ("))
            assert str(panel.render()).splitlines()[0] == f"  {app.profile().name} (you)"  # the seats first, whole
            stop_all(watcher)  # before the table closes under it
        finally:
            close_tables(app)


def bots_table(tmp_path, lan: bool = False, think: float = 0.3):
    """A TRICE table hosted on 127.0.0.1 by a bot seat (ann), open and in its thread (`lan`: announced in
    this machine's lobby, as the app's host form does), and bob's bot seat to join it when the test says:
    (host, invite, bob, events the host heard, its announcer or None)."""
    from dicetable.tui.tables.opening import Where, announce

    trice, events = registry.get("trice"), []
    host = HostSession(Profile.generate("ann"), "trice", 2, timing=FAST, chooser=bot_chooser(trice, "random", 1),
                       think=think, on_event=events.append, transcript=tmp_path / "ann.dtt")
    announcer = announce(host, Where(bind="127.0.0.1", lan=True)) if lan else None
    invite = host.open()
    in_thread(host)
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, chooser=bot_chooser(trice, "random", 2), think=think,
                      transcript=tmp_path / "bob.dtt")
    return host, invite, bob, events, announcer


async def follow_to_the_end(pilot, app, host, bob, events, tmp_path, start: bool = True) -> None:
    """The watcher's table follows the game (`start`: the game bob's seat starts once the host sees the
    watcher; else the game under way): its game screen shows the play without a seat, to the end, and
    its transcript verifies as ann's does."""
    def watched():  # the game's screen, under the game-over dialog once the game ends
        return next((s for s in app.screen_stack if isinstance(s, TriceScreen)), None)

    wait_here(lambda: any(isinstance(e, Watching) and e.count == 1 for e in events), 30, "the watcher seen")
    if start:
        in_thread(bob)
    await wait_until((pilot,), lambda: watched() is not None and watched().view is not None
                     and watched().view.state is not None and len(watched().view.log) > 4)
    view = watched().view
    assert view.local_seats == frozenset() and [s.name for s in view.seats][:2] == ["ann", "bob"]
    table = watched().controller
    assert table.role == "watch"
    await wait_until((pilot,), lambda: table.session.finished)
    assert table.session.replica.result == host.replica.result or host.replica.result is None
    path = table.session.transcript_path
    close_tables(app)
    wait_here(lambda: host.finished, 30, "the game's end")
    verdict = verify(path)
    assert verdict.valid and verdict.line() == verify(tmp_path / "ann.dtt").line()


async def test_w_in_the_served_lobby_watches_a_game_under_way_and_follows_it(tmp_path, monkeypatch):
    """A game under way announced in the served lobby (its host's presence, as tui/screens/lobby_screen.py
    writes it: no free seat): Enter says there is no seat, w opens it without one, the same way as
    Join's Watch, caught up mid-game."""
    import subprocess
    import sys

    from dicetable.tui.screens.lobby_screen import LobbyScreen
    from dicetable.tui.tables.lobby import SERVED_ENV, Lobby, OpenTable

    monkeypatch.setenv(SERVED_ENV, str(tmp_path / "served-lobby"))
    host, invite, bob, events, _ = bots_table(tmp_path)
    hosting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # the host's app, shown while it runs
    app = DiceTableApp(profile_dir=tmp_path / "wendy")
    try:
        in_thread(bob)
        wait_here(lambda: host.replica.phase == "playing" and len(host.replica.log) > 8, 30, "the game under way")
        Lobby(tmp_path / "served-lobby", str(hosting.pid)).announce(
            "ann", host.profile.fingerprint, "playing TRICE", OpenTable("trice", "TRICE", invite, 0))
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                await wait_until((pilot,), lambda: isinstance(app.screen, LobbyScreen) and app.screen.people
                                 and app.screen.people[0].table is not None)
                said = " ".join(str(app.screen.query_one("#lobby-invitations").render()).split())
                assert said.endswith("Enter sits down at their open table, w watches it.")
                assert str(app.screen.query_one(DataTable).get_row_at(0)[3]) == "TRICE, under way"
                await pilot.press("enter")
                assert isinstance(app.screen, LobbyScreen)
                assert str(app.screen.query_one("#lobby-note").render()) == "Their table has no free seat: w watches its game."
                await pilot.press("w")
                await follow_to_the_end(pilot, app, host, bob, events, tmp_path, start=False)
            finally:
                close_tables(app)
    finally:
        hosting.kill()
        hosting.wait()
        stop_all(host, bob)


async def test_w_on_the_lan_list_watches_a_table_announced_on_this_machine(tmp_path):
    """A table announced in this machine's lobby (net/reach/same_machine.py): w on its row in the LAN
    list watches it, the host's opening checked against its announcement as for a seat."""
    from dicetable.net.reach import same_machine
    from dicetable.tui.screens.lan_screen import LanScreen

    host, invite, bob, events, announcer = bots_table(tmp_path, lan=True)
    app = DiceTableApp(profile_dir=tmp_path / "wendy")
    try:
        assert announcer is not None
        wait_here(lambda: list(same_machine.lobby_dir().glob("*.table")), 30, "the table announced on this machine")
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                app.push_screen(LanScreen(browse=False, machine=True))  # no mDNS in a test: this machine's lobby
                await wait_until((pilot,), lambda: isinstance(app.screen, LanScreen) and app.screen.query(DataTable)
                                 and app.screen.query_one(DataTable).row_count == 1)
                await pilot.press("w")
                await follow_to_the_end(pilot, app, host, bob, events, tmp_path)
            finally:
                close_tables(app)
    finally:
        announcer.close()
        stop_all(host, bob)


async def test_a_served_host_lists_its_game_under_way_for_others_to_watch(tmp_path, monkeypatch):
    """The served app's presence (tui/screens/lobby_screen.py `Served.open_table`): its hosted table
    with free seats while it waits, then, once the game is under way, the same invite with no free seat
    (what the lobby's w watches); gone when the table is left."""
    from dicetable.tui.screens.lobby_screen import LobbyScreen
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
    from dicetable.tui.tables.lobby import SERVED_ENV, Lobby, OpenTable
    from test_tui_same_machine import host_with

    monkeypatch.setenv(SERVED_ENV, str(tmp_path / "served-lobby"))
    others = Lobby(tmp_path / "served-lobby", "someone else")  # how another app in the lobby reads it
    table_shown = lambda: next((p.table for p in others.present()), None)
    app, bob = DiceTableApp(profile_dir=tmp_path / "ann"), None
    async with app.run_test(size=(80, 24)) as pilot:
        try:
            await wait_until((pilot,), lambda: isinstance(app.screen, LobbyScreen))
            await pilot.press("escape")  # home
            await host_with(pilot, app)
            await wait_until((pilot,), lambda: isinstance(app.screen, WaitingRoomScreen) and app.screen.table.invite)
            invite = app.screen.table.invite
            await wait_until((pilot,), lambda: table_shown() == OpenTable("trice", "TRICE", invite, 1))
            bob = PeerSession(Profile.generate("bob"), invite, timing=FAST,
                              chooser=bot_chooser(registry.get("trice"), "random", 2), think=0.3)
            in_thread(bob)
            await wait_until((pilot,), lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None
                             and app.screen.view.state is not None)
            await wait_until((pilot,), lambda: table_shown() == OpenTable("trice", "TRICE", invite, 0))
        finally:
            close_tables(app)
            if bob is not None:
                stop_all(bob)
