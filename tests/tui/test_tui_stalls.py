"""The app at a stalled table (issue 37, findings 5 and 6; net/table/stalls.py, net/reach/codes.py): the app joins
a TRICE table through a relay that then drops the host's entries to it (tests/misbehaving_relay.py); within 5 s
of the stall a notice says it in words, with what the player can do, and another when it clears. A host whose
codes a guesser keeps burning is told why they stopped, in the waiting room, instead of shown a dead code."""

import asyncio
import functools
import time

import pytest
from textual.widgets import Static

from dicetable.core import registry
from dicetable.net.identity import Profile
from dicetable.net.reach import codes
from dicetable.net.reach.codes import CodeError
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_link import invite_for_code
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.table.host import HostSession
from dicetable.net.table.session import bot_chooser
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from misbehaving_relay import MisbehavingRelay, Misbehaviour
from net_helpers import Running, in_thread, stop_all
from test_tui_same_machine import close_tables, host_with
from tui_pilot import paste_invite
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

wait_until = functools.partial(wait_a_while, step=0.05)


async def test_the_app_says_a_stall_in_words_within_5_s_and_says_when_it_clears(tmp_path, monkeypatch):
    told = []  # every notice the app gave, kept: a toast is gone in seconds
    notify = DiceTableApp.notify
    monkeypatch.setattr(DiceTableApp, "notify", lambda app, message, *a, **k: (told.append(str(message)),
                                                                               notify(app, message, *a, **k))[1])
    notices = lambda starting: [said for said in told if said.startswith(starting)]  # noqa: E731
    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
    host = HostSession(Profile.generate("ann"), "trice", 2, relay=running.line,
                       chooser=bot_chooser(registry.get("trice"), "random", 1), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    app = DiceTableApp(profile_dir=tmp_path / "bob")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await paste_invite(pilot, app, invite)
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None
                             and app.screen.view.state is not None, timeout=30)
            running.server.behave(Misbehaviour(starve={1: "entries"}))
            began = time.monotonic()  # the stall begins with the host's next entry: its chat line
            host.chat("are you still there? " * 6)
            await wait_until(pilot, lambda: notices("stalled: "), timeout=began + 5 + 3 - time.monotonic())
            (said,) = notices("stalled: ")
            assert said.startswith("stalled: ann's log is ") and "ahead of this seat's copy" in said
            assert "you can wait" in said and "leave the table" in said  # words, not a colour
            running.server.behave(Misbehaviour())
            await wait_until(pilot, lambda: notices("this seat gets ann's log again"), timeout=10)
            assert len(notices("stalled: ")) == 1  # once per stall
            close_tables(app)
    finally:
        stop_all(host)
        running.stop()


async def test_the_waiting_room_says_why_codes_stopped_instead_of_showing_a_dead_one(tmp_path):
    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
    app = DiceTableApp(profile_dir=tmp_path / "ann")
    shown = lambda: str(app.screen.query_one("#room-code", Static).render())  # noqa: E731
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                await host_with(pilot, app, relay=running.line)
                burned: list[str] = []
                for _ in range(codes.LOST_IN_A_ROW):  # a guesser burns every code the host offers
                    await wait_until(pilot, lambda: isinstance(app.screen, WaitingRoomScreen) and app.screen.table.code
                                     and app.screen.table.code not in burned and app.screen.table.code in shown(),
                                     timeout=20)
                    burned.append(app.screen.table.code)
                    number, first, second = burned[-1].split("-")
                    wrong = f"{number}-{second}-{first}" if first != second else f"{number}-orbit-orbit"
                    with pytest.raises(CodeError, match="the code is wrong"):
                        await asyncio.to_thread(invite_for_code, RelayAddress.decode(running.line), wrong, 10)
                await wait_until(pilot, lambda: shown().startswith("No code: "), timeout=20)
                assert "no more codes for this table" in shown() and "invite" in shown()
            finally:
                close_tables(app)
    finally:
        running.stop()
