#!/usr/bin/env python3
"""Cost of the dealer-less deal (net/cards/deal.py) on Tricolor Line's 66-card resource deck.

For 2, 4 and 8 seats, in CPU seconds (time.process_time, one process plays every seat):
  - shuffle + lock: every seat's passes, plus every peer checking every pass (each peer runs its
    own Deal replica, as on a real table); the target is under 1 s in total for 8 seats;
  - private draw, per card: the other seats boxing their keys for the drawer, every peer accepting
    the key boxes, and the drawer opening the card;
  - end-of-deal verification: one peer accepting every opening and replaying the whole deal;
  - on loopback (wall clock): the ID-card deal of `dicetable deal` (net/table/deal_table.py) between real
    sessions over ZeroMQ on 127.0.0.1, one thread per seat (one process, so the seats share the
    GIL): shuffle+lock, the private draw per card, and opening+verification, from the host's log.
Beside it, in the same run: one seat's shuffle + lock pass over a 2048-bit safe-prime group in pure
Python (pow), against the same pass over Ed25519, and the ratio.

Usage: .venv/bin/python scripts/bench_deal.py [--seats 2,4,8] [--modp-cards 66] [--no-loopback]
"""

from __future__ import annotations

import argparse
import hashlib
import secrets
import sys
import time

import msgpack


from dicetable.core.chance import permutation
from dicetable.net.cards.points import Deck, base_mul, check_point, invert, mul, scalar_mul
from dicetable.net.cards.deal import Deal
from dicetable.net.cards.party import Party

TABLE = bytes(16)
RESOURCE_CARDS = [f"{colour}-{kind}#{n}" for colour in ("red", "yellow", "blue")
                  for kind, count in (("basic", 15), ("double", 5)) for n in range(count)] + [
                     f"wild#{n}" for n in range(6)]
HAND = 4  # cards each seat draws at the start of Tricolor Line
# RFC 3526 group 14: the 2048-bit MODP prime, a safe prime p = 2q + 1.
MODP_P = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AACAA68FFFFFFFFFFFFFFFF", 16)
MODP_Q = (MODP_P - 1) // 2


def cpu() -> float:
    return time.process_time()


def wire(body: dict) -> bytes:
    return msgpack.packb(body, use_bin_type=True)


def unwire(data: bytes) -> dict:
    return msgpack.unpackb(data, raw=False)


def bench_seats(seats: int) -> dict:
    deck = Deck(TABLE, "resource", RESOURCE_CARDS)
    peers = [Deal(deck, seats) for _ in range(seats)]  # each seat's own replica of the public state
    parties = [Party.new(deck, seats, s) for s in range(seats)]
    passes = checks = 0.0
    for step in ("shuffle", "lock"):
        for s, party in enumerate(parties):
            start = cpu()
            data = wire(getattr(party, step)(peers[s]))
            passes += cpu() - start
            start = cpu()
            for peer in peers:
                peer.accept(s, unwire(data))
            checks += cpu() - start

    start = cpu()
    for to in range(seats):
        positions = list(range(to * HAND, (to + 1) * HAND))
        for s, party in enumerate(parties):
            if s != to:
                data = wire(party.send_keys(peers[s], to, positions))
                for peer in peers:
                    peer.accept(s, unwire(data))
        assert sorted(parties[to].hand(peers[to])) == positions
        data = wire(parties[to].hold(peers[to]))
        for peer in peers:
            peer.accept(to, unwire(data))
    draw = (cpu() - start) / (seats * HAND)

    openings = [wire(party.opening(peers[s])) for s, party in enumerate(parties)]
    start = cpu()
    for s, data in enumerate(openings):
        peers[0].accept(s, unwire(data))
    result = peers[0].audit()
    verify = cpu() - start
    assert all(result.hand(s) == [parties[s].hand(peers[s])[j] for j in sorted(parties[s].hand(peers[s]))]
               for s in range(seats))
    return {"passes": passes, "check_per_peer": checks / seats, "shuffle_lock": passes + checks,
            "draw_per_card": draw, "verify": verify}


def loopback(seats: int) -> dict:
    """The ID deal between real sessions on 127.0.0.1; phase times from the host's log, wall clock."""
    import os
    import tempfile
    import threading

    from dicetable.net.identity import Profile
    from dicetable.net.table.deal_table import DealHost, DealPeer
    from dicetable.net.table.events import DealVerified, Recorded

    stamps: dict[str, float] = {}

    def on_host_event(event) -> None:
        if isinstance(event, Recorded) and event.record.kind == "deal":
            step = event.record.envelope.body["step"]
            stamps.setdefault("first " + step, time.perf_counter())
            stamps["last " + step] = time.perf_counter()
        elif isinstance(event, DealVerified):
            stamps["verified"] = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="bench_deal_") as home:
        os.environ["DICETABLE_HOME"] = home  # the runs' transcripts stay out of the user's data
        host = DealHost(Profile.generate("host"), seats, bind="127.0.0.1", port=0, on_event=on_host_event)
        invite = host.open()
        threads = [threading.Thread(target=host.run, daemon=True)]
        for s in range(1, seats):
            peer = DealPeer(Profile.generate(f"p{s}"), invite)
            threads.append(threading.Thread(target=peer.run, daemon=True))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    return {"shuffle_lock": stamps["last lock"] - stamps["first shuffle"],
            "draw_per_card": (stamps["last hold"] - stamps["last lock"]) / seats,
            "open_verify": stamps["verified"] - stamps["last hold"]}


def one_seat_ed25519(cards: int) -> float:
    """One seat's shuffle + lock pass over Ed25519, checks of the incoming points included."""
    deck = Deck(TABLE, "resource", RESOURCE_CARDS[:cards])
    party = Party.new(deck, 2, 0)
    start = cpu()
    for point in deck.points:
        check_point(point, 1, "a point")
    moved = [mul(p, party.deck_key) for p in deck.points]
    shuffled = [moved[m] for m in party.perm]
    unlock = invert(party.deck_key)
    [mul(p, scalar_mul(unlock, k)) for p, k in zip(shuffled, party.keys)]
    [base_mul(k) for k in party.keys]
    return cpu() - start


def one_seat_modp(cards: int) -> float:
    """The same pass in the quadratic residues of a 2048-bit safe-prime group, in pure Python."""
    points = [pow(int.from_bytes(hashlib.sha256(c.encode()).digest() * 8, "big") % MODP_P, 2, MODP_P)
              for c in RESOURCE_CARDS[:cards]]

    def key() -> int:
        return 1 + secrets.randbelow(MODP_Q - 1)

    deck_key, keys = key(), [key() for _ in points]
    perm = permutation(len(points), secrets.randbelow)
    start = cpu()
    for point in points:  # the incoming-point check: a quadratic residue, i.e. in the order-q subgroup
        assert pow(point, MODP_Q, MODP_P) == 1
    moved = [pow(p, deck_key, MODP_P) for p in points]
    shuffled = [moved[m] for m in perm]
    unlock = pow(deck_key, -1, MODP_Q)
    [pow(p, unlock * k % MODP_Q, MODP_P) for p, k in zip(shuffled, keys)]
    [pow(4, k, MODP_P) for k in keys]  # the key commitments (4 generates the order-q subgroup)
    return cpu() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", default="2,4,8")
    parser.add_argument("--modp-cards", type=int, default=66, help="cards in the 2048-bit comparison (<= 66)")
    parser.add_argument("--no-loopback", action="store_true", help="skip the sessions over 127.0.0.1")
    args = parser.parse_args()
    print(f"deal of the {len(RESOURCE_CARDS)}-card resource deck, CPU seconds (process_time)")
    print(f"{'seats':>5} {'passes':>8} {'check/peer':>10} {'shuffle+lock':>13} {'draw/card':>10} {'verify':>8}")
    for seats in (int(n) for n in args.seats.split(",")):
        r = bench_seats(seats)
        print(f"{seats:>5} {r['passes']:>8.3f} {r['check_per_peer']:>10.3f} {r['shuffle_lock']:>13.3f} "
              f"{r['draw_per_card'] * 1000:>8.2f}ms {r['verify']:>8.3f}")
    if not args.no_loopback:
        print("ID-card deal (9 cards, one per seat) between sessions on 127.0.0.1, wall seconds")
        print(f"{'seats':>5} {'shuffle+lock':>13} {'draw/card':>10} {'open+verify':>12}")
        for seats in (int(n) for n in args.seats.split(",")):
            r = loopback(seats)
            print(f"{seats:>5} {r['shuffle_lock']:>13.3f} {r['draw_per_card'] * 1000:>8.1f}ms {r['open_verify']:>12.3f}")
    cards = max(1, min(args.modp_cards, len(RESOURCE_CARDS)))
    ed = one_seat_ed25519(cards)
    modp = one_seat_modp(cards)
    print(f"one seat's shuffle+lock pass, {cards} cards: Ed25519 {ed:.3f} s, "
          f"2048-bit safe prime (pure Python pow) {modp:.3f} s, ratio {modp / ed:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
