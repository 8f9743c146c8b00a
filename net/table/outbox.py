"""What an orderer relays, and when (PROTOCOL.md §10.5): accepted frames go out in batches, after the transcript.

Frames accepted in one loop turn are written together, then relayed in one `entries` packet per seat
and fsync'ed in the background (`release`) — except reveals of an event still undecided, which wait
up to REVEAL_HOLD for the rest of its reveals (one packet per joiner per event, not one per reveal;
each seat revealed already, so what it sees later cannot sway its reveal, and deadlines run in seconds).
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

ENTRIES_CHUNK = 64 * 1024  # bytes of frames per entries packet (a larger frame goes alone)
REVEAL_HOLD = 0.02  # seconds reveals of an undecided event wait for the rest of its reveals before they are relayed


def let_out() -> None:
    """Packets just sent leave on ZeroMQ's I/O thread: give up this thread's core to it (and to any
    other thread waiting for one) before the work that follows a send. On 2 busy cores the joiner's
    work after its reveal (its tentative copy, its bot thinking ahead, its transcript) otherwise kept
    that thread waiting: a tenth of its packets reached the host 1-2.5 ms late over a 20 ms link."""
    if hasattr(os, "sched_yield"):
        os.sched_yield()


def chunks(frames: list[bytes], start: int):
    """`frames`, the log's from index `start` on, as (first index, frames) packets of at most about
    ENTRIES_CHUNK bytes each (a larger frame alone): every entries packet stays under the packet cap."""
    at = 0
    while at < len(frames):
        size, end = 0, at
        while end < len(frames) and (end == at or size + len(frames[end]) <= ENTRIES_CHUNK):
            size += len(frames[end])
            end += 1
        yield start + at, frames[at:end]
        at = end


def entry_chunks(log, start: int, end: int | None = None):
    """The log's frames from `start` to `end` (its end), in `chunks`: what catches a peer up."""
    end = len(log) if end is None else end
    return chunks([log[i].frame for i in range(start, end)], start)


class Batch:
    """The frames accepted in the loop turn under way, and whether all are reveals of an undecided event."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.reveals_only = True

    def add(self, record) -> None:
        self.frames.append(record.frame)
        self.reveals_only = self.reveals_only and record.kind == "reveal" and record.event is None


class Outbox:
    """An orderer's frames written and not yet relayed: the batch under way, then what waits to go out."""

    def __init__(self, orderer) -> None:
        self.orderer = orderer
        self.batch: Batch | None = None
        self.unsent: list[bytes] = []  # frames written, not yet relayed (held reveals, then a batch)
        self.unsent_start = 0  # the log index of the first of them
        self.unsent_since = 0.0

    def timeout(self, timeout: float) -> float:
        """How long the loop may wait for packets: held reveals go out on time."""
        if self.unsent:
            return min(timeout, max(0.0, self.unsent_since + REVEAL_HOLD - time.monotonic()))
        return timeout

    def pass_on(self, record) -> None:
        """Relay a record the log just took: with its batch once on disk (`relaying`), or now."""
        if self.batch is not None:
            self.batch.add(record)
            return
        if not self.unsent:
            self.unsent_start = record.index
        self.unsent.append(record.frame)  # behind any held reveals, in log order
        self.release()

    @contextmanager
    def relaying(self):
        """Frames accepted inside are written together, then relayed (`release`), held reveals aside."""
        if self.batch is not None:
            yield
            return
        batch = self.batch = Batch()
        start = len(self.orderer.replica.log)
        try:
            with self.orderer.own.transcript.batch(sync=False):
                yield
        finally:
            self.batch = None
            if batch.frames and not self.unsent:
                self.unsent_start, self.unsent_since = start, time.monotonic()
            self.unsent += batch.frames
            if self.unsent and (not batch.reveals_only or time.monotonic() - self.unsent_since >= REVEAL_HOLD):
                self.release()

    def release(self) -> None:
        """Relay what waits (written to the transcript already), then fsync it in the background: the
        disk is off the roll's round trip. A crash of this process loses nothing relayed (the OS holds
        the writes); a crash of the machine may lose the unsynced tail, which the seats hold and a
        resumed host takes back from them (net/table/reclaim.py): frames no seat received are lost, and
        nobody can have acted on those."""
        orderer = self.orderer
        frames, self.unsent = self.unsent, []
        if frames and orderer.socket is not None:
            for first, part in chunks(frames, self.unsent_start):  # a batch of deal frames may pass the packet cap
                orderer.tell_all(orderer.routes, "entries", {"start": first, "frames": part})  # packed once, tagged per seat
            let_out()
        orderer.own.transcript.sync_soon()

    def durable(self) -> int:
        """The log's length written to the transcript: frames behind it may go to a joiner catching up."""
        if self.unsent:
            return self.unsent_start
        return len(self.orderer.replica.log) - (len(self.batch.frames) if self.batch is not None else 0)
