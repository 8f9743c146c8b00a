"""Home → "Resume a game": a network game left unfinished (a seat's session stopped mid-game) is
listed in words and reopened through the app — as joiner and as host, over real sockets on
127.0.0.1 — while the other seat plays on in a thread; finished and unreadable transcripts are not
listed, and an empty list says so. A joiner claimed in default while away is told the outcome when it
resumes, and the game leaves the list; a game whose host is gone says so and `x` takes it off the list
(its transcript stays); a joiner whose host dies mid-game is told plainly after the grace. Served over
SSH, a player whose connection dropped logs in again to the lobby, which says the game is waiting."""

from __future__ import annotations

import functools
import random
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from dicetable.core import registry
from dicetable.core.bots import RandomBot
from dicetable.net import identity
from dicetable.net.table import succession
from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.log.replica import Replica
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.seat_file import load_seat
from dicetable.net.table.session import bot_chooser
from dicetable.net.log.transcript import read
from net_helpers import FAST, Running
from net_helpers import wait_until as wait_for
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.screens.lobby_screen import LobbyScreen
from dicetable.tui.screens.resume_screen import EMPTY, ResumeScreen
from dicetable.tui.screens.trice_screen import TriceScreen
from dicetable.tui.tables.lobby import SERVED_ENV
from tui_pilot import paste_invite, until_shown
from tui_pilot import wait_until as wait_a_while

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)
wait_until = functools.partial(wait_a_while, timeout=20.0, step=0.05)
TRICE = registry.get("trice")


class Crash(Exception):
    """The seat's program dies (its session is left as a kill leaves it: transcript open, no goodbye)."""


def crashing_bot(seed: int, after: int):
    """A random bot that makes `after` moves, then dies when asked for the next: mid-game, on its turn."""
    bot = bot_chooser(TRICE, "random", seed)
    made = []

    def choose(view):
        if len(made) == after:
            raise Crash()
        made.append(1)
        return bot(view)

    return choose


def run_until_crash(session) -> None:
    try:
        session.run()
    except Crash:
        pass


def play_in_threads(tmp_path: Path, crashes: str | None, after: int = 2, timing: Timing = FAST,
                    relay: str | None = None, claims: bool = True):
    """alice hosts TRICE (through `relay`, if given), bob joins (claiming defaults if `claims`), both
    with bots and their own profile and transcripts folder; `crashes` ("alice"/"bob") dies mid-game,
    None plays to the end. Returns the sessions, their threads and the transcripts' paths, by name."""
    profiles = {who: identity.load_or_create(who, directory=tmp_path / who) for who in ("alice", "bob")}
    paths = {who: tmp_path / who / "transcripts" / f"20260101-00000{n}-table-seat{n}.dtt"
             for n, who in enumerate(("alice", "bob"))}
    choosers = {who: crashing_bot(n, after) if who == crashes else bot_chooser(TRICE, "random", n)
                for n, who in enumerate(("alice", "bob"))}
    host = HostSession(profiles["alice"], "trice", 2, port=0, timing=timing, chooser=choosers["alice"],
                       transcript=paths["alice"], relay=relay)
    invite = host.open()
    peer = PeerSession(profiles["bob"], invite, timing=timing, chooser=choosers["bob"], transcript=paths["bob"],
                       auto_claim=claims)
    sessions = {"alice": host, "bob": peer}
    threads = {who: threading.Thread(target=run_until_crash, args=(s,), daemon=True) for who, s in sessions.items()}
    for thread in threads.values():
        thread.start()
    if crashes is not None:
        threads[crashes].join(15)
        assert not threads[crashes].is_alive()
        assert read(paths[crashes]).result is None, "the game ended before the crash: nothing to resume"
    return sessions, threads, paths


def moves_in(path: Path) -> int:
    replica = Replica()
    for frame in read(path).frames:
        replica.accept(frame)
    return replica.moves


def moves_by(session, seat: int) -> int:
    return sum(1 for record in list(session.replica.log) if record.kind == "move" and record.seat == seat)


async def open_resume(pilot, app) -> ResumeScreen:
    await pilot.press("c")
    assert isinstance(app.screen, ResumeScreen)
    await wait_a_while(pilot, lambda: app.screen.loaded)  # the games are read in a thread
    return app.screen


async def play_on(pilot, app, other, seat: int, before: int):
    """Play this seat at the app (random legal moves) until one of its moves lands in the other
    seat's log past `before`: the game goes on after the resume. Returns the game screen (that move
    may end the game, and then the game-over dialog is the app's screen, above it)."""
    me = RandomBot(TRICE, random.Random(7))
    screen = app.screen  # the game's, taken once: a move that ends the game puts its dialog on top
    for _ in range(50):
        await wait_until(pilot, lambda: moves_by(other, seat) > before or (screen.view is not None and screen.view.my_turn()))
        if moves_by(other, seat) > before:
            return screen
        state = screen.view.state
        screen.controller.submit(me.choose(state))
        await wait_until(pilot, lambda: screen.view.state is not state)
    raise AssertionError("no move of the resumed seat reached the other seat")


async def test_a_joiner_resumes_from_the_home_screen_and_plays_on(tmp_path, monkeypatch):
    sessions, threads, paths = play_in_threads(tmp_path, crashes="bob")
    host = sessions["alice"]
    left_with = moves_in(paths["bob"])
    crashed_at = len(read(paths["bob"]).frames)
    bob_moves = moves_by(host, 1)
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_resume(pilot, app)
            menu = screen.query_one("#resume-list", OptionList)
            assert menu.option_count == 1
            words = str(menu.get_option_at_index(0).prompt)
            assert words.startswith(f"TRICE: alice vs bob (you), {left_with} moves, ")
            assert words.endswith(", you joined")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
            view = app.screen.view
            assert view.state is not None and view.local_seats == frozenset({1}) and view.result is None
            assert len(view.log) >= len(read(paths["bob"]).frames) // 2  # the old moves are on the table
            game = await play_on(pilot, app, host, 1, bob_moves)
            game.controller.close()
    finally:
        host.stop()
        threads["alice"].join(5)
    # Each file read once: a seat's session may still add a frame it was sent while the other's is read.
    bob_log, alice_log = read(paths["bob"]).frames, read(paths["alice"]).frames
    shared = min(len(bob_log), len(alice_log))
    assert shared > crashed_at and bob_log[:shared] == alice_log[:shared]  # one log, played on past the crash


async def test_a_host_resumes_from_the_home_screen_on_its_invite_and_plays_on(tmp_path, monkeypatch):
    sessions, threads, paths = play_in_threads(tmp_path, crashes="alice")
    peer = sessions["bob"]
    alice_moves = moves_by(peer, 0)
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "alice"))
    app = DiceTableApp()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            # by mouse this time: the home menu's fifth line, then the game's line
            await until_shown(pilot, "#home-menu")
            assert await pilot.click("#home-menu", offset=(5, 4))
            screen = app.screen
            assert isinstance(screen, ResumeScreen)
            await wait_a_while(pilot, lambda: screen.loaded)
            words = str(screen.query_one("#resume-list", OptionList).get_option_at_index(0).prompt)
            assert words.startswith(f"TRICE: alice (you) vs bob, {moves_in(paths['alice'])} moves, ")
            assert words.endswith(", you host")
            await until_shown(pilot, "#resume-list")
            assert await pilot.click("#resume-list", offset=(5, 1))
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
            assert app.screen.view.local_seats == frozenset({0})
            # bob's seat redials the same invite (address, port, key) and the game goes on
            game = await play_on(pilot, app, peer, 0, alice_moves)
            game.controller.close()
    finally:
        peer.stop()
        threads["bob"].join(5)


async def test_a_served_player_back_in_the_lobby_is_told_the_game_waits_and_resumes_it(tmp_path, monkeypatch):
    """A served app starts in the lobby (where a dropped player lands on logging in again): with an
    unfinished game it says so, and c there resumes it; with none, nothing is said."""
    monkeypatch.setenv(SERVED_ENV, str(tmp_path / "served-lobby"))
    identity.load_or_create("carol", directory=tmp_path / "carol")
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "carol"))
    app = DiceTableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.screen.query_one("#lobby-unfinished").display  # carol has nothing to resume
    sessions, threads, paths = play_in_threads(tmp_path, crashes="bob")
    host = sessions["alice"]
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen)
                             and app.screen.query_one("#lobby-unfinished").display)
            told = " ".join(str(app.screen.query_one("#lobby-unfinished", Static).render()).split())
            assert told.startswith(f"Your game is waiting: TRICE: alice vs bob (you), {moves_in(paths['bob'])} moves, ")
            assert told.endswith(", you joined. c resumes it.")
            screen = await open_resume(pilot, app)
            assert screen.query_one("#resume-list", OptionList).option_count == 1
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
            assert app.screen.view.local_seats == frozenset({1}) and app.screen.view.result is None
            app.screen.controller.close()
    finally:
        host.stop()
        threads["alice"].join(5)


async def test_a_host_whose_table_a_seat_took_over_at_the_relay_resumes_as_that_tables_seat(tmp_path, monkeypatch):
    """Issue 16 (net/table/succession.py): alice hosts through a relay and dies; after the grace bob orders the
    table there (and claims nothing); alice's app resumes the game, finds bob ordering, and plays on as
    seat 0 of bob's table."""
    monkeypatch.setattr(succession, "HOST_AWAY", 1.0)  # the relay's clock, shortened, as the seats know it
    relay = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0, host_away=1.0))
    try:
        sessions, threads, paths = play_in_threads(tmp_path, crashes="alice", timing=replace(FAST, grace=2.0),
                                                   relay=relay.line, claims=False)
        peer = sessions["bob"]
        wait_for(lambda: peer.successor is not None, 20, "bob to take over ordering")
        alice_moves = moves_by(peer, 0)
        monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "alice"))
        app = DiceTableApp()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_resume(pilot, app)
            await until_shown(pilot, "#resume-list")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None)
            assert app.screen.view.local_seats == frozenset({0}) and app.screen is not screen
            game = await play_on(pilot, app, peer, 0, alice_moves)  # alice's moves reach bob's log: the game goes on
            game.controller.close()
        table = relay.server.tables[peer.replica.table]
        assert table.server == peer.profile.public_key != table.owner  # bob still orders: alice came back as a seat
    finally:
        peer.stop()
        threads["bob"].join(10)
        relay.stop()


async def test_finished_and_unreadable_transcripts_are_not_listed(tmp_path, monkeypatch):
    sessions, threads, paths = play_in_threads(tmp_path, crashes=None)
    for thread in threads.values():
        thread.join(20)
    assert read(paths["bob"]).result is not None
    broken = tmp_path / "bob" / "transcripts" / "20260102-000000-broken-seat1.dtt"
    broken.write_bytes(b"not a transcript")
    Path(str(broken) + ".seat").write_bytes(b"\x80")
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_resume(pilot, app)
        assert screen.query_one("#resume-list", OptionList).option_count == 0
        assert str(screen.query_one("#resume-note", Static).render()) == EMPTY
        dim = str(screen.query_one("#resume-unreadable", Static).render())
        assert "Not listed: 20260102-000000-broken-seat1.dtt:" in dim and "damaged" in dim
        assert paths["bob"].name not in dim
        await pilot.press("escape")
        assert not isinstance(app.screen, ResumeScreen)


async def test_no_transcripts_says_there_is_nothing_to_resume(home):
    app = DiceTableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        assert not (home / "transcripts").exists()
        screen = await open_resume(pilot, app)
        assert str(screen.query_one("#resume-note", Static).render()) == EMPTY
        assert not screen.query_one("#resume-list", OptionList).display
        await pilot.press("enter")  # nothing to choose: nothing happens
        assert app.screen is screen


@pytest.mark.slow
async def test_a_host_not_back_yet_is_one_line_and_changes_nothing(tmp_path, monkeypatch):
    sessions, threads, paths = play_in_threads(tmp_path, crashes="bob")
    sessions["alice"].stop()  # the host is gone too: nobody answers the invite
    threads["alice"].join(5)
    before = paths["bob"].read_bytes(), Path(str(paths["bob"]) + ".seat").read_bytes()
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_resume(pilot, app)
        await pilot.press("enter")
        note = screen.query_one("#resume-note", Static)
        await wait_until(pilot, lambda: "waiting for the host" in str(note.render()))  # Enter's message, handled
        await wait_until(pilot, lambda: "Could not resume" in str(note.render()))
        line = str(note.render())
        assert "\n" not in line and "host" in line, line
        assert app.screen is screen and screen.query_one("#resume-list", OptionList).option_count == 1
    assert (paths["bob"].read_bytes(), Path(str(paths["bob"]) + ".seat").read_bytes()) == before


def test_a_resumed_host_is_bound_and_named_where_its_table_was(tmp_path):
    # The seat file keeps the bind address and the invite's address, so a host reopened from the app
    # is reached by the joiners' old invite (not only on this machine's loopback).
    from dicetable.net.table.seat_file import save_seat
    from dicetable.tui.tables.opening import Where, saved_where

    profile = identity.load_or_create("alice", directory=tmp_path / "alice")
    host = HostSession(profile, "trice", 2, port=0, advertise="table.invalid", timing=FAST)
    host.open()
    try:
        path = tmp_path / "table.dtt"
        path.write_bytes(b"")  # the seat file sits beside a transcript
        save_seat(path, host.own.seat_data())
        assert saved_where(path) == Where(bind="127.0.0.1", advertise="table.invalid")
        save_seat(path, {"seat": 0, "chains": []})  # written before this was kept: the default
        assert saved_where(path) == Where()
    finally:
        host.close()


def notified(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_a_joiner_claimed_in_default_while_away_is_told_the_outcome_when_it_resumes(tmp_path, monkeypatch):
    timing = Timing(heartbeat=0.1, drop_after=0.4, grace=4.0, reveal_deadline=30.0, connect_timeout=3.0)
    sessions, threads, paths = play_in_threads(tmp_path, crashes="bob", timing=timing)
    host = sessions["alice"]
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_resume(pilot, app)
            assert screen.query_one("#resume-list", OptionList).option_count == 1
            # Meanwhile bob stays away past the grace, and alice's seat claims the game.
            await wait_until(pilot, lambda: host.replica.result is not None)
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
            # The game-over dialog says it plainly (a toast may pass unseen while the screens change).
            told = str(app.screen.query_one("#over-detail", Static).render())
            assert told.startswith("bob: alice claimed the game while you were away (since "), told
            assert told.endswith(f" — you were in default (bob dropped and did not return within {timing.grace:g} s); "
                                 "alice wins (bob in default)")
            assert read(paths["bob"]).result is not None  # its transcript has the outcome now
            await pilot.press("h")  # the game-over dialog's "home"
            screen = await open_resume(pilot, app)
            assert screen.query_one("#resume-list", OptionList).option_count == 0
            assert str(screen.query_one("#resume-note", Static).render()) == EMPTY
    finally:
        host.stop()
        threads["alice"].join(5)


async def test_a_game_whose_host_is_gone_says_so_and_x_takes_it_off_the_list(tmp_path, monkeypatch):
    sessions, threads, paths = play_in_threads(tmp_path, crashes="bob")
    sessions["alice"].stop()  # the host closes its table for good
    threads["alice"].join(5)
    path = paths["bob"]
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_resume(pilot, app)
        await pilot.press("enter")
        note = screen.query_one("#resume-note", Static)
        await wait_until(pilot, lambda: "Could not resume" in str(note.render()))
        said = str(note.render()).replace("\n", "")
        assert said.startswith("Could not resume: no table answered at 127.0.0.1:")
        assert said.endswith(f": the host has closed the table or is offline; your transcript is {path}; "
                             f"`dicetable verify {path}` checks it; you can make a claim when it returns (resume the game then)")
        await pilot.press("x")
        assert screen.query_one("#resume-list", OptionList).option_count == 0
        assert f"Its transcript stays: {path}." in str(note.render()).replace("\n", "")
        assert path.exists() and load_seat(path)["forgotten"] is True  # the record and its secrets are kept
        await pilot.press("escape")
        screen = await open_resume(pilot, app)  # and it stays off the list
        assert screen.query_one("#resume-list", OptionList).option_count == 0


async def test_a_joiner_whose_host_dies_mid_game_is_told_plainly_and_can_leave(tmp_path, monkeypatch):
    timing = Timing(heartbeat=0.1, drop_after=0.4, grace=1.0, reveal_deadline=30.0, connect_timeout=3.0)
    alice = identity.load_or_create("alice", directory=tmp_path / "alice")
    identity.load_or_create("bob", directory=tmp_path / "bob")
    host = HostSession(alice, "trice", 2, port=0, timing=timing, chooser=bot_chooser(TRICE, "random", 1),
                       transcript=tmp_path / "alice.dtt")
    invite = host.open()
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "bob"))
    app = DiceTableApp()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await paste_invite(pilot, app, invite)
            await wait_until(pilot, lambda: isinstance(app.screen, TriceScreen) and app.screen.view is not None
                             and app.screen.view.state is not None)
            table = app.screen
            path = Path(table.view.transcript)
            host.stop()  # the host goes, without a word (as a killed process does: its socket just closes)
            thread.join(5)
            await wait_until(pilot, lambda: "The table closed" in str(table.query_one("#status").render()))
            status = str(table.query_one("#status").render())
            assert status.startswith("The table closed: the host has been unreachable since ")
            said = lambda: [m for m in notified(app) if "the host has closed the table or is offline" in m]
            await wait_until(pilot, lambda: said())  # a toast lands a moment after the status line
            told = said()
            assert told and told[-1].endswith(f"your transcript is {path}; `dicetable verify {path}` checks it; "
                                              "you can make a claim when it returns (resume the game then)")
            await pilot.press("escape")  # the table screen still answers: leave, with the game kept
            await wait_until(pilot, lambda: not isinstance(app.screen, TriceScreen))
            await wait_until(pilot, lambda: any(m.startswith("Your game is kept: c on the home screen (Resume)")
                                                for m in notified(app)))
            screen = await open_resume(pilot, app)
            assert screen.games and screen.games[0].path == path and read(path).result is None
    finally:
        host.stop()
        thread.join(5)


def test_looking_for_unfinished_games_loads_no_table_machinery():
    """Every served app's lobby looks for unfinished games as it opens: that look must not load the
    sessions' code (cryptography, ZeroMQ), which costs each idle app ~10 MB (scripts/bench_serve_ssh.py)."""
    import subprocess
    import sys

    look = ("import sys; from dicetable.tui.screens.resume_screen import resumable_games; resumable_games(); "
            "print(sorted(m for m in ('dicetable.net.table.session', 'cryptography', 'zmq') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", look], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out
