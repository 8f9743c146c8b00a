"""Cards as points of the Ed25519 prime-order group, and the checks a peer's point or key must pass.

FAIRNESS.md §2: card `c` of deck `d` is `from_uniform(SHA-256("dicetable/card/v1" ‖ d ‖ c))`;
a deck's id binds it to the table, a label ("id", "resource"), a number (a reshuffle of the
discard pile is the next number, so its points and keys are unrelated to the old deck's) and the
list of its cards (so a deck id names exactly one deck: nobody can declare other cards under it).
The group operations are libsodium's (PyNaCl `nacl.bindings`); this module adds the byte layouts,
the checks that refuse a bad point or key naming the seat (net/refusals.py), and secret scalars
drawn from the OS by rejection sampling.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from nacl import bindings as sodium

from dicetable.net.refusals import BadPoint, BadScalar

CARD_TAG = b"dicetable/card/v1"
DECK_TAG = b"dicetable/deck/v1"
TABLE_ID_BYTES = 16
DECK_ID_BYTES = 16
POINT_BYTES = 32
SCALAR_BYTES = 32
# Order of the prime-order subgroup (RFC 8032 "L").
ORDER = 2**252 + 27742317777372353535851937790883648493
# Field prime and curve constant, used only to say *why* a point was refused.
_P = 2**255 - 19
_D = (-121665 * pow(121666, -1, _P)) % _P


def _why_invalid(data: bytes) -> str:
    """Say why libsodium refused a 32-byte point encoding (the slow path: refusals only)."""
    y = int.from_bytes(data, "little") & ((1 << 255) - 1)
    sign = data[31] >> 7
    if y >= _P:
        return "is not canonically encoded"
    x2 = (y * y - 1) * pow(_D * y * y + 1, -1, _P) % _P
    if x2 != 0 and pow(x2, (_P - 1) // 2, _P) != 1:
        return "is off the curve"
    if x2 == 0 and sign:
        return "is not canonically encoded"
    return "is not in the prime-order subgroup (it has a small-order component)"


def check_point(data, seat: int | None, what: str) -> bytes:
    """`data` as a point of the prime-order group, or BadPoint naming `seat`."""
    if type(data) is not bytes or len(data) != POINT_BYTES:
        raise BadPoint(seat, f"sent {what} that is not a {POINT_BYTES}-byte point")
    if not sodium.crypto_core_ed25519_is_valid_point(data):
        raise BadPoint(seat, f"sent {what} that {_why_invalid(data)}")
    return data


def check_scalar(data, seat: int | None, what: str) -> bytes:
    """`data` as a canonical non-zero scalar, or BadScalar naming `seat`."""
    if type(data) is not bytes or len(data) != SCALAR_BYTES:
        raise BadScalar(seat, f"sent {what} that is not a {SCALAR_BYTES}-byte key")
    if not 0 < int.from_bytes(data, "little") < ORDER:
        raise BadScalar(seat, f"sent {what} that is not a canonical non-zero key")
    return data


def random_scalar() -> bytes:
    """A uniform non-zero scalar from the OS: 253 random bits, rejected until below the order."""
    while True:
        raw = bytearray(os.urandom(SCALAR_BYTES))
        raw[31] &= 0x1F
        if 0 < int.from_bytes(raw, "little") < ORDER:
            return bytes(raw)


def mul(point: bytes, scalar: bytes) -> bytes:
    """point · scalar (no clamping: keys are plain scalars of the prime-order group)."""
    return sodium.crypto_scalarmult_ed25519_noclamp(scalar, point)


def base_mul(scalar: bytes) -> bytes:
    """B · scalar: the public commitment to a position key."""
    return sodium.crypto_scalarmult_ed25519_base_noclamp(scalar)


def invert(scalar: bytes) -> bytes:
    return sodium.crypto_core_ed25519_scalar_invert(scalar)


def scalar_mul(a: bytes, b: bytes) -> bytes:
    return sodium.crypto_core_ed25519_scalar_mul(a, b)


def product(scalars) -> bytes:
    """The product of scalars (the one key that removes several seats' locks at once)."""
    total = (1).to_bytes(SCALAR_BYTES, "little")
    for scalar in scalars:
        total = scalar_mul(total, scalar)
    return total


def deck_id(table_id: bytes, label: str, number: int, cards) -> bytes:
    """16 bytes binding a deck to its table, label, number (0, then one per reshuffle) and card list."""
    listing = hashlib.sha256(b"".join(len(c.encode()).to_bytes(2, "big") + c.encode() for c in cards)).digest()
    return hashlib.sha256(
        DECK_TAG + table_id + number.to_bytes(4, "big") + listing + label.encode()
    ).digest()[:DECK_ID_BYTES]


def card_point(deck: bytes, card: str) -> bytes:
    return sodium.crypto_core_ed25519_from_uniform(hashlib.sha256(CARD_TAG + deck + card.encode()).digest())


@dataclass(frozen=True)
class Deck:
    """A deck of uniquely named cards (`"red#1"`; the game maps names to what they are).

    Position `j` of the deck is the j-th place of the shuffled list, not a card: cards stay hidden
    until a seat draws or everyone opens that position.
    """

    table_id: bytes
    label: str
    cards: tuple[str, ...]
    number: int = 0
    id: bytes = field(init=False)
    points: tuple[bytes, ...] = field(init=False, repr=False)
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.table_id) is not bytes or len(self.table_id) != TABLE_ID_BYTES:
            raise ValueError(f"a table id is {TABLE_ID_BYTES} bytes")
        cards = tuple(self.cards)
        if len(cards) < 1 or not all(isinstance(c, str) and c for c in cards) or len(set(cards)) != len(cards):
            raise ValueError("a deck needs at least one card and unique, non-empty card names")
        if any(len(c.encode()) > 255 for c in cards) or not isinstance(self.label, str):
            raise ValueError("card names are at most 255 bytes and a deck's label is text")
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "id", deck_id(self.table_id, self.label, self.number, cards))
        points = tuple(card_point(self.id, card) for card in cards)
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "_index", {point: card for point, card in zip(points, cards)})

    def __len__(self) -> int:
        return len(self.cards)

    def decode(self, point: bytes) -> str | None:
        """The card whose plaintext point this is, or None (a point still locked, or garbage)."""
        return self._index.get(point)

    def renewed(self, cards) -> "Deck":
        """The next deck of this label (a reshuffle of public cards): new id, new points, new keys."""
        return Deck(self.table_id, self.label, tuple(cards), self.number + 1)
