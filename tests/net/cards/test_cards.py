"""Cards as Ed25519 group points (net/cards/points.py): the encoding, and the points and keys a peer may send."""

from __future__ import annotations

import hashlib

import pytest
from nacl import bindings as sodium

from dicetable.net.cards.points import (
    ORDER,
    Deck,
    base_mul,
    card_point,
    check_point,
    check_scalar,
    invert,
    mul,
    product,
    random_scalar,
    scalar_mul,
)
from dicetable.net.refusals import BadPoint, BadScalar

TABLE = bytes(range(16))
# A point of order 8 (one of the eight small-order points of edwards25519).
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
IDENTITY = (1).to_bytes(32, "little")
FIELD_P = 2**255 - 19


def test_card_points_follow_the_documented_formula_and_are_valid():
    deck = Deck(TABLE, "id", ["red#1", "red#2", "blue#1"])
    for card, point in zip(deck.cards, deck.points):
        digest = hashlib.sha256(b"dicetable/card/v1" + deck.id + card.encode()).digest()
        assert point == sodium.crypto_core_ed25519_from_uniform(digest) == card_point(deck.id, card)
        assert check_point(point, 0, "a card") == point
        assert deck.decode(point) == card
    assert len(set(deck.points)) == 3
    assert deck.decode(mul(deck.points[0], random_scalar())) is None


def test_deck_ids_bind_table_label_and_number():
    deck = Deck(TABLE, "resource", ["a", "b"])
    others = [Deck(bytes(16), "resource", ["a", "b"]), Deck(TABLE, "id", ["a", "b"]), deck.renewed(["a", "b"]),
              Deck(TABLE, "resource", ["a", "c"]), Deck(TABLE, "resource", ["b", "a"])]
    ids = {deck.id, *(other.id for other in others)}
    assert len(ids) == 6 and all(len(i) == 16 for i in ids)
    renewed = deck.renewed(["b"])
    assert renewed.number == 1 and renewed.points[0] != deck.points[1]  # a reshuffle has unrelated points


def test_deck_refuses_repeated_or_empty_names_and_bad_table_ids():
    with pytest.raises(ValueError):
        Deck(TABLE, "x", ["a", "a"])
    with pytest.raises(ValueError):
        Deck(TABLE, "x", [])
    with pytest.raises(ValueError):
        Deck(b"short", "x", ["a"])


def test_keys_commute_and_invert():
    point = Deck(TABLE, "x", ["a"]).points[0]
    a, b = random_scalar(), random_scalar()
    assert mul(mul(point, a), b) == mul(mul(point, b), a) == mul(point, scalar_mul(a, b))
    assert mul(mul(mul(point, a), b), invert(product([a, b]))) == point


def test_random_scalars_are_canonical_non_zero_and_differ():
    scalars = {random_scalar() for _ in range(200)}
    assert len(scalars) == 200
    assert all(0 < int.from_bytes(s, "little") < ORDER for s in scalars)
    # Uniform below the order (about 2**252): bit 251 is set in about half of them.
    assert 60 < sum(int.from_bytes(s, "little") >> 251 & 1 for s in scalars) < 140


@pytest.mark.parametrize(
    "data, reason",
    [
        ((2).to_bytes(32, "little"), "off the curve"),
        (ORDER_8, "prime-order subgroup"),
        (IDENTITY, "prime-order subgroup"),
        ((FIELD_P + 1).to_bytes(32, "little"), "not canonically encoded"),
        (b"\x01" * 31, "32-byte point"),
        ("not bytes", "32-byte point"),
    ],
)
def test_bad_points_are_refused_naming_the_seat(data, reason):
    with pytest.raises(BadPoint, match=reason) as caught:
        check_point(data, 3, "a shuffle point")
    assert caught.value.seat == 3 and str(caught.value).startswith("deal refused: seat 3: sent a shuffle point")


def test_a_point_with_a_small_order_component_is_refused():
    point = Deck(TABLE, "x", ["a"]).points[0]
    mixed = sodium.crypto_core_ed25519_add(point, ORDER_8)  # on the curve, but outside the subgroup
    with pytest.raises(BadPoint, match="small-order component"):
        check_point(mixed, 1, "a lock point")


@pytest.mark.parametrize(
    "data", [bytes(32), ORDER.to_bytes(32, "little"), (ORDER + 1).to_bytes(32, "little"), b"\x01" * 33, 5]
)
def test_bad_scalars_are_refused(data):
    with pytest.raises(BadScalar) as caught:
        check_scalar(data, 2, "a key")
    assert caught.value.seat == 2


def test_base_commitment_matches_the_key():
    key = random_scalar()
    assert base_mul(key) == sodium.crypto_scalarmult_ed25519_base_noclamp(key)
    assert check_point(base_mul(key), 0, "a commitment")
