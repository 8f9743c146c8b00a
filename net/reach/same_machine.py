"""This machine's lobby: tables hosted on loopback, announced to every user of the machine (SSH hosts).

mDNS does not run on `lo` (no MULTICAST flag), so a table bound to 127.0.0.1 is announced in a
shared directory instead: `/tmp/dicetable-lobby` (mode 1777, sticky like /tmp; env
DICETABLE_LOBBY_DIR overrides it). The host writes one file per table, `<table id hex>.table`
(0644, written whole: a temporary file renamed), holding the same signed record as the LAN's TXT
record (net/reach/lan.py `properties`) with its port and address:

    {"port": 40123, "addresses": ["127.0.0.1"], "txt": {"v": "1", "game": "trice", ... "sig": "..."}}

It rewrites the file every HEARTBEAT seconds while seats are free and removes it when the table is
full, started or closed. A browser reads it as discovery reads a TXT record (`announcement.parse`, so
the same trust: verified / unverified / forged) and skips a file not rewritten within STALE_AFTER
seconds (its host is gone), a file larger than FILE_MAX, anything not a regular file, anything not
JSON of that shape, and any address that is not loopback. Any user may write any file there: an
announcement is a convenience, never an authority — the joiner's socket accepts only the announced
curve key and the opening must be signed by the announced key (`announcement.opening_mismatch`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import stat
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from dicetable.net.reach import announcement, lan
from dicetable.net.reach.announcement import Announcement
from dicetable.net.reach.local_networks import DiscoveryError

LOBBY_ENV = "DICETABLE_LOBBY_DIR"
DEFAULT_DIR = "/tmp/dicetable-lobby"  # not $TMPDIR: it must be the same directory for every user
SUFFIX = ".table"
HEARTBEAT = 1.0  # seconds between two writes of a table's file
STALE_AFTER = 5.0  # seconds: a file not rewritten for this long belongs to a host that is gone
POLL = 0.5  # seconds between two looks of a browser
FILE_MAX = 4096  # bytes: a record is about 600; a larger file is not read
FILES_MAX = 512  # files looked at per scan: a flooded directory costs a bounded time


def lobby_dir() -> Path:
    return Path(os.environ.get(LOBBY_ENV) or DEFAULT_DIR)


def on_loopback(addresses) -> bool:
    """Every address is a loopback one: the table is reached from this machine only."""
    try:
        return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)
    except ValueError:
        return False


def _ready(directory: Path) -> Path:
    """The lobby directory, made shared and sticky (1777) when this process creates it."""
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=0o1777)
        os.chmod(directory, 0o1777)  # mkdir's mode passes through the umask
    except FileExistsError:
        pass
    except OSError as error:
        raise DiscoveryError(f"cannot make this machine's lobby {directory}: {error.strerror or error}") from None
    try:
        mode = os.lstat(directory).st_mode
    except OSError as error:
        raise DiscoveryError(f"cannot use this machine's lobby {directory}: {error.strerror or error}") from None
    if not stat.S_ISDIR(mode):  # a symbolic link or a file put there by someone
        raise DiscoveryError(f"this machine's lobby {directory} is not a directory (set {LOBBY_ENV} to another)")
    return directory


# -- the host's side -------------------------------------------------------------------------------
class Advertiser(lan.Announcing):
    """Announces one table in the lobby while it has free seats; driven by a SessionAnnouncer like
    lan.Advertiser."""

    thread_name = "dicetable-lobby-advertiser"

    def __init__(self, profile, table: bytes, game: str, seats: int, port: int, addresses: list[str],
                 interface_addresses: list[str] | None = None, directory: Path | None = None,
                 queue: bool = False) -> None:
        self.directory = _ready(Path(directory) if directory is not None else lobby_dir())
        self.path = self.directory / f"{table.hex()}{SUFFIX}"
        self.service = self.path.name
        self._shown = False
        # First written on the announcer's first update (at once) or after a heartbeat: the count it
        # shows is the session's, not the 0 it starts from.
        super().__init__(profile, table, game, seats, port, addresses, queue)

    def record(self, taken: int) -> bytes:
        txt = announcement.properties(self.profile, self.game, taken, self.total, self.table, self.port, self.queue)
        return json.dumps({"port": self.port, "addresses": self.addresses,
                           "txt": {k.decode(): v.decode() for k, v in txt.items()}}).encode()

    def _run(self) -> None:
        while True:
            self._changed.wait(HEARTBEAT)
            self._changed.clear()
            want = self._want
            try:
                self._write(want) if want is not None else self._remove()
            except OSError as error:  # the lobby is a convenience: a failure must not end the table
                self.errors.append(f"this machine's lobby: {error.strerror or error}")
            if self._done and want is None:
                return

    def _write(self, taken: int) -> None:
        fd, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=self.directory)  # O_EXCL, owned by us
        try:
            with os.fdopen(fd, "wb") as out:
                os.fchmod(out.fileno(), 0o644)  # every user reads it
                out.write(self.record(taken))
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._shown = True

    def _remove(self) -> None:
        if self._shown:
            self.path.unlink(missing_ok=True)
            self._shown = False


def session_announcer(session, addresses: list[str], interface_addresses: list[str] | None = None,
                      queue: bool = False):
    """Announce a hosted table where its joiners can hear it: on loopback in this machine's lobby,
    else on the LAN by mDNS (a lan.SessionAnnouncer either way); `queue`: as waiting for whoever
    asks for its game."""
    lobby = on_loopback(addresses)
    return lan.SessionAnnouncer(session, addresses, None if lobby else interface_addresses,
                                advertiser=Advertiser if lobby else lan.Advertiser, queue=queue)


# -- the joiner's side -----------------------------------------------------------------------------
def _read(path: Path) -> tuple[bytes, float] | None:
    """The bytes and mtime of a regular file of at most FILE_MAX bytes (no link, no FIFO), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_MAX:
            return None
        data = os.read(fd, FILE_MAX + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (data, info.st_mtime) if len(data) <= FILE_MAX else None


def parse(name: str, data: bytes) -> Announcement | None:
    """The announcement in a lobby file's bytes, or None when they are not one (never raises)."""
    try:
        record = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    txt, port, addresses = record.get("txt"), record.get("port"), record.get("addresses")
    if not isinstance(txt, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in txt.items()):
        return None
    if type(port) is not int or not isinstance(addresses, list) or not all(isinstance(a, str) for a in addresses):
        return None
    try:
        props = {k.encode(): v.encode() for k, v in txt.items()}
    except UnicodeEncodeError:  # a lone surrogate from JSON's \ud800
        return None
    ann = announcement.parse(name, props, port, addresses[:8])
    if ann is None:
        return None
    near = tuple(a for a in ann.addresses if on_loopback([a]))
    return replace(ann, addresses=near) if near else None


def scan(directory: Path | None = None, now: float | None = None) -> list[Announcement]:
    """The tables announced in the lobby now (open or not, fresh files only); none if it is missing."""
    directory = Path(directory) if directory is not None else lobby_dir()
    now = time.time() if now is None else now
    found = []
    try:
        entries = os.scandir(directory)
    except OSError:
        return []
    with entries:
        for count, entry in enumerate(entries):
            if count >= FILES_MAX:
                break
            if entry.name.startswith(".") or not entry.name.endswith(SUFFIX):
                continue
            read = _read(Path(entry.path))
            if read is None or not -STALE_AFTER < now - read[1] < STALE_AFTER:
                continue
            ann = parse(entry.name, read[0])
            if ann is not None:
                found.append(ann)
    return found


class Browser:
    """Watches the lobby for tables; `tables()` is the current list, `on_change` hears every change
    (the interface of lan.Browser)."""

    def __init__(self, on_change: Callable[[list[Announcement]], None] | None = None,
                 directory: Path | None = None) -> None:
        self.on_change, self.directory = on_change, directory
        self._tables: dict[str, Announcement] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._look()
        self._thread = threading.Thread(target=self._run, name="dicetable-lobby-browser", daemon=True)
        self._thread.start()

    def _look(self) -> bool:
        """Scan once; whether the list changed."""
        seen = {}
        for ann in scan(self.directory):
            first = self._tables.get(ann.service)
            seen[ann.service] = replace(ann, seen_at=first.seen_at) if first is not None else ann
        with self._lock:
            changed = seen != self._tables
            self._tables = seen
        return changed

    def _run(self) -> None:
        while not self._stop.wait(POLL):
            if self._look() and self.on_change is not None:
                self.on_change(self.tables())

    def tables(self) -> list[Announcement]:
        with self._lock:
            return sorted(self._tables.values(), key=lambda a: a.seen_at)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
