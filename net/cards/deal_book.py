"""Every deck dealt at one table (net/cards/deal.py): the "deal" records of a log, checked, and the
"deck" body that declares a deck."""

from __future__ import annotations

from dicetable.net.cards.deal import Deal, DealResult, strict_list
from dicetable.net.cards.points import Deck, deck_id
from dicetable.net.refusals import DealRefused

MAX_DECLARED = 16  # decks one DealBook takes by declaration (the deal demo declares one)
MAX_CARDS = 1024  # cards in a declared deck


class DealBook:
    """Every deck dealt at one table, keyed by deck id: the "deal" records of a log, checked.

    A deck enters the book with a "deck" body {"deck", "step": "deck", "label", "number", "cards"}
    from the host (seat 0, at most MAX_DECLARED decks); the id must be the one `Deck` derives, so
    the cards are bound to the table. Every
    other body goes to its deck's `Deal`. As a Replica's `deal_handler` (net/log/replica.py) its
    DealRefused reaches the replica as it is; `check()` after the log replays every opened deal, so
    `verify` needs no secrets and no game to check every deal of a transcript.

    The Replica asks every deal handler `accept`, `owing`, `formed` and `pay`; here they answer for
    declared decks only (the deal room), which no game step forms, waits for or pays from.
    net/cards/table_deals.py's `TableDeals` answers for a game's own hidden cards.
    """

    def __init__(self, table_id: bytes | None = None, seats: int | None = None) -> None:
        self.table_id = table_id
        self.seats = seats
        self.deals: dict[bytes, Deal] = {}
        self.formed: list[bytes] = []  # decks a game's hidden steps formed, in order (TableDeals); never a declared one

    def apply(self, seat: int, body) -> Deal:
        """Check and apply one body (DealRefused leaves the book unchanged); returns its deck's Deal."""
        if self.table_id is None or self.seats is None:
            raise DealRefused(seat, "a deal message before the table is known")
        if not isinstance(body, dict):
            raise DealRefused(seat, "sent a deal message that is not a map")
        if body.get("step") == "deck":
            return self._declare(seat, body)
        deal = self.deals.get(body.get("deck")) if type(body.get("deck")) is bytes else None
        if deal is None:
            raise DealRefused(seat, "sent a deal message for a deck that was never declared")
        deal.accept(seat, body)
        return deal

    def _declare(self, seat: int, body: dict) -> Deal:
        # Every check before the deck's points are made (the one costly step), so a flood is cheap to refuse.
        if seat != 0:
            raise DealRefused(seat, "declared a deck: only the host (seat 0) opens a deal")
        if len(self.deals) >= MAX_DECLARED:
            raise DealRefused(seat, f"declared a deck after {MAX_DECLARED} decks: no more decks at this table")
        if set(body) != {"deck", "step", "label", "number", "cards"}:
            raise DealRefused(seat, f"sent a deck declaration with fields {sorted(map(str, body))}")
        label, number, cards = body["label"], body["number"], body["cards"]
        if not isinstance(label, str) or type(number) is not int or not 0 <= number < 2**32:
            raise DealRefused(seat, "declared a deck with a malformed label or number")
        cards = strict_list(cards, seat, "cards")
        if not 1 <= len(cards) <= MAX_CARDS or not all(type(card) is str and len(card.encode()) <= 255 for card in cards):
            raise DealRefused(seat, f"declared a deck that is not a list of 1 to {MAX_CARDS} card names of at most 255 bytes")
        if self.seats < 2:
            raise DealRefused(seat, "declared a deck at a table of one seat: a deal needs two")
        if deck_id(self.table_id, label, number, cards) != body["deck"]:
            raise DealRefused(seat, "declared a deck whose id does not match its table, label, number and cards")
        if body["deck"] in self.deals:
            raise DealRefused(seat, f"declared deck {label!r} number {number} twice")
        try:
            deck = Deck(self.table_id, label, tuple(cards), number)
        except ValueError as error:
            raise DealRefused(seat, f"declared a malformed deck: {error}") from None
        deal = Deal(deck, self.seats)
        self.deals[deck.id] = deal
        return deal

    def waiting_for(self) -> tuple[int, ...]:
        """Seats that owe a message to some deck's deal (for deadlines and defaults, FAIRNESS.md §4)."""
        return tuple(sorted({s for deal in self.deals.values() for s in deal.waiting_for()}))

    def check(self) -> dict[bytes, DealResult]:
        """Replay every fully opened deal: the first DealFault (live ones first), or the results."""
        for deal in self.deals.values():
            if deal.faults:
                raise deal.faults[0]
        return {deck: deal.audit() for deck, deal in self.deals.items() if deal.complete}

    # -- the Replica's deal_handler interface --------------------------------------------------
    def accept(self, replica, envelope) -> None:
        """Replica hook: check one "deal" record (DealRefused names its author); it resolves no game step."""
        if self.table_id is None:
            self.table_id, self.seats = replica.table, replica.seat_count
        self.apply(envelope.seat, envelope.body)

    def owing(self, replica) -> tuple[int, ...]:
        """Seats the table waits for in the deal (deadlines and defaults, FAIRNESS.md §4): a declared
        deck is dealt beside the game, so nobody is in default over it."""
        return ()

    def pay(self, seat: int, payment) -> None:
        """The move check of a move paying hidden cards (a net/cards/table_deals.py Payment): refused,
        since no declared deck is a hand."""
        raise DealRefused(seat, "paid hidden cards at a table whose game deals none")


def declaration(deck: Deck) -> dict:
    """The "deck" body that enters `deck` in every peer's DealBook."""
    return {"deck": deck.id, "step": "deck", "label": deck.label, "number": deck.number, "cards": list(deck.cards)}
