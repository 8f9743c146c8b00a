"""Sealed answers: a hash commitment to a move, opened once every seat asked has sealed one.

A sealed step (core/game.py, "Sealed answers") asks several seats for one answer each that nobody
may see before all have answered. Each seat first sends a "seal" carrying

    commit = SHA-256("dicetable/seal/v1" ‖ table id ‖ step (8 bytes) ‖ seat (1 byte) ‖ msgpack(move) ‖ nonce)

and, once every seat has sealed, an "unseal" carrying the move and the 32-byte nonce (net/log/sealing.py
checks the opening). The nonce keeps a small answer space (yes / no) from being guessed from the
commitment; it is derived from the seat's own chain secret, so a seat that crashed between seal and
unseal finds its answer again by trying its legal moves against its commitment (net/table/sealed_answers.py).
"""

from __future__ import annotations

import hashlib
import hmac

import msgpack

DOMAIN = b"dicetable/seal/v1"
NONCE_BYTES = 32


def commitment(table: bytes, step: int, seat: int, move_data: list, nonce: bytes) -> bytes:
    """The commitment to `move_data` (Move.to_data(), exactly as the unseal carries it)."""
    parts = (DOMAIN, table, step.to_bytes(8, "big"), seat.to_bytes(1, "big"),
             msgpack.packb(move_data, use_bin_type=True), nonce)
    return hashlib.sha256(b"".join(parts)).digest()


def nonce_for(secret: bytes, table: bytes, step: int, seat: int) -> bytes:
    """The nonce of `seat`'s answer to `step`: secret to others, found again after a restart."""
    message = DOMAIN + b"/nonce" + table + step.to_bytes(8, "big") + seat.to_bytes(1, "big")
    return hmac.new(secret, message, hashlib.sha256).digest()


def recover(table: bytes, step: int, seat: int, commit: bytes, nonce: bytes, candidates):
    """Which of `candidates` (Moves) `commit` seals, or None: a restarted seat's own answer."""
    return next((move for move in candidates
                 if commitment(table, step, seat, move.to_data(), nonce) == commit), None)
