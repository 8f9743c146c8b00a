"""The key boxes of the deal's `draw` step (PROTOCOL.md §9; net/cards/deal.py): a seat's key for a
position, sealed to the drawer's X25519 draw key — an ephemeral key derived from the sender's box seed
(so the end-of-deal opening can re-check every box), HKDF-SHA256 bound to table, deck, position and
both seats, ChaCha20-Poly1305."""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

DRAW_TAG = b"dicetable/draw/v1"
BOX_TAG = b"dicetable/box/v1"
_ZERO_NONCE = bytes(12)  # each box has its own ephemeral key, hence its own AEAD key


def x25519_public(secret: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def box_context(table_id: bytes, deck: bytes, position: int, sender: int, to: int) -> bytes:
    return DRAW_TAG + table_id + deck + position.to_bytes(4, "big") + bytes([sender, to])


def box_secret(box_seed: bytes, deck: bytes, position: int, to: int) -> bytes:
    """The ephemeral X25519 secret of one box, derived so the end-of-deal opening can re-check it."""
    return hashlib.sha256(BOX_TAG + box_seed + deck + position.to_bytes(4, "big") + bytes([to])).digest()


def box_key(shared: bytes, context: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=context).derive(shared)


def make_box(box_seed: bytes, drawer_public: bytes, table_id: bytes, deck: bytes, position: int,
              sender: int, to: int, key: bytes) -> bytes:
    """`key` encrypted for seat `to`'s draw key: the ephemeral public key, then the AEAD ciphertext."""
    secret = X25519PrivateKey.from_private_bytes(box_secret(box_seed, deck, position, to))
    ephemeral = secret.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    context = box_context(table_id, deck, position, sender, to)
    aead_key = box_key(secret.exchange(X25519PublicKey.from_public_bytes(drawer_public)), context)
    return ephemeral + ChaCha20Poly1305(aead_key).encrypt(_ZERO_NONCE, key, context)


def open_box(shared: bytes, box: bytes, context: bytes) -> bytes | None:
    try:
        return ChaCha20Poly1305(box_key(shared, context)).decrypt(_ZERO_NONCE, box[32:], context)
    except InvalidTag:
        return None
