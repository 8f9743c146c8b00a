"""Transcripts: the table's ordered signed log in an append-only file, one per table.

Layout: the 24-byte MAGIC, then records. A record is `length` (4 bytes big-endian) ‖ CRC-32 of the
payload (4 bytes big-endian) ‖ payload, the payload being msgpack `[type, data]`:

    ["header", {"game", "options", "table", "seats": [{"name", "key"}, ...], "receipts"}]   first, exactly once
                                   ("receipts": 1 since end receipts, PROTOCOL.md §5.13; absent before)
    ["frame", bin]                 an accepted frame of the log, in log order (index = position)
    ["refused", {"frame", "reason"}]   a frame the writer's replica refused (for people; not replayed)
    ["evidence", {"frame", "why"}]   a frame the writer holds that the log may never order: its own
                                   dispute or unordered frame, another seat's answer it holds (FAIRNESS.md §3c;
                                   not replayed; `verify` lists those the log does not hold)
    ["result", Result.to_data()]   the result the writer's replica reached, once per game, when it ended
                                   (frames may follow: the card deal's end-of-game opening, and the
                                   rematch consents and next game of a table that plays several)

Each record is written with one write, flushed and fsync'ed — or, inside `with writer.batch():`, the
records of one batch (what a host orders in one loop turn, what a joiner takes in in one) are written
with one write when the batch ends, and fsync'ed then, or with `batch(sync=False)` at the next
`sync()`, or by a background thread after `sync_soon()`. Host and joiner write a loop turn's batch,
send, then `sync_soon()` (net/table/outbox.py, net/table/joiner.py): the disk is off the round trip of a roll, and
nothing leaves a process before the OS holds it, so a process crash loses nothing. A machine crash
can lose the unsynced tail: a joiner's is all in the host's log, and catch-up by log index gives it
back unchanged on resume; the host's was relayed to the seats, and the resumed host takes it back
from them before it orders anything (net/table/reclaim.py). Frames no seat received are lost with
it, and nobody can have acted on them: a seat's own frame it sent is re-sent unchanged (a reveal is
fixed by its hash chain, a commitment's secret is in the seat file before it is sent). A torn last record (short, or with a bad
checksum at the very end of the file) is dropped on read and truncated away when the file is reopened
for appending; nothing before it is lost. A bad checksum before the last record is damage
(DamagedTranscript). The checksum catches accidents only: forgery is caught by the signatures and
chains when `dicetable verify` replays the frames (net/log/verify.py).

The one rewrite: a host seat rejoining its table after a hand-over cuts the tail of its copy that it
wrote and never relayed (`TranscriptWriter.cut`, net/table/joiner.py, net/table/succession.py): the records before
the cut, then the cut frames as refused records (the evidence), written to a temporary file, fsync'ed
and renamed over the transcript, so a crash leaves the old file or the new one, never a mix.

The writer should create the file once every seat has joined (the header names them all), append
every frame from the "open" on as its replica accepts it, and append the result when the replica's
result is set.
"""

from __future__ import annotations

import os
import struct
import threading
from contextlib import contextmanager
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from dicetable.core.game import Result

MAGIC = b"dicetable transcript v2\n"
OLD_MAGICS = (b"dicetable transcript v1\n",)  # before the hash-linked log (protocol 2)
MAX_RECORD = 1 << 20
_HEAD = struct.Struct(">II")


def transcript_dir() -> Path:
    """Where this profile's tables keep their transcripts (and seat files beside them)."""
    from dicetable.net.identity import home  # here, not above: reading a transcript needs no profile

    return home() / "transcripts"


class NotATranscript(Exception):
    """The file is not a dicetable transcript at all."""


class OldTranscript(NotATranscript):
    """A transcript written by an older dicetable, whose protocol this version no longer checks."""


def _not_ours(head: bytes, what: str) -> NotATranscript:
    if head in OLD_MAGICS:
        return OldTranscript(f"{what} was written by an older dicetable (protocol 1, before the hash-linked "
                             "log); this version checks protocol 2 only: verify it with the dicetable that played it")
    return NotATranscript(f"{what} is not a dicetable transcript")


class DamagedTranscript(Exception):
    """A transcript whose record `index` (0 = header) cannot be read."""

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        super().__init__(f"record {index} is damaged: {reason}")


@dataclass
class Transcript:
    header: dict
    frames: list[bytes] = field(default_factory=list)
    refused: list[tuple[bytes, str]] = field(default_factory=list)
    evidence: list[tuple[bytes, str]] = field(default_factory=list)  # frames kept aside, and why
    results: list[dict] = field(default_factory=list)  # one per finished game, in order
    torn: bool = False  # a torn last record was dropped
    end: int = 0  # file offset after the last good record


    @property
    def result(self) -> dict | None:
        """The last game's recorded result (None while it is unfinished)."""
        return self.results[-1] if self.results else None


def header_for(replica) -> dict:
    """The header of a replica's table, once every seat has joined, or once an open room started with
    seats free: a free seat is named "" with an empty key (a newcomer's join in the log names it)."""
    if replica.game is None or (any(s is None for s in replica.seats) and replica.phase in ("new", "joining", "ready")):
        raise ValueError("a transcript header needs the game opened and every seat joined")
    return {
        "game": replica.game.name,
        "options": dict(replica.options),
        "table": replica.table,
        "seats": [{"name": s.name, "key": s.key} if s is not None else {"name": "", "key": b""} for s in replica.seats],
        "receipts": 1,  # its seats sign end receipts (PROTOCOL.md §5.13): verify asks every end for them
    }


def _check_header(data: Any) -> dict:
    ok = (
        type(data) is dict
        and type(data.get("game")) is str
        and type(data.get("options")) is dict
        and type(data.get("table")) is bytes
        and len(data["table"]) == 16
        and type(data.get("seats")) is list
        and all(
            type(s) is dict and type(s.get("name")) is str and type(s.get("key")) is bytes
            for s in data["seats"]
        )
    )
    if not ok:
        raise DamagedTranscript(0, "the header lacks the game, options, table id or seats")
    return data


def _records(data: bytes) -> tuple[list[bytes], bool, int]:
    """Payloads of the good records, whether a torn tail was dropped, and where the good part ends."""
    pos = len(MAGIC)
    payloads: list[bytes] = []
    while pos < len(data):
        if len(data) - pos < _HEAD.size:
            return payloads, True, pos
        length, crc = _HEAD.unpack_from(data, pos)
        end = pos + _HEAD.size + length
        if end > len(data):
            return payloads, True, pos
        payload = data[pos + _HEAD.size : end]
        if zlib.crc32(payload) != crc:
            if end == len(data):
                return payloads, True, pos
            raise DamagedTranscript(len(payloads), "checksum mismatch")
        if length > MAX_RECORD:
            raise DamagedTranscript(len(payloads), f"a record of {length} bytes")
        payloads.append(payload)
        pos = end
    return payloads, False, pos


def parse(data: bytes) -> Transcript:
    if not data.startswith(MAGIC):
        raise _not_ours(data[: len(MAGIC)], "the data")
    payloads, torn, end = _records(data)
    if not payloads:
        raise DamagedTranscript(0, "the header is missing")
    entries = []
    for index, payload in enumerate(payloads):
        try:
            entry = msgpack.unpackb(payload, raw=False, strict_map_key=True)
        except Exception:  # any msgpack failure means the same thing: an unreadable record
            raise DamagedTranscript(index, "not a msgpack record") from None
        if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not str:
            raise DamagedTranscript(index, "a record is [type, data]")
        entries.append(entry)
    kind, header = entries[0]
    if kind != "header":
        raise DamagedTranscript(0, "the first record is not the header")
    transcript = Transcript(_check_header(header), torn=torn, end=end)
    for index, (kind, body) in enumerate(entries[1:], start=1):
        if kind == "frame" and type(body) is bytes:
            transcript.frames.append(body)
        elif kind == "refused" and type(body) is dict and type(body.get("frame")) is bytes:
            transcript.refused.append((body["frame"], str(body.get("reason", ""))))
        elif kind == "evidence" and type(body) is dict and type(body.get("frame")) is bytes:
            transcript.evidence.append((body["frame"], str(body.get("why", ""))[:200]))
        elif kind == "result" and type(body) is dict:
            transcript.results.append(body)
        else:
            raise DamagedTranscript(index, f"unexpected {kind!r:.20} record")
    return transcript


def read(path: str | os.PathLike) -> Transcript:
    try:
        with open(path, "rb") as file:
            head = file.read(len(MAGIC))
            if head != MAGIC:  # before reading it all: /dev/zero is not a transcript
                raise _not_ours(head, str(path))
            data = MAGIC + file.read()
    except IsADirectoryError:
        raise NotATranscript(f"{path} is a directory, not a transcript") from None
    except FileNotFoundError:
        raise NotATranscript(f"{path} does not exist") from None
    except OSError as error:
        raise NotATranscript(f"cannot read {path}: {error.strerror}") from None
    return parse(data)


def _record(kind: str, data: Any) -> bytes:
    payload = msgpack.packb([kind, data], use_bin_type=True)
    return _HEAD.pack(len(payload), zlib.crc32(payload)) + payload


def _sync_dir(directory: Path) -> None:
    """The directory entry of a new or renamed file survives a crash too."""
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class TranscriptWriter:
    """Appends records durably: one write, flush and fsync per record, or per batch."""

    def __init__(self, path: Path, file) -> None:
        self.path = path
        self.file = file
        self._held: list[bytes] | None = None  # records of the batch under way
        self._unsynced = False  # written since the last fsync
        self._syncs = threading.Condition()  # the background fsync (`sync_soon`): asked, done, stop
        self._asked = self._done = 0
        self._syncer: threading.Thread | None = None
        self._sync_error: OSError | None = None

    @classmethod
    def create(cls, path: str | os.PathLike, header: dict) -> "TranscriptWriter":
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        writer = cls(path, os.fdopen(fd, "ab"))
        writer._write(MAGIC + _record("header", _check_header(header)))
        _sync_dir(path.parent)
        return writer

    @classmethod
    def reopen(cls, path: str | os.PathLike) -> tuple["TranscriptWriter", Transcript]:
        """Open for appending after a crash: a torn last record is cut off first."""
        path = Path(path)
        transcript = read(path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        file = os.fdopen(fd, "ab")
        if transcript.torn:
            os.ftruncate(fd, transcript.end)
            os.fsync(fd)
            transcript.torn = False
        return cls(path, file), transcript

    def _write(self, data: bytes) -> None:
        if self._held is not None:
            self._held.append(data)
            return
        self._put(data)
        self.sync()

    def _put(self, data: bytes) -> None:
        self.file.write(data)
        self.file.flush()
        self._unsynced = True

    def sync(self) -> None:
        """Make what was written durable (one fsync; none when nothing was written since the last)."""
        if self._sync_error is not None:
            raise self._sync_error
        if self.file.closed or not (self._unsynced or self._asked != self._done):
            return
        self._unsynced = False
        os.fsync(self.file.fileno())

    def sync_soon(self) -> None:
        """Make what was written durable in a background thread, so the caller's sends do not wait for
        the disk (the host relays a batch, then syncs it: net/table/host.py); `sync`, `close` and `cut`
        still make it durable before they return."""
        if self._sync_error is not None:
            raise self._sync_error
        if not self._unsynced or self.file.closed:
            return
        self._unsynced = False
        with self._syncs:
            self._asked += 1
            if self._syncer is None:
                self._syncer = threading.Thread(target=self._syncing, args=(self.file.fileno(),), daemon=True,
                                                name=f"fsync {self.path.name}")
                self._syncer.start()
            self._syncs.notify()

    def _syncing(self, fd: int) -> None:
        """The background fsync: one fsync covers every write asked for before it started."""
        while True:
            with self._syncs:
                while self._asked == self._done and self._syncer is not None:
                    self._syncs.wait()
                if self._asked == self._done:
                    return
                asked = self._asked
            try:
                os.fsync(fd)
            except OSError as error:
                self._sync_error = error  # raised to the writer at its next sync
            with self._syncs:
                self._done = asked
                self._syncs.notify_all()

    def _stop_syncer(self) -> None:
        """Wait for the background fsync under way, and end its thread (the file may close after)."""
        with self._syncs:
            syncer, self._syncer = self._syncer, None
            self._syncs.notify_all()
        if syncer is not None:
            syncer.join()

    @contextmanager
    def batch(self, sync: bool = True):
        """Records appended inside are written together when the block ends and fsync'ed then
        (sync=False: at the next `sync()` or `sync_soon()`, which host and joiner call after their sends)."""
        if self._held is not None:  # nested: the outer batch writes
            yield self
            return
        self._held = []
        try:
            yield self
        finally:
            held, self._held = self._held, None
            if held and not self.file.closed:
                self._put(b"".join(held))
            if sync:
                self.sync()

    def append_frame(self, frame: bytes) -> None:
        self._write(_record("frame", frame))

    def append_refused(self, frame: bytes, reason: str) -> None:
        self._write(_record("refused", {"frame": frame, "reason": reason}))

    def append_evidence(self, frame: bytes, why: str) -> None:
        self._write(_record("evidence", {"frame": frame, "why": why}))

    def append_result(self, result: Result) -> None:
        self._write(_record("result", result.to_data()))

    def cut(self, index: int, reason: str) -> list[bytes]:
        """Cut the log's frames from `index` on (a resumed host seat's tail nobody saw, net/table/joiner.py):
        the file is rewritten with every record before the `index`-th frame, then each cut frame as a
        refused record (the evidence), into a temporary file, fsync'ed and renamed over this one, so a
        crash leaves the old file or the new one. Returns the cut frames; appending goes on."""
        self.close()
        with open(self.path, "rb") as file:
            payloads, _, _ = _records(file.read())
        kept, cut, frames = [], [], 0
        for payload in payloads:
            kind, body = msgpack.unpackb(payload, raw=False, strict_map_key=True)
            if kind == "frame" and frames >= index:
                cut.append(body)
            elif not cut or kind in ("refused", "evidence"):  # after the cut: its result goes, evidence already kept stays
                kept.append((kind, body))
            frames += kind == "frame"
        data = MAGIC + b"".join(_record(kind, body) for kind, body in kept)
        data += b"".join(_record("refused", {"frame": frame, "reason": reason}) for frame in cut)
        temp = self.path.with_name(self.path.name + ".cutting")
        with open(temp, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, self.path)
        _sync_dir(self.path.parent)
        self.file = os.fdopen(os.open(self.path, os.O_WRONLY | os.O_APPEND), "ab")
        return cut

    def close(self) -> None:
        if self._held:
            held, self._held = self._held, None
            self._put(b"".join(held))
        self._stop_syncer()
        self.sync()
        self.file.close()

    def __enter__(self) -> "TranscriptWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
