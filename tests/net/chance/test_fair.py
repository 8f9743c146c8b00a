"""Fair randomness: published vectors, uniformity, and the commit–reveal protocol in the Replica."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from collections import Counter
from dataclasses import dataclass, replace
from itertools import permutations
from pathlib import Path

import pytest

from dicetable.core.chance import LocalSource
from dicetable.core.dice_expr import parse
from dicetable.core.game import CHANCE, Chance, GameInfo, GameState, IllegalMove, Move, Option, Outcome, Result
from dicetable.net.chance import outcomes, secret_roll
from dicetable.net import refusals
from dicetable.net.log import replica as rep
from dicetable.net.log import wire
from dicetable.net.chance.reveal_chain import Chain, opens, step
from dicetable.net.chance.drbg import DRBG
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import Table

VECTORS = json.loads((Path(__file__).parents[2] / "vectors_fair.json").read_text())


# -- published vectors ------------------------------------------------------------------------------
def _spec_seed(table: bytes, k: int, reveals: list[bytes]) -> bytes:
    """FAIRNESS.md §1 written out again from the vectors' description, independently of net/."""
    return hashlib.sha256(b"dicetable/event/v1" + table + k.to_bytes(8, "big") + b"".join(reveals)).digest()


def _spec_stream(seed: bytes, n: int) -> bytes:
    blocks = b"".join(
        hmac.new(seed, b"dicetable/drbg/v1" + i.to_bytes(8, "big"), "sha256").digest() for i in range(n // 32 + 1)
    )
    return blocks[:n]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: c["name"])
def test_published_vectors(case):
    table = bytes.fromhex(case["table"])
    chains = [Chain(table, n, bytes.fromhex(s["secret"]), case["chain_length"]) for n, s in enumerate(case["seats"])]
    for n, (chain, seat) in enumerate(zip(chains, case["seats"])):
        assert chain.anchor.hex() == seat["anchor"]
        assert [v.hex() for v in chain.values[1 : len(seat["values"]) + 1]] == seat["values"]
        # Each published value opens the one before it, back to the anchor.
        previous = bytes.fromhex(seat["anchor"])
        for value in map(bytes.fromhex, seat["values"]):
            assert hashlib.sha256(b"dicetable/chain/v2" + table + bytes([n]) + value).digest() == previous
            previous = value
    for event in case["events"]:
        k = event["k"]
        reveals = [c.reveal(k) for c in chains]
        seed = outcomes.event_seed(table, k, reveals)
        assert seed.hex() == event["seed"] == _spec_seed(table, k, reveals).hex()
        assert DRBG(seed).read(64).hex() == event["drbg_first_64_bytes"] == _spec_stream(seed, 64).hex()
        stream = DRBG(seed)
        assert [stream.below(n) for n in event["below"]["n"]] == event["below"]["values"]
        assert [v + 1 for v in outcomes.draw(Chance("d", (6,) * 12), seed).values] == event["dice_12d6"]
        mixed = outcomes.draw(Chance("m", (6, 6, 3), shuffle=10), seed)
        assert list(mixed.values) == event["chance_ranges_6_6_3_shuffle_10"]["values"]
        assert list(mixed.permutation) == event["chance_ranges_6_6_3_shuffle_10"]["permutation"]
        assert list(outcomes.draw(Chance("deck", shuffle=52), seed).permutation) == event["shuffle_52"]
        for roll in event["dice_room"]:  # dice room expressions: draws reserved from the text alone (core/dice_expr.py)
            expr = parse(roll["expr"])
            assert list(expr.ranges) == roll["ranges"]
            values = outcomes.draw(Chance(roll["expr"], expr.ranges), seed).values
            stream = DRBG(seed)  # a fresh one per expression
            assert list(values) == roll["values"] == [stream.below(n) for n in roll["ranges"]]
            faces = expr.faces(values)
            assert expr.describe(faces) == roll["result"] and list(expr.totals(faces)) == roll["totals"]
        hidden = event["secret_roll"]  # a secret roll's dice: H(r ‖ s), PROTOCOL.md §16.6
        secret = bytes.fromhex(hidden["secret"])
        assert secret == hashlib.sha256(b"vector secret" + k.to_bytes(8, "big")).digest()
        assert secret_roll.commitment(table, hidden["seat"], secret).hex() == hidden["commitment"] == hashlib.sha256(
            b"dicetable/secret-commit/v1" + table + bytes([hidden["seat"]]) + secret).hexdigest()
        roll_seed = hashlib.sha256(b"dicetable/secret-roll/v1" + seed + secret).digest()
        assert secret_roll.roll_seed(seed, secret).hex() == hidden["roll_seed"] == roll_seed.hex()
        expr, stream = parse(hidden["expr"]), DRBG(roll_seed)
        assert list(secret_roll.values(hidden["expr"], seed, secret)) == hidden["values"] == [stream.below(n) for n in expr.ranges]
        assert expr.describe(expr.faces(tuple(hidden["values"]))) == hidden["result"]


def test_fair_source_draws_exactly_as_the_local_source():
    """Same Chance, same integer stream: the fair source and LocalSource give the same Outcome."""

    class StreamAsRandom:  # LocalSource only calls randrange(n)
        def __init__(self, seed):
            self.randrange = DRBG(seed).below

    chance = Chance("mixed", ranges=(6, 6, 2, 13), shuffle=9)
    for k in range(1, 30):
        reveals = [hashlib.sha256(bytes([k, s])).digest() for s in range(3)]
        source = outcomes.FairSource(bytes(16), k, reveals)
        expected = LocalSource(StreamAsRandom(outcomes.event_seed(bytes(16), k, reveals))).outcome(chance)
        assert source.outcome(chance) == expected
        chance.check(expected)


def test_below_rejects_instead_of_wrapping():
    stream = DRBG(bytes(32))
    assert stream.below(1) == 0 and stream.counter == 0  # below(1) reads nothing
    # A stream whose first byte masks to 3 (out of range(3)) must skip it and use the next byte.
    for i in range(1000):
        seed = hashlib.sha256(i.to_bytes(2, "big")).digest()
        first, second = DRBG(seed).read(2)
        if first & 3 == 3 and second & 3 < 3:
            break
    drawn = DRBG(seed)
    assert drawn.below(3) == second & 3 and len(drawn.buffer) == 30  # two bytes consumed
    with pytest.raises(ValueError):
        stream.below(0)


# -- uniformity ---------------------------------------------------------------------------------
# Critical values of the chi-square distribution at significance 0.001 (upper tail), from the
# standard table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4): df 5 -> 20.515, df 9 -> 27.877,
# df 23 -> 49.728. The streams below are fixed, so each test is deterministic.
CHI2_999 = {5: 20.515, 9: 27.877, 23: 49.728}


def chi_square(counts, expected: float) -> float:
    return sum((c - expected) ** 2 / expected for c in counts)


def _seeds(events: int, seats: int = 2):
    """Event seeds exactly as a table makes them: fixed chains, one reveal per seat per event."""
    table = bytes(range(16))
    chains = [Chain(table, s, hashlib.sha256(b"uniformity %d" % s).digest(), events) for s in range(seats)]
    for k in range(1, events + 1):
        yield outcomes.event_seed(table, k, [c.reveal(k) for c in chains])


@pytest.mark.slow
def test_sixty_thousand_d6_are_uniform():
    faces = Counter()
    biased = Counter()
    for seed in _seeds(10_000):
        faces.update(outcomes.draw(Chance("6 dice", (6,) * 6), seed).values)
        # Negative control: the classic mistake of masking without rejection (3 bits mod 6).
        biased.update((b & 7) % 6 for b in DRBG(seed).read(6))
    assert sum(faces.values()) == 60_000 and set(faces) == set(range(6))
    assert chi_square(faces.values(), 10_000) < CHI2_999[5]
    assert chi_square(biased.values(), 10_000) > CHI2_999[5]


@pytest.mark.slow
def test_shuffles_are_uniform():
    whole = Counter()
    sattolo = Counter()
    for seed in _seeds(24_000):
        whole[outcomes.draw(Chance("4 cards", shuffle=4), seed).permutation] += 1
        # Negative control: the off-by-one Fisher-Yates (j from range(i)) that core.chance warns of.
        items, below = [0, 1, 2, 3], DRBG(seed).below
        for i in range(3, 0, -1):
            j = below(i)
            items[i], items[j] = items[j], items[i]
        sattolo[tuple(items)] += 1
    assert set(whole) == set(permutations(range(4)))
    assert chi_square(whole.values(), 1_000) < CHI2_999[23]
    assert chi_square([sattolo.get(p, 0) for p in permutations(range(4))], 1_000) > CHI2_999[23]

    positions = [Counter() for _ in range(10)]
    for seed in _seeds(12_000, seats=3):
        for position, card in enumerate(outcomes.draw(Chance("10 cards", shuffle=10), seed).permutation):
            positions[position][card] += 1
    for counts in positions:
        assert chi_square([counts[c] for c in range(10)], 1_200) < CHI2_999[9]


# -- a test game with several seats and chance in every turn ------------------------------------------
@dataclass(frozen=True)
class RaceState(GameState):
    """Each turn: chance rolls a die and shuffles the seats; the seat due keeps or doubles the roll."""

    seats: int
    turns: int
    scores: tuple[int, ...]
    turn: int = 0
    rolled: int = 0
    order: tuple[int, ...] = ()
    played: int = 0
    result: Result | None = None

    @property
    def actor(self):
        if self.result is not None:
            return None
        return self.turn if self.rolled else CHANCE

    def chance(self):
        return None if self.rolled or self.result else Chance(f"roll {self.played + 1}", (6,), shuffle=self.seats)

    def resolve(self, outcome: Outcome):
        self.chance().check(outcome)
        return replace(self, rolled=outcome.values[0] + 1, order=outcome.permutation)

    def legal_moves(self):
        return (Move("keep"), Move("double")) if self.rolled else ()

    def apply(self, move: Move):
        if move not in self.legal_moves():
            raise IllegalMove(f"{move} is not legal now")
        gain = self.rolled if move.kind == "keep" else (2 * self.rolled if self.rolled > 3 else -self.rolled)
        scores = list(self.scores)
        scores[self.turn] += gain
        after = replace(self, scores=tuple(scores), turn=(self.turn + 1) % self.seats, rolled=0, played=self.played + 1)
        if after.played >= self.turns:
            best = max(scores)
            winners = tuple(s for s in range(self.seats) if scores[s] == best)
            return replace(after, result=Result(winners, tuple(float(s in winners) for s in range(self.seats)), "most points"))
        return after

    def view(self, seat):
        return self

    def to_data(self):
        return {"scores": list(self.scores), "turn": self.turn, "rolled": self.rolled, "played": self.played}


class KeepBot:
    def __init__(self, game, rng):
        self.rng = rng

    def choose(self, view):
        return self.rng.choice(view.legal_moves())


RACE = GameInfo(
    name="race", title="Race", min_seats=2, max_seats=8,
    options=(Option("turns", 12, "turns in a game", minimum=1),),
    new=lambda seats, options: RaceState(seats, options["turns"], (0,) * seats),
    load=lambda data: None, bots={"random": KeepBot},
)


def games(name):
    from dicetable.core import registry

    return RACE if name == "race" else registry.get(name)


def race_table(seats=3, turns=12, chain_length=1024, margin=16) -> Table:
    return Table(RACE, {"turns": turns}, [f"p{s}" for s in range(seats)], chain_length,
                 games=games, refresh_margin=margin)


def snapshot(r: rep.Replica):
    return (
        len(r.log), r.phase, r.state.to_data() if r.state is not None else None, r.events, r.pending,
        r.result, tuple(r.next_seq(s) for s in range(wire.MAX_SEATS)),
        tuple(r.chain_left(s) for s in range(r.seat_count)), r.seats,
    )


@pytest.mark.parametrize("seats", [2, 3, 8])
def test_every_seat_contributes_and_chains_refresh(seats):
    """Chains of 4 values refreshed at the last moment carry a 30-turn game; every peer agrees."""
    table = race_table(seats, turns=30, chain_length=4, margin=1)
    bots = [KeepBot(RACE, random.Random(s)) for s in range(seats)]
    result = table.play(bots, random.Random(1))
    assert result is not None and len(table.host.events) == 30
    anchors = [r for r in table.host.log if r.kind == "anchor"]
    assert len(anchors) == seats * 7  # a fresh chain after events 4, 8, ..., 28
    for event in table.host.events:
        assert None not in event.reveals
        assert event.seed == outcomes.event_seed(table.table, event.number, event.reveals)
        assert event.outcome == outcomes.draw(event.chance, event.seed)
    for peer in table.peers:
        assert peer.events == table.host.events and peer.result == result


def test_a_seat_whose_chain_runs_out_cannot_roll_and_cannot_anchor_late():
    table = race_table(2, turns=10, chain_length=2, margin=0)  # margin 0: never refreshes
    bots = [KeepBot(RACE, random.Random(s)) for s in range(2)]
    rng = random.Random(0)
    while len(table.host.events) < 2:
        table.step(bots, rng)
    while table.host.waiting_for.action == "move":
        table.step(bots, rng)
    assert table.host.pending.number == 3 and table.host.chain_left(0) == 0
    late = table.seats[0].frame("anchor", wire.anchor_body(Chain(table.table, 0, length=4).anchor, 4, 3))
    before = snapshot(table.host)
    with pytest.raises(refusals.BadAnchor, match="already begun") as caught:
        table.host.accept(late)
    assert caught.value.seat == 0 and snapshot(table.host) == before
    table.seats[0].seq -= 1
    reveal = wire.make_frame(table.seats[0].profile, table.table, 0, table.host.next_seq(0), "reveal",
                             wire.reveal_body(3, Chain(table.table, 0, length=4).values[1]), table.host.head, sign=False)
    with pytest.raises(refusals.BadReveal, match="ran out"):
        table.host.accept(reveal)
    assert snapshot(table.host) == before


def test_refusals_name_the_seat_and_change_nothing():
    table = race_table(3, turns=6)
    host, (s0, s1, s2) = table.host, table.seats
    assert host.waiting_for == rep.Waiting("reveal", (0, 1, 2))
    table.post(s1.reveal(1))
    other = Table(RACE, {"turns": 6}, ["x", "y", "z"], games=games)

    def refused(frame, error, seat, fix_seq=None):
        before = snapshot(host)
        with pytest.raises(error) as caught:
            host.accept(frame)
        assert caught.value.seat == seat and (seat is None or f"seat {seat}" in str(caught.value))
        assert snapshot(host) == before
        if fix_seq is not None:
            fix_seq.seq -= 1  # the refused frame did not count

    refused(s1.reveal(1), refusals.NotDue, 1, s1)  # a second reveal for the same event
    refused(s2.frame("reveal", wire.reveal_body(1, bytes(32)), sign=False), refusals.BadReveal, 2, s2)
    refused(s2.frame("reveal", wire.reveal_body(2, s2.chains[0].reveal(2)), sign=False), refusals.BadReveal, 2, s2)
    refused(s2.move(Move("keep")), refusals.NotDue, 2, s2)  # a move while the roll waits for reveals
    refused(wire.make_frame(s1.profile, table.table, 2, s2.seq, "chat", wire.chat_body("hi"), host.head), refusals.BadSignature, 2)
    refused(wire.make_frame(s2.profile, table.table, 2, s2.seq + 1, "chat", wire.chat_body("hi"), host.head), refusals.OutOfOrder, 2)
    # another frame signed by seat 2 at a place its own frame holds: signed proof that it forks the log
    refused(wire.make_frame(s2.profile, table.table, 2, s2.seq - 1, "chat", wire.chat_body("hi"), host.head), refusals.Equivocation, 2)
    refused(wire.make_frame(s2.profile, other.table, 2, s2.seq, "chat", wire.chat_body("hi"), host.head), refusals.WrongTable, 2)
    refused(other.seats[0].frame("join", wire.join_body("z", other.seats[0].profile.public_key, bytes(32), 4)),
            refusals.WrongTable, 0)
    refused(s0.start(), refusals.NotDue, 0, s0)
    refused(s0.frame("deal", {"step": "shuffle"}), refusals.DealRefused, 0, s0)
    refused(b"\x92\xc4\x00", refusals.MalformedFrame, None)
    table.post(s0.reveal(1))
    table.post(s2.reveal(1))
    assert host.events[0].outcome is not None and host.waiting_for.action == "move"
    due = host.waiting_for.seats[0]
    wrong = table.seats[(due + 1) % 3]
    refused(wrong.move(Move("keep")), refusals.NotDue, wrong.seat, wrong)
    refused(table.seats[due].move(Move("fold")), refusals.IllegalMoveRefused, due, table.seats[due])
    refused(table.seats[due].frame("claim", wire.claim_body(due, "self")), refusals.BadClaim, due, table.seats[due])


def test_joins_late_taken_out_of_range_or_with_a_copied_key_are_refused():
    table = Table(RACE, {"turns": 2}, ["a", "b", "c"], games=games)
    stranger = Profile.generate("d")

    def join(seat, profile, name="d", on=None):
        return wire.make_frame(profile, table.table, seat, 0, "join", wire.join_body(name, profile.public_key, bytes(32), 8),
                               (on or table.host).head)

    with pytest.raises(refusals.NotDue, match="not taking players"):  # the game has started
        table.host.accept(join(1, stranger))
    fresh = rep.Replica(games=games)
    fresh.accept(table.host.log[0].frame)  # open
    fresh.accept(table.host.log[1].frame)  # seat 0 joins
    with pytest.raises(refusals.SeatTaken):
        fresh.accept(join(0, stranger, on=fresh))
    with pytest.raises(refusals.NotSeated):
        fresh.accept(join(3, stranger, on=fresh))
    with pytest.raises(refusals.BadJoin, match="already sits"):
        fresh.accept(join(1, table.seats[0].profile, "b", on=fresh))
    with pytest.raises(refusals.BadSignature):
        fresh.accept(wire.make_frame(stranger, table.table, 1, 0, "join",
                                     wire.join_body("b", table.seats[1].profile.public_key, bytes(32), 8), fresh.head))
    assert fresh.accept(join(2, stranger, on=fresh)).note.startswith("d joins at seat 2")
    assert fresh.waiting_for == rep.Waiting("join", (1,))


def test_claim_against_a_stalling_seat_and_resignation_end_the_game():
    table = race_table(3, turns=6)
    table.post(table.seats[0].reveal(1))
    assert table.host.waiting_for.seats == (1, 2)
    claim = table.post(table.seats[0].frame("claim", wire.claim_body(2, "no reveal within 60 s")))
    # Three seats, and a default of seat 2 ends the race with seats 0 and 1 sharing the win: seat 1
    # may not witness it (FAIRNESS.md §5b), no neutral seat is left, so the claim stands alone, as with
    # two seats, and says it is unwitnessed.
    assert table.host.result.winners == (0, 1) and "seat 2 in default" in table.host.result.reason
    assert table.host.ending.index == claim.index and table.host.basis(table.host.ending) == "unwitnessed claim by seat 0"
    assert table.host.phase == "over" and table.host.pending is None

    table = race_table(2, turns=6)
    table.post(table.seats[1].frame("resign", {}))
    assert table.host.result == Result((0,), (1.0, 0.0), "seat 1 resigned")


def test_reveal_order_does_not_change_the_outcome():
    table = race_table(3, turns=1)
    opening = [r.frame for r in table.host.log]
    reveals = [seat.reveal(1) for seat in table.seats]
    outcomes = set()
    for order in permutations(range(3)):
        replica = rep.Replica(games=games)
        for frame in opening:
            replica.accept(frame)
        for s in order:
            replica.accept(reveals[s])
        outcomes.add(replica.events[0].outcome)
    assert len(outcomes) == 1


def test_chain_helpers():
    table = bytes(range(16))
    chain = Chain(table, 2, bytes(32), length=3, first=5)
    assert chain.covers(5) and chain.covers(7) and not chain.covers(8)
    assert opens(table, 2, chain.anchor, chain.reveal(5)) and opens(table, 2, chain.reveal(5), chain.reveal(6))
    assert not opens(table, 2, chain.reveal(5), chain.reveal(7))
    assert step(table, 2, chain.secret) == chain.values[-2]
    # bound to its table and seat: the same values open nothing at another seat or table
    assert not opens(table, 3, chain.anchor, chain.reveal(5))
    assert not opens(bytes(16), 2, chain.anchor, chain.reveal(5))
