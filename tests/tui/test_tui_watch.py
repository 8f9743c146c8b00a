"""Watching a table in the app (issue 35): Join's Watch action (Ctrl+O) opens a TRICE table under way on
its own screen without a seat, follows it to the end through real sockets, and the seats hear who
watches; the watcher's transcript verifies."""

import functools

import pytest
from textual.widgets import Input

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
            stop_all(watcher)  # before the table closes under it
        finally:
            close_tables(app)
