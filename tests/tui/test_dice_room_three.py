"""The dice room as issue 33's tmux demo plays it, through three real apps (Pilot) over 127.0.0.1:
three people roll with labels, one rolls secretly and later opens it, one leaves (home at once) while
the others roll on, comes back through Resume, the statistics view draws the dice, the host's Esc
closes the room and nobody is stranded; all three transcripts verify and `verify A B C` agrees."""

import functools

import pytest
from textual.widgets import Input

from dicetable.net.log.transcript import read
from dicetable.net.log.verify import compare, verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.cli import main
from dicetable.tui.screens.dice_stats_screen import DiceStatsScreen
from dicetable.tui.screens.home_screen import HomeScreen
from tui_pilot import open_dice_room
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

SIZE = (80, 24)
wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)


async def type_roll(pilot, text: str) -> None:
    await pilot.press(*[("space" if c == " " else c) for c in text], "enter")


def in_room(app) -> bool:
    return app.screen.__class__.__name__ == "DiceRoomScreen" and app.screen.view is not None


@pytest.mark.slow
async def test_three_people_roll_one_secretly_one_leaves_and_returns_and_every_copy_agrees(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    apps = [DiceTableApp(profile_dir=tmp_path / name) for name in ("ann", "bob", "cy")]
    async with apps[0].run_test(size=SIZE) as ann, apps[1].run_test(size=SIZE) as bob, apps[2].run_test(size=SIZE) as cy:
        pilots = (ann, bob, cy)
        await open_dice_room(pilots, apps)
        room = apps[0].screen
        seat_of = {app: app.screen.controller.session.seat for app in apps}
        await wait_until(pilots, lambda: all(not app.screen.query_one("#roll-input", Input).disabled for app in apps))
        await type_roll(bob, "1d20+5 [attack]")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 1)
        await type_roll(ann, "/s 1d20 [perception]")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 2 and room.view.peeked)
        secret = room.view.state.rolls[1]
        assert secret.sealed and all(app.screen.view.state.rolls[1].sealed for app in apps)
        # Cy leaves: home at once; the others go on rolling, nobody waits for Cy.
        paths = [app.screen.controller.session.transcript_path for app in apps]
        leaving = apps[2].screen.controller.session
        await cy.press("escape")
        await wait_until(pilots, lambda: isinstance(apps[2].screen, HomeScreen) and room.view.out == {seat_of[apps[2]]})
        await wait_until(pilots, lambda: leaving.stopped)  # gone once its leave is in the log, not seconds later
        await type_roll(bob, "d20 [save]")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 3 and room.view.state.pending == "")
        assert room.view.events[-1].reveals[seat_of[apps[2]]].status == "out"
        # Cy comes back through Resume, and rolls.
        await cy.press("c")
        await wait_until(pilots, lambda: apps[2].screen.__class__.__name__ == "ResumeScreen")
        await cy.press("enter")
        await wait_until(pilots, lambda: in_room(apps[2]) and room.view.out == frozenset())
        await wait_until(pilots, lambda: not apps[2].screen.query_one("#roll-input", Input).disabled)
        await type_roll(cy, "6#4d6kh3 [stats]")
        await wait_until(pilots, lambda: len(room.view.state.rolls) == 4 and room.view.state.pending == "")
        # Ann opens her secret roll; the statistics view draws every die size rolled.
        await ann.press("f6")
        await wait_until(pilots, lambda: not apps[1].screen.view.state.rolls[1].sealed)
        await bob.press("f4")
        await wait_until(pilots, lambda: isinstance(apps[1].screen, DiceStatsScreen))
        charts = str(apps[1].screen.query_one("#stats-charts").render())
        assert "d20" in charts and "d6" in charts and "█" in charts, charts
        await bob.press("escape")
        # The host's Esc closes the room; the others see it closed and their Esc takes them home.
        await ann.press("escape")
        await wait_until(pilots, lambda: all(app.screen.view.result is not None for app in apps[1:]) or
                         isinstance(apps[1].screen, HomeScreen))
        for pilot, app in ((bob, apps[1]), (cy, apps[2])):
            if not isinstance(app.screen, HomeScreen):
                await pilot.press("escape")
        await wait_until(pilots, lambda: all(isinstance(app.screen, HomeScreen) for app in apps))
        await wait_until(pilots, lambda: all(read(path).result is not None for path in paths))
    lines = [verify(path).line() for path in paths]
    cy_name = f"(seat {seat_of[apps[2]]})"  # three profiles named after the login: verify tells them by seat
    for line in lines:
        assert line.startswith("valid: dice room (rolls: ") and ", 1 secret" in line and "never opened" not in line, line
        assert f"{cy_name} left, came back" in line and line.count("left") == 1, line
    assert compare([read(p) for p in paths]).fork is None
    capsys.readouterr()
    assert main(["verify", *map(str, paths)]) == 0
    assert "copies agree: 3 copies" in capsys.readouterr().out
