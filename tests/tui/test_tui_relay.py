"""The app through a relay (net/reach/relay.py on 127.0.0.1, in a thread): Ann hosts with the relay line in
the host form and her waiting room shows the short code; Bob types the code in Join (the relay line
is remembered from his last use) and both reach the TRICE table. A bad relay line or a malformed code
is one line that opens nothing."""

import functools
import threading

import pytest
from textual.widgets import Input, Static

from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.transport import curve_keypair
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.net_screens import HostScreen, JoinScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from dicetable.tui.tables.relay_setting import remember
from test_tui_same_machine import close_tables, host_with
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)


@pytest.fixture
def relay():
    server = RelayServer(curve_keypair()[1], "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield server.address().encode()
    server.stopped = True
    thread.join(5)


def note(app) -> str:
    return str(app.screen.query_one("#net-note", Static).render()).strip()


@pytest.mark.slow
async def test_a_table_through_the_relay_is_joined_by_its_code(relay, tmp_path):
    remember(tmp_path / "bob", relay)  # Bob used this relay before: the app offers it
    ann, bob = DiceTableApp(profile_dir=tmp_path / "ann"), DiceTableApp(profile_dir=tmp_path / "bob")
    async with ann.run_test(size=(80, 24)) as host, bob.run_test(size=(80, 24)) as join:
      try:
        pilots = (host, join)
        await host_with(host, ann, relay=relay)
        await wait_until(pilots, lambda: isinstance(ann.screen, WaitingRoomScreen) and ann.screen.table.code)
        code = ann.screen.table.code
        shown = str(ann.screen.query_one("#room-code", Static).render())
        assert code in shown and "\n" not in shown.strip()
        assert ann.screen.table.invite.startswith("dr1-")
        await join.press("j")
        assert isinstance(bob.screen, JoinScreen)
        assert bob.screen.query_one("#join-relay", Input).value == relay
        bob.screen.query_one("#join-invite", Input).value = code.upper().replace("-", " ")  # as read aloud
        await join.press("enter")
        await wait_until(pilots, lambda: all(isinstance(app.screen, TriceScreen) and app.screen.view is not None
                                             and app.screen.view.state is not None for app in (ann, bob)))
        assert (tmp_path / "ann" / "relay.txt").read_text().strip() == relay  # offered next time
      finally:
        close_tables(ann, bob)


async def test_a_bad_relay_line_or_code_is_one_line_and_opens_nothing(relay, tmp_path):
    app = DiceTableApp(profile_dir=tmp_path / "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await host_with(pilot, app, relay=relay[:-5])
        assert isinstance(app.screen, HostScreen) and note(app).startswith("Relay: ") and "\n" not in note(app)
        await pilot.press("escape")
        await pilot.press("j")
        app.screen.query_one("#join-invite", Input).value = "7-orbit"
        app.screen.query_one("#join-relay", Input).value = relay
        await pilot.press("enter")
        assert isinstance(app.screen, JoinScreen) and "a code looks like" in note(app)
        app.screen.query_one("#join-invite", Input).value = "7-orbit-lantern"
        app.screen.query_one("#join-relay", Input).value = ""
        await pilot.press("enter")
        assert isinstance(app.screen, JoinScreen) and note(app).startswith("Relay: ")
        app.screen.query_one("#join-relay", Input).value = relay
        await pilot.press("enter")  # a well-formed code the relay does not hold
        await wait_until((pilot,), lambda: "no code 7 at this relay" in note(app))
        assert isinstance(app.screen, JoinScreen)


async def test_tab_completes_a_codes_words_in_the_join_field(tmp_path):
    from dicetable.tui.app import DiceTableApp

    app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("j")
        field = app.screen.query_one("#join-invite", Input)
        assert isinstance(app.screen, JoinScreen) and app.screen.focused is field
        await pilot.press(*"7-orb", "tab")  # one word begins so: taken, with the dash for the next
        assert field.value == "7-orbit-" and app.screen.focused is field
        await pilot.press(*"lan", "tab")
        assert field.value == "7-orbit-lantern"
        await pilot.press("tab")  # nothing left to complete: Tab moves on as usual
        assert app.screen.focused is app.screen.query_one("#join-relay", Input)


async def test_tab_completes_a_code_typed_with_spaces_and_capitals(tmp_path):
    """A code read out is typed as heard (`53718 Crab jac`): Tab completes its word as with dashes,
    and writes the code as a code is written; it does not jump to the relay field."""
    from dicetable.tui.app import DiceTableApp

    app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("j")
        field = app.screen.query_one("#join-invite", Input)
        await pilot.press(*"7 Orb", "tab")
        assert field.value == "7-orbit-" and app.screen.focused is field
        await pilot.press(*"lan")
        await wait_until((pilot,), lambda: field._suggestion == "7-orbit-lantern")  # shown dimmed: `tern`
        await pilot.press("tab")
        assert field.value == "7-orbit-lantern" and app.screen.focused is field
        field.value = "7 Orbit  lan"  # two spaces: nothing dimmed that would misplace letters, Tab still takes it
        await pilot.press("end", "tab")
        assert field.value == "7-orbit-lantern" and app.screen.focused is field
