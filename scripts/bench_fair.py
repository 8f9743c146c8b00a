#!/usr/bin/env python3
"""Cost of one fair roll in-process against a plain local roll, measured in the same run.

A fair roll (FAIRNESS.md §1) is: every seat builds its reveal frame (wire.make_frame; unsigned by default,
the chain authenticates it), and a peer's Replica accepts each (decode, sequence and chain checks),
derives the seed and the DRBG outcome and resolves the game state. Variants: with signed reveals
(sign + verify per seat), and the whole table in one process (host and every seat's replica check
every reveal). The local roll is core.chance.LocalSource on the same Chance (two d6).

Prints the median per roll and the ratio to the local roll.
Usage: .venv/bin/python scripts/bench_fair.py [--rolls 400]
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import time
from dataclasses import dataclass, replace


from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Chance, GameInfo, GameState, Outcome
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import ProtocolSeat
from dicetable.net.log.replica import Replica

ROLL = Chance("two dice", (6, 6))


@dataclass(frozen=True)
class Rolls(GameState):
    """A bench-only game that is nothing but rolls: chance acts every step."""

    left: int
    last: Outcome | None = None
    result = None

    @property
    def actor(self):
        return CHANCE

    def chance(self):
        return ROLL

    def resolve(self, outcome):
        ROLL.check(outcome)
        return replace(self, left=self.left - 1, last=outcome)


GAME = GameInfo("rolls", "Rolls", 1, 16, (), new=lambda seats, options: Rolls(10**9), load=lambda d: None)


def table(seats: int, peers: int, signed: bool):
    """Seats joined and started; returns a roll function timing one fair roll."""
    table_id = secrets.token_bytes(16)
    authors = [ProtocolSeat(Profile.generate(f"p{s}"), s, table_id) for s in range(seats)]
    replicas = [Replica(table_id, games=lambda name: GAME) for _ in range(peers)]
    setup = [authors[0].open(GAME, {}, seats)] + [a.join() for a in authors] + [authors[0].start()]
    for frame in setup:
        for r in replicas:
            r.accept(frame)

    def roll() -> int:
        start = time.perf_counter_ns()
        k = replicas[0].pending.number
        for author in authors:
            frame = author.reveal(k, sign=signed)
            for r in replicas:
                r.accept(frame)
        return time.perf_counter_ns() - start

    return roll


def local(rolls: int) -> list[int]:
    source = LocalSource(random.Random(1))
    times = []
    for _ in range(rolls):
        start = time.perf_counter_ns()
        source.outcome(ROLL)
        times.append(time.perf_counter_ns() - start)
    return times


def parts(rolls: int) -> list[tuple[str, float]]:
    """Medians of the pieces of a roll, each on its own."""
    from dicetable.net.chance import outcomes
    from dicetable.net.chance.reveal_chain import Chain, opens
    from dicetable.net.identity import verify_signature

    profile = Profile.generate("p")
    data = bytes(120)
    signature = profile.sign(data)
    table = bytes(16)
    chain = Chain(table, 0, length=2)
    reveals = [Chain(table, s, length=1).values[1] for s in range(2)]
    pieces = {
        "Ed25519 sign (one frame)": lambda: profile.sign(data),
        "Ed25519 verify (one frame)": lambda: verify_signature(profile.public_key, data, signature),
        "chain check (one reveal)": lambda: opens(table, 0, chain.anchor, chain.values[1]),
        "seed + derivation (2 seats, 2d6)": lambda: outcomes.draw(ROLL, outcomes.event_seed(bytes(16), 1, reveals)),
    }
    out = []
    for label, work in pieces.items():
        times = []
        for _ in range(rolls):
            start = time.perf_counter_ns()
            work()
            times.append(time.perf_counter_ns() - start)
        out.append((label, statistics.median(times)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=400, help="rolls per variant (chains hold 1024)")
    args = parser.parse_args()
    rolls = min(args.rolls, 1000)
    base = statistics.median(local(rolls * 10))
    print(f"local roll (LocalSource, 2d6): median {base / 1000:8.2f} µs")
    for label, median in parts(rolls):
        print(f"  part: {label:<40} median {median / 1000:8.1f} µs  = {median / base:7.1f}× local")
    for seats in (2, 8):
        for label, peers, signed in (
            ("one peer's checks, unsigned reveals", 1, False),
            ("one peer's checks, signed reveals", 1, True),
            (f"whole table: host + {seats} seats check", seats + 1, False),
        ):
            roll = table(seats, peers, signed)
            median = statistics.median(roll() for _ in range(rolls))
            print(f"fair roll, {seats} seats, {label:<38} median {median / 1000:8.1f} µs"
                  f"  = {median / base:7.1f}× local")


if __name__ == "__main__":
    main()
