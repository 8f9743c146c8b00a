"""The app with a relay named by `HOST:PORT` alone (issue 34), a real `dicetable relay` process on
127.0.0.1: Ann, who never used it, types its address in the host form, the key is learned and kept;
a stranger's wrong guess burns her code and she sees one notice that names the new code, which her
waiting room shows; Bob, who never used the relay either, types the new code and the address and
both reach the table."""

import functools
import threading

import pytest
from textual.widgets import Input, Static

from dicetable.net.reach.codes import CodeError
from dicetable.net.reach.relay import RelayAddress
from dicetable.net.reach.relay_link import invite_for_code
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.net_screens import JoinScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
from dicetable.tui.tables.relay_setting import known
from net_helpers import line_of, spawn
from test_tui_same_machine import close_tables, host_with
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)


@pytest.fixture
def relay(tmp_path):
    process = spawn(tmp_path, "relay", "relay", "--port", "0")
    try:
        yield line_of(process, "relay: "), line_of(process, "address: ").split()[0]
    finally:
        process.terminate()
        process.wait(10)


def wrong_words(code: str) -> str:
    number, first, second = code.split("-")
    return f"{number}-{second}-{first}" if first != second else f"{number}-{first}-{'orbit' if first != 'orbit' else 'lantern'}"


@pytest.mark.slow
async def test_host_port_alone_in_the_app_and_a_burned_code_told_with_the_new_one(relay, tmp_path):
    line, address = relay
    ann, bob = DiceTableApp(profile_dir=tmp_path / "ann"), DiceTableApp(profile_dir=tmp_path / "bob")
    async with ann.run_test(size=(80, 24)) as host, bob.run_test(size=(80, 24)) as join:
      try:
        pilots = (host, join)
        await host_with(host, ann, relay=address)
        await wait_until(pilots, lambda: isinstance(ann.screen, WaitingRoomScreen) and ann.screen.table.code)
        first = ann.screen.table.code
        assert known(tmp_path / "ann")[0] == line  # the key learned from the relay, kept beside its address
        guessed: dict = {}

        def guess() -> None:  # a stranger who heard the number, with the wrong words
            try:
                invite_for_code(RelayAddress.decode(line), wrong_words(first), timeout=30)
            except CodeError as error:
                guessed["said"] = str(error)

        threading.Thread(target=guess, daemon=True).start()
        await wait_until(pilots, lambda: ann.screen.table.code != first)
        new = ann.screen.table.code
        told = f"someone tried a wrong code; the new code is {new}"
        await wait_until(pilots, lambda: [n.message for n in ann._notifications if "wrong code" in n.message] == [told])
        assert new in str(ann.screen.query_one("#room-code", Static).render())
        await wait_until(pilots, lambda: "burned" in guessed.get("said", ""))
        await join.press("j")
        assert isinstance(bob.screen, JoinScreen) and bob.screen.query_one("#join-relay", Input).value == ""
        bob.screen.query_one("#join-invite", Input).value = new
        bob.screen.query_one("#join-relay", Input).value = address
        await join.press("enter")
        await wait_until(pilots, lambda: all(isinstance(app.screen, TriceScreen) and app.screen.view is not None
                                             and app.screen.view.state is not None for app in (ann, bob)))
        assert known(tmp_path / "bob")[0] == line
      finally:
        close_tables(ann, bob)
