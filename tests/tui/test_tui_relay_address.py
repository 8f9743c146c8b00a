"""The app with a relay named by `HOST:PORT` alone (issue 34), a real `dicetable relay` process on
127.0.0.1: Ann, who never used it, types its address in the host form, the key is learned and kept;
a stranger's wrong guess burns her code and she sees one notice that names the new code, which her
waiting room shows; Bob, who never used the relay either, types the new code and the address and
both reach the table."""

import functools
import socket
import threading
import time

import pytest
from textual.widgets import Input, Static

from dicetable.net.reach import relay_key
from dicetable.net.reach.codes import CodeError, make_code
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_link import invite_for_code
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.net_screens import ASKING_KEY, HostScreen, JoinScreen
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
        # what Ann reads out: the code and the relay's HOST:PORT (Bob has never used it)
        await wait_until(pilots, lambda: f"{first} — join with it at relay {address} (30 min)"
                         in str(ann.screen.query_one("#room-code", Static).render()))
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


@pytest.fixture
def silent_key_port():
    """A relay address whose key port (the next port) takes the connection and never says a word:
    a first contact waits out relay_key.LEARN_TIMEOUT. The relay's own port holds nothing."""
    taken: list = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"127.0.0.1:{listener.getsockname()[1] - 1}", lambda: asked(listener, taken)
    for conn in taken:
        conn.close()


def asked(listener, taken: list) -> bool:
    """The app is connected to the silent key port now (the connection taken, kept open, never answered)."""
    listener.settimeout(0)
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return False
    taken.append(conn)
    return True


def note_of(app) -> str:
    return str(app.screen.query_one("#net-note", Static).render())


async def test_the_host_form_answers_keys_while_a_silent_relay_is_asked_its_key(silent_key_port, tmp_path):
    address, connected = silent_key_port
    ann = DiceTableApp(profile_dir=tmp_path / "ann")
    async with ann.run_test(size=(80, 24)) as pilot:
        await host_with(pilot, ann, relay=address)
        await wait_until(pilot, connected)
        await wait_until(pilot, lambda: note_of(ann) == ASKING_KEY)
        ann.screen.query_one("#host-advertise", Input).focus()
        started = time.monotonic()
        await pilot.press("x")  # typed while the lookup waits: the UI thread is free
        assert ann.screen.query_one("#host-advertise", Input).value == "x"
        assert note_of(ann) == ASKING_KEY and time.monotonic() - started < relay_key.LEARN_TIMEOUT
        port = int(address.rpartition(":")[2])
        await wait_until(pilot, lambda: note_of(ann) != ASKING_KEY)
        assert note_of(ann) == (f"Relay: the relay at {address} did not tell its key on port {port + 1} "
                                "(no answer in time): is it running? Or give its whole line HOST:PORT/KEY once")
        assert isinstance(ann.screen, HostScreen) and known(tmp_path / "ann") == []


async def test_the_join_form_answers_keys_while_a_silent_relay_is_asked_its_key(silent_key_port, tmp_path):
    address, connected = silent_key_port
    bob = DiceTableApp(profile_dir=tmp_path / "bob")
    async with bob.run_test(size=(80, 24)) as pilot:
        await pilot.press("j")
        bob.screen.query_one("#join-invite", Input).value = make_code(7)
        bob.screen.query_one("#join-relay", Input).value = address
        await pilot.press("enter")
        await wait_until(pilot, connected)
        await wait_until(pilot, lambda: note_of(bob) == ASKING_KEY)
        started = time.monotonic()
        await pilot.press("tab")  # the focus moves while the lookup waits
        assert bob.focused is bob.screen.query_one("#join-relay")
        assert note_of(bob) == ASKING_KEY and time.monotonic() - started < relay_key.LEARN_TIMEOUT
        await wait_until(pilot, lambda: note_of(bob) != ASKING_KEY)
        note = note_of(bob)
        assert note.startswith(f"Relay: the relay at {address} did not tell its key") and "\n" not in note
        assert note.endswith("(a short code is kept at the host's relay)")
        assert isinstance(bob.screen, JoinScreen) and known(tmp_path / "bob") == []


async def test_the_home_menu_says_a_code_is_typed_at_join(tmp_path):
    """A newcomer holding a code read out by a friend: the home menu's join line says a code goes
    there (it said "paste an invite" only), and `j` opens the field it is typed in."""
    from textual.widgets import OptionList

    app = DiceTableApp(profile_dir=tmp_path / "bob")
    async with app.run_test(size=(80, 24)) as pilot:
        menu = app.screen.query_one(OptionList)
        lines = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert any("Join a table (type a code, or paste an invite)" in line for line in lines)
        assert any("Host a table (get an invite, or a code, to share)" in line for line in lines)
        await pilot.press("j")
        assert isinstance(app.screen, JoinScreen) and app.focused is app.screen.query_one("#join-invite")


async def test_the_host_form_says_it_kept_the_last_relay(tmp_path):
    """Issue 34: the host form's relay field kept the last relay silently, so a host who meant a direct
    table opened a relay one. A kept relay is now said in the field's title, with how to do without;
    a profile that never used a relay sees the plain title and an empty field."""
    from dicetable.net.reach.transport import curve_keypair
    from dicetable.tui.tables.relay_setting import remember

    line = RelayAddress("127.0.0.1", 7070, curve_keypair()[0]).encode()
    remember(tmp_path / "ann", line)
    for name, kept in (("ann", True), ("bob", False)):
        app = DiceTableApp(profile_dir=tmp_path / name)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")
            assert isinstance(app.screen, HostScreen)
            field = app.screen.query_one("#host-relay", Input)
            assert field.value == (line if kept else "")
            title = str(field.border_title)
            assert ("the last used is kept; empty: none" in title) is kept, title
