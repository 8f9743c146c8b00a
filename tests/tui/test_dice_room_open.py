"""An open dice room through the real app (Pilot) over 127.0.0.1 (PROTOCOL.md §5.2): Ann and Bob open a
room and roll; Cy, who was not there at the start, pastes the same invite, enters the running room,
sees who is in, rolls, and every app shows the join as a line of the room's log; all copies verify
and agree."""

import functools

import pytest
from textual.widgets import Input

from dicetable.net.log.transcript import read
from dicetable.net.log.verify import compare, verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.widgets.seats import SeatsPanel
from tui_pilot import open_dice_room, paste_invite
from tui_pilot import wait_until as wait_a_while
from tests.tui.test_dice_room_three import SIZE, in_room, type_roll

pytestmark = pytest.mark.usefixtures("quick_idle")

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)


@pytest.mark.slow
async def test_a_late_joiner_enters_a_room_opened_by_two_others(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    apps = [DiceTableApp(profile_dir=tmp_path / name) for name in ("ann", "bob", "cy")]
    async with apps[0].run_test(size=SIZE) as ann, apps[1].run_test(size=SIZE) as bob, apps[2].run_test(size=SIZE) as cy:
        pilots = (ann, bob, cy)
        invite = await open_dice_room(pilots[:2], apps[:2])
        room = apps[0].screen
        await type_roll(bob, "1d20+5 [attack]")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 1 and room.view.state.pending == "")
        await ann.press("f7")  # the room's invite, from the room itself: its waiting room is long gone
        await wait_until(pilots, lambda: any(n.title == "Invite a newcomer" for n in apps[0]._notifications))
        assert (tmp_path / "ann" / "invite.txt").read_text().strip() == invite
        await paste_invite(cy, apps[2], invite)
        await wait_until(pilots, lambda: in_room(apps[2]) and len(room.view.names) > 2
                         and not apps[2].screen.query_one("#roll-input", Input).disabled)
        c = apps[2].screen.controller.session.seat
        await wait_until(pilots, lambda: room.view.names[c] in str(room.query_one(SeatsPanel).render()))
        seats = str(room.query_one(SeatsPanel).render())
        assert "5 free places" in seats and "seat 7" not in seats, seats  # the room's other places, in one line
        await type_roll(cy, "2d6 [damage]")
        await wait_until(pilots, lambda: all(in_room(a) and len(a.screen.view.state.rolls) == 2
                                             and a.screen.view.state.pending == "" for a in apps))
        assert room.view.events[0].reveals[c].status == "out" and room.view.events[1].reveals[c].status == "verified"
        for app in apps:
            log = [entry.words(app.screen.view.names) for entry in app.screen.view.log]  # the Log tab's lines
            assert any("joins the room at seat" in line for line in log), log
        paths = [app.screen.controller.session.transcript_path for app in apps]
        await ann.press("escape")  # the host's Esc closes the room
        await wait_until(pilots, lambda: all(not in_room(a) or a.screen.view.result is not None for a in apps))
        for pilot, app in ((bob, apps[1]), (cy, apps[2])):
            if in_room(app):
                await pilot.press("escape")
        await wait_until(pilots, lambda: all(not in_room(a) for a in apps))
    for path in paths:
        verdict = verify(path)
        assert verdict.valid and f"(seat {c}) joined" in verdict.line(), verdict.line()
    assert compare([read(p) for p in paths]).fork is None


@pytest.mark.slow
async def test_the_host_leaves_a_relay_room_and_the_others_roll_on_under_the_next_person(tmp_path, monkeypatch):
    """Through a relay the host's Esc takes it home and the room goes on (§11): the next person orders it,
    the others see the host left and roll on; nobody is stranded."""
    import threading

    from dicetable.net.reach.relay import RelayServer
    from dicetable.net.reach.transport import curve_keypair
    from dicetable.net.table import succession
    from dicetable.tui.screens.home_screen import HomeScreen
    from dicetable.tui.screens.net_screens import HostScreen
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen

    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(succession, "HOST_AWAY", 1.0)  # the seats know the relay's clock
    server = RelayServer(curve_keypair()[1], "127.0.0.1", 0, host_away=1.0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    apps = [DiceTableApp(profile_dir=tmp_path / name) for name in ("ann", "bob", "cy")]
    try:
        async with apps[0].run_test(size=SIZE) as ann, apps[1].run_test(size=SIZE) as bob, apps[2].run_test(size=SIZE) as cy:
            pilots = (ann, bob, cy)
            await ann.press("d", "h")
            assert isinstance(apps[0].screen, HostScreen)
            apps[0].screen.query_one("#host-seats", Input).value = "3"
            apps[0].screen.query_one("#host-relay", Input).value = server.address().encode()
            await ann.press("ctrl+o")
            await wait_until(pilots, lambda: isinstance(apps[0].screen, WaitingRoomScreen) and apps[0].screen.table.invite)
            invite = apps[0].screen.table.invite
            for pilot, app in ((bob, apps[1]), (cy, apps[2])):
                await paste_invite(pilot, app, invite)
            await wait_until(pilots, lambda: all(in_room(a) and not a.screen.query_one("#roll-input", Input).disabled
                                                 for a in apps))
            await type_roll(ann, "1d20 [initiative]")
            await wait_until(pilots, lambda: all(len(a.screen.view.state.rolls) == 1 and a.screen.view.state.pending == ""
                                                 for a in apps))
            paths = [app.screen.controller.session.transcript_path for app in apps]
            await ann.press("escape")  # the host leaves: home at once, the room goes on
            await wait_until(pilots, lambda: isinstance(apps[0].screen, HomeScreen)
                             and all(a.screen.view.out == {0} for a in apps[1:]))
            status = str(apps[1].screen.query_one("#status").render())
            assert apps[1].screen.view.result is None and "left the room" in status, status
            await type_roll(bob, "2d6 [damage]")
            await wait_until(pilots, lambda: all(len(a.screen.view.state.rolls) == 2 and a.screen.view.state.pending == ""
                                                 for a in apps[1:]), timeout=60)
            assert apps[2].screen.view.events[-1].reveals[0].status == "out"
            await cy.press("escape")
            await wait_until(pilots, lambda: isinstance(apps[2].screen, HomeScreen) and apps[1].screen.view.out == {0, 2})
            await bob.press("escape")  # the last one out closes the room
            await wait_until(pilots, lambda: isinstance(apps[1].screen, HomeScreen))
            await wait_until(pilots, lambda: read(paths[1]).result is not None)
    finally:
        server.stopped = True
        thread.join(5)
    verdict = verify(paths[1])
    assert verdict.valid and "left last: the room is closed" in verdict.line(), verdict.line()
    assert compare([read(p) for p in paths]).fork is None
