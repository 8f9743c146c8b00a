"""Secret rolls in the app's dice room (issue 33, PROTOCOL.md §16.6), two real apps over 127.0.0.1:
`/s EXPR` rolls secretly — the other sees who rolled what, sealed; the roller alone sees its dice —
and F6 opens it to everyone, with the dice the roller saw."""

import functools

import pytest

from dicetable.tui.app import DiceTableApp
from tui_pilot import open_dice_room
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

SIZE = (80, 24)
wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)


def shown(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


@pytest.mark.slow
async def test_a_secret_roll_is_sealed_for_the_others_seen_by_its_roller_opened_with_f6_and_esc_leaves_a_closed_room(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host_app = DiceTableApp(profile_dir=tmp_path / "ann")
    join_app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with host_app.run_test(size=SIZE) as host, join_app.run_test(size=SIZE) as join:
        pilots = (host, join)
        await open_dice_room(pilots, (host_app, join_app))
        room, guest = host_app.screen, join_app.screen
        await join.press(*"/s 1d20+5 [stealth]", "enter")
        await wait_until(pilots, lambda: room.view is not None and len(room.view.state.rolls) == 1 and guest.view.peeked)
        name = guest.view.names[1]
        picture = shown(room, "#roll-picture")
        assert f"{name} rolled 1d20+5 [stealth] secretly" in picture and "sealed" in picture, picture
        assert "Only you see it" not in picture and not room.view.peeked
        mine = shown(guest, "#roll-picture")
        assert "Only you see it: stealth: " in mine, mine
        seen = mine.split("Only you see it: ", 1)[1].split("\n", 1)[0]
        await join.press("f6")
        await wait_until(pilots, lambda: not room.view.state.rolls[0].sealed)
        roll = room.view.state.rolls[0]
        assert roll.describe() == seen and not guest.view.peeked
        await wait_until(pilots, lambda: "secret, opened" in shown(room, "#roll-picture"))
        assert seen.split(" [")[0].split(": ")[1] in shown(room, "#roll-picture")
        # The host's Esc closes the room for everyone; the guest is not stranded on it: its Esc goes home.
        from dicetable.tui.screens.home_screen import HomeScreen

        await host.press("escape")
        await wait_until(pilots, lambda: guest.view.result is not None)
        assert shown(guest, "#status").startswith("The room is closed:")
        await join.press("escape")
        await wait_until(pilots, lambda: isinstance(join_app.screen, HomeScreen))
