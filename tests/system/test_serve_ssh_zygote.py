"""`dicetable serve-ssh` forks each app from its preloaded parent (tui/zygote.py), through the real
server and asyncssh clients with a pty of 80 × 24: the app is the server's child, runs under the
session's limits in a terminal and session of its own, shares most of its memory with the parent
and its other apps, and leaves the lobby as it goes; a parent killed under the server leaves it
serving (the next app starts as a fresh Python), and no parent outlives its server.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest

from ssh_terminal import Player, ServeSsh, until

pytest.importorskip("asyncssh")

pytestmark = pytest.mark.slow


def parents(server: ServeSsh, zombies: bool = False) -> list[int]:
    """The server's preloaded parents (its children named dt-zygote), running (or ended, not reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            comm = (entry / "comm").read_text().strip()
        except (OSError, ValueError, IndexError):
            continue
        if int(ppid) == server.process.pid and comm == "dt-zygote" and (state == "Z") == zombies:
            found.append(int(entry.name))
    return found


def rollup(pid: int, field: str) -> int:
    """A /proc/PID/smaps_rollup field, in kB."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


async def test_an_app_is_forked_from_the_preloaded_parent_and_shares_its_pages(tmp_path):
    served = ServeSsh(tmp_path / "served")
    try:
        assert "apps forked from a preloaded parent" in served.limits
        [parent] = parents(served)
        alice, bob = await Player.login(served.port, "alice"), await Player.login(served.port, "bob")
        for player in (alice, bob):
            await player.enter_lobby()
        await alice.wait_for("bob", "in the lobby")  # each sees the other: both run the real lobby
        apps = served.apps()
        assert len(apps) == 2 and parent not in apps
        for app in apps:
            # the server's own child (re-parented to it), named as `dicetable` is, in a session of its own
            assert Path(f"/proc/{app}/comm").read_text().strip() == "dicetable"
            assert os.getsid(app) == app and os.getpgid(app) == app
            limits = Path(f"/proc/{app}/limits").read_text()
            assert re.search(r"Max address space\s+536870912\s", limits), limits
            assert re.search(r"Max file size\s+67108864\s", limits), limits
            assert re.search(r"Max open files\s+256\s", limits), limits
            assert Path(os.readlink(f"/proc/{app}/cwd")).parent == tmp_path / "served" / "players"  # its home
            # what a fresh Python would have of its own (~30 MB) is mostly the parent's here
            assert rollup(app, "Shared_Clean") + rollup(app, "Shared_Dirty") > 8 * 1024, Path(
                f"/proc/{app}/smaps_rollup").read_text()
        lobby = tmp_path / "served" / "lobby"
        assert len([p for p in lobby.rglob("*") if p.is_file()]) >= 2
        alice.close()  # her app ends (hang-up) and leaves the lobby as a fresh Python's would
        await bob.wait_for("Nobody else is connected")
        await until(lambda: len(served.apps()) == 1, "alice's app ended")
        bob.close()
        await until(lambda: not served.apps(), "bob's app ended")
        assert parents(served) == [parent]  # the parent stays for the next login
    finally:
        served.close()


async def test_a_killed_parent_leaves_the_server_serving_and_none_outlives_the_server(tmp_path):
    served = ServeSsh(tmp_path / "served")
    try:
        first = await Player.login(served.port, "carol")
        await first.enter_lobby()
        [parent] = parents(served)
        os.kill(parent, signal.SIGKILL)
        await until(lambda: not parents(served), "the parent gone")
        [carols] = served.apps()  # carol's app, forked earlier, goes on
        second = await Player.login(served.port, "dan")  # started afresh now
        await second.enter_lobby()
        assert carols in served.apps() and len(served.apps()) == 2
        assert not parents(served, zombies=True)  # the server reaped it when it found it gone
        first.close()
        second.close()
        await until(lambda: not served.apps(), "both apps ended")
    finally:
        served.close()
    again = ServeSsh(tmp_path / "served")
    [parent] = parents(again)
    again.process.terminate()
    assert again.process.wait(20) == 0
    await until(lambda: not Path(f"/proc/{parent}").exists(), "the parent ended with its server")
    again.close()


def test_the_session_cap_is_sized_from_the_machines_memory(tmp_path):
    from dicetable.tui.ssh_server import SESSION_MB, default_max_sessions

    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert default_max_sessions() == max(4, memory // 2 // (SESSION_MB << 20))
    served = ServeSsh(tmp_path / "served")
    try:
        assert f"at most {default_max_sessions()} sessions" in served.limits
    finally:
        served.close()
