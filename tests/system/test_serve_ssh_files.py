"""A served player downloads their own folder from `dicetable serve-ssh` with OpenSSH's sftp and scp.

Alice and Bob log in with keys made by ssh-keygen and sit down at a TRICE table (the setup roll
made), then leave; each fetches their transcript with the real `sftp` and `scp` (over SFTP, and
`scp -O`'s old protocol): the copies are the server's byte for byte, and `dicetable verify` checks
them at home (a game unfinished, the two copies agreeing; a whole game downloaded and found valid:
test_serve_ssh_openssh.py). The folder is
read only: a put, a remove, a rename, a mkdir, a link and a chmod are refused, and nothing changes;
`..`, absolute paths and a link pointing out of the folder find nothing; Bob sees his own folder
only, a key may hold at most two downloads open at once, and an idle one is closed.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import asyncssh
import pytest

from net_helpers import dicetable
from ssh_terminal import Player, ServeSsh, client_options, until, user_key

pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path):
    for tool in ("sftp", "scp", "ssh-keygen"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian: openssh-client)")
    server = ServeSsh(tmp_path / "served")
    yield server
    server.close()


class Client:
    """OpenSSH's sftp and scp with one key, against the served port (the host key taken on first use)."""

    def __init__(self, port: int, key: Path, known_hosts: Path) -> None:
        self.target = "player@127.0.0.1"
        self.options = [*client_options(key, known_hosts), "-P", str(port)]

    async def sftp(self, *commands: str, cwd: Path) -> subprocess.CompletedProcess:
        """Run `commands` in sftp's batch mode; a leading `-` lets the batch go on past a refusal."""
        return await _run(["sftp", *self.options, "-b", "-", self.target], cwd, "\n".join(commands) + "\n")

    async def scp(self, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        return await _run(["scp", *self.options, *args], cwd)


async def _run(argv: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    process = await asyncio.create_subprocess_exec(*argv, cwd=cwd, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), 60)
    return subprocess.CompletedProcess(argv, process.returncode, out.decode(), err.decode())


def folder_state(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"")
            for p in sorted(folder.rglob("*")) if not p.is_symlink()}


async def sit_down(port: int, keys: dict[str, Path]) -> None:
    alice = await Player.login(port, "alice", asyncssh.read_private_key(str(keys["alice"])))
    await alice.enter_lobby()
    bob = await Player.login(port, "bob", asyncssh.read_private_key(str(keys["bob"])))
    await bob.enter_lobby()
    await alice.wait_for("bob", "in the lobby")
    await alice.press(b"i")
    await bob.wait_for("alice invites you to TRICE")
    await bob.press(b"a")
    for player in (alice, bob):
        await player.wait_for("setup roll", timeout=40)
    for player in (alice, bob):
        player.close()


async def test_a_player_downloads_their_own_transcript_and_nothing_else(served, tmp_path):
    keys = {name: user_key(tmp_path / f"{name}_key") for name in ("alice", "bob")}
    await sit_down(served.port, keys)
    await until(lambda: not served.apps(), "both apps ended", timeout=30)
    players = served.data / "players"
    alice_folder = next(f for f in players.iterdir() if list(f.glob("transcripts/*seat0.dtt")))
    bob_folder = next(f for f in players.iterdir() if f != alice_folder)
    [alices] = [p.relative_to(alice_folder).as_posix() for p in alice_folder.glob("transcripts/*.dtt")]
    [bobs] = [p.relative_to(bob_folder).as_posix() for p in bob_folder.glob("transcripts/*.dtt")]
    alice = Client(served.port, keys["alice"], tmp_path / "known_hosts")
    bob = Client(served.port, keys["bob"], tmp_path / "known_hosts")

    # Alice fetches her transcript three ways, and each copy verifies at home.
    home = tmp_path / "alice_home"
    home.mkdir()
    got = await alice.sftp("ls transcripts", f"get {alices} by_sftp.dtt", cwd=home)
    assert got.returncode == 0, got
    assert Path(alices).name in got.stdout
    for flags, name in (([], "by_scp.dtt"), (["-O"], "by_old_scp.dtt")):
        got = await alice.scp(*flags, f"{alice.target}:{alices}", name, cwd=home)
        assert got.returncode == 0, got
    for name in ("by_sftp.dtt", "by_scp.dtt", "by_old_scp.dtt"):
        assert (home / name).read_bytes() == (alice_folder / alices).read_bytes()
        verdict = dicetable("verify", str(home / name))
        assert "the game is unfinished" in verdict.stdout, verdict  # every record checked, up to where they left

    # Nothing in her folder can be changed, whichever way it is asked.
    (alice_folder / "outside").symlink_to(bob_folder / bobs)  # a link out of her folder (to Bob's game)
    (alice_folder / "system").symlink_to("/etc/passwd")
    before = folder_state(alice_folder)
    (home / "mine.dtt").write_text("not a game\n")
    refused = await alice.sftp(f"-put mine.dtt {alices}", "-put mine.dtt new.dtt", f"-rm {alices}",
                               f"-rename {alices} renamed.dtt", "-mkdir more", "-rmdir transcripts",
                               "-ln -s /etc/passwd link", f"-chmod 666 {alices}", cwd=home)
    assert refused.stderr.count("Permission denied") == 8, refused
    for flags in ([], ["-O"]):
        put = await alice.scp(*flags, "mine.dtt", f"{alice.target}:transcripts/", cwd=home)
        assert put.returncode != 0, put
    assert folder_state(alice_folder) == before
    assert not list(players.rglob("mine.dtt")) and not list(players.rglob("new.dtt"))

    # Nothing outside her folder can be read: `..`, absolute paths and links pointing out find nothing.
    outward = [f"../{bob_folder.name}/{bobs}", f"../../players/{bob_folder.name}/{bobs}", f"/../{bob_folder.name}/{bobs}",
               str(bob_folder / bobs), "/etc/passwd", "outside", "system"]
    for path in outward:
        tried = await alice.sftp(f"get {path} taken", cwd=home)
        assert tried.returncode != 0 and "not found" in tried.stderr, (path, tried)
        for flags in ([], ["-O"]):
            tried = await alice.scp(*flags, f"{alice.target}:{path}", "taken", cwd=home)
            assert tried.returncode != 0, (path, flags, tried)
            if not path.startswith("/tmp"):  # the server's own paths are never told (the client repeats its own)
                assert str(served.data) not in tried.stderr, tried
    assert sorted(p.name for p in home.iterdir()) == ["by_old_scp.dtt", "by_scp.dtt", "by_sftp.dtt", "mine.dtt"]
    listed = await alice.sftp("ls -a /", "ls -a /..", "cd ..", "pwd", cwd=home)
    assert bob_folder.name not in listed.stdout and "Remote working directory: /\n" in listed.stdout, listed

    # Bob sees his own folder only.
    bobs_home = tmp_path / "bob_home"
    bobs_home.mkdir()
    seen = await bob.sftp("ls", "ls transcripts", f"get {bobs} his.dtt", cwd=bobs_home)
    assert seen.returncode == 0 and Path(bobs).name in seen.stdout and Path(alices).name not in seen.stdout, seen
    both = dicetable("verify", str(home / "by_sftp.dtt"), str(bobs_home / "his.dtt"))
    assert "copies agree: 2 copies" in both.stdout, both  # one table, as each seat kept it


async def test_a_key_holds_at_most_two_downloads_and_a_stranger_none(served, tmp_path):
    key = user_key(tmp_path / "carol_key")
    carol = await Player.login(served.port, "carol", asyncssh.read_private_key(str(key)))
    await carol.enter_lobby()
    carol.close()
    await until(lambda: not served.apps(), "carol's app ended")
    client = Client(served.port, key, tmp_path / "known_hosts")
    held = [await asyncio.create_subprocess_exec("sftp", *client.options, client.target, cwd=tmp_path,
                                                 stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                 stderr=asyncio.subprocess.PIPE) for _ in range(2)]
    for process in held:  # each one is in: its prompt answers
        process.stdin.write(b"pwd\n")
        while b"Remote working directory: /" not in await asyncio.wait_for(process.stdout.readline(), 30):
            pass  # sftp repeats the command first
    third = await client.sftp("ls", cwd=tmp_path)
    assert third.returncode != 0 and "this key already has 2 downloads open" in third.stderr, third
    for process in held:
        process.stdin.write(b"bye\n")
        await asyncio.wait_for(process.wait(), 30)
    again = await client.sftp("ls", cwd=tmp_path)
    assert again.returncode == 0, again

    stranger = Client(served.port, user_key(tmp_path / "dan_key"), tmp_path / "known_hosts")
    refused = await stranger.scp(f"{stranger.target}:profile.json", ".", cwd=tmp_path)
    assert refused.returncode != 0 and "log in with ssh first" in refused.stderr, refused
    assert len(list((served.data / "players").iterdir())) == 1  # no folder was made for the stranger


async def test_a_download_that_asks_for_nothing_is_closed(tmp_path):
    """A download holds one of its key's two places: one left open and idle gives it back after `--idle`."""
    served = ServeSsh(tmp_path / "served", "--idle", "5")
    try:
        key = user_key(tmp_path / "erin_key")
        erin = await Player.login(served.port, "erin", asyncssh.read_private_key(str(key)))
        await erin.enter_lobby()
        erin.close()
        await until(lambda: not served.apps(), "erin's app ended")
        client = Client(served.port, key, tmp_path / "known_hosts")
        idle = [await asyncio.create_subprocess_exec("sftp", *client.options, client.target, cwd=tmp_path,
                                                     stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                     stderr=asyncio.subprocess.PIPE) for _ in range(2)]
        for process in idle:  # both places taken, and neither asks for anything: each is closed, and told
            while b"dicetable: nothing asked for 5 s: the download is closed" not in (
                    said := await asyncio.wait_for(process.stderr.readline(), 30)):
                assert said, "the download ended without a word"
        again = await client.sftp("ls", cwd=tmp_path)  # a place is free again
        assert again.returncode == 0, again
        for process in idle:  # sftp notices at its next command
            process.stdin.close()
            await asyncio.wait_for(process.wait(), 30)
    finally:
        served.close()

