"""This machine's lobby (net/reach/same_machine.py): tables hosted on 127.0.0.1, announced to the machine's
other users through a shared directory, with the LAN's signed record and trust; `host --lan` on
loopback, `lan --interface lo` and `join --lan --interface lo` use it. Another user may write
anything there: a bad, forged, stale or hostile file is never trusted and never crashes a browser."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time

import pytest

from dicetable.net.reach import announcement, local_networks, same_machine
from dicetable.net.reach.announcement import FORGED, UNVERIFIED, KnownHosts
from dicetable.net.identity import Profile
from net_helpers import COMMAND, ROOT, spawn, wait_until

TABLE = bytes(range(16))


@pytest.fixture
def lobby(tmp_path):
    return same_machine.lobby_dir()  # the test's own (conftest's `home` sets DICETABLE_LOBBY_DIR)


def record(profile: Profile, table=TABLE, taken=1, total=2, port=40000, addresses=("127.0.0.1",), txt=None) -> bytes:
    props = {k.decode(): v.decode() for k, v in announcement.properties(profile, "trice", taken, total, table, port).items()}
    return json.dumps({"port": port, "addresses": list(addresses), "txt": {**props, **(txt or {})}}).encode()


def put(directory, name: str, data: bytes, age: float = 0.0) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(data)
    if age:
        os.utime(path, (time.time() - age, time.time() - age))


# -- the host's file ---------------------------------------------------------------------------------
def test_the_host_file_is_shared_refreshed_and_withdrawn_when_full(lobby):
    host = Profile.generate("Ann")
    ad = same_machine.Advertiser(host, TABLE, "trice", 2, 40123, ["127.0.0.1"])
    try:
        path = lobby / f"{TABLE.hex()}.table"
        wait_until(path.exists, 5, "the table's file")
        assert stat.S_IMODE(os.stat(lobby).st_mode) == 0o1777  # shared and sticky, as /tmp
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
        ad.update(1)
        wait_until(lambda: [a.seats_taken for a in same_machine.scan()] == [1], 5, "one seat taken announced")
        [ann] = same_machine.scan()
        assert ann.signature_ok and ann.host_key == host.public_key and ann.addresses == ("127.0.0.1",)
        assert ann.invite().port == 40123 and ann.invite().host_key == host.curve_public
        first = os.stat(path).st_mtime
        wait_until(lambda: os.stat(path).st_mtime > first, 5, "the heartbeat")
        assert not [p for p in lobby.iterdir() if p.name.startswith(".")], "no temporary file left behind"
        ad.update(2)  # full: withdrawn
        wait_until(lambda: not path.exists(), 5, "the file removed")
        time.sleep(same_machine.HEARTBEAT * 1.5)
        assert not path.exists(), "a full table is not announced again"
        ad.update(1)
        wait_until(path.exists, 5, "a seat free again")
    finally:
        ad.close()
    assert not path.exists()


# -- what a browser refuses --------------------------------------------------------------------------
def test_hostile_stale_and_forged_files_are_never_trusted(lobby, tmp_path):
    ann, eve, old = Profile.generate("Ann"), Profile.generate("Eve"), Profile.generate("Old")
    put(lobby, f"{TABLE.hex()}.table", record(ann))
    good = {a.service for a in same_machine.scan()}
    assert good == {f"{TABLE.hex()}.table"}
    hostile = {
        "garbage.table": b"\x00\xff not json",
        "list.table": b"[1, 2, 3]",
        "deep.table": b"[" * 2000 + b"]" * 2000,  # deeper than the recursion limit, within FILE_MAX
        "huge.table": b" " * (same_machine.FILE_MAX + 1) + record(eve),
        "types.table": json.dumps({"port": "40000", "addresses": "127.0.0.1", "txt": {}}).encode(),
        "bool.table": json.dumps({**json.loads(record(eve)), "port": True}).encode(),
        "surrogate.table": record(eve).replace(b'"game": "trice"', b'"game": "\\ud800"'),
        "short.table": record(eve, txt={"table": "00"}),
        "elsewhere.table": record(eve, bytes(16), addresses=("192.0.2.99",)),  # not this machine
        "noaddress.table": record(eve, bytes(16), addresses=()),
        "badport.table": record(eve, bytes(16), port=0),
    }
    for name, data in hostile.items():
        put(lobby, name, data)
    put(lobby, "stale.table", record(old, bytes([1]) * 16), age=same_machine.STALE_AFTER + 5)
    put(lobby, "future.table", record(old, bytes([2]) * 16), age=-(same_machine.STALE_AFTER + 60))
    put(lobby, "notes.txt", record(old, bytes([3]) * 16))  # not a table's file name
    put(lobby, ".hidden.table", record(old, bytes([4]) * 16))  # a temporary file being written
    os.mkfifo(lobby / "fifo.table")  # opening it must not wait for a writer
    (lobby / "dir.table").mkdir()
    put(tmp_path, "outside.json", record(old, bytes([5]) * 16))
    (lobby / "link.table").symlink_to(tmp_path / "outside.json")
    # Another key's signature over Ann's name and table: listed, and shown forged.
    forged = json.loads(record(eve, bytes([6]) * 16))
    forged["txt"]["key"] = ann.public_key.hex()
    put(lobby, "forged.table", json.dumps(forged).encode())
    tables = same_machine.scan()
    assert {a.service for a in tables} == good | {"forged.table"}
    known = KnownHosts(tmp_path / "bob")
    assert {a.service: announcement.assess(a, known)[0] for a in tables} == {
        f"{TABLE.hex()}.table": UNVERIFIED, "forged.table": FORGED}
    assert same_machine.scan(tmp_path / "nowhere") == []


def test_a_lobby_that_is_not_a_directory_is_refused(tmp_path, monkeypatch):
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    monkeypatch.setenv(same_machine.LOBBY_ENV, str(tmp_path / "link"))
    with pytest.raises(local_networks.DiscoveryError, match="is not a directory"):
        same_machine.Advertiser(Profile.generate("Ann"), TABLE, "trice", 2, 40000, ["127.0.0.1"])
    assert not list((tmp_path / "target").iterdir())


# -- two users of one machine, with the command line ------------------------------------------------
@pytest.mark.slow
def test_another_user_lists_and_joins_a_table_hosted_on_loopback(tmp_path, lobby):
    eve, old = Profile.generate("Eve"), Profile.generate("Old")
    host = spawn(tmp_path, "ann", "host", "trice", "--port", "0", "--bind", "127.0.0.1", "--lan", "--bot", "random",
                 "--name", "Ann", "--think", "0.05")
    try:
        announced = ""
        for line in host.stdout:
            if line.startswith("lan: announcing"):
                announced = line
                break
        assert "127.0.0.1 (this machine's lobby)" in announced, announced
        # What other users left there: garbage, a forged record, a table whose host is gone.
        put(lobby, "garbage.table", b"{]")
        forged = json.loads(record(eve, bytes([6]) * 16))
        forged["txt"]["seats"] = "0/2"
        put(lobby, "forged.table", json.dumps(forged).encode())
        put(lobby, "stale.table", record(old, bytes([1]) * 16), age=same_machine.STALE_AFTER + 5)
        bob = lambda *argv: subprocess.run([str(COMMAND), *argv], capture_output=True, text=True, cwd=ROOT,
                                           env={**os.environ, "DICETABLE_HOME": str(tmp_path / "bob")}, timeout=120)
        listed = bob("lan", "--interface", "lo", "--json", "--timeout", "1")
        assert listed.returncode == 0, listed.stderr
        rows = {r["host"]: r for r in json.loads(listed.stdout)}
        assert set(rows) == {"Ann", "Eve"}, rows
        assert rows["Ann"]["trust"] == UNVERIFIED and rows["Ann"]["address"] == "127.0.0.1"
        assert rows["Eve"]["trust"] == FORGED
        # Bob joins it by discovery on loopback (real sockets): the forged one is never chosen.
        joined = bob("join", "--lan", "--interface", "lo", "--bot", "random", "--name", "Bob", "--timeout", "10")
        assert joined.returncode == 0, joined.stderr
        assert f"found: {rows['Ann']['service']} at 127.0.0.1:{rows['Ann']['port']}" in joined.stdout
        assert "(unverified: first meeting" in joined.stdout
        assert "pinned: Ann" in joined.stdout and "result: " in joined.stdout
        assert host.wait(60) == 0
    finally:
        if host.poll() is None:
            host.kill()
    assert not (lobby / f"{rows['Ann']['table']}.table").exists(), "the table's file is gone"
