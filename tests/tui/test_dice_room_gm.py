"""A secret roll shown to the game master in the app (issue 33, PROTOCOL.md §16.6 step 7), three real
apps (Pilot) over 127.0.0.1: Cy types `/s@Bob 1d20 [stealth]`; Bob's screen shows the dice ("Only you
and Cy see it"), Cy's too, and Ann's only "rolled 1d20 [stealth] secretly for Bob: sealed". A name
nobody in the room has is one line and no roll."""

import functools

import pytest
from textual.widgets import Input

from dicetable.tui.app import DiceTableApp
from test_dice_room_three import type_roll
from tui_pilot import open_dice_room
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

SIZE = (80, 24)
wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)


def picture(app) -> str:
    return str(app.screen.query_one("#roll-picture").render())


@pytest.mark.slow
async def test_a_roll_shown_to_the_game_master_is_seen_by_the_roller_and_the_master_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    apps = [DiceTableApp(profile_dir=tmp_path / name) for name in ("ann", "bob", "cy")]
    async with apps[0].run_test(size=SIZE) as ann, apps[1].run_test(size=SIZE) as bob, apps[2].run_test(size=SIZE, notifications=True) as cy:
        pilots = (ann, bob, cy)
        await open_dice_room(pilots, apps)
        names = apps[0].screen.view.names
        gm, roller = (names[app.screen.controller.session.seat] for app in apps[1:])
        await type_roll(cy, "/s@nobody d20")  # a name nobody in the room has: one line, no roll
        await wait_until(pilots, lambda: any("not 'nobody'" in n.message for n in apps[2]._notifications))
        assert not apps[0].screen.view.state.rolls and not apps[0].screen.view.state.pending
        apps[2].screen.query_one("#roll-input", Input).value = ""
        await type_roll(cy, f"/s@{gm.upper()} 1d20 [stealth]")
        await wait_until(pilots, lambda: all(len(app.screen.view.state.rolls) == 1 for app in apps)
                         and apps[1].screen.view.shown_me and apps[2].screen.view.peeked)
        seen = picture(apps[2])
        assert f"{roller} rolled 1d20 [stealth] secretly for {gm}" in seen and f"Only you and {gm} see it: stealth: " in seen, seen
        dice = seen.split("see it: ", 1)[1].split("\n", 1)[0]
        await wait_until(pilots, lambda: f"Only you and {roller} see it: {dice}" in picture(apps[1]))
        assert "F6" not in picture(apps[1])  # the roller opens it, not the game master
        others = picture(apps[0])
        assert f"{roller} rolled 1d20 [stealth] secretly for {gm}:" in others and "sealed" in others, others
        assert "Only you" not in others and not apps[0].screen.view.peeked and not apps[0].screen.view.shown_me
        await cy.press("f6")  # the roller opens it: everyone sees the dice the game master saw
        await wait_until(pilots, lambda: not apps[0].screen.view.state.rolls[0].sealed)
        assert apps[0].screen.view.state.rolls[0].describe() == dice
