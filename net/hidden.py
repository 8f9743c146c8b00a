"""Hidden cards at a networked table: which hidden cards a move pays, and what the deal still owes.

The generic hook (core/game.py, "Hidden cards"): a game with hidden hands gives its state a method
`paid_cards(move) -> tuple[int, ...]`, the identities of the hidden cards `move` pays or discards
(empty for a move that pays none), and may name the hidden deck they come from in `PAID_DECK` (the
prefix of its Chance.deck, e.g. "resource"), since identities repeat between decks (Tricolor's ID
card 1 and resource card 1). A game that has it is checked by `apply` against the seat's own
view (other hands are unknown handles, so `legal_moves()` of a peer cannot list another seat's
payments); the Replica then calls `TableDeals.pay`, which refuses a card its payer did not show
from its own committed hand first (core/tricolor.py has both).

`TableDeals` is net/deal.py's `GameDeals` plus what the table needs around it: `owing(replica)`,
the seats the deal waits for now (deadlines and defaults, FAIRNESS.md §4), `can_pay`, and
`settled`/`unchecked` for the end-of-game opening of every deck.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dicetable.core.game import CHANCE, NOBODY, Move
from dicetable.net.cards import DealRefused
from dicetable.net.deal import GAME_DECK, GameDeals


@dataclass(frozen=True)
class Payment:
    deck: str  # prefix of the hidden decks' names the cards come from ("" = any deck)
    cards: tuple[int, ...]

    def __bool__(self) -> bool:
        return bool(self.cards)

    def __iter__(self):  # a plain GameDeals.pay(seat, cards) takes it as its cards
        return iter(self.cards)


def paid_cards(state: Any, move: Move) -> Payment | None:
    """The hidden cards `move` pays in `state`; None when the game has no hidden hands to pay from."""
    method = getattr(state, "paid_cards", None)
    if method is None:
        return None
    return Payment(getattr(state, "PAID_DECK", ""), tuple(method(move)))


class TableDeals(GameDeals):
    """GameDeals with the table's questions: who owes the deal a message, can a payment go ahead."""

    def _latest(self, label: str):
        same = [d for d in self.formed if self.deals[d].deck.label == label]
        return self.deals[same[-1]] if same else None

    def owing(self, replica) -> tuple[int, ...]:
        """Seats that owe the deal a message now: their part of the hidden step due, keys for a shown
        card, or (once the game is over) their end-of-game opening of every deck."""
        seats = set(self.waiting_for())
        state = replica.state
        if replica.phase == "playing" and state is not None and state.actor == CHANCE and state.chance().hidden:
            chance = state.chance()
            deal = self._latest(GAME_DECK + chance.deck)
            if chance.private == NOBODY:
                if deal is None or deal.phase not in ("shuffle", "lock"):
                    seats.add(0)  # the shuffle pass begins with seat 0
            elif chance.private is not None and deal is not None:
                positions = chance.positions
                for j in positions:
                    seats.update(s for s in range(replica.seat_count)
                                 if s != chance.private and s not in deal.boxes.get(j, {}))
                if all(deal.delivered(j) for j in positions) and positions[0] not in deal.commits:
                    seats.add(chance.private)
            elif chance.reveal is not None:
                holder = chance.reveal
                if any(j not in self.deals[d].shown for d, j in self.held(holder)):
                    seats.add(holder)
        if replica.phase == "over":
            for d in self.formed:
                deal = self.deals[d]
                if deal.phase not in ("shuffle", "lock"):
                    seats.update(s for s in range(replica.seat_count) if s not in deal.openings)
        out = getattr(replica, "out", frozenset())
        return tuple(sorted(s for s in seats if s not in out))

    def _from(self, deck: str):
        label = GAME_DECK + deck
        return lambda d: self.deals[d].deck.label.startswith(label)

    def _spots(self, seat: int, payment: Payment) -> list | None:
        """(deck, position) of each paid card, shown from `seat`'s hand and open to all; None if not."""
        spots: list = []
        right = self._from(payment.deck)
        for card in payment.cards:
            spot = next(((d, j) for d, j in self.held(seat) if right(d) and self.deals[d].revealed.get(j) == str(card)
                         and (d, j) not in self.paid and (d, j) not in spots), None)
            if spot is None:
                return None
            spots.append(spot)
        return spots

    def can_pay(self, seat: int, payment: Payment) -> bool:
        return self._spots(seat, payment) is not None

    def pay(self, seat: int, payment) -> None:
        """The move check: DealRefused naming `seat` unless every paid card was shown from its hand."""
        if not isinstance(payment, Payment):
            payment = Payment("", tuple(payment))
        spots = self._spots(seat, payment)
        if spots is None:
            cards = " ".join(map(str, payment.cards))
            raise DealRefused(seat, f"paid card(s) {cards} without showing them from its own hand first")
        self.paid.update(spots)

    def show_bodies(self, replica, payment) -> list[dict]:
        """This seat's "show" bodies for the hidden cards a move of its is about to pay."""
        if not isinstance(payment, Payment):
            payment = Payment("", tuple(payment))
        right = self._from(payment.deck)
        bodies, chosen = [], set()
        for card in payment.cards:
            spot = next(((d, j) for d in self.formed if right(d) for j, (name, _) in sorted(self.parties[d].held.items())
                         if name == str(card) and (d, j) not in self.paid and (d, j) not in chosen), None)
            if spot is None:
                raise ValueError(f"seat {self.seat} holds no hidden card {card}")
            chosen.add(spot)
            if spot[1] not in self.deals[spot[0]].shown:  # shown already (e.g. before a crash): keys follow
                bodies.append(self.parties[spot[0]].show(self.deals[spot[0]], spot[1]))
        return bodies

    def unchecked(self) -> list[tuple[str, tuple[int, ...]]]:
        """(deck label, seats missing from its opening) for every formed deck not fully opened."""
        out = []
        for d in self.formed:
            deal = self.deals[d]
            if not deal.complete:
                missing = tuple(s for s in range(deal.seats) if s not in deal.openings)
                out.append((deal.deck.label, missing))
        return out

    @property
    def checked(self) -> int:
        return sum(1 for deal in self.deals.values() if deal.complete)
