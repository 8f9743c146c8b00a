"""`dicetable serve-ssh` on 127.0.0.1, driven by asyncssh clients with a pty of 80 × 24.

Each client logs in with a key made for it (any key is accepted; the key is the player) and reads
the app's output, with the terminal's control sequences taken out, to see what the screen says.
Two players see each other in the lobby, one invites with one key, the other accepts and both sit
at the same TRICE table; a flood of half-open connections and a dropped connection leave the server
serving; a full server and a session without a terminal are told so; a key past its share of the
disk saves nothing more, and the server keeps its reserve of free disk whatever the number of keys.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ssh_terminal import Player, ServeSsh, until as _until

asyncssh = pytest.importorskip("asyncssh")

pytestmark = pytest.mark.slow

@pytest.fixture
def server(tmp_path):
    served = ServeSsh(tmp_path / "served")
    yield served
    served.close()


FINGERPRINT = re.compile(r"\b[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}\b")  # net/identity.py fingerprint


async def test_two_players_meet_in_the_lobby_and_play(server, tmp_path):
    alice = await Player.login(server.port, "alice")
    await alice.enter_lobby()
    await alice.wait_for("Served by this host", "trusted")  # the trust note is on screen
    bob = await Player.login(server.port, "bob")
    await bob.enter_lobby()
    await bob.wait_for("alice", "in the lobby")
    await alice.wait_for("bob", "in the lobby")
    # bob's name may show first in a notice, before his row is drawn: wait for the row, key and all
    bobs_row = lambda: FINGERPRINT.findall(alice.text(alice.since).rpartition("bob")[2])  # the Key column
    await _until(bobs_row, "bob's row, with his key, in alice's lobby")
    [bobs_key] = bobs_row()
    await alice.press(b"i")  # the cursor is on bob, the only other person
    await alice.wait_for("Waiting room")
    await bob.wait_for("alice invites you to TRICE", "a accepts")
    await bob.press(b"a")
    for player in (alice, bob):
        # TRICE's own screen: both seated, the setup roll made by both, the fairness panel's tab
        await player.wait_for("alice sits down", "bob sits down", "setup roll", "Fairness", timeout=40)
    await alice.wait_for(bobs_key)  # one key id for one person: the lobby's is the one the seats show
    await alice.press(b"f")  # the fairness panel names the transcript as she can reach it: in her folder, by scp
    await alice.wait_for("transcript: transcripts/", "in your folder on this server", "HOST:transcripts/")
    for app in server.apps():  # each app runs under the per-connection bounds
        limits = Path(f"/proc/{app}/limits").read_text()
        assert re.search(r"Max address space\s+536870912\s", limits), limits
        assert re.search(r"Max cpu time\s+3600\s", limits), limits
    players = lambda: list((tmp_path / "served" / "players").iterdir())
    await _until(lambda: len(players()) == 2, "a folder for each player")
    assert all(p.stat().st_mode & 0o777 == 0o700 for p in players())
    assert (tmp_path / "served" / "host_key").stat().st_mode & 0o777 == 0o600
    for player in (alice, bob):
        player.close()
    await _until(lambda: not server.apps(), "the apps ended after their connections closed")


async def test_a_host_whose_connection_drops_in_the_waiting_room_frees_its_port(server, tmp_path):
    """Alice invites Bob, then her connection drops: her app ends (hang-up), its table's port closes,
    and the invitation leaves Bob's lobby."""
    import json

    from dicetable.net.reach.invite import Invite

    alice = await Player.login(server.port, "alice")
    await alice.enter_lobby()
    bob = await Player.login(server.port, "bob")
    await bob.enter_lobby()
    await alice.wait_for("bob")
    await alice.press(b"i")
    await bob.wait_for("alice invites you to TRICE")
    sent = list((tmp_path / "served" / "lobby" / "invitations").glob("*.json"))
    port = Invite.decode(json.loads(sent[0].read_text())["invite"]).port
    socket.create_connection(("127.0.0.1", port), timeout=2).close()  # the table listens
    bob.mark()
    alice.conn.abort()
    await _until(lambda: len(server.apps()) == 1, "alice's app ended")
    await _until(lambda: not _listening(port), "alice's table stopped listening")
    await bob.wait_for("Nobody else is connected right now")
    bob.close()


async def test_the_same_key_is_the_same_player(server):
    key = asyncssh.generate_private_key("ssh-ed25519")
    first = await Player.login(server.port, "carol", key)
    await first.enter_lobby()
    first.close()
    await _until(lambda: not server.apps(), "the app ended")
    again = await Player.login(server.port, "someone-else", key)
    await again.wait_for("Lobby", "who is here now")  # no name asked: the profile is the key's
    assert "Welcome to dicetable" not in again.text()
    again.close()


async def test_twenty_sessions_are_held_and_a_twenty_first_lists_them(server):
    """Twenty players at once, each with an app of its own in the lobby; a 21st login still gets its
    lobby and lists all twenty (memory per session: scripts/bench_serve_ssh.py)."""
    names = [f"player-{n:02d}" for n in range(20)]
    players = []
    try:
        for name in names:  # one after another: twenty apps starting at once would share 2 cores
            player = await Player.login(server.port, name)
            players.append(player)
            await player.enter_lobby(timeout=90)
        assert len(server.apps()) == 20
        last = await Player.login(server.port, "player-20", size=(80, 40))  # 40 rows: the whole list shows
        players.append(last)
        await last.enter_lobby(timeout=90)
        await last.wait_for(*names, timeout=60)
        assert not any(player.reader.done() for player in players), "a session was dropped"
        assert len(server.apps()) == 21 and server.process.poll() is None
    finally:
        for player in players:
            player.close()
    await _until(lambda: not server.apps(), "the apps ended after their connections closed", timeout=60)


async def test_the_same_key_logging_in_again_takes_over_its_seat(server, tmp_path):
    """Bob's connection hangs (it stays open, nothing comes) and he logs in again with the same key:
    the older app is closed first (two apps at one seat would write one transcript twice), and the
    newer one resumes the game; after the next move his transcript is whole, only unfinished."""
    from net_helpers import dicetable

    bob_key = asyncssh.generate_private_key("ssh-ed25519")
    alice = await Player.login(server.port, "alice")
    await alice.enter_lobby()
    bob = await Player.login(server.port, "bob", bob_key)
    await bob.enter_lobby()
    await alice.wait_for("bob")
    await alice.press(b"i")
    await bob.wait_for("alice invites you to TRICE")
    await bob.press(b"a")
    for player in (alice, bob):
        await player.wait_for("setup roll", timeout=40)
    first_app = set(server.apps())
    again = await Player.login(server.port, "bob", bob_key)
    await bob.wait_for("this key logged in again from another connection: this one is closed")
    await asyncio.wait_for(bob.reader, 15)  # the server closed the older session
    await again.wait_for("Your game is waiting", "c resumes it", timeout=40)
    assert len(server.apps()) == 2 and len(first_app & set(server.apps())) == 1  # alice's, and bob's new one
    await again.press(b"c")
    await again.wait_for("TRICE: alice vs bob (you)")
    for attempt in range(3):  # Enter again only when the list was not ready for it (a second one would move)
        await again.press(b"\r")
        try:
            await again.wait_for("Reopening TRICE", timeout=5)
            break
        except AssertionError:
            if attempt == 2:
                raise
    await again.wait_for("Pool:", timeout=40)
    mover = await _whose_turn(alice, again)
    await mover.press(b"\r")  # the cursor is on a die in the pool: it is chosen
    await again.wait_for("1. ", "chooses", timeout=40)
    [transcript] = [t for t in (tmp_path / "served" / "players").glob("*/transcripts/*seat1.dtt")]
    verdict = dicetable("verify", str(transcript))
    assert "the game is unfinished" in verdict.stdout, verdict  # not a record written twice
    for player in (alice, bob, again):
        player.close()


async def _whose_turn(*players: Player) -> Player:
    deadline = time.monotonic() + 40
    while True:
        for player in players:
            if "Your turn" in player.text(player.since):
                return player
        assert time.monotonic() < deadline, "nobody's turn"
        await asyncio.sleep(0.1)


async def test_a_stopping_server_ends_its_apps_first(tmp_path):
    served = ServeSsh(tmp_path / "served")
    try:
        player = await Player.login(served.port, "ivan")
        await player.enter_lobby()
        apps = served.apps()
        served.process.terminate()
        await player.wait_for("dicetable: the server has stopped")
        assert served.process.wait(20) == 0
        await asyncio.wait_for(player.conn.wait_closed(), 10)  # closed by the server, not dropped
        assert player.process.exit_status is not None
        assert apps and not any(Path(f"/proc/{app}").exists() for app in apps), "an app outlived its server"
        player.close()
    finally:
        served.close()


async def test_a_half_open_flood_and_a_dropped_connection_leave_the_server_up(server):
    flood = []
    for _ in range(100):  # TCP connections that never say a word of SSH
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        flood.append(writer)
    player = await Player.login(server.port, "dave")
    await player.wait_for("Welcome to dicetable")
    for junk in (b"\x00\xff\xfe", b"\x1b[999;999R", "é€😀".encode() * 50, b"\x1b" * 200, os.urandom(2000)):
        player.process.stdin.write(junk)  # bad input at the name prompt: nothing breaks
    player.conn.abort()  # the connection drops without a goodbye
    for writer in flood:
        writer.close()
    await _until(lambda: not server.apps(), "the dropped player's app ended")
    assert server.process.poll() is None
    after = await Player.login(server.port, "erin")
    await after.wait_for("Welcome to dicetable")
    await after.press(b"\r")
    await after.wait_for("Lobby")
    after.close()


async def test_a_full_server_an_idle_player_and_a_session_without_a_terminal_are_told(tmp_path):
    served = ServeSsh(tmp_path / "served", "--max-sessions", "1", "--idle", "6")
    try:
        assert "at most 1 sessions" in served.limits
        first = await Player.login(served.port, "frank")
        await first.wait_for("Welcome to dicetable")
        second = await Player.login(served.port, "grace")
        await second.wait_for("the server is full")
        second.close()
        key = asyncssh.generate_private_key("ssh-ed25519")
        async with asyncssh.connect("127.0.0.1", served.port, username="h", client_keys=[key], known_hosts=None,
                                    agent_path=None) as conn:
            result = await conn.run("ls /", check=False)
        assert result.exit_status == 1 and "log in with a terminal" in result.stderr
        await first.wait_for("no key pressed for 6 s: disconnected", timeout=15)
        await asyncio.wait_for(first.reader, 10)  # the server closed the session
        await _until(lambda: not served.apps(), "the idle player's app ended")
        first.close()
    finally:
        served.close()


async def test_a_key_that_reaches_its_share_of_the_disk_saves_nothing_more(tmp_path):
    """Each key keeps at most `--files` files and `--disk-mb` of disk on the server: Alice and Bob, at
    4 files a key, start a game; its transcripts and seat files pass the cap, so both apps are closed
    within seconds and say why in one line, and logging in again with that key is refused the same way.
    A key whose folder holds more than `--disk-mb` is refused too, and the cap bounds each file
    (RLIMIT_FSIZE)."""
    served = ServeSsh(tmp_path / "served", "--files", "4", "--disk-mb", "1")
    try:
        assert "each key keeps at most 1 MB in 4 files" in served.limits
        alice_key = asyncssh.generate_private_key("ssh-ed25519")
        alice = await Player.login(served.port, "alice", alice_key)
        await alice.enter_lobby()
        for app in served.apps():
            assert re.search(r"Max file size\s+1048576\s", Path(f"/proc/{app}/limits").read_text())
        bob = await Player.login(served.port, "bob")
        await bob.enter_lobby()
        await alice.wait_for("bob")
        await alice.press(b"i")
        await bob.wait_for("alice invites you to TRICE")
        await bob.press(b"a")
        told = "have reached this server's cap of 4 files per key"
        for player in (alice, bob):
            text = await player.wait_for(told, "nothing more can be saved, so the app is closed", timeout=40)
            assert "Ask the server's operator to make room." in text
            await asyncio.wait_for(player.reader, 15)  # the server closed the session
        await _until(lambda: not served.apps(), "both apps ended")
        from dicetable.tui.ssh_server import key_id

        alices = tmp_path / "served" / "players" / key_id(alice_key)
        kept = lambda: sorted((str(p.relative_to(alices)), p.stat().st_size) for p in alices.rglob("*"))
        before = kept()
        assert len(before) <= 8, before  # past the cap by what the app wrote within one check at most
        again = await Player.login(served.port, "alice", alice_key)
        await again.wait_for(told, "so the app does not run")
        await asyncio.wait_for(again.reader, 15)
        assert not served.apps()
        assert kept() == before  # the refused login wrote nothing more
        # A key whose folder already holds more than its share on disk (earlier games, say):
        carol_key = asyncssh.generate_private_key("ssh-ed25519")

        folder = tmp_path / "served" / "players" / key_id(carol_key)
        folder.mkdir(parents=True)
        (folder / "old.dtt").write_bytes(os.urandom(2 * 1024 * 1024))
        carol = await Player.login(served.port, "carol", carol_key)
        await carol.wait_for("have reached this server's cap of 1 MB per key", "so the app does not run")
        for player in (alice, bob, again, carol):
            player.close()
    finally:
        served.close()


async def test_no_number_of_keys_can_take_the_disk_the_server_keeps_free(tmp_path):
    """Keys cost nothing, so a share per key is not enough: below `--min-free-mb` free on its disk the
    server runs no app, for a new key or an old one, and says why."""
    served = ServeSsh(tmp_path / "served", "--min-free-mb", str(2**40))  # more than any disk here holds
    try:
        player = await Player.login(served.port, "dave")
        await player.wait_for("the server's disk is almost full", "it keeps 1099511627776 MB", "Try again later.")
        await asyncio.wait_for(player.reader, 15)
        assert not served.apps() and not list((tmp_path / "served" / "players").iterdir())
        player.close()
    finally:
        served.close()


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def test_serve_ssh_refuses_a_bad_port(tmp_path):
    out = subprocess.run([sys.executable, "-m", "dicetable.tui.cli", "serve-ssh", "--port", "70000",
                          "--data", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "between 0 and 65535" in out.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        out = subprocess.run([sys.executable, "-m", "dicetable.tui.cli", "serve-ssh", "--port",
                              str(busy.getsockname()[1]), "--data", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("dicetable: cannot serve on 127.0.0.1:"), out.stderr
