"""Fuzzing: over 10,000 generated and mutated envelopes never crash the decoder (only WireError) and
never change a Replica's state (only Refusal, and nothing moves).

Hypothesis generates 2,400 envelopes (random bytes, mutated real frames, envelopes shaped like the
real thing with fields wrong, some validly signed); a seeded mutator adds 9,000 cheap mutations of
real frames (hypothesis costs milliseconds per example here, mutation microseconds)."""

from __future__ import annotations

import copy
import random
from collections import Counter

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.core import registry
from dicetable.net.log import wire
from dicetable.net.table.local_seats import Table
from dicetable.net.refusals import Refusal
from dicetable.net.log.replica import Replica

TRICE = registry.get("trice")
BATCH = 8
EXAMPLES = 300  # BATCH * EXAMPLES hypothesis envelopes
MUTATIONS = 9_000


def _table():
    """A TRICE table mid-protocol (one seat revealed), plus every frame of a whole game as corpus."""
    whole = Table(TRICE, TRICE.resolve_options({}), ["alice", "bob"])
    bots = [TRICE.bots["random"](TRICE, random.Random(s)) for s in range(2)]
    whole.play(bots, random.Random(0))
    corpus = [r.frame for r in whole.host.log]
    replica = Replica()
    start = next(r.index for r in whole.host.log if r.kind == "start")
    for frame in corpus[: start + 2]:
        replica.accept(frame)
    return whole, replica, corpus


WHOLE, BASE, CORPUS = _table()
KEYS = [seat.profile for seat in WHOLE.seats]


def snapshot(r: Replica):
    return (len(r.log), r.phase, r.state.to_data() if r.state is not None else None, r.events, r.pending,
            r.result, tuple(r.next_seq(s) for s in range(wire.MAX_SEATS)),
            tuple(r.chain_left(s) for s in range(r.seat_count)), r.seats, r.table)


plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.binary(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=4,
)


@st.composite
def mutated(draw):
    data = bytearray(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice", "byte"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "byte" and data:
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 4))]
        elif op == "truncate":
            del data[pos:]
        elif op == "splice":
            other = draw(st.sampled_from(CORPUS))
            data[pos:] = other[draw(st.integers(0, len(other) - 1)) :]
    return bytes(data)


@st.composite
def structured(draw):
    """Envelopes shaped like the real thing with one or more fields wrong, some validly signed."""
    kind = draw(st.sampled_from(list(wire.KINDS) + ["bogus", ""]))
    schema = wire.SCHEMAS.get(kind, {})
    values = st.sampled_from([bytes(32), b"", 0, 1, 2, -1, 2**40, "x", ["keep"], ["choose", "W6"], {}, None, 1.5])
    if draw(st.booleans()):  # the kind's fields with plausible but unchecked values
        body = {name: draw(values) for name in schema}
    else:
        body = draw(plain)
    inner = {
        "v": draw(st.sampled_from([2, 2, 2, 0, 1, 3, "2", None])),
        "table": draw(st.sampled_from([BASE.table, BASE.table, bytes(16), b"", b"x" * 17])),
        "seat": draw(st.sampled_from([0, 1, 1, 2, 15, 16, -1, True])),
        "seq": draw(st.integers(-2, 40) | st.just(BASE.next_seq(1))),
        "kind": kind,
        "body": body,
        "prev": draw(st.sampled_from([BASE.head.to_data(), BASE.head.to_data(), [0, bytes(32)],
                                      [len(BASE.log) + 5, BASE.head.head], [1, b""], None])),
    }
    if draw(st.booleans()):
        del inner[draw(st.sampled_from(sorted(inner)))]
    try:
        signed = wire.pack(inner) if draw(st.booleans()) else msgpack.packb(inner, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        signed = draw(st.binary(max_size=64))
    signer = draw(st.sampled_from(KEYS + [None]))
    signature = signer.sign(signed) if signer else draw(st.sampled_from([b"", bytes(64), bytes(63)]))
    return msgpack.packb([signed, signature], use_bin_type=True)


envelopes = st.one_of(st.binary(max_size=300), mutated(), structured(), st.sampled_from(CORPUS))


class Fuzz:
    """Feeds frames to the decoder and a replica; any exception but WireError / Refusal fails."""

    def __init__(self) -> None:
        self.counts = Counter()
        self.replica = self.fresh()

    @staticmethod
    def fresh() -> Replica:
        return copy.deepcopy(BASE)  # the replica and its parts, which point back at it, copied together

    def feed(self, frame: bytes) -> None:
        self.counts["envelopes"] += 1
        try:
            wire.decode(frame)
            self.counts["decoded"] += 1
        except wire.WireError:
            pass
        before = snapshot(self.replica)
        try:
            self.replica.accept(frame)
        except Refusal as refusal:
            assert snapshot(self.replica) == before, f"refused ({refusal}) but the state changed"
            self.counts[refusal.fault] += 1
        else:  # a genuinely valid next frame: start again from the base position
            self.counts["accepted"] += 1
            self.replica = self.fresh()


@pytest.mark.slow
def test_hypothesis_envelopes_never_crash_and_never_change_state():
    fuzz = Fuzz()

    @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(envelopes, min_size=BATCH, max_size=BATCH))
    def run(batch):
        for frame in batch:
            fuzz.feed(frame)

    run()
    assert fuzz.counts["envelopes"] >= BATCH * EXAMPLES
    # The mix must reach past the decoder into the replica's checks (the exact counts vary a little
    # from run to run: the frames embed fresh random bytes).
    assert fuzz.counts["decoded"] > 100 and fuzz.counts["bad signature"] > 0
    assert fuzz.counts["out of order"] > 0 and fuzz.counts["accepted"] > 0


def _mutate(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        pos = rng.randrange(len(data)) if data else 0
        if op == 0 and data:
            data[pos] ^= 1 << rng.randrange(8)
        elif op == 1 and data:
            data[pos] = rng.randrange(256)
        elif op == 2:
            data[pos:pos] = rng.randbytes(rng.randint(1, 3))
        elif op == 3:
            del data[pos : pos + rng.randint(1, 3)]
        elif op == 4:
            del data[pos:]
        else:
            other = rng.choice(CORPUS)
            data[pos:] = other[rng.randrange(len(other)) :]
    return bytes(data)


def _resigned(rng: random.Random, frame: bytes) -> bytes:
    """A real frame with one signed field changed and signed again by a real seat key."""
    signed, _ = msgpack.unpackb(frame)
    inner = msgpack.unpackb(signed)
    field = rng.choice(["seat", "seq", "kind", "table", "body", "v"])
    inner[field] = rng.choice([0, 1, 2, inner["seq"] + 1, "move", "reveal", bytes(16), {}, {"k": 1}, 2])
    data = wire.pack(inner)
    return msgpack.packb([data, rng.choice(KEYS).sign(data)], use_bin_type=True)


def test_mutated_envelopes_never_crash_and_never_change_state():
    fuzz = Fuzz()
    rng = random.Random(2026)
    for _ in range(MUTATIONS):
        frame = rng.choice(CORPUS)
        fuzz.feed(_resigned(rng, frame) if rng.random() < 0.2 else _mutate(rng, frame))
    assert fuzz.counts["envelopes"] == MUTATIONS
    assert fuzz.counts["decoded"] > 1_000 and fuzz.counts["bad signature"] > 100
    assert fuzz.counts["out of order"] + fuzz.counts["not due"] > 100


def test_every_kind_the_wire_decodes_has_its_handler():
    """A decoded frame of any kind reaches the part that checks it, never a missing entry (a crash)."""
    assert set(Replica().handlers) == set(wire.SCHEMAS)
