"""Giving back the memory of connections a relay no longer holds (glibc's `malloc_trim`).

Where an idle table's memory goes at a relay (scripts/bench_relay.py, libzmq 4.3.5): some 1.5 KB is
the relay's own Python state (net/reach/relay.py), the rest is libzmq's, in its I/O thread's heap:
about 29 KB for a connection that has just been served, about 57 KB once it has carried 512
packets (its inbound pipe keeps two 16 KB chunks of 256 message slots and writes them through in
turn). That part is libzmq's own and fixed when it is built: a bare forwarder with no checks keeps as
much, and the chunk size and the batch buffers are not options in the wheels' libzmq
(ZMQ_IN_BATCH_SIZE and ZMQ_OUT_BATCH_SIZE are draft options it was built without). So an idle table
sends the relay no packet at all: its host is present while its connection is open, kept by ZMTP
heartbeats that never cross a pipe (net/reach/relay_presence.py), and a host waiting with a short code
fetches its mailbox only when the relay rings (net/reach/mailbox.py). With a keepalive a second, an idle
table reached 59.8 KB in some nine minutes (611 MB for 10,000, 1,000 measured); with none, it stays at
30.2 KB however long it idles (326 MB measured with 10,000), beside a bare forwarder's 29.0.

What a relay can govern is what it keeps after connections close. glibc keeps a freed chunk resident
for reuse, so a relay's memory used to follow its peak, never its present: beside 1,000 held
tables, 2,000 connections opened and closed again left it at 115 MB, where `malloc_trim(0)` (which
hands every whole free page of every arena back to the system) brought it to 60 MB in 4 ms. New
connections then start on fresh pages, which cost only as they are written. A relay sees such churn
all the time: seats come and go, links renew themselves (net/reach/transport.py), floods are cut off.

The trim takes the heap's lock while it walks the free chunks, which is milliseconds when thousands
were freed and well under one when nothing was, so the relay asks for it at most every TRIM_EVERY
seconds, from its sweep (net/reach/relay.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

TRIM_EVERY = 30.0  # seconds between trims at most


def _malloc_trim():
    """glibc's malloc_trim, or None where there is none (another C library, another system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim: nothing to give back this way
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


class Trimmer:
    """Calls malloc_trim(0) at most every `every` seconds; `maybe(now)` says whether it did."""

    def __init__(self, now: float, every: float = TRIM_EVERY):
        self.every, self.last = every, now
        self._trim = _malloc_trim()

    def maybe(self, now: float) -> bool:
        if self._trim is None or now - self.last < self.every:
            return False
        self.last = now
        self._trim(0)
        return True
