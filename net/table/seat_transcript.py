"""A seat's transcript on disk (net/log/transcript.py) and its seat file beside it (net/table/seat_file.py).

Frames wait in memory until every seat has joined (the header names them all); from then on each
record is appended as it lands, a batch's records with one write and one fsync. The seat file holds
the seat's secrets (chains, deal secrets) and what its driver adds to resume it; it is written before
any message that depends on them.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path

from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.log.replica import Replica
from dicetable.net.refusals import Refusal
from dicetable.net.table.seat_file import save_seat
from dicetable.net.table.session import SessionError
from dicetable.net.log.transcript import TranscriptWriter, header_for, transcript_dir
from dicetable.net.table.events import TranscriptOpened


class SeatTranscript:
    """One seat's transcript writer, its path, and the frames waiting for the header."""

    def __init__(self, seat, path: Path | str | None = None) -> None:
        self.own = seat
        self.emit = seat.emit
        self.path = Path(path) if path else None
        self.writer: TranscriptWriter | None = None
        self._unwritten: list[bytes] = []
        self.announced = False  # this run made the transcript and told its path
        self.kept: set[bytes] = set()  # frames written as evidence (each once)

    def write(self, frame: bytes) -> None:
        """Frames wait in memory until every seat has joined: the header names them all."""
        replica = self.own.replica
        if self.writer is None:
            self._unwritten.append(frame)
            if replica.phase in ("new", "joining") or self.own.seat is None or not self.own.seated():
                return  # a newcomer to an open room: its header names its own seat (its join is in)
            path = self.path or self.default_path(replica.table)
            self.path = path
            self.writer = TranscriptWriter.create(path, header_for(replica))
            self.save_secrets()
            frames, self._unwritten = self._unwritten, []
            for pending in frames:
                self.writer.append_frame(pending)
            self.announced = True
            self.emit(TranscriptOpened(path))
            return
        self.writer.append_frame(frame)

    def reopened(self, writer: TranscriptWriter, path: Path) -> None:
        self.writer, self.path = writer, path

    @contextmanager
    def batch(self, sync: bool = True):
        """Transcript records of one batch share one write and one fsync (net/log/transcript.py)."""
        if self.writer is None:
            yield
            return
        with self.writer.batch(sync):
            yield

    def sync_soon(self) -> None:
        if self.writer is not None:
            self.writer.sync_soon()

    def append_refused(self, frame: bytes, reason: str) -> None:
        if self.writer is not None:
            self.writer.append_refused(frame, reason)

    def append_evidence(self, frame: bytes, why: str) -> None:
        """A frame the log may never order, kept as evidence (FAIRNESS.md §3c); before the header is
        written there is no game to keep it for. Each frame once."""
        if self.writer is not None and frame not in self.kept:
            self.kept.add(frame)
            self.writer.append_evidence(frame, why)

    def append_result(self, result) -> None:
        if self.writer is not None:
            self.writer.append_result(result)

    def close(self) -> None:
        if self.writer is not None:
            for seq, (_, frame) in sorted(self.own.unordered.items()):  # sent, never seen in the log
                self.append_evidence(frame, f"sent by this seat (sequence number {seq}), not in its log when it closed")
            self.writer.close()
            self.writer = None

    def save_secrets(self) -> None:
        if self.path is not None and self.own.seat is not None:
            save_seat(self.path, self.own.seat_data())

    def default_path(self, table: bytes) -> Path:
        directory = transcript_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return directory / f"{stamp}-{table.hex()[:8]}-seat{self.own.seat}.dtt"


def replayed(path: Path, seat: dict, table: bytes, frames: list[bytes]) -> Replica:
    """A seat's replica from its own transcript's frames (a replayed claim was checked live)."""
    deals = TableDeals(seat=seat["seat"], secrets=seat.get("deals"))  # my deal secrets, so the deal resumes
    replica = Replica(table, deal_handler=deals)
    try:
        for frame in frames:
            replica.accept(frame)
    except Refusal as refusal:
        raise SessionError(f"the transcript {path} does not replay: {refusal}") from None
    return replica
