"""The app across users of one machine and across the internet without a relay: a table hosted on
127.0.0.1 is listed in another user's table list (this machine's lobby, net/reach/same_machine.py) and
joined with Enter; the host form's "Players dial" field (the CLI's --advertise) puts that address
in the invite, and a bad one is one line that opens nothing."""

import functools

import pytest
from textual.widgets import DataTable, Input, Static

from dicetable.net.reach import announcement, lan, local_networks, same_machine
from dicetable.net.reach.invite import Invite
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.lan_screen import LanScreen
from dicetable.tui.screens.net_screens import HostScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # two apps and a network session


def close_tables(*apps) -> None:
    """Leave the network tables the apps' screens hold (their worker threads end with them)."""
    for app in apps:
        for screen in app.screen_stack:
            table = getattr(screen, "table", None)
            if table is not None and hasattr(table, "session"):
                table.close()


async def host_with(pilot, app, **fields) -> None:
    """From the home screen: the host form, its fields set (by id without `host-`), Enter."""
    await pilot.press("h")
    assert isinstance(app.screen, HostScreen)
    for name, value in fields.items():
        app.screen.query_one(f"#host-{name}", Input).value = value
    await pilot.press("ctrl+o")


@pytest.mark.slow
async def test_another_user_of_the_machine_sees_the_table_and_joins_with_enter(tmp_path):
    lobby = same_machine.lobby_dir()
    ann, bob = DiceTableApp(profile_dir=tmp_path / "ann"), DiceTableApp(profile_dir=tmp_path / "bob")
    async with ann.run_test(size=(80, 24)) as host, bob.run_test(size=(80, 24)) as join:
      try:
        pilots = (host, join)
        await host_with(host, ann)  # 127.0.0.1, the form's default
        await wait_until(pilots, lambda: isinstance(ann.screen, WaitingRoomScreen) and ann.screen.table.invite)
        table = Invite.decode(ann.screen.table.invite).table_id
        await wait_until(pilots, lambda: (lobby / f"{table.hex()}.table").exists())
        bob.push_screen(LanScreen(browse=False, machine=True))  # no mDNS in a test: this machine's lobby alone
        grid = lambda: bob.screen.query_one(DataTable)
        await wait_until(pilots, lambda: isinstance(bob.screen, LanScreen) and bob.screen.query(DataTable)
                         and grid().row_count == 1)
        trust, game, seats, name, fingerprint, address = (str(cell) for cell in grid().get_row_at(0))
        assert (trust, game, seats) == (announcement.UNVERIFIED, "trice", "1/2")
        assert address.startswith("127.0.0.1:") and fingerprint == ann.profile().fingerprint
        await join.press("enter")
        await wait_until(pilots, lambda: all(isinstance(app.screen, TriceScreen) and app.screen.view is not None
                                             and app.screen.view.state is not None for app in (ann, bob)))
        # Full: withdrawn from the lobby while the game goes on.
        await wait_until(pilots, lambda: not (lobby / f"{table.hex()}.table").exists())
        assert list(announcement.KnownHosts(tmp_path / "bob").hosts) == [ann.profile().public_key]  # checked, pinned
      finally:
        close_tables(ann, bob)


async def test_the_invite_carries_the_address_players_dial(tmp_path):
    app = DiceTableApp(profile_dir=tmp_path / "ann")
    async with app.run_test(size=(80, 24)) as pilot:
      try:
        for bad, says in (("my host:4000", "is not an IP address or host name"),
                          ("0.0.0.0", "nobody can dial 0.0.0.0")):
            await host_with(pilot, app, advertise=bad)
            note = str(app.screen.query_one("#net-note", Static).render())
            assert isinstance(app.screen, HostScreen) and says in note and "\n" not in note.strip()
            await pilot.press("escape")
        assert not list(same_machine.lobby_dir().glob("*.table")), "a refused form opens nothing"
        await host_with(pilot, app, advertise="203.0.113.7")
        await wait_until(pilot, lambda: isinstance(app.screen, WaitingRoomScreen) and app.screen.table.invite)
        invite = Invite.decode(app.screen.table.invite)
        assert invite.address == "203.0.113.7" and invite.port == app.screen.table.session.socket.port
      finally:
        close_tables(app)


async def test_bound_to_every_address_the_invite_names_a_lan_address(tmp_path, monkeypatch):
    heard = []

    class Advertiser:  # no mDNS on this machine's interfaces in a test: what would be announced, kept
        def __init__(self, profile, table, game, seats, port, addresses, interfaces=None, queue=False) -> None:
            heard.append(list(addresses))

        def update(self, taken, open_=True) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(lan, "Advertiser", Advertiser)
    app = DiceTableApp(profile_dir=tmp_path / "ann")
    async with app.run_test(size=(80, 24)) as pilot:
      try:
        await host_with(pilot, app, address="0.0.0.0")
        await wait_until(pilot, lambda: isinstance(app.screen, WaitingRoomScreen) and app.screen.table.invite)
        addresses = local_networks.advertised_addresses("0.0.0.0")
        assert Invite.decode(app.screen.table.invite).address == addresses[0]
        await wait_until(pilot, lambda: heard == [addresses])  # announced on the LAN, not in this machine's lobby
        assert not list(same_machine.lobby_dir().glob("*.table"))
      finally:
        close_tables(app)
