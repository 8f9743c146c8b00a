"""Tricolor Line, as ../shared/rules/tricolor-line.md: 2-8 builders with secret colours.

Positions are written `x,y` (the Start Tile is `0,0`, y grows southward), piles 1-3, rotations
0-3 (quarter turns clockwise), cards `kind:number` (`R:3`, `R2:17`, `W:61`). Moves, in the rules'
words: `draw 2`, `place 2 1,0 3` (pile, position, rotation: setup and route planning), `construct
1,0 R:3 R2:17`, `modify 1,0 Y:22 B:41`, `attack 2 R:3 Y:22` (target seat and the whole hand), `end`
(no more actions), `discard R:3 ...` (discard phase and Embargo), and the events' choices
`demolish 1,0`, `quake 1,0`, `survey 2 1,1 0`, `storm 1,0`.

Hidden information is modelled honestly (core/game.py, "Hidden cards"): ID cards and resource cards
are dealt by hidden shuffles and private draws, so a state may hold unknown handles (UNKNOWN) for
cards it does not know; `view(seat)` is such a state for one seat. A local runner may use the full
state, whose `order` / `id_order` hold the hidden deck orders. Legality is decided by `apply`, which
also accepts another seat's move naming cards this state holds only as unknown handles;
`legal_moves()` lists one move per distinct effect (the lowest-numbered card of each kind, payments
with no card to spare).

Public random steps are ordinary chances. A pile's next top is drawn when it is needed, uniformly
among the tiles it may be: no peer knows a pile's order ahead of time. Tiles seen on a pile's top
and shuffled back in at setup are tracked per pile (`inside`); all other unseen tiles are alike to
everyone, so the next top is one of the pile's known tiles or a uniform unseen tile.

Decided here, where the rules document leaves it open: Embargo asks the other seats in turn order
from the player's left; the option `turn_limit` (400 by default: Special cases, the safety end) is
scored like the stalemate end, with no end bonus; when no pile's top tile can go anywhere (End Tiles
on every top, nothing on the table but the Start Tile) route planning is skipped, as with empty
piles, and a Survey cannot be carried out.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from itertools import combinations_with_replacement
from typing import Any, ClassVar, Mapping

from dicetable.core.game import (
    CHANCE,
    NOBODY,
    BadOutcome,
    Chance,
    GameInfo,
    GameState,
    IllegalMove,
    Move,
    Option,
    Outcome,
    Result,
    outcome_values,
)
from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.core.tricolor_routes import (
    Placed,
    best_pair,
    best_single,
    board_grid,
    colour_counts,
    neighbour,
    winner_colours,
)
from dicetable.core.tricolor_tiles import (
    CARDS,
    COLOUR_NAMES,
    COLOURS,
    DEAD,
    END,
    EVENT_COUNTS,
    EVENT_NAMES,
    EVENT_TITLES,
    HAND_LIMIT,
    ID_CARDS,
    PILE_TILES,
    PILES,
    ROAD,
    START,
    START_TILE,
    STEP,
    TILES,
    UNKNOWN,
    card_from_token,
    distinct_rotations,
    units_for,
)

PILE_SIZE = len(PILE_TILES) // PILES

# Phases.
DEALING, SETUP, DRAW, PLAN, ACT, EVENT, EMBARGO, DISCARD, SCORING, OVER = (
    "dealing", "setup", "draw", "plan", "act", "event", "embargo", "discard", "scoring", "over",
)
START_SIDES = frozenset(neighbour((0, 0), e) for e in range(4))  # where an End Tile never goes
EVENT_MOVES = {"demolition": "demolish", "earthquake": "quake", "survey": "survey", "storm": "storm"}


def _cells_for(tile: int, cells: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """Of free `cells`, where `tile` may go: an End Tile never next to the Start Tile (Route planning)."""
    return tuple(c for c in cells if c not in START_SIDES) if TILES[tile].kind == END else cells


@lru_cache(maxsize=4096)  # every candidate placement of a turn is checked against the same board
def _open_cells(board: tuple, next_to_start: bool) -> tuple[tuple[int, int], ...]:
    """The free squares next to a tile (or to the Start Tile), whatever is placed there."""
    grid = board_grid(board)  # read only
    anchors = [(0, 0)] if next_to_start else grid
    cells = {(x + dx, y + dy) for x, y in anchors for dx, dy in STEP}
    return tuple(sorted(c for c in cells if c not in grid))


def pos_text(pos: tuple[int, int]) -> str:
    return f"{pos[0]},{pos[1]}"


def parse_pos(text: object) -> tuple[int, int]:
    if isinstance(text, str):
        x, sep, y = text.partition(",")
        try:
            if sep:
                return int(x), int(y)
        except ValueError:
            pass
    raise IllegalMove(f"{text!r} is not a position (write x,y, e.g. 1,-2)")


def card_kind(card: int) -> str:
    return "?" if card == UNKNOWN else CARDS[card].kind


def _cards(tokens) -> tuple[int, ...]:
    try:
        cards = tuple(card_from_token(t) for t in tokens)
    except ValueError as error:
        raise IllegalMove(str(error)) from None
    if len(set(cards)) != len(cards):
        raise IllegalMove("the same card is named twice")
    return cards


@dataclass(frozen=True)  # not slots: `replace` copies the instance dict in one step
class TricolorState(GameState):
    options: tuple[tuple[str, Any], ...]
    seats: int
    phase: str = DEALING
    turn: int = -1  # whose turn it is
    seat: int = -1  # who acts when no chance step is due (the turn's player, or an Embargo target)
    pending: tuple[tuple, ...] = ()  # chance steps due, in order
    board: tuple[tuple[int, int, int, int, bool, int], ...] = ((0, 0, START_TILE, 0, True, 0),)
    placed: int = 1  # the next placement number
    tops: tuple[int, ...] = (-1,) * PILES  # the visible top tile of each pile, -1 when none
    sizes: tuple[int, ...] = (PILE_SIZE,) * PILES  # tiles in each pile, top included
    inside: tuple[tuple[int, ...], ...] = ((),) * PILES  # tiles seen on top, then shuffled back in
    unseen: tuple[int, ...] = PILE_TILES  # tiles nobody has seen, somewhere in the piles
    events: tuple[int, ...] = EVENT_COUNTS  # event cards left in the deck, per kind
    event: str = ""  # the event card being played
    played: str = ""  # the last event played, for display ("storm", "storm: fallback")
    ids: tuple[int, ...] = ()  # ID card per seat (UNKNOWN when this state does not know it)
    id_order: tuple[int, ...] = ()  # the hidden ID deck order (full state only)
    hands: tuple[tuple[int, ...], ...] = ()  # resource cards per seat (UNKNOWN handles allowed)
    deck: int = 0  # resource deck number: 1 after the first shuffle, +1 per reshuffle
    deck_left: int = 0  # cards left in the resource deck
    drawn: int = 0  # positions already drawn from the resource deck
    order: tuple[int, ...] = ()  # the hidden resource deck order (full state only)
    discards: tuple[int, ...] = ()  # the face-up discard pile
    # Units of each colour (COLOURS order) each seat has discarded by choice (Modify, Discard,
    # Embargo): public, as every discard is face up, and the main clue to a seat's secret colour.
    shed: tuple[tuple[int, int, int], ...] = ()
    skips: tuple[bool, ...] = ()  # seats that skip their next turn (Attack)
    last_target: int = -1  # the previous attack's target, which cannot be targeted now
    first: int = -1
    setup_left: int = 0  # setup placements still due
    built: bool = False  # a tile was constructed during this turn
    idle: int = 0  # turns in a row ended with the piles empty and nothing constructed
    turns: int = 0
    embargo: tuple[int, ...] = ()  # seats still to discard for an Embargo
    shown: tuple[bool, ...] = ()  # seats whose cards are revealed (scoring)
    ender: int = -1  # the seat whose turn ended the game (end bonus)
    routes: tuple[tuple[tuple[int, int], ...], ...] = ()  # the scored routes
    reason: str = ""
    result: Result | None = None

    PAID_DECK: ClassVar[str] = "resource"  # the hidden decks that paid cards come from (net/cards/table_deals.py)

    # -- the fixed questions -------------------------------------------------------------------
    @property
    def actor(self) -> int | None:
        if self.result is not None:
            return None
        return CHANCE if self.pending else self.seat

    @property
    def option(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def grid(self) -> dict[tuple[int, int], Placed]:
        return dict(board_grid(self.board))  # a copy: callers may change their grid

    def chance(self) -> Chance | None:
        if not self.pending or self.result is not None:
            return None
        task = self.pending[0]
        kind = task[0]
        if kind == "top":
            pile = task[1]
            ranges = self._top_ranges(pile)
            return Chance(f"turn up the top tile of pile {pile + 1}", ranges=ranges)
        if kind == "idshuffle":
            cards = tuple(range(len(ID_CARDS)))
            return Chance("shuffle the ID cards", shuffle=len(cards), private=NOBODY, deck="id", cards=cards)
        if kind == "iddraw":
            return Chance(phrase(Seat(task[1]), " draws an ID card"), private=task[1], deck="id", positions=(task[1],))
        if kind == "shuffle":
            cards = self._next_deck()
            return Chance(
                "shuffle the resource cards" if self.deck == 0 else "shuffle the discard pile into a new resource deck",
                shuffle=len(cards), private=NOBODY, deck=f"resource.{self.deck + 1}", cards=cards,
            )
        if kind == "draw":
            seat, count = task[1], task[2]
            return Chance(
                phrase(Seat(seat), f" draws {count} resource card{'s' if count > 1 else ''}"),
                private=seat, deck=f"resource.{self.deck}", positions=tuple(range(self.drawn, self.drawn + count)),
            )
        if kind == "first":
            return Chance("draw the first seat", ranges=(self.seats,))
        if kind == "event":
            return Chance("draw an event card", ranges=(sum(self.events),))
        if kind == "reveal":
            return Chance(phrase(Seat(task[1]), " reveals its ID card and hand"), deck="reveal", reveal=task[1])
        raise AssertionError(f"unknown chance task {task}")

    def resolve(self, outcome: Outcome) -> "TricolorState":
        chance = self.chance()
        if chance is None:
            raise BadOutcome("no chance step is due")
        chance.check(outcome)
        task, rest = self.pending[0], self.pending[1:]
        after = getattr(self, "_resolve_" + task[0])(task, outcome, replace(self, pending=rest))
        return after._settle()

    def legal_moves(self) -> tuple[Move, ...]:
        if self.actor is None or self.actor == CHANCE:
            return ()
        phase = self.phase
        if phase in (SETUP, PLAN):
            return self._placements("place", self.phase == SETUP and self.setup_left == self.seats)
        if phase == DRAW:
            return (Move("draw", (2,)), Move("draw", (4,)))
        if phase == ACT:
            return self._actions()
        if phase == EVENT:
            return self._event_moves()
        if phase == EMBARGO:
            return tuple(Move("discard", (t,)) for t in self._kind_tokens(self.seat))
        if phase == DISCARD:
            excess = len(self.hands[self.seat]) - HAND_LIMIT
            return tuple(Move("discard", tuple(t)) for t in self._choose(self.seat, excess))
        return ()

    def apply(self, move: Move) -> "TricolorState":
        if self.actor is None or self.actor == CHANCE:
            raise IllegalMove(f"{move} is not legal now: {self.prompt()}")
        handler = {
            (SETUP, "place"): self._do_place,
            (PLAN, "place"): self._do_place,
            (DRAW, "draw"): self._do_draw,
            (ACT, "construct"): self._do_construct,
            (ACT, "modify"): self._do_modify,
            (ACT, "attack"): self._do_attack,
            (ACT, "end"): self._do_end,
            (EMBARGO, "discard"): self._do_embargo,
            (DISCARD, "discard"): self._do_discard,
        }.get((self.phase, move.kind))
        if self.phase == EVENT and move.kind == EVENT_MOVES.get(self.event):
            handler = self._do_event
        if handler is None:
            raise IllegalMove(f"{move} is not legal now: {self.prompt()}")
        return handler(move)._settle()

    def view(self, seat: int) -> "TricolorState":
        """What `seat` may see: its own ID and hand; others' as unknown handles until shown."""
        hidden = lambda s: s != seat and not (self.shown and self.shown[s])  # noqa: E731
        return replace(
            self,
            hands=tuple((UNKNOWN,) * len(h) if hidden(s) else h for s, h in enumerate(self.hands)),
            ids=tuple(UNKNOWN if hidden(s) else i for s, i in enumerate(self.ids)),
            order=(),
            id_order=(),
        )

    def paid_cards(self, move: Move) -> tuple[int, ...]:
        """The hidden cards `move` pays or discards, by identity (empty for a move that pays none);
        the network checks them against the payer's commitments (net/cards/table_deals.py)."""
        first = {"construct": 1, "modify": 1, "attack": 1, "discard": 0}.get(move.kind)
        return () if first is None else _cards(move.args[first:])

    # -- chance steps --------------------------------------------------------------------------
    def _top_ranges(self, pile: int) -> tuple[int, ...]:
        known, hidden = len(self.inside[pile]), self.sizes[pile]
        if known and self.unseen:
            return (hidden, len(self.unseen))
        return (hidden,) if known else (len(self.unseen),)

    def _resolve_top(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        pile, at_setup = task[1], task[2]
        inside = list(s.inside)
        values = outcome.values
        if inside[pile] and values[0] < len(inside[pile]):
            tile = inside[pile][values[0]]
            inside[pile] = tuple(t for t in inside[pile] if t != tile)
            unseen = s.unseen
        else:
            tile = s.unseen[values[-1]]
            unseen = tuple(t for t in s.unseen if t != tile)
        tops = list(s.tops)
        tops[pile] = tile
        pending = s.pending
        if at_setup and TILES[tile].kind == END:
            # An End Tile on top at setup: that pile is shuffled again (Setup 2).
            inside[pile] = inside[pile] + (tile,)
            tops[pile] = -1
            pending = (("top", pile, 1),) + pending
        return replace(s, tops=tuple(tops), inside=tuple(inside), unseen=unseen, pending=pending)

    def _resolve_idshuffle(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        return replace(s, id_order=tuple(outcome.permutation))

    def _resolve_iddraw(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        seat = task[1]
        card = self._dealt(outcome, s.id_order[seat : seat + 1], len(ID_CARDS), "ID card")[0]
        if card != UNKNOWN and card in s.ids:
            raise BadOutcome(f"ID card {card} is dealt twice")
        ids = list(s.ids)
        ids[seat] = card
        return replace(s, ids=tuple(ids))

    def _next_deck(self) -> tuple[int, ...]:
        return tuple(range(len(CARDS))) if self.deck == 0 else tuple(sorted(self.discards))

    def _resolve_shuffle(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        cards = self._next_deck()
        order = tuple(cards[i] for i in outcome.permutation)
        return replace(s, deck=s.deck + 1, deck_left=len(cards), drawn=0, order=order, discards=())

    def _resolve_draw(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        seat, count = task[1], task[2]
        cards = self._dealt(outcome, s.order[s.drawn : s.drawn + count], len(CARDS), "resource card")
        known = {c for c in cards if c != UNKNOWN}
        if len(known) != sum(c != UNKNOWN for c in cards) or known & s._known_cards():
            raise BadOutcome("a resource card that is already elsewhere was dealt")
        hands = list(s.hands)
        hands[seat] = hands[seat] + cards
        return replace(s, hands=tuple(hands), drawn=s.drawn + count, deck_left=s.deck_left - count)

    def _dealt(self, outcome: Outcome, order: tuple[int, ...], size: int, what: str) -> tuple[int, ...]:
        """The cards of a private draw: the outcome's values, the known order, or unknown handles."""
        values = outcome.values
        if values:
            if any(v >= size for v in values):
                raise BadOutcome(f"no {what} number {max(values)}")
            if order and tuple(values) != order:
                raise BadOutcome(f"the {what}s dealt differ from the deck order")
            return tuple(values)
        return order if order else (UNKNOWN,) * len(self.chance().positions)

    def _resolve_first(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        first = outcome.values[0]
        return replace(s, first=first, turn=first, seat=first, phase=SETUP, setup_left=s.seats)

    def _resolve_event(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        index = outcome.values[0]
        events = list(s.events)
        for kind, count in enumerate(events):
            if index < count:
                break
            index -= count
        events[kind] -= 1
        return replace(s, events=tuple(events))._play_event(EVENT_NAMES[kind])

    def _resolve_reveal(self, task, outcome: Outcome, s: "TricolorState") -> "TricolorState":
        seat = task[1]
        hand, card_id = s.hands[seat], s.ids[seat]
        values = tuple(outcome.values)
        if not values:
            if card_id == UNKNOWN or UNKNOWN in hand:
                raise BadOutcome(f"seat {seat}'s cards are not known here: the reveal must list them")
            values = (card_id,) + hand
        if len(values) != 1 + len(hand):
            raise BadOutcome(f"seat {seat} holds {1 + len(hand)} hidden cards, not {len(values)}")
        new_id, new_hand = values[0], values[1:]
        if new_id >= len(ID_CARDS) or card_id not in (UNKNOWN, new_id):
            raise BadOutcome(f"seat {seat}'s revealed ID card {new_id} is not the one dealt")
        if any(v >= len(CARDS) for v in new_hand) or len(set(new_hand)) != len(new_hand):
            raise BadOutcome(f"seat {seat}'s revealed hand is not a set of resource cards")
        known = [c for c in hand if c != UNKNOWN]
        elsewhere = s._known_cards() - set(known)
        if not set(known) <= set(new_hand) or elsewhere & set(new_hand):
            raise BadOutcome(f"seat {seat}'s revealed hand is not the one dealt")
        if card_id == UNKNOWN and new_id in s.ids:
            raise BadOutcome(f"seat {seat}'s revealed ID card {new_id} belongs to another seat")
        ids, hands, shown = list(s.ids), list(s.hands), list(s.shown)
        ids[seat], hands[seat], shown[seat] = new_id, tuple(new_hand), True
        return replace(s, ids=tuple(ids), hands=tuple(hands), shown=tuple(shown))

    def _settle(self) -> "TricolorState":
        """Carry out every step that needs neither chance nor a choice."""
        s = self
        while s.result is None:
            if s.pending:
                task, rest = s.pending[0], s.pending[1:]
                kind = task[0]
                if kind == "draw":
                    seat, count = task[1], task[2]
                    if count <= 0:
                        s = replace(s, pending=rest)
                    elif s.deck_left == 0:
                        # The resource deck ran out: the discard pile becomes a new deck (Special cases).
                        more = (("shuffle",), task) if s.discards else ()
                        s = replace(s, pending=more + rest)
                    elif count > s.deck_left:
                        split = (("draw", seat, s.deck_left), ("draw", seat, count - s.deck_left))
                        s = replace(s, pending=split + rest)
                    else:
                        return s
                elif kind == "event" and sum(s.events) == 0:
                    s = replace(s, events=EVENT_COUNTS)  # reshuffled from its used cards
                elif kind == "top" and s.sizes[task[1]] == 0:
                    s = replace(s, pending=rest)
                elif kind == "score":
                    s = replace(s, pending=rest)._score()
                else:
                    return s
            elif s.phase == DISCARD and len(s.hands[s.seat]) <= HAND_LIMIT:
                s = s._end_turn()
            elif s.phase == PLAN and not s._placeable_piles():
                s = replace(s, phase=ACT)  # all piles empty (or no top can go anywhere): no route planning
            else:
                return s
        return s

    # -- moves ---------------------------------------------------------------------------------
    def _free_cells(self, next_to_start: bool, tile: int) -> tuple[tuple[int, int], ...]:
        """Where `tile` may be placed: free, next to a tile (or to the Start Tile)."""
        return _cells_for(tile, _open_cells(self.board, next_to_start))

    def _placeable_piles(self) -> list[int]:
        """The piles whose top tile can be placed now (route planning, Survey)."""
        # A road or dead-end tile always finds a free square at the table's edge; an End Tile may not.
        return [
            p for p, tile in enumerate(self.tops)
            if tile != -1 and (TILES[tile].kind != END or self._free_cells(False, tile))
        ]

    def _placements(self, kind: str, next_to_start: bool, prefix: tuple = ()) -> tuple[Move, ...]:
        cells = _open_cells(self.board, next_to_start)
        moves = []
        for pile, tile in enumerate(self.tops):
            if tile == -1:
                continue
            for cell in _cells_for(tile, cells):
                at = pos_text(cell)
                for rotation in distinct_rotations(tile):
                    moves.append(Move(kind, prefix + (pile + 1, at, rotation)))
        return tuple(moves)

    def _place(self, move: Move, next_to_start: bool) -> "TricolorState":
        if len(move.args) != 3 or move.args[0] not in (1, 2, 3) or move.args[2] not in (0, 1, 2, 3):
            raise IllegalMove(f"{move}: write `{move.kind} PILE X,Y ROTATION` (pile 1-3, rotation 0-3)")
        pile = move.args[0] - 1
        tile = self.tops[pile]
        if tile == -1:
            raise IllegalMove(f"pile {pile + 1} is empty")
        cell = parse_pos(move.args[1])
        if cell not in self._free_cells(next_to_start, tile):
            if TILES[tile].kind == END and cell in START_SIDES:
                raise IllegalMove(f"an End Tile is never placed next to the Start Tile ({pos_text(cell)})")
            where = "next to the Start Tile" if next_to_start else "orthogonally next to a tile"
            raise IllegalMove(f"{pos_text(cell)} is not a free position {where}")
        board = self.board + ((cell[0], cell[1], tile, move.args[2], False, self.placed),)
        tops, sizes = list(self.tops), list(self.sizes)
        tops[pile], sizes[pile] = -1, sizes[pile] - 1
        # An End Tile turned up during the setup round is shuffled back in too (Setup 6).
        pending = self.pending + ((("top", pile, int(self.phase == SETUP)),) if sizes[pile] else ())
        return replace(self, board=board, placed=self.placed + 1, tops=tuple(tops), sizes=tuple(sizes), pending=pending)

    def _do_place(self, move: Move) -> "TricolorState":
        if self.phase == PLAN:
            return replace(self._place(move, False), phase=ACT)
        after = self._place(move, self.setup_left == self.seats)
        left = self.setup_left - 1
        if left == 0:
            return replace(after, setup_left=0, phase=DRAW, turn=self.first, seat=self.first)
        nxt = (self.seat + 1) % self.seats
        return replace(after, setup_left=left, turn=nxt, seat=nxt)

    def _do_draw(self, move: Move) -> "TricolorState":
        if move.args not in ((2,), (4,)):
            raise IllegalMove("draw 2 or 4 resource cards")
        count = move.args[0]
        # Drawing 4 goes straight to the discard phase (A turn, 1).
        return replace(
            self, pending=self.pending + (("draw", self.seat, count),), phase=PLAN if count == 2 else DISCARD
        )

    def _take(self, seat: int, cards: tuple[int, ...]) -> tuple[int, ...]:
        """`seat`'s hand without `cards`; unknown handles stand for cards this state cannot see."""
        hand = list(self.hands[seat])
        elsewhere = self._known_cards() - set(hand)
        for card in cards:
            if card in hand:
                hand.remove(card)
            elif UNKNOWN in hand and card not in elsewhere:
                hand.remove(UNKNOWN)
            else:
                raise IllegalMove(f"seat {seat} does not hold {CARDS[card].token}")
        return tuple(hand)

    def _known_cards(self) -> set[int]:
        known = set(self.discards)
        for hand in self.hands:
            known.update(c for c in hand if c != UNKNOWN)
        return known

    def _pay(self, seat: int, cards: tuple[int, ...], chosen: bool = False, **changes) -> "TricolorState":
        """`seat` pays `cards` face up; `chosen` when the cards were its free choice (see `shed`)."""
        hands = list(self.hands)
        hands[seat] = self._take(seat, cards)
        if chosen:
            tally = list(self.shed[seat])
            for card in cards:
                if CARDS[card].colour:
                    tally[COLOURS.index(CARDS[card].colour)] += CARDS[card].units
            shed = list(self.shed)
            shed[seat] = tuple(tally)
            changes["shed"] = tuple(shed)
        return replace(self, hands=tuple(hands), discards=self.discards + cards, **changes)

    def _tile_at(self, text: object) -> tuple[tuple[int, int], Placed]:
        pos = parse_pos(text)
        placed = board_grid(self.board).get(pos)
        if placed is None:
            raise IllegalMove(f"there is no tile at {pos_text(pos)}")
        return pos, placed

    def _set_tile(self, pos, **changes) -> tuple:
        out = []
        for entry in self.board:
            if (entry[0], entry[1]) == pos:
                x, y, t, r, b, o = entry
                r = changes.get("rotation", r)
                b = changes.get("built", b)
                entry = (x, y, t, r, b, o)
            out.append(entry)
        return tuple(out)

    def _do_construct(self, move: Move) -> "TricolorState":
        if len(move.args) < 2:
            raise IllegalMove("write `construct X,Y CARD...`")
        pos, placed = self._tile_at(move.args[0])
        tile = TILES[placed.tile]
        if tile.kind not in (ROAD, DEAD) or placed.built:
            raise IllegalMove(f"the tile at {pos_text(pos)} is not a blueprint")
        cards = _cards(move.args[1:])
        if any(units_for(c, tile.colour) == 0 for c in cards):
            raise IllegalMove(f"only {COLOUR_NAMES[tile.colour]} and wild cards pay for this {tile.colour} tile")
        paid = sum(units_for(c, tile.colour) for c in cards)
        if paid < tile.cost:
            raise IllegalMove(f"the tile at {pos_text(pos)} costs {tile.cost}, not {paid}")
        after = self._pay(self.seat, cards, board=self._set_tile(pos, built=True), built=True)
        return replace(after, pending=after.pending + (("event",),))

    def _do_modify(self, move: Move) -> "TricolorState":
        if len(move.args) != 3:
            raise IllegalMove("write `modify X,Y CARD CARD` (two cards of any kind)")
        pos, placed = self._tile_at(move.args[0])
        if TILES[placed.tile].kind not in (ROAD, DEAD) or placed.built:
            raise IllegalMove(f"the tile at {pos_text(pos)} is not a blueprint")
        cards = _cards(move.args[1:])
        return self._pay(self.seat, cards, board=self._set_tile(pos, rotation=(placed.rotation + 1) % 4), chosen=True)

    def _do_attack(self, move: Move) -> "TricolorState":
        if len(move.args) < 2 or type(move.args[0]) is not int:
            raise IllegalMove("write `attack SEAT CARD...` naming every card in your hand")
        target = move.args[0]
        if target not in self._targets():
            raise IllegalMove(f"seat {target} cannot be attacked now (not yourself, not the previous target)")
        cards = _cards(move.args[1:])
        if len(cards) != len(self.hands[self.seat]):
            raise IllegalMove("an attack discards all your resource cards")
        skips = list(self.skips)
        skips[target] = True
        return self._pay(self.seat, cards, skips=tuple(skips), last_target=target)

    def _targets(self) -> list[int]:
        return [s for s in range(self.seats) if s != self.seat and s != self.last_target]

    def _do_end(self, move: Move) -> "TricolorState":
        if move.args:
            raise IllegalMove("`end` takes no arguments")
        return replace(self, phase=DISCARD)

    def _do_discard(self, move: Move) -> "TricolorState":
        cards = _cards(move.args)
        excess = len(self.hands[self.seat]) - HAND_LIMIT
        if len(cards) != excess:
            raise IllegalMove(f"discard exactly {excess} card{'s' if excess != 1 else ''} to keep {HAND_LIMIT}")
        return self._pay(self.seat, cards, chosen=True)

    def _do_embargo(self, move: Move) -> "TricolorState":
        cards = _cards(move.args)
        if len(cards) != 1:
            raise IllegalMove("an Embargo discards exactly one card")
        after = self._pay(self.seat, cards, chosen=True)
        rest = self.embargo[1:]
        if rest:
            return replace(after, embargo=rest, seat=rest[0])
        return replace(after, embargo=(), phase=ACT, seat=self.turn, event="")

    # -- events --------------------------------------------------------------------------------
    def _event_targets(self, kind: str) -> list:
        grid = board_grid(self.board)
        if kind == "demolition":
            return [p for p, t in grid.items() if TILES[t.tile].kind in (ROAD, DEAD) and t.built]
        if kind == "earthquake":  # the Start and End Tiles are immune (Events)
            return [p for p, t in grid.items() if TILES[t.tile].kind in (ROAD, DEAD)]
        if kind == "storm":
            return [p for p, t in grid.items() if TILES[t.tile].kind in (ROAD, DEAD) and not t.built]
        if kind == "survey":
            return self._placeable_piles()
        if kind == "embargo":
            order = [(self.turn + k) % self.seats for k in range(1, self.seats)]
            return [s for s in order if self.hands[s]]
        return []

    def _play_event(self, kind: str) -> "TricolorState":
        if kind == "supply":
            return replace(self, played=kind, pending=self.pending + (("draw", self.turn, 2),))
        targets = self._event_targets(kind)
        if not targets:
            # The event cannot be carried out: draw 2 instead (Events).
            return replace(self, played=f"{kind}: fallback", pending=self.pending + (("draw", self.turn, 2),))
        if kind == "embargo":
            return replace(self, played=kind, event=kind, phase=EMBARGO, embargo=tuple(targets), seat=targets[0])
        return replace(self, played=kind, event=kind, phase=EVENT)

    def _event_moves(self) -> tuple[Move, ...]:
        name = EVENT_MOVES[self.event]
        if self.event == "survey":
            return self._placements(name, False)
        return tuple(Move(name, (pos_text(p),)) for p in sorted(self._event_targets(self.event)))

    def _do_event(self, move: Move) -> "TricolorState":
        kind = self.event
        if kind == "survey":
            after = self._place(move, False)
        else:
            if len(move.args) != 1:
                raise IllegalMove(f"write `{move.kind} X,Y`")
            pos, placed = self._tile_at(move.args[0])
            if pos not in self._event_targets(kind):
                raise IllegalMove(f"{EVENT_TITLES[kind]} cannot affect the tile at {pos_text(pos)}")
            if kind == "demolition":
                after = replace(self, board=self._set_tile(pos, built=False))
            elif kind == "earthquake":
                after = replace(self, board=self._set_tile(pos, rotation=(placed.rotation + 1) % 4))
            else:  # storm: the blueprint leaves the game
                after = replace(self, board=tuple(e for e in self.board if (e[0], e[1]) != pos))
        return replace(after, phase=ACT, event="")

    # -- turns and the end ---------------------------------------------------------------------
    def _end_turn(self) -> "TricolorState":
        piles_empty = all(t == -1 for t in self.tops)
        idle = self.idle + 1 if piles_empty and not self.built else 0
        turns = self.turns + 1
        s = replace(self, idle=idle, turns=turns, built=False)
        grid = board_grid(self.board)
        pair = best_pair(grid)
        if pair:
            return s._finish(pair, self.turn, "two valid routes")
        skips = list(self.skips)
        nxt = (self.turn + 1) % self.seats
        while True:
            if idle >= self.seats:
                return s._finish(best_single(grid), -1, "stalemate: a whole round with no tile constructed")
            if turns >= self.option["turn_limit"]:
                return s._finish(best_single(grid), -1, f"turn limit of {turns} turns")
            if not skips[nxt]:
                break
            # An attacked seat skips this turn (Attack); it counts as a turn with nothing constructed.
            skips[nxt] = False
            idle = idle + 1 if piles_empty else 0
            turns += 1
            s = replace(s, idle=idle, turns=turns)
            nxt = (nxt + 1) % self.seats
        return replace(s, skips=tuple(skips), turn=nxt, seat=nxt, phase=DRAW)

    def _finish(self, routes, ender: int, reason: str) -> "TricolorState":
        reveals = tuple(("reveal", s) for s in range(self.seats))
        return replace(
            self, phase=SCORING, routes=tuple(routes), ender=ender, reason=reason,
            pending=reveals + (("score",),), seat=-1,
        )

    def scores(self) -> tuple[int, ...]:
        """Points per seat (Scoring 3), from the revealed IDs and hands."""
        grid = board_grid(self.board)
        counts = colour_counts(grid, self.routes)
        winning = winner_colours(counts)
        points = []
        for seat in range(self.seats):
            total = 3 * counts[ID_CARDS[self.ids[seat]]]
            for card in self.hands[seat]:
                c = CARDS[card]
                total += c.units if c.colour in winning else 1 if not c.colour else 0
            total += 1 if seat == self.ender else 0
            points.append(total)
        return tuple(points)

    def _score(self) -> "TricolorState":
        points = self.scores()
        top = max(points)
        winners = tuple(s for s in range(self.seats) if points[s] == top)
        result = Result(winners, tuple(float(p) for p in points), self.reason)
        return replace(self, phase=OVER, result=result)

    # -- move enumeration ----------------------------------------------------------------------
    def _by_kind(self, seat: int) -> dict[str, list[int]]:
        groups: dict[str, list[int]] = {}
        for card in sorted(self.hands[seat]):
            if card != UNKNOWN:
                groups.setdefault(CARDS[card].kind, []).append(card)
        return groups

    def _kind_tokens(self, seat: int) -> list[str]:
        """One card token per kind held: the lowest-numbered card of each."""
        return [CARDS[cards[0]].token for cards in self._by_kind(seat).values()]

    def _choose(self, seat: int, count: int) -> list[list[str]]:
        """Every distinct choice (by kind) of `count` cards from `seat`'s hand, as tokens."""
        groups = self._by_kind(seat)
        kinds = sorted(groups)
        out = []
        for combo in combinations_with_replacement(kinds, count):
            if all(combo.count(k) <= len(groups[k]) for k in set(combo)):
                tokens = []
                for k in sorted(set(combo)):
                    tokens += [CARDS[c].token for c in groups[k][: combo.count(k)]]
                out.append(tokens)
        return out

    def payments(self, seat: int, colour: str, cost: int) -> list[list[str]]:
        """Payments for a tile of `colour` costing `cost` with no card to spare (Construct)."""
        groups = self._by_kind(seat)
        basic, double, wild = (groups.get(k, []) for k in (colour, colour + "2", "W"))
        out = []
        for b2 in range(len(double) + 1):
            for b1 in range(len(basic) + 1):
                for w in range(len(wild) + 1):
                    units = b1 + 2 * b2 + w
                    if units < cost:
                        continue
                    if (b1 or w) and units - 1 >= cost or b2 and units - 2 >= cost:
                        continue
                    out.append([CARDS[c].token for c in basic[:b1] + double[:b2] + wild[:w]])
        return out

    def _actions(self) -> tuple[Move, ...]:
        seat = self.seat
        moves = [Move("end")]
        hand = self.hands[seat]
        blueprints = sorted(
            (p, t) for p, t in board_grid(self.board).items() if TILES[t.tile].kind in (ROAD, DEAD) and not t.built
        )
        paying: dict[tuple[str, int], list[list[str]]] = {}  # blueprints of one colour and cost pay alike
        for pos, placed in blueprints:
            tile = TILES[placed.tile]
            key = (tile.colour, tile.cost)
            if key not in paying:
                paying[key] = self.payments(seat, *key)
            for pay in paying[key]:
                moves.append(Move("construct", (pos_text(pos), *pay)))
        if len(hand) >= 2:
            pairs = self._choose(seat, 2)
            for pos, _ in blueprints:
                at = pos_text(pos)
                moves.extend(Move("modify", (at, *pay)) for pay in pairs)
        if hand and UNKNOWN not in hand:
            tokens = [CARDS[c].token for c in sorted(hand)]
            for target in self._targets():
                moves.append(Move("attack", (target, *tokens)))
        return tuple(moves)

    # -- words for people ----------------------------------------------------------------------
    def prompt(self) -> str:
        who = f"seat {self.seat}"
        if self.result is not None:
            return "the game is over"
        if self.pending:
            return self.chance().label
        return {
            SETUP: f"{who} places a tile from a pile" + (" next to the Start Tile" if self.setup_left == self.seats else ""),
            DRAW: f"{who} draws 2 or 4 resource cards",
            PLAN: f"{who} places the top tile of a pile (route planning)",
            ACT: f"{who} constructs, modifies, attacks, or ends their actions",
            EVENT: f"{who} plays {EVENT_TITLES.get(self.event, self.event)}",
            EMBARGO: f"{who} discards one resource card (Embargo)",
            DISCARD: f"{who} discards down to {HAND_LIMIT} resource cards",
        }.get(self.phase, self.phase)

    def key(self) -> tuple:
        """A compact identity of the position for search tables."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name != "result")

    # -- plain data ----------------------------------------------------------------------------
    def to_data(self) -> dict:
        data = {}
        for f in fields(self):
            value = getattr(self, f.name)
            data[f.name] = value.to_data() if isinstance(value, Result) else _lists(value)
        return data


_FIELD_SET = frozenset(f.name for f in fields(TricolorState))


def replace(state: TricolorState, **changes) -> TricolorState:
    """dataclasses.replace, without its per-call overhead (states are replaced on every step)."""
    unknown = changes.keys() - _FIELD_SET
    if unknown:
        raise TypeError(f"TricolorState has no field {', '.join(sorted(unknown))}")
    new = object.__new__(TricolorState)
    object.__setattr__(new, "__dict__", {**state.__dict__, **changes})
    return new


def _lists(value):
    if isinstance(value, tuple):
        return [_lists(v) for v in value]
    return value


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def load(data: Mapping) -> TricolorState:
    names = {f.name for f in fields(TricolorState)}
    if set(data) != names:
        raise ValueError("not a Tricolor Line state: fields differ")
    values = {k: _tuples(v) for k, v in data.items() if k != "result"}
    values["result"] = Result.from_data(data["result"]) if data["result"] else None
    return TricolorState(**values)


def new(seats: int, options: Mapping[str, Any]) -> TricolorState:
    """Setup (tricolor-line.md, Setup): pile tops, ID cards, resource cards, first seat."""
    pending = tuple(("top", p, 1) for p in range(PILES))
    pending += (("idshuffle",),) + tuple(("iddraw", s) for s in range(seats))
    pending += (("shuffle",),) + tuple(("draw", s, 4) for s in range(seats)) + (("first",),)
    state = TricolorState(
        options=tuple(sorted(options.items())),
        seats=seats,
        pending=pending,
        ids=(UNKNOWN,) * seats,
        hands=((),) * seats,
        skips=(False,) * seats,
        shown=(False,) * seats,
        shed=((0, 0, 0),) * seats,
    )
    return state._settle()


def describe(state: TricolorState, move: Move) -> Phrase:
    """A move in words, as the move log shows it (`state` is the state it was made in)."""
    who = Seat(state.seat)
    args = move.args
    cards = lambda tokens: ", ".join(tokens) or "nothing"  # noqa: E731
    if move.kind == "place" or move.kind == "survey":
        pile = args[0] - 1 if args and args[0] in (1, 2, 3) else 0
        tile = state.tops[pile]
        name = TILES[tile].letter if tile != -1 else "?"
        how = "surveys" if move.kind == "survey" else "places"
        return phrase(who, f" {how} {name} from pile {args[0]} at {args[1]}, turned {args[2]}")
    if move.kind == "draw":
        return phrase(who, f" draws {args[0]} resource cards")
    if move.kind == "construct":
        return phrase(who, f" constructs the tile at {args[0]}, paying {cards(args[1:])}")
    if move.kind == "modify":
        return phrase(who, f" turns the blueprint at {args[0]}, discarding {cards(args[1:])}")
    if move.kind == "attack":
        return phrase(who, " attacks ", Seat(args[0]), f", discarding {cards(args[1:])}")
    if move.kind == "end":
        return phrase(who, " ends their actions")
    if move.kind == "discard":
        return phrase(who, f" discards {cards(args)}")
    titles = {"demolish": "demolishes", "quake": "turns (Earthquake)", "storm": "storms away"}
    if move.kind in titles:
        return phrase(who, f" {titles[move.kind]} the tile at {args[0] if args else '?'}")
    return phrase(who, f": {move}")


def tile_words(tile: int) -> str:
    """A tile in plain words: "an End Tile", "a red curve", "a blue dead-end tee"."""
    t = TILES[tile]
    if t.kind in (START, END):
        return "the Start Tile" if t.kind == START else "an End Tile"
    words = ("dead-end " if t.kind == DEAD else "") + t.shape
    return f"a {COLOUR_NAMES[t.colour]} {words}"


def describe_outcome(state: TricolorState | None, chance: Chance, outcome: Outcome) -> Phrase:
    """A random outcome in words; hidden shuffles and draws never say what they dealt."""
    return phrase(_outcome_words(state, chance, outcome))


def _outcome_words(state: TricolorState | None, chance: Chance, outcome: Outcome) -> Phrase | str:
    if chance.hidden and chance.reveal is None:
        return "shuffled face down" if chance.shuffle else "dealt face down"
    task = state.pending[0] if state is not None and state.pending else None
    kind = task[0] if task else ""
    values = outcome.values
    if kind == "top" and values:
        pile, inside = task[1], state.inside[task[1]]
        tile = inside[values[0]] if inside and values[0] < len(inside) else state.unseen[values[-1]]
        said = f"pile {pile + 1} shows {tile_words(tile)}"
        if task[2] and TILES[tile].kind == END:
            return said + ": shuffled back in (Setup)"
        return said
    if kind == "event" and values:
        index = values[0]
        for name, count in zip(EVENT_NAMES, state.events):
            if index < count:
                return f"event: {EVENT_TITLES[name]}"
            index -= count
    if kind == "first" and values:
        return phrase(Seat(values[0]), " goes first")
    if chance.reveal is not None:
        seat = chance.reveal
        shown = tuple(values)
        if not shown and state is not None and state.ids and UNKNOWN not in (state.ids[seat],) + state.hands[seat]:
            shown = (state.ids[seat],) + state.hands[seat]
        if not shown:
            return phrase(Seat(seat), " reveals its ID card and hand")
        cards = ", ".join(CARDS[c].kind for c in shown[1:]) or "no cards"
        return phrase(Seat(seat), f" reveals a {COLOUR_NAMES[ID_CARDS[shown[0]]]} ID card and {cards}")
    return outcome_values(state, chance, outcome)


GAME = GameInfo(
    name="tricolor",
    title="Tricolor Line",
    min_seats=2,
    max_seats=8,
    options=(
        Option("turn_limit", 400, "end the game (scored as a stalemate) after this many turns", minimum=10),
    ),
    new=new,
    load=load,
    rules_file="tricolor-line.md",
    describe=describe,
    describe_outcome=describe_outcome,
)
