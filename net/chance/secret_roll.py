"""A secret roll's randomness: the roller's secret, its commitment, and the dice (PROTOCOL.md §16.6).

The roller draws a fresh 32-byte secret s from `secrets` and signs the roll with its commitment

    commitment = SHA-256("dicetable/secret-commit/v1" ‖ table id (16 bytes) ‖ seat (1 byte) ‖ s)

before the event's reveals exist. The event is decided as any other (seed r, FAIRNESS.md §1); the
roll's dice come from a DRBG of

    seed = SHA-256("dicetable/secret-roll/v1" ‖ r ‖ s)

so only who holds s (the roller) learns them now, and nobody chooses them: s was fixed before r,
r is every seat's. The opening reveals s; every seat checks the commitment and draws the same dice.
"""

from __future__ import annotations

import hashlib
import secrets

from dicetable.core.dice_expr import parse
from dicetable.core.game import Chance
from dicetable.net.chance.outcomes import draw

COMMIT_DOMAIN = b"dicetable/secret-commit/v1"
SEED_DOMAIN = b"dicetable/secret-roll/v1"
SECRET_BYTES = 32


def fresh_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


def commitment(table: bytes, seat: int, secret: bytes) -> bytes:
    if len(table) != 16 or len(secret) != SECRET_BYTES or not 0 <= seat < 256:
        raise ValueError("a commitment binds a 16-byte table, a seat and a 32-byte secret")
    return hashlib.sha256(COMMIT_DOMAIN + table + bytes([seat]) + secret).digest()


def roll_seed(event_seed: bytes, secret: bytes) -> bytes:
    if len(event_seed) != 32 or len(secret) != SECRET_BYTES:
        raise ValueError("a secret roll's seed needs the 32-byte event seed and the 32-byte secret")
    return hashlib.sha256(SEED_DOMAIN + event_seed + secret).digest()


def values(expr: str, event_seed: bytes, secret: bytes) -> tuple[int, ...]:
    """The draws of `expr` (one per range its chance reserves) from the secret roll's own stream."""
    return draw(Chance("secret roll", ranges=parse(expr).ranges), roll_seed(event_seed, secret)).values
