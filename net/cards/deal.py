"""Hidden cards without a dealer (FAIRNESS.md §2): the commutative-encryption deal, checked by all.

Pure and I/O-free, independent of any game. The objects:

- `Deal` is the public state of one deck's deal: every peer (and `verify`) feeds it the bodies of
  the "deal" records in log order with `accept(seat, body)`. It holds no secret. A bad message is
  refused with `DealRefused` naming its author and leaves the state unchanged; cheating that only
  shows later is a `DealFault` naming the seat (in `faults` when found live, from `audit()` at the
  end).
- `Party` (net/cards/party.py) holds one seat's secrets for that deck and produces its message
  bodies; with the public `Deal` it opens the cards dealt to it (`hand`). Its secrets round-trip through
  `to_data`/`from_data` so a crashed peer can resume (FAIRNESS.md §6).
- `DealBook` (net/cards/deal_book.py) holds every deck of a table (a "deck" body declares one; the deck id binds table,
  label, number and card list) and is what a Replica takes as its `deal_handler`; `check()` replays
  every opened deal, so `verify` can check every deal of a transcript without secrets or a game.
  A game with hidden cards uses net/cards/table_deals.py's `TableDeals`, a DealBook whose decks the game's
  hidden Chance steps form.

`DealRefused` and `DealFault` are net/refusals.py's, like every error that names a seat.

Steps (each body is a msgpack-able dict {"deck": deck id, "step": name, ...}; "deck" declares):

    shuffle  each seat in seat order: every point · its deck key e, permuted by its secret
             permutation; also its fresh X25519 draw key (what private keys are sent to).
    lock     each seat in seat order: removes e and multiplies position j by its key k_j; also
             publishes K_j = B·k_j, so every key it later sends or opens is checked at once
             (K_j hides k_j under the same assumption, DDH, that hides the cards).
    draw     seat i sends seat `to` its keys for `positions`, each in a box: ephemeral X25519 (from
             i's box seed) with to's draw key, HKDF-SHA256 bound to table/deck/position/seats,
             ChaCha20-Poly1305 (net/cards/boxes.py). The drawer checks each key against K (a wrong key names the sender).
    accuse   a drawer that got a wrong or unreadable key from seat i proves it to everyone at once:
             it publishes its draw secret for this deck, every peer opens i's box and checks the
             key against K (a true accusation names i live; a false one is refused, naming the
             accuser). Its cards stay hidden: each is still locked by the drawer's own key.
    hold     the drawer commits to each card: SHA-256(tag ‖ table ‖ deck ‖ position ‖ nonce ‖ card)
             (the nonce, 32 fresh bytes, goes before the card so the one variable field is last).
    show     a public reveal: the holder opens card and nonce, checked against its commitment.
    open     each seat publishes its key for positions being revealed (a shown card, or a card
             turned face up from the deck); when all are in, everyone decodes and compares.
    opening  end of the deal: each seat publishes its deck key, permutation, all position keys,
             box seed and the (card, nonce) of every card it holds; when all are in, `audit()`
             replays the whole deal and names the first seat at fault: a substituted card or broken
             shuffle, a broken lock, a wrong key sent in private, a wrong claim.

Which seat draws which position is the caller's (the game's) business; a position is dealt once.
A reshuffle of public cards is a new `Deck` (`deck.renewed(cards)`) with new parties and a new Deal.
Within a published list every point must be distinct, so a seat that copies a card in its shuffle
pass is refused live; any other substitution shows when the card is opened and is named at the end.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from dicetable.net.cards.boxes import box_context, box_secret, open_box, x25519_public
from dicetable.net.cards.points import (
    ORDER,
    Deck,
    base_mul,
    check_point,
    check_scalar,
    invert,
    mul,
    product,
    scalar_mul,
)
from dicetable.net.refusals import DealError, DealFault, DealRefused

HOLD_TAG = b"dicetable/hold/v1"
NONCE_BYTES = 32
BOX_BYTES = 32 + 32 + 16  # ephemeral X25519 key, encrypted key, Poly1305 tag
STEPS = ("shuffle", "lock", "draw", "accuse", "hold", "show", "open", "opening")
_PROBE = X25519PrivateKey.from_private_bytes(bytes(range(32)))


def commitment(table_id: bytes, deck: bytes, position: int, card: str, nonce: bytes) -> bytes:
    """The holder's commitment to the card at `position` (the variable-length card comes last)."""
    return hashlib.sha256(HOLD_TAG + table_id + deck + position.to_bytes(4, "big") + nonce + card.encode()).digest()


# ---- strict body checks: each raises DealRefused naming the author --------------------------------

def _int(value, seat: int, what: str, below: int) -> int:
    if type(value) is not int or not 0 <= value < below:
        raise DealRefused(seat, f"sent {what} that is not an integer in 0..{below - 1}")
    return value


def _blob(value, seat: int, what: str, size: int) -> bytes:
    if type(value) is not bytes or len(value) != size:
        raise DealRefused(seat, f"sent {what} that is not {size} bytes")
    return value


def strict_list(value, seat: int, what: str, length: int | None = None) -> list:
    if type(value) not in (list, tuple):
        raise DealRefused(seat, f"sent {what} that is not a list")
    if length is not None and len(value) != length:
        raise DealRefused(seat, f"sent {len(value)} {what}, not {length}")
    return list(value)


def _positions(value, seat: int, size: int) -> list[int]:
    positions = [_int(p, seat, "a position", size) for p in strict_list(value, seat, "positions")]
    if not positions or len(set(positions)) != len(positions):
        raise DealRefused(seat, "sent an empty or repeating list of positions")
    return positions


def _distinct_points(value, seat: int, what: str, size: int) -> list[bytes]:
    points = [check_point(p, seat, f"a {what} point") for p in strict_list(value, seat, f"{what} points", size)]
    if len(set(points)) != size:
        raise DealRefused(seat, f"repeated a card in its {what} pass (a substituted card)")
    return points


@dataclass(frozen=True)
class Opening:
    """One seat's secrets for a deck, as published at the end of the deal."""

    deck_key: bytes
    perm: tuple[int, ...]
    keys: tuple[bytes, ...]
    box_seed: bytes
    held: dict  # position -> (card, nonce)


@dataclass(frozen=True)
class DealResult:
    """The replayed deal: the card at every position and who held which."""

    cards: tuple[str, ...]
    holders: dict  # position -> seat

    def hand(self, seat: int) -> list[str]:
        return [self.cards[j] for j, holder in sorted(self.holders.items()) if holder == seat]


class Deal:
    """The public state of one deck's deal, fed with every "deal" body in log order."""

    def __init__(self, deck: Deck, seats: int) -> None:
        if seats < 2 or seats > 255:
            raise ValueError("a deal needs 2 to 255 seats")
        self.deck = deck
        self.table_id = deck.table_id
        self.seats = seats
        self.shuffles: list[list[bytes]] = []
        self.draw_keys: list[bytes] = []
        self.locks: list[list[bytes]] = []
        self.lock_commits: list[list[bytes]] = []
        self.drawer: dict[int, int] = {}  # position -> seat it is privately dealt to
        self.boxes: dict[int, dict[int, bytes]] = {}  # position -> sender -> its key in a box
        self.commits: dict[int, bytes] = {}  # position -> holder's commitment
        self.shown: dict[int, str] = {}  # position -> card its holder showed
        self.opened: dict[int, dict[int, bytes]] = {}  # position -> seat -> published key
        self.revealed: dict[int, str | None] = {}  # position -> card opened by everyone
        self.openings: dict[int, Opening] = {}
        self.faults: list[DealFault] = []  # cheating found live (the message itself was fine)
        self.accused: set[tuple[int, int]] = set()  # (position, sender) proven wrong by its drawer
        self._result: DealResult | None = None
        self._findings: list[DealFault] | None = None

    # ---- where the deal stands ---------------------------------------------------------------

    @property
    def phase(self) -> str:
        if len(self.shuffles) < self.seats:
            return "shuffle"
        if len(self.locks) < self.seats:
            return "lock"
        if len(self.openings) == self.seats:
            return "done"
        return "closing" if self.openings else "play"

    @property
    def turn(self) -> int | None:
        """The seat whose shuffle or lock pass is due, or None after the lock pass."""
        if self.phase == "shuffle":
            return len(self.shuffles)
        if self.phase == "lock":
            return len(self.locks)
        return None

    @property
    def current(self) -> list[bytes]:
        """The list the next pass works on (after the lock pass: the locked deck)."""
        if self.locks:
            return self.locks[-1]
        return self.shuffles[-1] if self.shuffles else list(self.deck.points)

    def delivered(self, position: int) -> bool:
        """Every other seat's key for a privately dealt position has been sent to its drawer."""
        return position in self.drawer and len(self.boxes[position]) == self.seats - 1

    def waiting_for(self) -> tuple[int, ...]:
        """Seats that owe a message for the deal to go on (for deadlines and defaults)."""
        phase = self.phase
        if phase in ("shuffle", "lock"):
            return (self.turn,)
        if phase == "done":
            return ()
        if phase == "closing":
            return tuple(s for s in range(self.seats) if s not in self.openings)
        owing = set()
        for j, to in self.drawer.items():
            owing.update(s for s in range(self.seats) if s != to and s not in self.boxes[j])
            if self.delivered(j) and j not in self.commits:
                owing.add(to)
        for j, keys in self.opened.items():
            if j not in self.revealed:
                owing.update(s for s in range(self.seats) if s not in keys)
        for j in self.shown:
            if j not in self.opened:
                owing.update(range(self.seats))
        return tuple(sorted(owing))

    # ---- accepting messages ------------------------------------------------------------------

    def accept(self, seat: int, body) -> None:
        """Check and apply one "deal" body from `seat`; DealRefused (state unchanged) if it is bad."""
        if type(seat) is not int or not 0 <= seat < self.seats:
            raise DealRefused(None, f"a deal message came from seat {seat!r}, which is not at this table")
        if not isinstance(body, dict):
            raise DealRefused(seat, "sent a deal message that is not a map")
        if body.get("deck") != self.deck.id:
            raise DealRefused(seat, "sent a deal message for another deck")
        step = body.get("step")
        if step not in STEPS:
            raise DealRefused(seat, f"sent an unknown deal step {step!r:.40}")
        expected = _FIELDS[step]
        if set(body) != expected | {"deck", "step"}:
            raise DealRefused(seat, f"sent a {step} message with fields {sorted(map(str, body))}, "
                                    f"expected {sorted(expected | {'deck', 'step'})}")
        phase = self.phase
        if step in ("shuffle", "lock"):
            if phase != step or self.turn != seat:
                raise DealRefused(seat, f"sent a {step} pass out of turn (due: {phase} by seat {self.turn})")
        elif step == "opening":
            if phase in ("shuffle", "lock", "done") or seat in self.openings:
                raise DealRefused(seat, f"sent an opening during the {phase} phase or twice")
        elif phase != "play":
            raise DealRefused(seat, f"sent a {step} message during the {phase} phase")
        getattr(self, f"_accept_{step}")(seat, body)

    def _accept_shuffle(self, seat: int, body: dict) -> None:
        points = _distinct_points(body["points"], seat, "shuffle", len(self.deck))
        draw_key = _blob(body["draw_key"], seat, "a draw key", 32)
        try:
            _PROBE.exchange(X25519PublicKey.from_public_bytes(draw_key))
        except ValueError:
            raise DealRefused(seat, "sent a draw key of small order") from None
        self.shuffles.append(points)
        self.draw_keys.append(draw_key)

    def _accept_lock(self, seat: int, body: dict) -> None:
        points = _distinct_points(body["points"], seat, "lock", len(self.deck))
        commits = [check_point(p, seat, "a key commitment")
                   for p in strict_list(body["commits"], seat, "key commitments", len(self.deck))]
        self.locks.append(points)
        self.lock_commits.append(commits)

    def _accept_draw(self, seat: int, body: dict) -> None:
        to = _int(body["to"], seat, "a drawer", self.seats)
        if to == seat:
            raise DealRefused(seat, "sent its own keys to itself")
        positions = _positions(body["positions"], seat, len(self.deck))
        boxes = [_blob(b, seat, "a key box", BOX_BYTES)
                 for b in strict_list(body["boxes"], seat, "key boxes", len(positions))]
        for j in positions:
            if j in self.opened or j in self.revealed:
                raise DealRefused(seat, f"sent a private key for position {j}, which is being opened publicly")
            if self.drawer.get(j, to) != to:
                raise DealRefused(seat, f"sent its key for position {j} to seat {to}, "
                                        f"but position {j} is dealt to seat {self.drawer[j]}")
            if seat in self.boxes.get(j, {}):
                raise DealRefused(seat, f"sent its key for position {j} twice")
        for j, box in zip(positions, boxes):
            self.drawer[j] = to
            self.boxes.setdefault(j, {})[seat] = box

    def _accept_accuse(self, seat: int, body: dict) -> None:
        j = _int(body["position"], seat, "a position", len(self.deck))
        sender = _int(body["sender"], seat, "a seat", self.seats)
        secret = _blob(body["draw_secret"], seat, "a draw secret", 32)
        if self.drawer.get(j) != seat or sender not in self.boxes.get(j, {}):
            raise DealRefused(seat, f"accused seat {sender} over position {j}, which seat {sender} never sent it")
        if (j, sender) in self.accused:
            raise DealRefused(seat, f"accused seat {sender} over position {j} twice")
        if x25519_public(secret) != self.draw_keys[seat]:
            raise DealRefused(seat, "accused with a draw secret that is not the one it published")
        if box_key_is_right(secret, self.boxes[j][sender], self, j, sender, seat):
            raise DealRefused(seat, f"accused seat {sender} falsely: its key for position {j} is right")
        self.accused.add((j, sender))
        self.faults.append(DealFault(sender, f"sent seat {seat} a wrong key for position {j}"))

    def _accept_hold(self, seat: int, body: dict) -> None:
        positions = _positions(body["positions"], seat, len(self.deck))
        commits = [_blob(c, seat, "a commitment", 32)
                   for c in strict_list(body["commits"], seat, "commitments", len(positions))]
        for j in positions:
            if self.drawer.get(j) != seat:
                raise DealRefused(seat, f"committed to position {j}, which is not dealt to it")
            if not self.delivered(j):
                raise DealRefused(seat, f"committed to position {j} before every key for it was sent")
            if j in self.commits:
                raise DealRefused(seat, f"committed to position {j} twice")
        self.commits.update(zip(positions, commits))

    def _accept_show(self, seat: int, body: dict) -> None:
        j = _int(body["position"], seat, "a position", len(self.deck))
        card = body["card"]
        nonce = _blob(body["nonce"], seat, "a nonce", NONCE_BYTES)
        if self.drawer.get(j) != seat or j not in self.commits:
            raise DealRefused(seat, f"showed a card at position {j}, which it does not hold")
        if j in self.shown:
            raise DealRefused(seat, f"showed the card at position {j} twice")
        if not isinstance(card, str) or card not in self.deck.cards:
            raise DealRefused(seat, f"showed {card!r:.40}, which is not a card of this deck")
        if commitment(self.table_id, self.deck.id, j, card, nonce) != self.commits[j]:
            raise DealRefused(seat, f"showed {card} at position {j}, which does not open its commitment")
        self.shown[j] = card

    def _accept_open(self, seat: int, body: dict) -> None:
        positions = _positions(body["positions"], seat, len(self.deck))
        keys = strict_list(body["keys"], seat, "keys", len(positions))
        for j, key in zip(positions, keys):
            check_scalar(key, seat, f"a key for position {j}")
            if j in self.drawer and j not in self.shown:
                raise DealRefused(seat, f"opened its key for position {j} before the holder showed the card")
            if seat in self.opened.get(j, {}):
                raise DealRefused(seat, f"opened its key for position {j} twice")
            if base_mul(key) != self.lock_commits[seat][j]:
                raise DealRefused(seat, f"sent a wrong key for position {j}")
        for j, key in zip(positions, keys):
            self.opened.setdefault(j, {})[seat] = key
            if len(self.opened[j]) == self.seats:
                self._reveal(j)

    def _reveal(self, j: int) -> None:
        keys = self.opened[j]
        card = self.deck.decode(mul(self.locks[-1][j], invert(product(keys[s] for s in range(self.seats)))))
        self.revealed[j] = card
        if card is None:
            self.faults.append(DealFault(None, f"position {j} opens to no card of the deck: a shuffle or lock "
                                               "pass was broken (the end-of-deal opening names the seat)"))
        elif j in self.shown and self.shown[j] != card:
            self.faults.append(DealFault(self.drawer[j], f"showed {self.shown[j]} at position {j} "
                                                         f"but was dealt {card}"))

    def _accept_opening(self, seat: int, body: dict) -> None:
        size = len(self.deck)
        deck_key = check_scalar(body["deck_key"], seat, "a deck key")
        perm = tuple(_int(p, seat, "a permutation entry", size) for p in strict_list(body["perm"], seat, "permutation entries", size))
        if len(set(perm)) != size:
            raise DealRefused(seat, "opened a permutation that is not a permutation")
        keys = tuple(check_scalar(k, seat, "a position key") for k in strict_list(body["keys"], seat, "position keys", size))
        box_seed = _blob(body["box_seed"], seat, "a box seed", 32)
        held = {}
        for entry in strict_list(body["held"], seat, "held cards"):
            entry = strict_list(entry, seat, "fields of a held card", 3)
            j = _int(entry[0], seat, "a held position", size)
            if not isinstance(entry[1], str) or j in held:
                raise DealRefused(seat, f"opened a malformed or repeated held card at position {j}")
            held[j] = (entry[1], _blob(entry[2], seat, "a nonce", NONCE_BYTES))
        self.openings[seat] = Opening(deck_key, perm, keys, box_seed, held)

    # ---- the end-of-deal replay --------------------------------------------------------------

    @property
    def complete(self) -> bool:
        return self.phase == "done"

    def audit(self) -> DealResult:
        """Replay the opened deal; the first DealFault in protocol order, or the full DealResult."""
        faults = self.findings()
        if faults:
            raise faults[0]
        return self._result

    def findings(self) -> list[DealFault]:
        """Every fault the replay finds, in protocol order (shuffles, locks, private keys, claims)."""
        if not self.complete:
            missing = [s for s in range(self.seats) if s not in self.openings]
            raise DealError(None, f"the deal is not fully opened yet (waiting for seats {missing})")
        if self._findings is None:
            self._findings = self._replay()
        return self._findings

    def _replay(self) -> list[DealFault]:
        faults: list[DealFault] = []
        size, seats, opens = len(self.deck), self.seats, self.openings
        previous = list(self.deck.points)
        for s in range(seats):
            moved = [mul(p, opens[s].deck_key) for p in previous]
            expected = [moved[m] for m in opens[s].perm]
            if expected != self.shuffles[s]:
                faults.append(DealFault(s, _shuffle_fault(moved, self.shuffles[s])))
            previous = self.shuffles[s]
        for s in range(seats):
            unlock = invert(opens[s].deck_key)
            for j in range(size):
                key = opens[s].keys[j]
                if base_mul(key) != self.lock_commits[s][j]:
                    faults.append(DealFault(s, f"opened a key for position {j} that differs from its lock commitment"))
                    break
                if mul(previous[j], scalar_mul(unlock, key)) != self.locks[s][j]:
                    faults.append(DealFault(s, f"broke its lock pass at position {j}"))
                    break
            previous = self.locks[s]
        cards = tuple(self.deck.decode(mul(previous[j], invert(product(opens[s].keys[j] for s in range(seats)))))
                      for j in range(size))
        if not faults and None in cards:  # cannot happen when every pass replays; kept as a guard
            faults.append(DealFault(None, f"position {cards.index(None)} opens to no card of the deck"))
        for j in sorted(self.drawer):
            to = self.drawer[j]
            for sender, box in sorted(self.boxes[j].items()):
                secret = X25519PrivateKey.from_private_bytes(box_secret(opens[sender].box_seed, self.deck.id, j, to))
                if x25519_public(box_secret(opens[sender].box_seed, self.deck.id, j, to)) != box[:32]:
                    faults.append(DealFault(sender, f"sent seat {to} a key box for position {j} that its box seed does not make"))
                    continue
                shared = secret.exchange(X25519PublicKey.from_public_bytes(self.draw_keys[to]))
                if open_box(shared, box, box_context(self.table_id, self.deck.id, j, sender, to)) != opens[sender].keys[j]:
                    faults.append(DealFault(sender, f"sent seat {to} a wrong key for position {j}"))
        for s in range(seats):
            for j, (card, nonce) in sorted(opens[s].held.items()):
                if self.drawer.get(j) != s or j not in self.commits:
                    faults.append(DealFault(s, f"claimed {card} at position {j}, which it was not dealt"))
        for j in sorted(self.commits):
            holder = self.drawer[j]
            if j not in opens[holder].held:
                faults.append(DealFault(holder, f"did not open its card at position {j}"))
                continue
            card, nonce = opens[holder].held[j]
            if commitment(self.table_id, self.deck.id, j, card, nonce) != self.commits[j]:
                faults.append(DealFault(holder, f"opened {card} at position {j}, which does not match its commitment"))
            elif cards[j] is not None and card != cards[j]:
                faults.append(DealFault(holder, f"claimed {card} at position {j} but was dealt {cards[j]}"))
        for j, card in sorted(self.shown.items()):
            if cards[j] is not None and card != cards[j]:
                faults.append(DealFault(self.drawer[j], f"showed {card} at position {j} but was dealt {cards[j]}"))
        self._result = DealResult(cards, dict(self.drawer))
        return faults


def box_key_is_right(draw_secret: bytes, box: bytes, deal: "Deal", j: int, sender: int, to: int) -> bool:
    """Whether a key box opens with the drawer's secret to the key `sender` committed to for `j`."""
    try:
        shared = X25519PrivateKey.from_private_bytes(draw_secret).exchange(X25519PublicKey.from_public_bytes(box[:32]))
    except ValueError:  # a small-order ephemeral key: no box can be opened from it
        return False
    key = open_box(shared, box, box_context(deal.table_id, deal.deck.id, j, sender, to))
    return (key is not None and len(key) == 32 and 0 < int.from_bytes(key, "little") < ORDER
            and base_mul(key) == deal.lock_commits[sender][j])


def _shuffle_fault(moved: list[bytes], published: list[bytes]) -> str:
    """Say how a shuffle pass fails its replay."""
    kept = set(moved) & set(published)
    if len(kept) == len(published):
        return "opened a permutation that does not match its shuffle pass"
    if kept:
        return f"substituted {len(published) - len(kept)} card(s) in its shuffle pass"
    return "opened a deck key that does not match its shuffle pass (a broken shuffle)"


_FIELDS = {
    "shuffle": {"points", "draw_key"},
    "lock": {"points", "commits"},
    "draw": {"to", "positions", "boxes"},
    "accuse": {"position", "sender", "draw_secret"},
    "hold": {"positions", "commits"},
    "show": {"position", "card", "nonce"},
    "open": {"positions", "keys"},
    "opening": {"deck_key", "perm", "keys", "box_seed", "held"},
}
