"""Hidden cards at a networked table: the game's hidden steps dealt by net/cards/deal.py, and payments.

`TableDeals` is a Replica's deal handler (a DealBook) for a game with hidden cards (core/game.py,
"Hidden cards"): the game's hidden Chance steps form the decks and say who draws what, and the deal
resolves those steps. It also answers the table's questions: `owing(replica)`, the seats the deal
waits for now (deadlines and defaults, FAIRNESS.md §4), `can_pay`/`pay` for a move paying hidden
cards, and `unchecked`/`checked` for the end-of-game opening of every deck.

The payment hook (core/game.py, "Hidden cards"): a game with hidden hands overrides its state's
`paid_cards(move) -> tuple[int, ...]`, the identities of the hidden cards `move` pays or discards
(empty for a move that pays none; None, the default, in a game without hidden hands), and may name
the hidden deck they come from in `PAID_DECK` (the prefix of its Chance.deck, e.g. "resource"),
since identities repeat between decks (Tricolor's ID card 1 and resource card 1). Such a game is
checked by `apply` against the seat's own view (other hands are unknown handles, so `legal_moves()`
of a peer cannot list another seat's payments); the Replica then calls `TableDeals.pay`, which
refuses a card its payer did not show from its own committed hand first (core/tricolor.py has both).
"""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.core.game import CHANCE, NOBODY, GameState, Move, Outcome
from dicetable.net.cards.points import Deck
from dicetable.net.cards.deal import Deal
from dicetable.net.cards.deal_book import DealBook
from dicetable.net.cards.party import Party
from dicetable.net.refusals import DealRefused

GAME_DECK = "game:"  # label prefix of the decks a game's own hidden steps form
DEAL_ROOM = "diceroom"  # the one table where the host may declare a deck: `dicetable deal` (net/table/deal_table.py)


@dataclass(frozen=True)
class Payment:
    deck: str  # prefix of the hidden decks' names the cards come from ("" = any deck)
    cards: tuple[int, ...]

    def __bool__(self) -> bool:
        return bool(self.cards)


def paid_cards(state: GameState, move: Move) -> Payment | None:
    """The hidden cards `move` pays in `state`; None when the game has no hidden hands to pay from."""
    cards = state.paid_cards(move)
    return None if cards is None else Payment(state.PAID_DECK, tuple(cards))


class TableDeals(DealBook):
    """A Replica's deal handler for a game with hidden cards, and the table's questions about it.

    The game's hidden Chance steps say what to deal; no "deck" declaration is needed, since every
    peer derives the deck from the step: `Deck(table, "game:" + chance.deck, [str(c) for c in
    chance.cards])`. A declared deck is refused (`_gate`), except the host's at the deal room
    (DEAL_ROOM, the table `dicetable deal` deals on), which works as in a DealBook and which nobody
    owes anything; so this handler checks any table's deals (verify uses it for every transcript).

      hidden shuffle (private == NOBODY)  every seat's shuffle and lock pass; then Outcome().
      private draw (private == seat s)    the other seats send s their keys for `positions`, then s
                                          commits (hold); s's own handler resolves with the cards it
                                          opened, every other peer (and verify) with Outcome().
      reveal (reveal == seat s)           s shows every card it committed to and had not shown before
                                          the step began, every seat opens its keys for them; when all
                                          are open, the cards (deck by deck in the order the decks
                                          were formed, by position) resolve the step for every peer.

    Paying a hidden card is a public reveal before the move that pays it: the payer sends
    `show_bodies(replica, payment)`, every seat opens its keys (`next_bodies`), and the replica's
    move check calls `pay(seat, payment)`, which refuses a card its payer did not show from its own
    hand (or paid before). Shown cards are thereby no longer hidden, so a later reveal step leaves
    them out.

    `seat` and `secrets` (from `to_data`) make this peer's handler; without them it only checks (the
    host's gate, verify). `next_bodies(replica)` says what this seat sends now, including the
    end-of-game opening of every deck once the game is over; `check()` then replays every deal.
    Limits: a reveal step of a seat that holds no hidden card has nothing to send (a game should not
    ask for one).
    """

    def __init__(self, seat: int | None = None, secrets: list[dict] | None = None) -> None:
        super().__init__()
        self.seat = seat
        self.parties: dict[bytes, Party] = {}
        self._secrets = {data["deck"]: data for data in secrets or []}  # until each deck forms again
        self.paid: set[tuple[bytes, int]] = set()  # (deck, position) of cards paid by moves
        self._before_reveal: dict[int, frozenset] = {}  # holder -> positions it had shown before

    def held(self, seat: int) -> list[tuple[bytes, int]]:
        """(deck id, position) of every card `seat` committed to, deck by deck as formed, by position."""
        return [(d, j) for d in self.formed for j in sorted(self.deals[d].commits) if self.deals[d].drawer[j] == seat]

    def to_data(self) -> list[dict]:
        """This seat's secrets for every deck (msgpack-able), for `TableDeals(seat, secrets=...)`."""
        return [party.to_data() for party in self.parties.values()]

    # -- the deck a step deals from ------------------------------------------------------------
    def _hidden(self, replica):
        state = replica.state
        if state is None or state.actor != CHANCE:
            return None
        chance = state.chance()
        return chance if chance.hidden else None

    def _latest(self, label: str) -> Deal | None:
        same = [d for d in self.formed if self.deals[d].deck.label == label]
        return self.deals[same[-1]] if same else None

    def _deal_for(self, replica, chance) -> Deal | None:
        """The Deal a hidden step works on, formed when a hidden shuffle begins."""
        label = GAME_DECK + chance.deck
        same = [d for d in self.formed if self.deals[d].deck.label == label]
        if chance.private == NOBODY:
            if same and self.deals[same[-1]].phase in ("shuffle", "lock"):
                return self.deals[same[-1]]  # the shuffle under way
            deck = Deck(replica.table, label, tuple(str(card) for card in chance.cards), number=len(same))
            self.deals[deck.id] = Deal(deck, replica.seat_count)
            self.formed.append(deck.id)
            if self.seat is not None:
                data = self._secrets.pop(deck.id, None)
                self.parties[deck.id] = (Party.from_data(deck, data) if data
                                         else Party.new(deck, replica.seat_count, self.seat))
            return self.deals[deck.id]
        return self.deals[same[-1]] if same and chance.private is not None else None

    # -- the Replica's deal_handler interface --------------------------------------------------
    def accept(self, replica, envelope) -> Outcome | None:
        """Replica hook: check one "deal" record (DealRefused names its author); the Outcome of the
        hidden step it completes, else None."""
        if self.table_id is None:
            self.table_id, self.seats = replica.table, replica.seat_count
        chance = self._hidden(replica)
        seat, body = envelope.seat, envelope.body
        self._gate(replica, chance, seat, body)  # cheap, before any deck forms or any point is checked
        due = self._deal_for(replica, chance) if chance is not None else None  # a shuffle forms its deck
        holder = chance.reveal if chance is not None else None
        if holder is not None and holder not in self._before_reveal:
            self._before_reveal[holder] = frozenset((d, j) for d, j in self.held(holder) if j in self.deals[d].shown)
        if chance is not None and chance.private is not None and chance.private != NOBODY:
            self._check_draw(replica, chance, seat, body)
        deal = self.apply(seat, body)
        if chance is None:
            return None
        if chance.private == NOBODY:
            done = deal is due and body["step"] == "lock" and deal.phase not in ("shuffle", "lock")
            return Outcome() if done else None
        if chance.private is not None:
            if body["step"] == "hold" and all(j in deal.commits for j in chance.positions):
                if self.seat == chance.private:
                    hand = self.parties[deal.deck.id].hand(deal)
                    return Outcome(tuple(int(hand[j]) for j in chance.positions))
                return Outcome()
            return None
        if holder is not None:
            return self._revealed(holder)
        return None

    def _gate(self, replica, chance, seat: int, body) -> None:
        """Refuse a deal message no step of the game asks of `seat` now (FAIRNESS.md §3: "a deal no
        game step asked for"), before any group operation; the Deal checks the rest of it.

        Only a game's hidden steps open decks; a declared deck is refused except the host's in the
        deal room (DEAL_ROOM, under DealBook's rules), where no step waits for it (see `owing`).
        While the game goes on: a shuffle or lock pass only when a hidden shuffle is due (a new
        deck's first pass is seat 0's), keys and commitments only in a private draw (`_check_draw`),
        keys opened only for a shown card, openings only once the game is over. A seat could
        otherwise open a deal that the game never asks the others to answer, then claim them in default.
        """
        if not isinstance(body, dict):
            raise DealRefused(seat, "sent a deal message that is not a map")
        step = body.get("step")
        if step == "deck":
            if replica.game is None or replica.game.name != DEAL_ROOM or str(body.get("label")).startswith(GAME_DECK):
                raise DealRefused(seat, "declared a deck: a game's decks come from its own steps")
            return
        deck = body.get("deck")
        deal = self.deals.get(deck) if type(deck) is bytes else None
        if replica.phase != "playing" or (deal is not None and deck not in self.formed):
            return  # the end-of-game openings (and frames under way when it ended); a deal-room deck
        if step == "opening":
            raise DealRefused(seat, "sent its end-of-game opening while the game goes on")
        if step in ("shuffle", "lock"):
            if chance is None or chance.private != NOBODY:
                raise DealRefused(seat, f"sent a {step} pass when the game asks for no shuffle")
            under_way = self._latest(GAME_DECK + chance.deck)
            if (under_way is None or under_way.phase not in ("shuffle", "lock")) and (step, seat) != ("shuffle", 0):
                raise DealRefused(seat, f"sent a {step} pass out of turn (due: shuffle by seat 0)")
        elif step in ("draw", "hold"):
            if chance is None or chance.private in (None, NOBODY):
                raise DealRefused(seat, f"sent a {step} message when the game asks for no private draw")
        elif step == "open":
            positions = body.get("positions")
            if deal is None or type(positions) is not list or not all(type(j) is int and j in deal.shown for j in positions):
                raise DealRefused(seat, "opened keys for a card no holder has shown")

    def _revealed(self, holder: int) -> Outcome | None:
        """The Outcome of a reveal step once every card it shows is open to all, else None."""
        before = self._before_reveal[holder]
        cards = [self.deals[d].revealed.get(j) for d, j in self.held(holder) if (d, j) not in before]
        if not cards or None in cards or any(j not in self.deals[d].revealed for d, j in before):
            return None
        del self._before_reveal[holder]
        return Outcome(tuple(int(card) for card in cards))

    def _check_draw(self, replica, chance, seat: int, body) -> None:
        """During a private draw, only its keys to its drawer and the drawer's commitment may come."""
        deal = self._deal_for(replica, chance)
        if not isinstance(body, dict) or deal is None or body.get("deck") != deal.deck.id:
            raise DealRefused(seat, f"sent a deal message that is not part of {chance.label}")
        step = body.get("step")
        positions = body.get("positions")
        if step == "draw" and body.get("to") == chance.private and isinstance(positions, list) \
                and set(positions) <= set(chance.positions):
            return
        if step == "hold" and seat == chance.private and positions == list(chance.positions):
            return
        raise DealRefused(seat, f"sent a {step!r:.20} message that is not part of {chance.label}")

    # -- who the deal waits for ----------------------------------------------------------------
    def owing(self, replica) -> tuple[int, ...]:
        """Seats that owe the deal a message now: their part of the hidden step due, keys for a shown
        card, or (once the game is over) their end-of-game opening of every deck."""
        seats = {s for d in self.formed for s in self.deals[d].waiting_for()}  # a deal-room deck is owed nothing
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
        return tuple(sorted(s for s in seats if s not in replica.out))

    # -- paying hidden cards -------------------------------------------------------------------
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

    def pay(self, seat: int, payment: Payment) -> None:
        """The move check: DealRefused naming `seat` unless every paid card was shown from its hand.

        Nothing is marked when it refuses; else the cards are marked paid.
        """
        spots = self._spots(seat, payment)
        if spots is None:
            cards = " ".join(map(str, payment.cards))
            raise DealRefused(seat, f"paid card(s) {cards} without showing them from its own hand first")
        self.paid.update(spots)

    # -- what this seat sends ------------------------------------------------------------------
    def show_bodies(self, replica, payment: Payment) -> list[dict]:
        """This seat's "show" bodies for the hidden cards a move of its is about to pay."""
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

    def next_bodies(self, replica) -> list[dict]:
        """This seat's bodies now: its part of the hidden step due, or the end-of-game openings."""
        me = self.seat
        if me is None:
            return []
        if replica.phase == "over":
            return [self.parties[d].opening(self.deals[d]) for d in self.formed
                    if me not in self.deals[d].openings and self.deals[d].phase not in ("shuffle", "lock")]
        chance = self._hidden(replica)
        if chance is None or chance.reveal is not None:
            return self._reveal_bodies(chance.reveal if chance is not None else None)
        deal = self._deal_for(replica, chance)
        if chance.private == NOBODY:
            party = self.parties[deal.deck.id]
            return [getattr(party, deal.phase)(deal)] if deal.turn == me else []
        if chance.private is not None:
            party = self.parties[deal.deck.id]
            positions = list(chance.positions)
            if me != chance.private:
                sent = all(me in deal.boxes.get(j, {}) for j in positions)
                return [] if sent else [party.send_keys(deal, chance.private, positions)]
            if all(deal.delivered(j) for j in positions) and positions[0] not in deal.commits:
                return [party.hold(deal, positions)]
        return []

    def _reveal_bodies(self, holder: int | None) -> list[dict]:
        """During a reveal step the holder's shows; at any time my keys for every card shown."""
        me = self.seat
        if holder == me:
            shows = [self.parties[d].show(self.deals[d], j) for d, j in self.held(me) if j not in self.deals[d].shown]
            if shows:
                return shows
        bodies = []
        for d in self.formed:
            deal = self.deals[d]
            due = [j for j in sorted(deal.shown) if me not in deal.opened.get(j, {})]
            if due:
                bodies.append(self.parties[d].open_keys(deal, due))
        return bodies

    # -- the end-of-game opening ---------------------------------------------------------------
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
