"""The lobby of a served dicetable (`dicetable serve-ssh`): who is connected now, their open tables,
and invitations between them — files in one shared directory that every served app polls.

Each app writes `here/<pid>.json` (its presence, rewritten every few seconds) and, to invite
someone, `invitations/<to>.<from>.json` holding the ordinary invite of a table it hosts on
127.0.0.1; the invited app reads it and joins that table like any joiner. A file is written whole
(a temporary file renamed), so a reader sees all of it or none; a presence whose app has ended or
has not been rewritten lately is not shown, so a crash leaves nobody behind. The files come from
other apps: every field is checked, and a bad file is skipped, never trusted.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

SERVED_ENV = "DICETABLE_SERVED"  # the lobby directory: set by serve-ssh for each app it runs
SERVED_PORT_ENV = "DICETABLE_SERVED_PORT"  # the server's port as the player's SSH client reached it
STALE_AFTER = 15.0  # seconds: a presence not rewritten for this long is gone
REFRESH = 5.0  # seconds: an app rewrites its presence this often when nothing in it changed
FILE_MAX = 4096  # bytes: a lobby file is small; a larger one is not read


@dataclass(frozen=True)
class OpenTable:
    """A table a person hosts: with free seats anyone in the lobby may sit down; with none (a game under
    way) anyone may watch it (w, net/table/watcher.py)."""

    game: str  # the game's name in the registry
    title: str
    invite: str
    free: int  # 0: under way, to watch


@dataclass(frozen=True)
class Presence:
    id: str  # the app's process id: one per connection
    name: str
    key: str  # the player's profile key fingerprint (net/identity.py), as the seats at a table show it
    doing: str  # "in the lobby", "playing TRICE", ...
    table: OpenTable | None = None


@dataclass(frozen=True)
class Invitation:
    sender: str  # presence ids
    sender_name: str
    to: str
    game: str
    title: str
    invite: str


def served_lobby() -> Path | None:
    """The lobby directory when this app is served over SSH, else None."""
    value = os.environ.get(SERVED_ENV)
    return Path(value) if value else None


def download_command(path: str, folder: bool = False) -> str:
    """How a served player fetches `path` (a file, or a `folder`) from their own folder on the
    server, typed at home (tui/ssh_files.py); HOST is the address they log in to."""
    port = os.environ.get(SERVED_PORT_ENV, "22")
    return f"scp {'-r ' if folder else ''}{'' if port == '22' else f'-P {port} '}HOST:{path} ."


def shown_path(path) -> str:
    """A file of this player's as they can reach it: served over SSH, where it is in their folder and
    the command that downloads it (the server's own path means nothing to them); else the path."""
    home = os.environ.get("DICETABLE_HOME")
    if served_lobby() is None or not home:
        return str(path)
    try:
        inside = Path(path).relative_to(home).as_posix()
    except ValueError:
        return str(path)
    return f"{inside} in your folder on this server ({download_command(inside)} at home)"


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(data))
    os.replace(temporary, path)


def _read(path: Path) -> dict | None:
    try:
        if path.stat().st_size > FILE_MAX:
            return None
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _text(data: dict, name: str, longest: int = 200) -> str:
    value = data.get(name)
    if not isinstance(value, str) or len(value) > longest or not value.isprintable():
        raise ValueError(name)
    return value


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


class Lobby:
    """One app's view of the lobby directory; `me` is this app's presence id."""

    def __init__(self, directory: Path, me: str | None = None) -> None:
        self.dir = directory
        self.me = me or str(os.getpid())
        # presence file name -> (its inode, mtime and size when read, what it said): an app looks
        # every second, and with 200 people here reading every file each time cost more than the
        # app's idle rest; a file is read again only once rewritten (_write: a new inode each time)
        self._seen: dict[str, tuple[tuple[int, int, int], Presence | None]] = {}

    @property
    def _here(self) -> Path:
        return self.dir / "here"

    @property
    def _invitations(self) -> Path:
        return self.dir / "invitations"

    # -- presence ----------------------------------------------------------------------------
    def announce(self, name: str, key: str, doing: str, table: OpenTable | None = None) -> None:
        _write(self._here / f"{self.me}.json", asdict(Presence(self.me, name, key, doing, table)))

    def leave(self) -> None:
        (self._here / f"{self.me}.json").unlink(missing_ok=True)
        for path in self._invitations.glob(f"*.{self.me}.json"):
            path.unlink(missing_ok=True)

    def present(self) -> list[Presence]:
        """Everyone connected now but this app, longest here first (an app's process id grows with
        the time it started: an order that rewriting a presence does not shuffle)."""
        people, seen = [], {}
        now = time.time()
        try:
            with os.scandir(self._here) as listing:
                entries = sorted((e for e in listing if e.name.endswith(".json") and not e.name.startswith(".")),
                                 key=lambda e: (len(e.name), e.name))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            pid = entry.name.removesuffix(".json")
            if pid == self.me or not _alive(pid):
                continue
            try:
                stat = entry.stat()
            except OSError:
                continue
            if now - stat.st_mtime > STALE_AFTER:
                continue
            version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            known = self._seen.get(entry.name)
            if known is not None and known[0] == version:
                presence = known[1]
            else:
                presence = _presence(_read(Path(entry.path)), pid)
            seen[entry.name] = (version, presence)
            if presence is not None:
                people.append(presence)
        self._seen = seen
        return people

    # -- invitations -------------------------------------------------------------------------
    def invite(self, to: str, sender_name: str, game: str, title: str, invite: str) -> None:
        _write(self._invitations / f"{to}.{self.me}.json",
               asdict(Invitation(self.me, sender_name, to, game, title, invite)))

    def withdraw(self, to: str) -> None:
        (self._invitations / f"{to}.{self.me}.json").unlink(missing_ok=True)

    def invitations(self, present: list[Presence] | None = None) -> list[Invitation]:
        """The invitations to this app from people still here (`present`, when just read)."""
        here = {person.id for person in (self.present() if present is None else present)}
        found = []
        for path in sorted(self._invitations.glob(f"{self.me}.*.json")):
            invitation = _invitation(_read(path))
            if invitation is None or invitation.to != self.me or invitation.sender not in here:
                continue
            found.append(invitation)
        return found

    def answer(self, invitation: Invitation) -> None:
        """Accepted or declined: the invitation is gone for both."""
        (self._invitations / f"{self.me}.{invitation.sender}.json").unlink(missing_ok=True)


def _presence(data: dict | None, pid: str) -> Presence | None:
    if data is None:
        return None
    try:
        table = None
        if isinstance(data.get("table"), dict):
            raw = data["table"]
            free = raw.get("free")
            if not isinstance(free, int) or not 0 <= free < 100:
                raise ValueError("free")
            table = OpenTable(_text(raw, "game", 40), _text(raw, "title", 60), _text(raw, "invite", 400), free)
        return Presence(pid, _text(data, "name", 32), _text(data, "key", 80), _text(data, "doing", 80), table)
    except ValueError:
        return None


def _invitation(data: dict | None) -> Invitation | None:
    if data is None:
        return None
    try:
        return Invitation(_text(data, "sender", 20), _text(data, "sender_name", 32), _text(data, "to", 20),
                          _text(data, "game", 40), _text(data, "title", 60), _text(data, "invite", 400))
    except ValueError:
        return None
