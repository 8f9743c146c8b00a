"""The lobby directory of a served dicetable (tui/tables/lobby.py): presence, open tables and
invitations between apps; a gone app, a stale file or a bad file is never shown."""

from __future__ import annotations

import os
import subprocess
import sys

from dicetable.tui.tables.lobby import Lobby, OpenTable, Presence


def other_app():
    """A live process id that is not this one (a presence is shown only while its app runs)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_people_see_each_other_and_open_tables(tmp_path):
    child = other_app()
    try:
        me, them = Lobby(tmp_path), Lobby(tmp_path, str(child.pid))
        me.announce("alice", "AbCd", "in the lobby")
        table = OpenTable("trice", "TRICE", "dt1-xyz", 1)
        them.announce("bob", "EfGh", "waiting for players: TRICE", table)
        assert me.present() == [Presence(str(child.pid), "bob", "EfGh", "waiting for players: TRICE", table)]
        assert [p.name for p in them.present()] == ["alice"]
        them.invite(me.me, "bob", "trice", "TRICE", "dt1-xyz")
        [invitation] = me.invitations()
        assert (invitation.sender_name, invitation.invite) == ("bob", "dt1-xyz")
        me.answer(invitation)
        assert me.invitations() == []
        them.invite(me.me, "bob", "trice", "TRICE", "dt1-xyz")
        them.leave()  # gone: neither the person nor the invitation is shown
        assert me.present() == [] and me.invitations() == []
    finally:
        child.kill()
        child.wait()


def test_an_ended_app_a_stale_file_and_bad_files_are_not_shown(tmp_path):
    child = other_app()
    me = Lobby(tmp_path)
    Lobby(tmp_path, str(child.pid)).announce("bob", "EfGh", "in the lobby")
    child.kill()
    child.wait()
    assert me.present() == []  # its app ended without leaving
    alive = other_app()
    try:
        here = tmp_path / "here" / f"{alive.pid}.json"
        Lobby(tmp_path, str(alive.pid)).announce("carol", "IjKl", "in the lobby")
        os.utime(here, (0, 0))
        assert me.present() == []  # not rewritten for a long time
        for bad in ('{"name": 5}', "not json", '["a"]', '{"name": "x\\u001b[2J", "key": "k", "doing": "d"}',
                    '{"name": "x", "key": "k", "doing": "d", "table": {"game": "trice", "title": "T", "invite": "i", "free": -1}}',
                    "x" * 10000):
            here.write_text(bad)
            assert me.present() == [], bad
        (tmp_path / "invitations").mkdir()
        (tmp_path / "invitations" / f"{me.me}.{alive.pid}.json").write_text('{"sender": 1}')
        assert me.invitations() == []
    finally:
        alive.kill()
        alive.wait()


def test_the_order_of_people_does_not_change_when_they_rewrite_their_presence(tmp_path):
    """Each app rewrites its presence now and then; were the list ordered by the files' times, every
    rewrite would reorder it, and each served lobby would repaint (and send the screen over SSH) for
    nothing. It is ordered by when the apps started (their process ids)."""
    children = sorted((other_app() for _ in range(3)), key=lambda child: child.pid)
    try:
        lobbies = [Lobby(tmp_path, str(child.pid)) for child in children]
        for lobby, name in zip(lobbies, ("ann", "bob", "cyd")):
            lobby.announce(name, "ABCD-EFGH-IJKL-MNOP", "in the lobby")
        me = Lobby(tmp_path)
        assert [p.name for p in me.present()] == ["ann", "bob", "cyd"]
        lobbies[0].announce("ann", "ABCD-EFGH-IJKL-MNOP", "in the menus")  # the newest file now
        assert [p.name for p in me.present()] == ["ann", "bob", "cyd"]
        assert me.invitations(me.present()) == me.invitations() == []
    finally:
        for child in children:
            child.kill()
            child.wait()


def test_a_presence_is_read_again_only_once_rewritten(tmp_path, monkeypatch):
    """Every app looks at the lobby each second; with 200 people here, reading every file each time
    cost each idle app more CPU than all else it does. A file unchanged since the last look is not
    read again; a rewritten one (same size, even) is."""
    import dicetable.tui.tables.lobby as lobby_module

    child = other_app()
    try:
        me, them = Lobby(tmp_path), Lobby(tmp_path, str(child.pid))
        them.announce("bob", "EfGh", "in the lobby")
        reads = []
        read = lobby_module._read
        monkeypatch.setattr(lobby_module, "_read", lambda path: reads.append(path.name) or read(path))
        assert [p.doing for p in me.present()] == ["in the lobby"]
        assert [p.doing for p in me.present()] == ["in the lobby"] and len(reads) == 1  # not read again
        them.announce("bob", "EfGh", "in the menus")  # as long as before: only the file's identity changed
        assert [p.doing for p in me.present()] == ["in the menus"] and len(reads) == 2
        them.leave()
        assert me.present() == []
    finally:
        child.kill()
        child.wait()
