"""One seat's side of a deal (net/cards/deal.py): its secrets for one deck — deck key, permutation,
position keys, box seed, draw secret, the cards it holds — and the bodies it sends. The secrets
round-trip through `to_data`/`from_data` so a crashed seat can resume (FAIRNESS.md §6)."""

from __future__ import annotations

import os
import secrets

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from dicetable.core.chance import permutation
from dicetable.net.cards.boxes import box_context, make_box, open_box, x25519_public
from dicetable.net.cards.deal import Deal, box_key_is_right, commitment
from dicetable.net.cards.points import Deck, base_mul, invert, mul, product, random_scalar, scalar_mul
from dicetable.net.refusals import DealFault

class Party:
    """One seat's secrets for one deck, and the bodies it sends."""

    def __init__(self, deck: Deck, seats: int, seat: int, deck_key: bytes, perm, keys, box_seed: bytes,
                 draw_secret: bytes, held: dict | None = None) -> None:
        self.deck = deck
        self.seats = seats
        self.seat = seat
        self.deck_key = deck_key
        self.perm = tuple(perm)
        self.keys = tuple(keys)
        self.box_seed = box_seed
        self.draw_secret = draw_secret
        self.held: dict[int, tuple[str, bytes]] = dict(held or {})  # position -> (card, nonce)
        self._hand: dict[int, str] = {}

    @classmethod
    def new(cls, deck: Deck, seats: int, seat: int) -> "Party":
        """Fresh secrets from the OS: keys by rejection sampling, Fisher–Yates on `secrets.randbelow`."""
        size = len(deck)
        return cls(deck, seats, seat, random_scalar(), permutation(size, secrets.randbelow),
                   [random_scalar() for _ in range(size)], os.urandom(32), os.urandom(32))

    def to_data(self) -> dict:
        return {"deck": self.deck.id, "seats": self.seats, "seat": self.seat, "deck_key": self.deck_key,
                "perm": list(self.perm), "keys": list(self.keys), "box_seed": self.box_seed,
                "draw_secret": self.draw_secret,
                "held": [[j, card, nonce] for j, (card, nonce) in sorted(self.held.items())]}

    @classmethod
    def from_data(cls, deck: Deck, data: dict) -> "Party":
        if data["deck"] != deck.id:
            raise ValueError("these secrets belong to another deck")
        return cls(deck, data["seats"], data["seat"], data["deck_key"], data["perm"], data["keys"],
                   data["box_seed"], data["draw_secret"], {j: (c, n) for j, c, n in data["held"]})

    @property
    def draw_public(self) -> bytes:
        return x25519_public(self.draw_secret)

    def _body(self, step: str, **fields) -> dict:
        return {"deck": self.deck.id, "step": step, **fields}

    def _due(self, deal: Deal, phase: str) -> None:
        if deal.phase != phase or deal.turn != self.seat:
            raise ValueError(f"seat {self.seat} is not due to {phase} (phase {deal.phase}, turn {deal.turn})")

    def shuffle(self, deal: Deal) -> dict:
        self._due(deal, "shuffle")
        moved = [mul(p, self.deck_key) for p in deal.current]
        return self._body("shuffle", points=[moved[m] for m in self.perm], draw_key=self.draw_public)

    def lock(self, deal: Deal) -> dict:
        self._due(deal, "lock")
        unlock = invert(self.deck_key)
        points = [mul(p, scalar_mul(unlock, k)) for p, k in zip(deal.current, self.keys)]
        return self._body("lock", points=points, commits=[base_mul(k) for k in self.keys])

    def send_keys(self, deal: Deal, to: int, positions) -> dict:
        """Box this seat's keys for `positions` to seat `to` (the private draw)."""
        positions = list(positions)
        boxes = [make_box(self.box_seed, deal.draw_keys[to], deal.table_id, self.deck.id, j, self.seat, to, self.keys[j])
                 for j in positions]
        return self._body("draw", to=to, positions=positions, boxes=boxes)

    def hand(self, deal: Deal) -> dict[int, str]:
        """The cards dealt to this seat so far ({position: card}), each key checked against its commitment.

        Raises DealFault naming the sender of a wrong or unreadable key (`accuse` then proves it to
        everyone), or (seat None) when the keys are right but the position opens to no card (a broken
        pass, named by the end-of-deal audit). Asked again, it raises again.
        """
        secret = X25519PrivateKey.from_private_bytes(self.draw_secret)
        for j, to in sorted(deal.drawer.items()):
            if to != self.seat or j in self._hand or not deal.delivered(j):
                continue
            keys = [self.keys[j]]
            for sender, box in sorted(deal.boxes[j].items()):
                if not box_key_is_right(self.draw_secret, box, deal, j, sender, self.seat):
                    raise DealFault(sender, f"sent seat {self.seat} a wrong key for position {j}")
                context = box_context(deal.table_id, self.deck.id, j, sender, self.seat)
                shared = secret.exchange(X25519PublicKey.from_public_bytes(box[:32]))
                keys.append(open_box(shared, box, context))
            card = self.deck.decode(mul(deal.locks[-1][j], invert(product(keys))))
            if card is None:
                raise DealFault(None, f"position {j} dealt to seat {self.seat} opens to no card of the deck: a "
                                      "shuffle or lock pass was broken (the end-of-deal opening names the seat)")
            self._hand[j] = card
        return dict(self._hand)

    def accuse(self, deal: Deal, fault: DealFault) -> dict | None:
        """The body that proves to everyone a wrong key `hand` caught (None for faults it cannot prove)."""
        for j, to in sorted(deal.drawer.items()):
            box = deal.boxes[j].get(fault.seat) if to == self.seat else None
            if box is not None and not box_key_is_right(self.draw_secret, box, deal, j, fault.seat, self.seat):
                return self._body("accuse", position=j, sender=fault.seat, draw_secret=self.draw_secret)
        return None

    def hold(self, deal: Deal, positions=None) -> dict:
        """Commit to the cards at `positions` (default: every card opened and not yet committed)."""
        hand = self.hand(deal)
        if positions is None:
            positions = [j for j in sorted(hand) if j not in deal.commits]
        commits = []
        for j in positions:
            nonce = os.urandom(32)
            self.held[j] = (hand[j], nonce)
            commits.append(commitment(deal.table_id, self.deck.id, j, hand[j], nonce))
        return self._body("hold", positions=list(positions), commits=commits)

    def show(self, deal: Deal, position: int) -> dict:
        card, nonce = self.held[position]
        return self._body("show", position=position, card=card, nonce=nonce)

    def open_keys(self, deal: Deal, positions) -> dict:
        positions = list(positions)
        return self._body("open", positions=positions, keys=[self.keys[j] for j in positions])

    def opening(self, deal: Deal) -> dict:
        return self._body("opening", deck_key=self.deck_key, perm=list(self.perm), keys=list(self.keys),
                          box_seed=self.box_seed,
                          held=[[j, card, nonce] for j, (card, nonce) in sorted(self.held.items())])
