"""What a key may download from a `dicetable serve-ssh` server: its own folder, read only.

The server keeps each key's data — profile, transcripts, unfinished games — in `DATA/players/<key
id>` (tui/ssh_server.py). The same key fetches those files with any SFTP or scp client (`sftp -P
PORT HOST`, `scp -P PORT HOST:transcripts/NAME.dtt .`; OpenSSH's scp speaks SFTP, `scp -O` the old
protocol, served too) and checks its games at home with `dicetable verify`. The folder is the
client's `/`. Nothing in it can be written, made, removed or renamed, and a path that leads out of
it (`..` above `/`, or a link whose target lies outside) is refused as if nothing were there: every
path is resolved, links and all, before it is used, and a file is opened without following a link.
Reading costs the server, so a key has at most `per_key` downloads open at once and the server at
most `most` (`Downloads`), and a download that asks for nothing for `idle` seconds is closed.
"""

from __future__ import annotations

import asyncio
import errno
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
from asyncssh import SFTPFailure, SFTPNoSuchFile, SFTPPermissionDenied

READ_ONLY = "this folder is read only: files can be downloaded, not changed"
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass
class Downloads:
    """How many downloads (SFTP or scp sessions) each key has open, and the bounds on them."""

    per_key: int = 2
    most: int = 32
    open: dict[str, int] = field(default_factory=dict)

    def refusal(self, key: str) -> str | None:
        if self.open.get(key, 0) >= self.per_key:
            return f"this key already has {self.per_key} downloads open; close one and try again."
        if sum(self.open.values()) >= self.most:
            return f"the server is serving {self.most} downloads already; try again in a while."
        return None

    def take(self, key: str) -> None:
        self.open[key] = self.open.get(key, 0) + 1

    def give_back(self, key: str) -> None:
        left = self.open.get(key, 0) - 1
        if left > 0:
            self.open[key] = left
        else:
            self.open.pop(key, None)


@contextmanager
def _said_plainly():
    """A file system error as the client may see it: what went wrong, never the server's own path."""
    try:
        yield
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise SFTPNoSuchFile("no such file in your folder") from None
        if error.errno in (errno.EACCES, errno.EPERM):
            raise SFTPPermissionDenied("permission denied") from None
        raise SFTPFailure(error.strerror or "cannot read it") from None


class OwnFolder(asyncssh.SFTPServer):
    """One download session of one key: its folder as `/`, read only (asyncssh's SFTP and scp)."""

    def __init__(self, chan, root: Path, done, idle: float) -> None:
        super().__init__(chan, chroot=os.fsencode(root))
        self.root = os.fsencode(os.path.realpath(root))
        self.done = done  # called once when the session ends (the download's place is given back)
        self.last = time.monotonic()  # the last request
        self.watch = asyncio.get_running_loop().create_task(self._close_when_idle(idle))

    async def _close_when_idle(self, idle: float) -> None:
        while (left := self.last + idle - time.monotonic()) > 0:
            await asyncio.sleep(left)
        try:
            self.channel.write_stderr(f"dicetable: nothing asked for {idle:g} s: the download is closed.\r\n".encode())
            self.channel.exit(1)
        except (OSError, asyncssh.Error):
            pass

    def map_path(self, path: bytes) -> bytes:
        """The client's path as a real path inside the folder; one that leads out is not there."""
        self.last = time.monotonic()  # every request but a read names a path
        real = os.path.realpath(super().map_path(path))
        if real != self.root and not real.startswith(self.root + b"/"):
            raise SFTPNoSuchFile("no such file in your folder")
        return real

    def open(self, path: bytes, pflags: int, attrs) -> object:
        if pflags & (asyncssh.FXF_WRITE | asyncssh.FXF_APPEND | asyncssh.FXF_CREAT | asyncssh.FXF_TRUNC | asyncssh.FXF_EXCL):
            raise SFTPPermissionDenied(READ_ONLY)
        with _said_plainly():
            return open(os.open(self.map_path(path), READ_FLAGS), "rb", buffering=0)

    def stat(self, path: bytes):
        with _said_plainly():
            return os.stat(self.map_path(path))

    lstat = stat  # a link is resolved (and checked) before anything is told of it

    def readlink(self, path: bytes) -> bytes:
        return self.reverse_map_path(self.map_path(path))

    async def scandir(self, path: bytes):
        with _said_plainly():
            async for name in super().scandir(path):
                yield name

    def read(self, file_obj: object, offset: int, size: int) -> bytes:
        self.last = time.monotonic()
        return super().read(file_obj, offset, size)

    def exit(self) -> None:
        self.watch.cancel()
        done, self.done = self.done, None
        if done is not None:
            done()
        try:  # the status OpenSSH's sftp-server leaves: scp (over SFTP) fails without one
            self.channel.exit(0)
        except (OSError, asyncssh.Error):
            pass

    def _read_only(self, *args) -> None:
        raise SFTPPermissionDenied(READ_ONLY)

    write = setstat = lsetstat = fsetstat = remove = mkdir = rmdir = _read_only
    rename = posix_rename = symlink = link = _read_only


class Refused(asyncssh.SFTPServer):
    """A download that may not start now: every request gets the reason."""

    def __init__(self, chan, why: str) -> None:
        super().__init__(chan)
        self.why = why

    def map_path(self, path: bytes) -> bytes:
        raise SFTPPermissionDenied(self.why)

    def _refused(self, *args) -> None:
        raise SFTPPermissionDenied(self.why)

    open = write = setstat = lsetstat = fsetstat = remove = mkdir = rmdir = _refused
    rename = posix_rename = symlink = link = statvfs = _refused
