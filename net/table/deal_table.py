"""The dealer-less deal (net/cards/deal.py) on its own, no game needed: what `dicetable deal` runs.

Tricolor Line's 9 ID cards (3 per colour; rules: Components, Set-up 4) are dealt one to each of N
seats over the network. `SeatDealer` is one seat's side of that deal, `DealingSeat` the seat that runs it;
`DealHost` and `DealPeer` are the host's and a joiner's sessions around such a seat. The table is a dice room (core/diceroom.py) nobody rolls
in: its signed, ordered log carries the "deal" records, each checked on arrival by every peer's
Replica through a DealBook. Each seat emits its own card ("card"); once every seat has opened its
keys, every peer replays and checks the whole deal and emits "verified" with the assignment, and
the host closes the room, which ends every session. A fault emits "fault" naming the seat (a wrong
key sent to a seat is proven to every peer at once by that seat's "accuse" record).
Deviation: deal steps have no deadline yet (the replica waits for the room's move, not for the
deal), so a seat that walks away mid-deal stalls the table.
"""

from __future__ import annotations

import time

from dicetable.core.game import Move
from dicetable.net.log import wire
from dicetable.net.cards.points import Deck
from dicetable.net.cards.deal import DealResult
from dicetable.net.cards.deal_book import DealBook, declaration
from dicetable.net.cards.party import Party
from dicetable.net.table.events import CardDealt, DealVerified, Fault
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.seat import Seat
from dicetable.net.refusals import DealError, DealFault

COLOURS = ("red", "yellow", "blue")
ID_CARDS = tuple(f"{colour}#{n}" for colour in COLOURS for n in (1, 2, 3))


def colour(card: str) -> str:
    return card.partition("#")[0]


class SeatDealer:
    """One seat's side of the ID deal: its next body, from the public DealBook and its own secrets.

    Position s of the shuffled deck goes to seat s; the deck's other positions stay out of the game.
    """

    def __init__(self, seat: int, seats: int, table_id: bytes, secrets: dict | None = None) -> None:
        self.deck = Deck(table_id, "id", ID_CARDS)
        self.seat, self.seats = seat, seats
        self.party = Party.from_data(self.deck, secrets) if secrets else None
        self.card: str | None = None
        self.result: DealResult | None = None

    def next_bodies(self, book: DealBook) -> list[dict]:
        """The bodies this seat sends now (none while it waits); DealFault when it catches cheating."""
        deal = book.deals.get(self.deck.id)  # the id binds the exact card list: no other deck matches
        if deal is None:
            return [declaration(self.deck)] if self.seat == 0 else []
        if self.party is None:
            self.party = Party.new(self.deck, self.seats, self.seat)
        me, phase = self.seat, deal.phase
        if phase in ("shuffle", "lock"):
            return [getattr(self.party, phase)(deal)] if deal.turn == me else []
        if phase == "play":
            draws = [self.party.send_keys(deal, to, [to]) for to in range(self.seats)
                     if to != me and me not in deal.boxes.get(to, {})]
            if draws:
                return draws  # all at once: the seats' keys travel in parallel
            if deal.delivered(me) and me not in deal.commits:
                self.card = self.party.hand(deal)[me]
                return [self.party.hold(deal, [me])]
            if all(j in deal.commits for j in range(self.seats)):
                return [self.party.opening(deal)]
            return []
        if phase == "closing" and me not in deal.openings:
            return [self.party.opening(deal)]
        return []

    def accusation(self, book: DealBook, fault: DealFault) -> dict | None:
        """The "accuse" body proving a wrong key this seat was sent, if it can prove it."""
        deal = book.deals.get(self.deck.id)
        if fault.seat is None or deal is None or self.party is None:
            return None
        return self.party.accuse(deal, fault)

    def check(self, book: DealBook) -> DealResult | None:
        """Replay the deal once every seat has opened it (DealFault names the seat at fault)."""
        deal = book.deals.get(self.deck.id)
        if self.result is None and deal is not None:
            if deal.faults:
                raise deal.faults[0]
            if deal.complete:
                self.result = deal.audit()
        return self.result

    def assignment(self) -> str:
        return ", ".join(f"seat {s} {colour(self.result.cards[s])}" for s in range(self.seats))


class DealingSeat(Seat):
    """A seat that deals the ID cards: what host and joiner add to their seat for the deal."""

    dealer: SeatDealer | None = None
    failure: DealError | None = None  # the fault that ended this seat's deal

    def _dealer(self) -> SeatDealer | None:
        if self.dealer is None and self.seat is not None and self.replica.phase == "playing":
            self.dealer = SeatDealer(self.seat, self.replica.seat_count, self.replica.table)
        return self.dealer

    def seat_data(self) -> dict:
        data = super().seat_data()
        if self.dealer is not None and self.dealer.party is not None:
            data["deal"] = self.dealer.party.to_data()  # FAIRNESS.md §6: secrets beside the transcript, 0600
        return data

    def applied(self, record) -> None:
        super().applied(record)
        if record.kind == "deal" and self._dealer() is not None and self.failure is None:
            try:
                verified = self.dealer.result is None and self.dealer.check(self.replica.deal_handler)
            except DealFault as fault:
                self._fail(fault)
                self.stopped = True  # found in the log: everyone else sees it too
                return
            if verified:
                self.emit(DealVerified(self.dealer.assignment()))

    def act(self) -> None:
        super().act()
        if self.failure is not None:
            # Leave once my accusation is in the log (or has had time to get there).
            self.stopped = self.stopped or not self.unordered or time.monotonic() > self._leave_by
            return
        if self.replica.phase != "playing" or self.unordered or self.finished:
            return
        dealer = self._dealer()
        if dealer is None:
            return
        if dealer.result is not None:
            if self.seat == 0:
                self.author("move", wire.move_body(Move("close")))
            return
        had_party, had_card = dealer.party is not None, dealer.card
        try:
            bodies = dealer.next_bodies(self.replica.deal_handler)
        except DealFault as fault:
            self._fail(fault)
            proof = dealer.accusation(self.replica.deal_handler, fault)
            if proof is not None:
                self.unordered.clear()  # only the proof matters now
                self.author("deal", proof)  # so every peer names the seat now, not at the end
            else:
                self.stopped = True
            return
        if dealer.card != had_card:
            self.emit(CardDealt(colour(dealer.card)))
        if not had_party or any(body["step"] == "hold" for body in bodies):
            self.transcript.save_secrets()  # new keys, or the nonce of the commitment
        for body in bodies:
            self.author("deal", body)

    def _fail(self, fault: DealError) -> None:
        self.failure = fault
        self.emit(Fault(fault.seat, fault.said))
        self._leave_by = time.monotonic() + 3.0


class DealHost(HostSession):
    seat_type = DealingSeat

    def __init__(self, profile, seats: int, **kwargs) -> None:
        super().__init__(profile, "diceroom", seats, {"rolls": 0}, **kwargs)
        self.replica.deal_handler = DealBook()


class DealPeer(PeerSession):
    seat_type = DealingSeat

    def __init__(self, profile, invite: str, **kwargs) -> None:
        super().__init__(profile, invite, **kwargs)
        self.replica.deal_handler = DealBook()
