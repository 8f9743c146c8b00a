"""The dealer-less deal (net/cards/deal.py): who learns what, and every way of cheating named.

Every body goes through msgpack before the public `Deal` sees it, as it will inside a signed record.
"""

from __future__ import annotations

import math
import random
import subprocess
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nacl import bindings as sodium

from dicetable.core import registry
from dicetable.core.game import CHANCE, NOBODY, BadOutcome, Chance, GameInfo, GameState, IllegalMove, Move, Outcome, Result
from dicetable.core.tricolor_tiles import UNKNOWN
from dicetable.net.cards.points import Deck, card_point, invert, mul, random_scalar
from dicetable.net.cards.points import product as scalar_product
from dicetable.net.cards.deal import Deal, commitment
from dicetable.net.cards.deal_book import DealBook, declaration
from dicetable.net.cards.party import Party
from dicetable.net.table.deal_table import ID_CARDS as DEMO_CARDS
from dicetable.net.table.deal_table import DealHost, DealPeer, SeatDealer
from dicetable.net.table.events import Fault
from dicetable.net.cards.table_deals import Payment, TableDeals
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import Table as LocalSeatsTable
from dicetable.net.refusals import BadPoint, DealError, DealFault, DealRefused
from dicetable.net.log.replica import Replica
from dicetable.net.log.verify import verify
from dicetable.tui.cli import main
from net_helpers import spawn

TABLE = bytes(range(16))
ID_CARDS = [f"{colour}#{n}" for colour in ("red", "yellow", "blue") for n in (1, 2, 3)]
# Tricolor Line's resource deck: 15 basic and 5 double per colour, 6 wild (rules: Components).
RESOURCE_CARDS = [f"{colour}-{kind}#{n}" for colour in ("red", "yellow", "blue")
                  for kind, count in (("basic", 15), ("double", 5)) for n in range(count)] + [
                     f"wild#{n}" for n in range(6)]
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def roundtrip(body: dict) -> dict:
    return msgpack.unpackb(msgpack.packb(body, use_bin_type=True), raw=False)


class Table:
    """Seats that deal in-process over one ordered log of deal bodies."""

    def __init__(self, seats: int, cards=ID_CARDS, label: str = "id") -> None:
        self.deck = Deck(TABLE, label, cards)
        self.deal = Deal(self.deck, seats)
        self.parties = [Party.new(self.deck, seats, s) for s in range(seats)]
        self.log: list[tuple[int, dict]] = []

    @property
    def seats(self) -> int:
        return self.deal.seats

    def send(self, seat: int, body: dict) -> None:
        body = roundtrip(body)
        self.deal.accept(seat, body)
        self.log.append((seat, body))

    def shuffle(self) -> None:
        for s, party in enumerate(self.parties):
            self.send(s, party.shuffle(self.deal))

    def lock(self) -> None:
        for s, party in enumerate(self.parties):
            self.send(s, party.lock(self.deal))

    def draw(self, to: int, positions) -> None:
        for s, party in enumerate(self.parties):
            if s != to:
                self.send(s, party.send_keys(self.deal, to, positions))

    def draw_and_hold(self, to: int, positions) -> dict:
        self.draw(to, positions)
        hand = self.parties[to].hand(self.deal)
        self.send(to, self.parties[to].hold(self.deal, positions))
        return hand

    def open(self, positions) -> None:
        for s, party in enumerate(self.parties):
            self.send(s, party.open_keys(self.deal, positions))

    def close(self):
        for s, party in enumerate(self.parties):
            self.send(s, party.opening(self.deal))
        return self.deal.audit()


def blobs(value):
    """Every bytes value inside a body."""
    if isinstance(value, bytes):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from blobs(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from blobs(item)


def state(deal: Deal):
    """Everything a refusal must leave unchanged."""
    return (len(deal.shuffles), len(deal.locks), dict(deal.drawer), {j: dict(b) for j, b in deal.boxes.items()},
            dict(deal.commits), dict(deal.shown), {j: dict(k) for j, k in deal.opened.items()},
            dict(deal.revealed), set(deal.openings))


# ---- who learns what ---------------------------------------------------------------------------

@pytest.mark.parametrize("seats, per_seat", [(2, 4), pytest.param(8, 4, marks=pytest.mark.slow)])
def test_each_seat_learns_exactly_its_own_cards(seats, per_seat):
    table = Table(seats, RESOURCE_CARDS, "resource")
    table.shuffle()
    table.lock()
    dealt = {s: list(range(s * per_seat, (s + 1) * per_seat)) for s in range(seats)}
    for s in range(seats):
        table.draw_and_hold(s, dealt[s])
    hands = {s: table.parties[s].hand(table.deal) for s in range(seats)}
    for s in range(seats):
        assert sorted(hands[s]) == dealt[s]
    assert len({card for hand in hands.values() for card in hand.values()}) == seats * per_seat

    # The log alone: no published point is the plaintext point of any card.
    plaintext = set(table.deck.points)
    assert not plaintext & set(blobs(table.log))
    # A seat's own secrets on top of the log: its key off any position dealt elsewhere opens nothing.
    locked = table.deal.locks[-1]
    for s, party in enumerate(table.parties):
        for j in range(len(table.deck)):
            if j not in dealt[s]:
                assert table.deck.decode(mul(locked[j], invert(party.keys[j]))) is None
        assert not {mul(p, invert(party.deck_key)) for p in table.deal.shuffles[-1]} & plaintext
    # Keys boxed for one seat do not open for another: seat 1 posing as seat 0's drawer fails.
    thief = table.parties[1]
    posing = Party(table.deck, seats, 0, thief.deck_key, thief.perm, table.parties[0].keys, thief.box_seed,
                   thief.draw_secret)
    with pytest.raises(DealFault, match="wrong key for position 0"):  # the boxes do not open for it
        posing.hand(table.deal)

    # The end-of-deal replay agrees with what every seat saw.
    result = table.close()
    for s in range(seats):
        assert result.hand(s) == [hands[s][j] for j in dealt[s]]
    assert sorted(result.cards) == sorted(RESOURCE_CARDS)


def test_a_public_reveal_opens_the_committed_card_for_everyone():
    table = Table(3)
    table.shuffle()
    table.lock()
    hand = table.draw_and_hold(1, [4])
    table.send(1, table.parties[1].show(table.deal, 4))
    assert 1 not in table.deal.waiting_for() or table.deal.waiting_for() == (0, 1, 2)
    table.open([4])
    assert table.deal.revealed == {4: hand[4]} and table.deal.faults == []
    # A card turned face up from the deck (dealt to no one) is opened by every seat's key alone.
    table.open([7])
    assert table.deal.revealed[7] in ID_CARDS and table.deal.revealed[7] != hand[4]
    assert table.close().cards[7] == table.deal.revealed[7]


def test_a_reshuffle_is_a_new_deck_with_new_keys():
    table = Table(2)
    table.shuffle()
    table.lock()
    table.open([0, 1, 2])
    discard = [table.deal.revealed[j] for j in (0, 1, 2)]
    deck = table.deck.renewed(discard)
    deal = Deal(deck, 2)
    parties = [Party.new(deck, 2, s) for s in range(2)]
    with pytest.raises(DealRefused, match="another deck"):
        deal.accept(0, table.log[0][1])  # an old pass cannot be replayed into the new deck
    for s in range(2):
        deal.accept(s, roundtrip(parties[s].shuffle(deal)))
    for s in range(2):
        deal.accept(s, roundtrip(parties[s].lock(deal)))
    assert parties[0].keys != table.parties[0].keys
    for s in range(2):
        deal.accept(s, roundtrip(parties[s].opening(deal)))
    assert sorted(deal.audit().cards) == sorted(discard)


def test_secrets_survive_a_crash_and_the_deal_resumes():
    table = Table(3)
    table.shuffle()
    table.lock()
    hand = table.draw_and_hold(2, [0, 1])
    # Seat 2 crashes: its secrets come back from their stored form, the public state from the log.
    stored = msgpack.packb(table.parties[2].to_data(), use_bin_type=True)
    table.parties[2] = Party.from_data(table.deck, msgpack.unpackb(stored, raw=False))
    replayed = Deal(table.deck, 3)
    for seat, body in table.log:
        replayed.accept(seat, body)
    table.deal = replayed
    assert table.parties[2].hand(table.deal) == hand
    table.send(2, table.parties[2].show(table.deal, 1))
    table.open([1])
    assert table.deal.revealed == {1: hand[1]}
    assert table.close().hand(2) == [hand[0], hand[1]]


# ---- claiming a card that was not dealt ----------------------------------------------------------

def test_showing_another_card_is_refused_live():
    table = Table(2)
    table.shuffle()
    table.lock()
    hand = table.draw_and_hold(0, [0])
    card, nonce = table.parties[0].held[0]
    other = next(c for c in ID_CARDS if c != hand[0])
    before = state(table.deal)
    with pytest.raises(DealRefused, match=f"showed {other} at position 0, which does not open") as caught:
        table.send(0, {"deck": table.deck.id, "step": "show", "position": 0, "card": other, "nonce": nonce})
    assert caught.value.seat == 0 and state(table.deal) == before


def commit_falsely(table: Table, seat: int, position: int) -> str:
    """Seat commits to a card it was not dealt at `position`; returns that card."""
    party = table.parties[seat]
    real = party.hand(table.deal)[position]
    false = next(c for c in ID_CARDS if c != real)
    nonce = bytes(32)
    party.held[position] = (false, nonce)
    table.send(seat, {"deck": table.deck.id, "step": "hold", "positions": [position],
                      "commits": [commitment(TABLE, table.deck.id, position, false, nonce)]})
    return false


def test_a_false_commitment_is_caught_at_the_public_reveal_and_at_the_end():
    table = Table(3)
    table.shuffle()
    table.lock()
    table.draw(1, [5])
    false = commit_falsely(table, 1, 5)
    table.send(1, table.parties[1].show(table.deal, 5))  # opens its (false) commitment: accepted
    table.open([5])
    assert [(f.seat, f.reason.split(" but")[0]) for f in table.deal.faults] == [(1, f"showed {false} at position 5")]
    with pytest.raises(DealFault, match=f"seat 1 claimed {false} at position 5 but was dealt"):
        table.close()


def test_a_false_hidden_card_is_caught_at_the_end():
    table = Table(3)
    table.shuffle()
    table.lock()
    table.draw_and_hold(0, [0])
    table.draw(2, [1])
    false = commit_falsely(table, 2, 1)
    with pytest.raises(DealFault, match=f"claimed {false} at position 1 but was dealt") as caught:
        table.close()
    assert caught.value.seat == 2


def test_claiming_a_position_dealt_to_another_seat_is_caught_at_the_end():
    table = Table(3)
    table.shuffle()
    table.lock()
    hand = table.draw_and_hold(0, [0])
    table.parties[2].held[0] = (hand[0], bytes(32))  # seat 2 claims seat 0's card as its own
    with pytest.raises(DealFault, match="seat 2 claimed .* at position 0, which it was not dealt"):
        table.close()


def test_opening_a_hidden_card_other_than_the_committed_one_is_caught():
    table = Table(2)
    table.shuffle()
    table.lock()
    hand = table.draw_and_hold(1, [3])
    _, nonce = table.parties[1].held[3]
    table.parties[1].held[3] = (next(c for c in ID_CARDS if c != hand[3]), nonce)
    with pytest.raises(DealFault, match="seat 1 opened .* at position 3, which does not match its commitment"):
        table.close()


# ---- substituted cards and broken shuffles --------------------------------------------------------

def test_a_copied_card_in_a_shuffle_pass_is_refused_live():
    table = Table(3)
    table.send(0, table.parties[0].shuffle(table.deal))
    body = table.parties[1].shuffle(table.deal)
    body["points"][4] = body["points"][2]
    before = state(table.deal)
    with pytest.raises(DealRefused, match="seat 1: repeated a card in its shuffle pass"):
        table.send(1, body)
    assert state(table.deal) == before


@pytest.mark.parametrize("cheat", [0, 1, 2])
def test_a_substituted_card_is_caught_when_drawn_and_named_at_the_end(cheat):
    table = Table(3)
    for s, party in enumerate(table.parties):
        body = party.shuffle(table.deal)
        if s == cheat:  # a card of the cheat's choosing, under its own deck key
            body["points"][0] = mul(card_point(table.deck.id, "red#9"), party.deck_key)
        table.send(s, body)
    table.lock()
    broken = []
    for s in range(3):
        table.draw(s, [s, s + 3, s + 6])
    for s in range(3):
        try:
            table.parties[s].hand(table.deal)
        except DealFault as fault:  # the drawer sees it live, but cannot tell who did it
            assert fault.seat is None and "opens to no card" in fault.reason
            broken.append(s)
    assert len(broken) == 1
    with pytest.raises(DealFault, match=f"seat {cheat} substituted 1 card\\(s\\) in its shuffle pass"):
        table.close()


def test_a_permutation_opened_falsely_is_named():
    table = Table(2)
    table.shuffle()
    table.lock()
    party = table.parties[1]
    party.perm = party.perm[1:] + party.perm[:1]
    with pytest.raises(DealFault, match="seat 1 opened a permutation that does not match its shuffle pass"):
        table.close()


def test_a_broken_lock_pass_is_named_at_the_end():
    table = Table(3)
    table.shuffle()
    for s, party in enumerate(table.parties):
        body = party.lock(table.deal)
        if s == 1:  # locks position 2 with a key other than the one it committed to
            body["points"][2] = mul(body["points"][2], random_scalar())
        table.send(s, body)
    table.draw(0, [2])
    with pytest.raises(DealFault, match="opens to no card"):
        table.parties[0].hand(table.deal)
    with pytest.raises(DealFault, match="seat 1 broke its lock pass at position 2"):
        table.close()


# ---- wrong position keys -------------------------------------------------------------------------

def test_a_wrong_private_key_is_named_live_by_the_drawer_and_at_the_end():
    table = Table(3)
    table.shuffle()
    table.lock()
    honest = table.parties[2]
    liar = Party(table.deck, 3, 2, honest.deck_key, honest.perm,
                 [random_scalar() if j == 6 else k for j, k in enumerate(honest.keys)], honest.box_seed,
                 honest.draw_secret)
    table.send(1, table.parties[1].send_keys(table.deal, 0, [6]))
    table.send(2, liar.send_keys(table.deal, 0, [6]))  # boxed: the log cannot see inside
    with pytest.raises(DealFault, match="seat 2 sent seat 0 a wrong key for position 6") as caught:
        table.parties[0].hand(table.deal)
    assert caught.value.seat == 2
    drawer = table.parties[0]
    # A false accusation (seat 1's key is right) or someone else's draw secret is refused, naming seat 0.
    before = state(table.deal)
    for sender, secret, reason in [(1, drawer.draw_secret, "accused seat 1 falsely"),
                                   (2, table.parties[1].draw_secret, "not the one it published")]:
        with pytest.raises(DealRefused, match=reason) as refused:
            table.send(0, {"deck": table.deck.id, "step": "accuse", "position": 6, "sender": sender,
                           "draw_secret": secret})
        assert refused.value.seat == 0 and state(table.deal) == before
    # The true accusation names seat 2 for everyone at once, and the drawer's card stays hidden.
    table.send(0, drawer.accuse(table.deal, caught.value))
    assert [(f.seat, f.reason) for f in table.deal.faults] == [(2, "sent seat 0 a wrong key for position 6")]
    honest_keys = [table.parties[1].keys[6], honest.keys[6]]
    assert table.deck.decode(mul(table.deal.locks[-1][6], invert(scalar_product(honest_keys)))) is None
    with pytest.raises(DealFault, match="seat 2 sent seat 0 a wrong key for position 6"):
        table.close()


def test_a_wrong_public_key_is_refused_live():
    table = Table(2)
    table.shuffle()
    table.lock()
    table.send(0, table.parties[0].open_keys(table.deal, [3]))
    before = state(table.deal)
    body = table.parties[1].open_keys(table.deal, [3])
    body["keys"][0] = random_scalar()
    with pytest.raises(DealRefused, match="seat 1: sent a wrong key for position 3"):
        table.send(1, body)
    assert state(table.deal) == before and 3 not in table.deal.revealed


# ---- refused points and messages -----------------------------------------------------------------

BAD_POINTS = {
    "off the curve": (2).to_bytes(32, "little"),
    "small order": ORDER_8,
    "not canonically encoded": (2**255 - 18).to_bytes(32, "little"),
}


@pytest.mark.parametrize("kind", [*BAD_POINTS, "small-order component"])
@pytest.mark.parametrize("step", ["shuffle", "lock", "commit"])
def test_bad_points_are_refused_and_named(kind, step):
    table = Table(2)
    table.shuffle()
    if step == "shuffle":
        table.deal = Deal(table.deck, 2)
    body = table.parties[0].shuffle(table.deal) if step == "shuffle" else table.parties[0].lock(table.deal)
    field = "commits" if step == "commit" else "points"
    good = body[field][3]
    body[field][3] = BAD_POINTS.get(kind) or sodium.crypto_core_ed25519_add(good, ORDER_8)
    before = state(table.deal)
    with pytest.raises(BadPoint) as caught:
        table.send(0, body)
    assert caught.value.seat == 0 and state(table.deal) == before


@pytest.mark.parametrize(
    "seat, make, reason",
    [
        (1, lambda t: t.parties[0].shuffle(t.deal), "out of turn"),
        (0, lambda t: {**t.parties[0].shuffle(t.deal), "deck": bytes(16)}, "another deck"),
        (0, lambda t: {**t.parties[0].shuffle(t.deal), "step": "deal"}, "unknown deal step"),
        (0, lambda t: {**t.parties[0].shuffle(t.deal), "extra": 1}, "fields"),
        (0, lambda t: {**t.parties[0].shuffle(t.deal), "points": t.deck.points[:5]}, "5 shuffle points, not 9"),
        (0, lambda t: {**t.parties[0].shuffle(t.deal), "draw_key": bytes(32)}, "small order"),
        (0, lambda t: [1, 2], "not a map"),
        (5, lambda t: t.parties[0].shuffle(t.deal), "not at this table"),
    ],
)
def test_malformed_or_untimely_messages_are_refused(seat, make, reason):
    table = Table(2)
    with pytest.raises(DealRefused, match=reason):
        table.deal.accept(seat, make(table))
    assert state(table.deal) == (0, 0, {}, {}, {}, {}, {}, {}, set())


def test_draw_and_reveal_rules_are_enforced():
    table = Table(3)
    table.shuffle()
    table.lock()
    p = table.parties
    with pytest.raises(DealRefused, match="its own keys to itself"):
        table.send(0, p[0].send_keys(table.deal, 0, [1]))
    table.send(0, p[0].send_keys(table.deal, 1, [1]))
    with pytest.raises(DealRefused, match="position 1 is dealt to seat 1"):
        table.send(2, p[2].send_keys(table.deal, 0, [1]))
    with pytest.raises(DealRefused, match="twice"):
        table.send(0, p[0].send_keys(table.deal, 1, [1]))
    with pytest.raises(DealRefused, match="before every key"):
        table.send(1, {"deck": table.deck.id, "step": "hold", "positions": [1], "commits": [bytes(32)]})
    assert table.deal.waiting_for() == (2,)
    table.send(2, p[2].send_keys(table.deal, 1, [1]))
    assert table.deal.waiting_for() == (1,)  # the drawer owes its commitment
    with pytest.raises(DealRefused, match="before the holder showed"):
        table.send(0, p[0].open_keys(table.deal, [1]))
    with pytest.raises(DealRefused, match="not dealt to it"):
        table.send(0, {"deck": table.deck.id, "step": "hold", "positions": [1], "commits": [bytes(32)]})
    table.send(1, p[1].hold(table.deal))
    table.send(0, p[0].open_keys(table.deal, [2]))
    with pytest.raises(DealRefused, match="being opened publicly"):
        table.send(1, p[1].send_keys(table.deal, 2, [2]))
    with pytest.raises(DealError, match="not fully opened"):
        table.deal.audit()
    table.send(0, p[0].opening(table.deal))
    with pytest.raises(DealRefused, match="closing phase"):
        table.send(1, p[1].send_keys(table.deal, 0, [5]))
    assert table.deal.waiting_for() == (1, 2)


# ---- fairness over many deals --------------------------------------------------------------------

def chi_square_sf(x: float, df: int) -> float:
    """P(X >= x) for chi-square with `df` degrees of freedom (regularised upper gamma, series form)."""
    a, z = df / 2, x / 2
    term = total = 1 / a
    n = 0
    while term > total * 1e-15:
        n += 1
        term *= z / (a + n)
        total += term
    return max(0.0, 1 - math.exp(-z + a * math.log(z) - math.lgamma(a)) * total)


def test_chi_square_helper_matches_known_values():
    assert chi_square_sf(16.919, 9) == pytest.approx(0.05, abs=1e-3)
    assert chi_square_sf(51.179, 24) == pytest.approx(0.001, abs=1e-4)


@pytest.mark.slow
def test_each_card_lands_at_each_seat_equally_often():
    deals, seats = 150, 3
    counts = {(s, card): 0 for s in range(seats) for card in ID_CARDS}
    for _ in range(deals):
        table = Table(seats)
        table.shuffle()
        table.lock()
        for s in range(seats):
            table.draw(s, [s])
            counts[(s, table.parties[s].hand(table.deal)[s])] += 1
    expected = deals / len(ID_CARDS)
    statistic = sum((count - expected) ** 2 / expected for count in counts.values())
    # Each seat's row is a 9-cell multinomial: 8 degrees of freedom per seat.
    p_value = chi_square_sf(statistic, seats * (len(ID_CARDS) - 1))
    assert p_value > 1e-4, f"chi-square {statistic:.1f}, p = {p_value:.2g}: the deal favours some card/seat"


# ---- the deal as signed records of a table's log (net/log/replica.py) --------------------------------

def id_table(seats: int, transcript=None):
    """A dice-room table whose replicas (the host's and every seat's) check deal records with a DealBook."""
    table = LocalSeatsTable(registry.get("diceroom"), {"rolls": 0}, [f"p{s}" for s in range(seats)], transcript=transcript)
    for replica in (table.host, *table.peers):
        replica.deal_handler = DealBook()
    return table


def run_id_deal(table, dealers, tamper=None) -> None:
    """Drive every seat's SeatDealer until no seat has anything to send; `tamper(seat, body)` may cheat."""
    progress = True
    while progress:
        progress = False
        for s, dealer in enumerate(dealers):
            for body in dealer.next_bodies(table.peers[s].deal_handler):
                if tamper:
                    body = tamper(s, body)
                table.post(table.seats[s].frame("deal", body))
                progress = True


def test_the_id_deal_runs_as_signed_records_and_verify_replays_it():
    table = id_table(3)
    dealers = [SeatDealer(s, 3, table.table) for s in range(3)]
    table.post(table.seats[0].frame("deal", dealers[0].next_bodies(table.peers[0].deal_handler)[0]))
    assert table.host.deal_handler.waiting_for() == (0,)  # seat 0's shuffle pass is due
    run_id_deal(table, dealers)
    assert table.host.deal_handler.waiting_for() == ()
    results = [dealer.check(table.peers[s].deal_handler) for s, dealer in enumerate(dealers)]
    assert results[0] is not None and results[0] == results[1] == results[2]
    assert [dealer.card for dealer in dealers] == list(results[0].cards[:3])
    assert sorted(results[0].cards) == sorted(DEMO_CARDS)
    # A bad deal record is refused by the replica with the seat named, and the log is unchanged.
    length = len(table.host.log)
    with pytest.raises(DealRefused, match="seat 2"):
        table.post(table.seats[2].frame("deal", {"deck": dealers[0].deck.id, "step": "open",
                                                 "positions": [0], "keys": [bytes(32)]}))
    assert len(table.host.log) == length
    # Anyone replays the log without secrets and checks every deal in it (what `verify` does),
    # with a DealBook or with the TableDeals that also knows games' own decks.
    for handler in (DealBook(), TableDeals()):
        replica = Replica(deal_handler=handler)
        for record in table.host.log:
            replica.accept(record.frame)
        assert list(replica.deal_handler.check().values()) == [results[0]]


def test_a_cheat_in_the_signed_log_is_named_by_everyone():
    table = id_table(3)
    dealers = [SeatDealer(s, 3, table.table) for s in range(3)]

    def substitute(seat, body):  # seat 1 swaps a card of its shuffle pass for a point of its own
        if seat == 1 and body["step"] == "shuffle":
            body["points"][0] = mul(card_point(body["deck"], "red#4"), random_scalar())
        return body

    try:
        run_id_deal(table, dealers, substitute)  # the card lands at a dealt position 3 times in 9
    except DealFault as fault:  # then its drawer sees it live, without knowing who did it
        assert fault.seat is None and "opens to no card" in fault.reason
    deck = dealers[0].deck.id
    for s, dealer in enumerate(dealers):  # the deal is opened, and every peer names the cheat
        deal = table.peers[s].deal_handler.deals[deck]
        if s not in deal.openings:
            table.post(table.seats[s].frame("deal", dealer.party.opening(deal)))
    for replica in (table.host, *table.peers):
        assert replica.deal_handler.deals[deck].complete
        with pytest.raises(DealFault, match="seat 1 substituted 1 card"):
            replica.deal_handler.check()


@pytest.mark.parametrize("cheat", [None, 1])
def test_verify_checks_every_deal_of_a_transcript(tmp_path, cheat):
    path = tmp_path / "deal.dtt"
    table = id_table(3, transcript=path)
    dealers = [SeatDealer(s, 3, table.table) for s in range(3)]

    def substitute(seat, body):
        if seat == cheat and body["step"] == "shuffle":
            body["points"][0] = mul(card_point(body["deck"], "blue#4"), random_scalar())
        return body

    try:
        run_id_deal(table, dealers, substitute)
    except DealFault:
        pass  # the substituted card was dealt: its drawer saw it live
    deal = table.host.deal_handler.deals[dealers[0].deck.id]
    for s, dealer in enumerate(dealers):
        if s not in deal.openings:
            table.post(table.seats[s].frame("deal", dealer.party.opening(deal)))
    table.post(table.seats[0].move(Move("close")))
    table.writer.close()
    verdict = verify(path)
    if cheat is None:
        assert verdict.valid, verdict.line()
    else:
        assert verdict.seat == 1 and "substituted 1 card" in verdict.line(), verdict.line()


def test_a_game_deals_its_hidden_cards_through_the_replicas():
    """Tricolor Line's setup: ID cards and resource hands dealt by the game's own hidden steps."""
    game = registry.get("tricolor")
    table = LocalSeatsTable(game, {}, ["ann", "bob", "cy"])
    table.host.deal_handler = TableDeals()  # the host's gate only checks: it holds no seat's secrets
    for s, peer in enumerate(table.peers):
        peer.deal_handler = TableDeals(seat=s)
    bots = [game.bots["random"](game, random.Random(s)) for s in range(3)]
    rng = random.Random(5)
    resource_draws = lambda: sum(  # noqa: E731 - private draws of resource cards finished so far
        len(d.commits) for d in table.host.deal_handler.deals.values() if d.deck.label.startswith("game:resource"))
    while resource_draws() <= 12:  # the 3 starting hands of 4, then the first turn's draw
        if table.host.waiting_for.action == "deal":
            bodies = [(s, b) for s, peer in enumerate(table.peers) for b in peer.deal_handler.next_bodies(peer)]
            assert bodies, f"nobody acts for {table.host.state.chance()}"
            for s, body in bodies:
                table.post(table.seats[s].frame("deal", body))
        else:
            table.step(bots, rng)
    for s, peer in enumerate(table.peers):  # each seat knows its own cards, no one else's
        for other in range(3):
            known = peer.state.ids[other] != UNKNOWN and UNKNOWN not in peer.state.hands[other]
            assert known == (other == s)
    assert set(table.host.state.ids) == {UNKNOWN}
    # A deal message outside the step due is refused; the end-of-game opening checks it all.
    with pytest.raises(DealRefused, match="a game's decks come from its own steps"):
        table.post(table.seats[0].frame("deal", declaration(Deck(table.table, "game:id", ["0"]))))
    table.seats[0].seq -= 1  # the refused frame is not in the log: its sequence number is free again
    early = table.peers[1].deal_handler  # an opening while the game goes on would make the others owe theirs
    with pytest.raises(DealRefused, match="seat 1: sent its end-of-game opening while the game goes on"):
        table.post(table.seats[1].frame("deal", early.parties[early.formed[0]].opening(early.deals[early.formed[0]])))
    table.seats[1].seq -= 1
    table.post(table.seats[2].frame("resign", {}))  # the game ends: now every deck is opened
    for s, peer in enumerate(table.peers):
        handler = peer.deal_handler
        for deck in handler.formed:
            table.post(table.seats[s].frame("deal", handler.parties[deck].opening(handler.deals[deck])))
    results = table.host.deal_handler.check()
    ids, resources = (results[d] for d in table.host.deal_handler.formed)
    # A seat that crashed comes back from its stored secrets and the log, knowing its cards again.
    stored = msgpack.packb(table.peers[1].deal_handler.to_data(), use_bin_type=True)
    resumed = Replica(deal_handler=TableDeals(seat=1, secrets=msgpack.unpackb(stored, raw=False)))
    for record in table.host.log:
        resumed.accept(record.frame)
    assert resumed.state.hands[1] == table.peers[1].state.hands[1] and UNKNOWN not in resumed.state.hands[1]
    for s, peer in enumerate(table.peers):
        assert ids.hand(s) == [str(peer.state.ids[s])]
        assert sorted(map(int, resources.hand(s))) == sorted(peer.state.hands[s])


def test_a_deck_declaration_binds_its_cards():
    book = DealBook(TABLE, 2)
    deck = Deck(TABLE, "id", ID_CARDS)
    forged = {**declaration(deck), "cards": list(reversed(ID_CARDS))}
    with pytest.raises(DealRefused, match="does not match"):
        book.apply(0, forged)
    with pytest.raises(DealRefused, match="never declared"):
        book.apply(0, Party.new(deck, 2, 0).shuffle(Deal(deck, 2)))
    for bad in ({**declaration(deck), "cards": [["red"]] * 9}, {**declaration(deck), "cards": ID_CARDS[:1] * 2},
                {**declaration(deck), "number": -1}, {**declaration(deck), "label": 5}, {**declaration(deck), "x": 1}):
        with pytest.raises(DealRefused):
            book.apply(0, bad)
    with pytest.raises(DealRefused, match="one seat"):
        DealBook(TABLE, 1).apply(0, declaration(deck))
    with pytest.raises(DealRefused, match="seat 1: declared a deck: only the host"):
        book.apply(1, declaration(deck))
    deal = book.apply(0, declaration(deck))
    with pytest.raises(DealRefused, match="twice"):
        book.apply(0, declaration(deck))
    assert book.deals == {deck.id: deal} and book.check() == {}


# ---- the demo over real sockets: `dicetable deal --host` / `--join` -------------------------------

@pytest.mark.slow
def test_the_deal_demo_between_three_processes(tmp_path):
    def demo(who: str, *args: str) -> subprocess.Popen:
        return spawn(tmp_path, who, "deal", *args, "--name", who)

    host = demo("ann", "--host", "--seats", "3", "--port", "0", "--bind", "127.0.0.1")
    first = host.stdout.readline()
    assert first.startswith("invite: "), first + host.stderr.read()
    joiners = [demo(name, "--join", first.split()[1]) for name in ("bob", "cy")]
    outputs = []
    for process in (host, *joiners):
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, out + err
        outputs.append(out)
    outputs[0] = first + outputs[0]
    assignments, seats = set(), set()
    for out in outputs:
        seat = int(out.split(".dtt")[0].rsplit("seat", 1)[1])  # the transcript's name carries the seat
        cards = [l.split(": ")[1] for l in out.splitlines() if l.startswith("your card: ")]
        assert len(cards) == 1 and cards[0] in ("red", "yellow", "blue"), out
        assert "verified" in out.splitlines()
        assignment = next(l for l in out.splitlines() if l.startswith("assignment: "))
        assert f"seat {seat} {cards[0]}" in assignment
        assignments.add(assignment)
        # No other seat's card is printed before the verified assignment.
        assert out.index("your card") < out.index("verified") and out.count("seat ") == 3
        seats.add(seat)
        # The seat's deal secrets wait beside its transcript, for its user alone (FAIRNESS.md §6).
        seat_file = Path(out.split("transcript: ")[1].split()[0] + ".seat")
        assert seat_file.stat().st_mode & 0o777 == 0o600
        stored = msgpack.unpackb(seat_file.read_bytes(), raw=False)["deal"]
        assert stored["seat"] == seat and len(stored["keys"]) == 9 and len(stored["held"]) == 1
    assert len(assignments) == 1 and seats == {0, 1, 2}


# ---- any input: a DealRefused or a clean step, never a crash or a half-applied message ------------


PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.binary(max_size=40) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def staged_bodies():
    """One 3-seat ID deal; at each stage, the log so far and a valid next body with its author."""
    table = Table(3)
    stages = [(0, 0, table.parties[0].shuffle(table.deal))]
    table.shuffle()
    stages.append((len(table.log), 0, table.parties[0].lock(table.deal)))
    table.lock()
    stages.append((len(table.log), 1, table.parties[1].send_keys(table.deal, 0, [0, 1])))
    table.draw(2, [5])
    hold = table.parties[2].hold(table.deal)
    stages.append((len(table.log), 2, hold))
    table.send(2, hold)
    show = table.parties[2].show(table.deal, 5)
    stages.append((len(table.log), 2, show))
    table.send(2, show)
    stages.append((len(table.log), 0, table.parties[0].open_keys(table.deal, [5])))
    stages.append((len(table.log), 1, table.parties[1].opening(table.deal)))
    return table, [(table.log[:length], author, roundtrip(body)) for length, author, body in stages]


STAGED = staged_bodies()


def test_every_staged_body_is_accepted_unmangled():
    table, stages = STAGED
    for log, author, body in stages:
        deal = Deal(table.deck, 3)
        for seat, logged in log:
            deal.accept(seat, logged)
        deal.accept(author, body)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mangled_bodies_are_refused_cleanly(data):
    table, stages = STAGED
    log, author, body = data.draw(st.sampled_from(stages))
    deal = Deal(table.deck, 3)
    for seat, logged in log:
        deal.accept(seat, logged)
    mangled = dict(body)
    target = data.draw(st.sampled_from(sorted(mangled) + ["extra"]))
    if data.draw(st.booleans()):
        mangled.pop(target, None)
    else:
        mangled[target] = data.draw(PLAIN)
    seat = data.draw(st.sampled_from([author, author, (author + 1) % 3, 7, -1]))
    before = state(deal)
    try:
        deal.accept(seat, mangled)
    except DealRefused:  # the only exception any input may raise, and it changes nothing
        assert state(deal) == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["deal", "--host", "--seats", "3"], "--host needs --port"),
        (["deal", "--host", "--seats", "9", "--port", "0"], "needs 2 to 8 seats"),
        (["deal", "--host", "--seats", "1", "--port", "0"], "needs 2 to 8 seats"),
        (["deal", "--join", "dt1-nonsense"], "bad invite"),
        (["deal", "--join", "x", "--timeout", "0"], "--timeout must be above 0"),
        (["deal"], "one of the arguments --host --join is required"),
    ],
)
def test_bad_deal_commands_say_one_line_and_exit_2(args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path))
    try:
        code = main(args)
    except SystemExit as leave:  # argparse's own errors leave through SystemExit
        code = leave.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_wrong_key_over_the_network_is_named_by_every_peer(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path))

    class LyingDealer(SeatDealer):
        """Boxes a random key instead of its own for every card it helps deal."""

        def next_bodies(self, book):
            bodies = super().next_bodies(book)
            for body in bodies:
                if body["step"] == "draw":
                    p = self.party
                    liar = Party(self.deck, self.seats, self.seat, p.deck_key, p.perm,
                                 [random_scalar() for _ in p.keys], p.box_seed, p.draw_secret)
                    body.update(liar.send_keys(book.deals[self.deck.id], body["to"], body["positions"]))
            return bodies

    faults = {s: [] for s in range(3)}

    def listener(seat):
        return lambda event: faults[seat].append(event.said) if isinstance(event, Fault) else None

    host = DealHost(Profile.generate("ann"), 3, bind="127.0.0.1", port=0, on_event=listener(0))
    invite = host.open()
    threads = [threading.Thread(target=host.run, daemon=True)]
    threads[0].start()
    peers = []
    for name in ("bob", "cy"):
        peer = DealPeer(Profile.generate(name), invite)
        peer.connect()
        peer.on_event = listener(peer.seat)
        peers.append(peer)
    liar = next(p for p in peers if p.seat == 2)
    liar.own.dealer = LyingDealer(2, 3, liar.replica.table)
    for peer in peers:
        threads.append(threading.Thread(target=peer.run, daemon=True))
        threads[-1].start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads)
    # Every honest seat names seat 2 live (one of them caught it, the others heard its proof).
    for seat in (0, 1):
        assert faults[seat] and faults[seat][0].startswith("seat 2 sent seat "), faults


# ---- a whole game with hidden hands, paid cards and a reveal, through the replicas --------------

HIDDEN = UNKNOWN  # a card this state does not know


class _AnyPlay(tuple):
    """`play N` for any card: a peer cannot list the moves of a hand it does not see."""

    def __contains__(self, move) -> bool:
        return isinstance(move, Move) and move.kind == "play" and len(move.args) == 1 and type(move.args[0]) is int


@dataclass(frozen=True)
class HandState(GameState):
    """Six cards, two to each of three seats; each plays one face up, then shows the other."""

    seats: int = 3
    tasks: tuple = (("shuffle",), ("draw", 0), ("draw", 1), ("draw", 2))
    hands: tuple = ((), (), ())
    drawn: int = 0
    turn: int = 0
    played: tuple = ()
    result: Result | None = None

    @property
    def actor(self):
        return CHANCE if self.tasks else (None if self.result else self.turn)

    def chance(self) -> Chance:
        task = self.tasks[0]
        if task[0] == "shuffle":
            return Chance("shuffle", shuffle=6, private=NOBODY, deck="cards", cards=tuple(range(6)))
        if task[0] == "draw":
            return Chance(f"seat {task[1]} draws", private=task[1], deck="cards", positions=(self.drawn, self.drawn + 1))
        return Chance(f"seat {task[1]} shows its hand", deck="reveal", reveal=task[1])

    def resolve(self, outcome: Outcome) -> "HandState":
        task, rest = self.tasks[0], self.tasks[1:]
        self.chance().check(outcome)
        hands = list(self.hands)
        if task[0] == "draw":
            hands[task[1]] = outcome.values or (HIDDEN, HIDDEN)
            return replace(self, tasks=rest, hands=tuple(hands), drawn=self.drawn + 2)
        if task[0] == "reveal":
            known = [c for c in self.hands[task[1]] if c != HIDDEN]
            if len(outcome.values) != len(self.hands[task[1]]) or not set(known) <= set(outcome.values):
                raise BadOutcome("the revealed hand is not the one dealt")
            hands[task[1]] = outcome.values
            after = replace(self, tasks=rest, hands=tuple(hands))
            if not rest:  # the highest card shown wins
                best = max(range(self.seats), key=lambda s: hands[s][0])
                return replace(after, result=Result((best,), tuple(float(s == best) for s in range(3)), "high card"))
            return after
        return replace(self, tasks=rest)

    def legal_moves(self):
        return _AnyPlay()

    def apply(self, move: Move) -> "HandState":
        card, hand = move.args[0], self.hands[self.turn]
        if card not in hand and HIDDEN not in hand:
            raise IllegalMove(f"seat {self.turn} does not hold card {card}")
        rest = list(hand)
        rest.remove(card if card in hand else HIDDEN)
        hands = list(self.hands)
        hands[self.turn] = tuple(rest)
        played = self.played + ((self.turn, card),)
        tasks = tuple(("reveal", s) for s in range(3)) if len(played) == 3 else ()
        return replace(self, hands=tuple(hands), played=played, turn=(self.turn + 1) % 3, tasks=tasks)

    def view(self, seat):
        return self


HAND_GAME = GameInfo("handgame", "Hand game", 3, 3, (), lambda seats, options: HandState(), lambda data: None)


def test_a_game_with_hidden_hands_pays_and_reveals_through_the_replicas():
    table = LocalSeatsTable(HAND_GAME, {}, ["ann", "bob", "cy"], games=lambda name: HAND_GAME)
    table.host.deal_handler = TableDeals()
    for s, peer in enumerate(table.peers):
        peer.deal_handler = TableDeals(seat=s)

    def everyone_sends() -> bool:
        bodies = [(s, b) for s, peer in enumerate(table.peers) for b in peer.deal_handler.next_bodies(peer)]
        for s, body in bodies:
            table.post(table.seats[s].frame("deal", body))
        return bool(bodies)

    def pay(s: int, card: int) -> None:
        """What a session does for a move paying a hidden card: show it, let all open it, then move."""
        for body in table.peers[s].deal_handler.show_bodies(table.peers[s], Payment("", (card,))):
            table.post(table.seats[s].frame("deal", body))
        while everyone_sends():
            pass
        for replica in (table.host, *table.peers):  # the move check a replica would make
            replica.deal_handler.pay(s, Payment("", (card,)))
        table.post(table.seats[s].move(Move("play", (card,))))

    while table.host.result is None:
        waiting = table.host.waiting_for
        if waiting.action == "move":
            s = waiting.seats[0]
            hand = table.peers[s].state.hands[s]
            if s == 1:  # seat 1 tries to pay a card it does not hold first: refused, nothing marked
                other = next(c for c in range(6) if c not in hand)
                with pytest.raises(DealRefused, match=f"seat 1: paid card\\(s\\) {other} without showing them"):
                    table.host.deal_handler.pay(1, Payment("", (other,)))
                with pytest.raises(ValueError):
                    table.peers[1].deal_handler.show_bodies(table.peers[1], Payment("", (other,)))
            for replica in table.peers:  # before the move, no other seat knows the card
                assert (replica.state.hands[s][0] == hand[0]) == (replica is table.peers[s])
            pay(s, hand[0])
        else:
            assert waiting.action == "deal" and everyone_sends(), waiting
    hands = [table.peers[s].state.hands[s] for s in range(3)]
    for replica in (table.host, *table.peers):  # every peer ends with the same, fully known state
        assert replica.state.hands == tuple(hands) and HIDDEN not in sum(hands, ())
        assert replica.result == table.host.result
    while everyone_sends():  # the end-of-game opening
        pass
    result = table.host.deal_handler.check()[table.host.deal_handler.formed[0]]
    for s in range(3):
        played = next(card for seat, card in table.host.state.played if seat == s)
        assert sorted(map(int, result.hand(s))) == sorted([played, *hands[s]])
