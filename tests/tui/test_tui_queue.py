"""Play whoever is waiting (tui/tables/queue.py, tui/screens/queue_screen.py): two people who ask the
served lobby's queue or the LAN list's queue for the same game are seated at one table — also when
they ask at the same moment (the lower key hosts, the other leaves its own table for it) — through
two real apps, real queue tables on 127.0.0.1 and their real announcements in this machine's lobby
(net/reach/same_machine.py); the queue mark is signed, so nobody puts it on or takes it off another's
table."""

import functools
import json

import pytest
from textual.widgets import Static

from dicetable.net import identity
from dicetable.net.reach import announcement, same_machine
from dicetable.net.reach.announcement import KnownHosts
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.lan_screen import LanScreen
from dicetable.tui.screens.lobby_screen import LobbyScreen
from dicetable.tui.screens.queue_screen import QueueScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.tables.lobby import SERVED_ENV
from dicetable.tui.tables.queue import partner
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

wait_until = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # two apps and a network session


def two_people(tmp_path):
    """Two profiles (ann, bob) and an app for each; the one with the lower key first."""
    apps = []
    for name in ("ann", "bob"):
        profile = identity.load_or_create(name, directory=tmp_path / name)
        apps.append((profile.public_key, DiceTableApp(profile_dir=tmp_path / name)))
    return [app for _, app in sorted(apps, key=lambda pair: pair[0])]


def close_tables(*apps) -> None:
    for app in apps:
        for screen in app.screen_stack:
            table = getattr(screen, "controller", None) or getattr(screen, "table", None)
            if table is not None and hasattr(table, "session"):
                table.close()


def playing(app) -> bool:
    screen = app.screen
    return isinstance(screen, TriceScreen) and screen.view is not None and screen.view.state is not None


def queued_files():
    return sorted(same_machine.lobby_dir().glob("*.table"))


# -- the rule, on real announcements ---------------------------------------------------------------
def announced(profile, table: bytes, queue: bool = True, game: str = "trice", **txt) -> announcement.Announcement:
    props = announcement.properties(profile, game, 1, 2, table, 40000, queue=queue)
    props.update({k.encode(): v.encode() for k, v in txt.items()})
    return announcement.parse(f"{table.hex()}.table", props, 40000, ["127.0.0.1"])


def test_the_lower_key_hosts_and_the_mark_is_signed(tmp_path):
    low, high, other = sorted((identity.Profile.generate(n) for n in ("ann", "bob", "cyd")), key=lambda p: p.public_key)
    known = KnownHosts(tmp_path)
    low_table, high_table = announced(low, bytes(16)), announced(high, bytes([1]) * 16)
    assert low_table.queue and low_table.signature_ok
    # Nobody seated yet, both waiting: the higher key leaves for the lower's table, never the other way.
    assert partner([low_table, high_table], "trice", high, True, known)[0] == low_table
    assert partner([low_table, high_table], "trice", low, True, known) is None
    # Not waiting yet: join whoever waits, the lowest key first (everyone who looks picks the same).
    assert partner([high_table, low_table], "trice", other, False, known)[0] == low_table
    # Another game, an ordinary open table, a table whose join failed: not a partner.
    assert partner([announced(low, bytes(16), game="triad")], "trice", other, False, known) is None
    assert partner([announced(low, bytes(16), queue=False)], "trice", other, False, known) is None
    assert partner([low_table], "trice", other, False, known, skip={low_table.table_id}) is None
    # The mark put on an ordinary table, or taken off a queue table, breaks the host's signature.
    props = announcement.properties(low, "trice", 1, 2, bytes(16), 40000)
    forged = announcement.parse("x.table", {**props, b"queue": b"1"}, 40000, ["127.0.0.1"])
    assert forged.queue and not forged.signature_ok
    assert partner([forged], "trice", other, False, known) is None
    props = announcement.properties(low, "trice", 1, 2, bytes(16), 40000, queue=True)
    del props[b"queue"]
    stripped = announcement.parse("x.table", props, 40000, ["127.0.0.1"])
    assert not stripped.queue and not stripped.signature_ok


# -- two apps, one table ---------------------------------------------------------------------------
@pytest.mark.slow
async def test_two_people_who_ask_at_the_same_moment_sit_at_the_lower_keys_table(tmp_path, monkeypatch):
    low, high = two_people(tmp_path)
    queues = {}  # app -> its queue screen, kept after the game's screen replaces it
    mount = QueueScreen.on_mount
    monkeypatch.setattr(QueueScreen, "on_mount", lambda screen: (queues.setdefault(screen.app, screen), mount(screen)))
    async with low.run_test(size=(80, 24)) as one, high.run_test(size=(80, 24)) as two:
      try:
        pilots = (one, two)
        # Both ask before either table is announced, as two people in two processes may: each finds
        # nobody and hosts. (Two apps in one test share one event loop: a p pressed in each runs one
        # screen's mount after the other's, and the second would already see the first table.)
        for app in (low, high):
            app.call_later(app.push_screen, QueueScreen(app.profile(), "trice"))  # in the app's own context
        await wait_until(pilots, lambda: playing(low) and playing(high))
        assert queues[low].queue.gave_way is None  # the lower key kept its table and hosts
        assert queues[high].queue.gave_way.role == "host" and queues[high].queue.gave_way.session.stopped
        assert low.screen.controller.role == "host" and high.screen.controller.role == "join"
        assert low.screen.controller.session.replica.table == high.screen.controller.session.replica.table
        await wait_until(pilots, lambda: not queued_files())  # the higher key's table closed, the other full
      finally:
        close_tables(low, high)


@pytest.mark.slow
async def test_on_the_lan_list_the_next_who_asks_joins_whoever_waits_whatever_their_keys(tmp_path):
    low, high = two_people(tmp_path)
    async with low.run_test(size=(80, 24)) as one, high.run_test(size=(80, 24)) as two:
      try:
        pilots = (one, two)
        for app in (low, high):
            app.call_later(app.push_screen, LanScreen(browse=False, machine=True))  # no mDNS in a test
        await wait_until(pilots, lambda: all(isinstance(app.screen, LanScreen) for app in (low, high)))
        said = " ".join(str(high.screen.query_one("#lan-queue", Static).render()).split())
        assert said == "p plays whoever is waiting for TRICE (g changes the game)."
        await two.press("p")  # the higher key asks first and waits: its table is listed in the other's list
        await wait_until(pilots, lambda: isinstance(high.screen, QueueScreen) and len(queued_files()) == 1)
        await wait_until(pilots, lambda: low.screen.rows and low.screen.rows[0][0].queue)
        await one.press("p")
        await wait_until(pilots, lambda: playing(low) and playing(high))
        assert high.screen.controller.role == "host" and low.screen.controller.role == "join"
        assert low.screen.controller.session.replica.table == high.screen.controller.session.replica.table
      finally:
        close_tables(low, high)


@pytest.mark.slow
async def test_in_the_served_lobby_one_waits_visibly_and_the_next_who_asks_is_seated_with_them(tmp_path, monkeypatch):
    monkeypatch.setenv(SERVED_ENV, str(tmp_path / "served-lobby"))
    ann, bob = two_people(tmp_path)
    async with ann.run_test(size=(80, 24)) as one, bob.run_test(size=(80, 24)) as two:
      try:
        pilots = (one, two)
        await wait_until(pilots, lambda: all(isinstance(app.screen, LobbyScreen) for app in (ann, bob)))
        said = " ".join(str(ann.screen.query_one("#lobby-game", Static).render()).split())
        assert said == "i invites to TRICE; p plays whoever is waiting for it (g changes the game)."
        # Ann asks, changes her mind (Esc: her table closes, its announcement goes), and asks again.
        await one.press("p")
        await wait_until(pilots, lambda: len(queued_files()) == 1)
        await one.press("escape")
        await wait_until(pilots, lambda: isinstance(ann.screen, LobbyScreen) and not queued_files())
        await one.press("p")
        await wait_until(pilots, lambda: len(queued_files()) == 1)
        [file] = queued_files()
        assert json.loads(file.read_text())["txt"]["queue"] == "1"
        status = " ".join(str(ann.screen.query_one("#queue-status", Static).render()).split())
        assert status.startswith("Waiting for whoever asks for TRICE: your table is announced on this machine.")
        assert ann.served.doing() == "waiting for whoever plays TRICE (p)"  # what the lobby shows of her
        # Bob asks for the same game: he joins her table, whatever their keys.
        await two.press("p")
        await wait_until(pilots, lambda: playing(ann) and playing(bob))
        assert ann.screen.controller.role == "host" and bob.screen.controller.role == "join"
        assert ann.screen.controller.session.replica.table == bob.screen.controller.session.replica.table
        await two.press("t")  # a network table: t opens the chat line (at a local one it says there is none)
        await wait_until(pilots, lambda: bob.focused is bob.screen.query_one("#chat-input"))
        assert "Chat is for network tables." not in [notice.message for notice in bob._notifications]
      finally:
        close_tables(ann, bob)
