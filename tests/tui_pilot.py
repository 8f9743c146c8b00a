"""The app's Pilot, shared by the app tests (imported by them; not a test module): waits that let
the app run, and a person's steps. Its fixture, `quick_idle`, is in conftest.py.
"""


async def until_shown(pilot, selector: str, timeout: float = 10.0) -> None:
    """Wait until the widget `selector` is laid out where a click reaches it: a screen just pushed
    (or a tab just switched) is composed before it is placed, and a click there would miss."""
    from textual.errors import NoWidget

    app = pilot.app
    for _ in range(int(timeout / 0.02)):
        found = app.screen.query(selector)
        if found and found.first().region.area:
            widget = found.first()
            try:
                if app.get_widget_at(*widget.region.center)[0] in (widget, *widget.query("*")):
                    return
            except NoWidget:
                pass
        await pilot.pause(0.02)
    raise AssertionError(f"{selector} was not shown in time")


async def wait_until(pilots, condition, timeout: float = 10.0, step: float = 0.02) -> None:
    """Let the app (or several apps: a list of pilots) run until `condition()` holds; each step is
    shared between the pilots."""
    pilots = pilots if isinstance(pilots, (list, tuple)) else [pilots]
    for _ in range(int(timeout / step)):
        if condition():
            return
        for pilot in pilots:
            await pilot.pause(step / len(pilots))
    raise AssertionError(f"the app did not get there in time; this process's threads:\n{threads_now()}")


def threads_now() -> str:
    """Where each thread of this process is, innermost call first: what a wait that ran out waited on."""
    import sys
    import threading
    import traceback

    names = {thread.ident: thread.name for thread in threading.enumerate()}
    return "\n".join(f"{names.get(ident, ident)}: " + " <- ".join(
        f"{frame.name} ({frame.filename.rsplit('/', 2)[-1]}:{frame.lineno})"
        for frame in traceback.extract_stack(top)[-6:][::-1]) for ident, top in sys._current_frames().items())


async def paste_invite(pilot, app, invite: str) -> None:
    """From the home screen, open "Join a table", paste `invite` and press Enter, as a person does."""
    from textual.widgets import Input

    from dicetable.tui.screens.net_screens import JoinScreen

    await pilot.press("j")
    assert isinstance(app.screen, JoinScreen)
    app.screen.query_one("#join-invite", Input).value = invite
    await pilot.press("enter")


async def open_dice_room(pilots, apps, timeout: float = 30.0):
    """From their home screens, as people do: `apps[0]` hosts a dice room with a seat for each app and
    the others paste its invite; returns the host's invite once every app is in the room with its roll
    line open."""
    from textual.widgets import Input

    from dicetable.tui.screens.net_screens import HostScreen
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen

    host, host_app = pilots[0], apps[0]
    await host.press("d", "h")
    assert isinstance(host_app.screen, HostScreen)
    host_app.screen.query_one("#host-seats", Input).value = str(len(apps))
    await until_shown(host, "#open")
    assert await host.click("#open")
    await wait_until(pilots, lambda: isinstance(host_app.screen, WaitingRoomScreen) and host_app.screen.table.invite,
                     timeout=timeout)
    invite = host_app.screen.table.invite
    for pilot, app in zip(pilots[1:], apps[1:]):
        await paste_invite(pilot, app, invite)
    await wait_until(pilots, lambda: all(app.screen.__class__.__name__ == "DiceRoomScreen" and app.screen.view is not None
                                         and not app.screen.query_one("#roll-input", Input).disabled for app in apps),
                     timeout=timeout)
    return invite


def assert_log_wraps(log, entry: str) -> int:
    """The move log wraps in its panel: no line wider than the panel, no sideways scrollbar, and
    `entry` reads whole across its lines. Returns the panel's width."""
    width = log.scrollable_content_region.width
    assert log.lines and max(line.cell_length for line in log.lines) <= width
    assert not log.show_horizontal_scrollbar
    shown = " ".join("".join(s.text for s in line).strip() for line in log.lines)
    assert " ".join(entry.split()) in " ".join(shown.split()), "the entry is whole, wrapped"
    return width


def die_cell(screen, cell_id: str):
    """A dice cell of the TRICE table on `screen` by its id (`sq-a1`, `pool-3`): the board and the
    pool draw their cells themselves (tui/widgets/die.py), so a cell is found there, not by a query."""
    from dicetable.tui.widgets.die import DiceArea

    for area in screen.query(DiceArea):
        cell = area.cell_by_id(cell_id)
        if cell is not None:
            return cell
    raise AssertionError(f"no dice cell {cell_id} on {screen}")


async def click_cell(pilot, cell_id: str) -> bool:
    """Click the middle of a dice cell (`sq-a1`, `pool-3`) as a person would."""
    cell = die_cell(pilot.app.screen, cell_id)
    return await pilot.click(cell.area, offset=(cell.x + 4, cell.y + 1))
