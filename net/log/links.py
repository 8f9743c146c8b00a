"""The table's log as a hash chain (FAIRNESS.md §3).

    head(0)   = SHA-256("dicetable/log/v2" ‖ 0x00 ‖ table id)
    head(n+1) = SHA-256("dicetable/log/v2" ‖ 0x01 ‖ head(n) ‖ frame n)     (the exact frame bytes)

Every frame names its parent `[n, head(n)]` (net/log/wire.py `Link`): the log its author had seen. The
replica keeps every head, so checking a parent is one lookup and extending the chain one hash.
"""

from __future__ import annotations

import hashlib

DOMAIN = b"dicetable/log/v2"


def genesis(table: bytes) -> bytes:
    """The head of a table's empty log."""
    return hashlib.sha256(DOMAIN + b"\x00" + table).digest()


def extend(head: bytes, frame: bytes) -> bytes:
    """The head after `frame` is appended to a log whose head is `head`."""
    return hashlib.sha256(DOMAIN + b"\x01" + head + frame).digest()
