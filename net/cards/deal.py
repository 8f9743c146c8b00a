"""Hidden cards without a dealer (FAIRNESS.md §2): the commutative-encryption deal, checked by all.

Pure and I/O-free, independent of any game. The objects:

- `Deal` is the public state of one deck's deal: every peer (and `verify`) feeds it the bodies of
  the "deal" records in log order with `accept(seat, body)`. It holds no secret. A bad message is
  refused with `DealRefused` naming its author and leaves the state unchanged; cheating that only
  shows later is a `DealFault` naming the seat (in `faults` when found live, from `audit()` at the
  end).
- `Party` holds one seat's secrets for that deck and produces its message bodies; with the public
  `Deal` it opens the cards dealt to it (`hand`). Its secrets round-trip through
  `to_data`/`from_data` so a crashed peer can resume (FAIRNESS.md §6).
- `DealBook` holds every deck of a table (a "deck" body declares one; the deck id binds table,
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
             ChaCha20-Poly1305. The drawer checks each key against K (a wrong key names the sender).
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
import os
import secrets
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from dicetable.core.chance import permutation
from dicetable.net.cards.points import (
    ORDER,
    Deck,
    base_mul,
    deck_id,
    check_point,
    check_scalar,
    invert,
    mul,
    product,
    random_scalar,
    scalar_mul,
)
from dicetable.net.refusals import DealError, DealFault, DealRefused

HOLD_TAG = b"dicetable/hold/v1"
DRAW_TAG = b"dicetable/draw/v1"
BOX_TAG = b"dicetable/box/v1"
NONCE_BYTES = 32
BOX_BYTES = 32 + 32 + 16  # ephemeral X25519 key, encrypted key, Poly1305 tag
STEPS = ("shuffle", "lock", "draw", "accuse", "hold", "show", "open", "opening")
MAX_DECLARED = 16  # decks one DealBook takes by declaration (the deal demo declares one)
MAX_CARDS = 1024  # cards in a declared deck
_ZERO_NONCE = bytes(12)  # each box has its own ephemeral key, hence its own AEAD key
_PROBE = X25519PrivateKey.from_private_bytes(bytes(range(32)))


def commitment(table_id: bytes, deck: bytes, position: int, card: str, nonce: bytes) -> bytes:
    """The holder's commitment to the card at `position` (the variable-length card comes last)."""
    return hashlib.sha256(HOLD_TAG + table_id + deck + position.to_bytes(4, "big") + nonce + card.encode()).digest()


def _x25519_public(secret: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _box_context(table_id: bytes, deck: bytes, position: int, sender: int, to: int) -> bytes:
    return DRAW_TAG + table_id + deck + position.to_bytes(4, "big") + bytes([sender, to])


def _box_secret(box_seed: bytes, deck: bytes, position: int, to: int) -> bytes:
    """The ephemeral X25519 secret of one box, derived so the end-of-deal opening can re-check it."""
    return hashlib.sha256(BOX_TAG + box_seed + deck + position.to_bytes(4, "big") + bytes([to])).digest()


def _box_key(shared: bytes, context: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=context).derive(shared)


def _make_box(box_seed: bytes, drawer_public: bytes, table_id: bytes, deck: bytes, position: int,
              sender: int, to: int, key: bytes) -> bytes:
    """`key` encrypted for seat `to`'s draw key: the ephemeral public key, then the AEAD ciphertext."""
    secret = X25519PrivateKey.from_private_bytes(_box_secret(box_seed, deck, position, to))
    ephemeral = secret.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    context = _box_context(table_id, deck, position, sender, to)
    aead_key = _box_key(secret.exchange(X25519PublicKey.from_public_bytes(drawer_public)), context)
    return ephemeral + ChaCha20Poly1305(aead_key).encrypt(_ZERO_NONCE, key, context)


def _open_box(shared: bytes, box: bytes, context: bytes) -> bytes | None:
    try:
        return ChaCha20Poly1305(_box_key(shared, context)).decrypt(_ZERO_NONCE, box[32:], context)
    except InvalidTag:
        return None


# ---- strict body checks: each raises DealRefused naming the author --------------------------------

def _int(value, seat: int, what: str, below: int) -> int:
    if type(value) is not int or not 0 <= value < below:
        raise DealRefused(seat, f"sent {what} that is not an integer in 0..{below - 1}")
    return value


def _blob(value, seat: int, what: str, size: int) -> bytes:
    if type(value) is not bytes or len(value) != size:
        raise DealRefused(seat, f"sent {what} that is not {size} bytes")
    return value


def _list(value, seat: int, what: str, length: int | None = None) -> list:
    if type(value) not in (list, tuple):
        raise DealRefused(seat, f"sent {what} that is not a list")
    if length is not None and len(value) != length:
        raise DealRefused(seat, f"sent {len(value)} {what}, not {length}")
    return list(value)


def _positions(value, seat: int, size: int) -> list[int]:
    positions = [_int(p, seat, "a position", size) for p in _list(value, seat, "positions")]
    if not positions or len(set(positions)) != len(positions):
        raise DealRefused(seat, "sent an empty or repeating list of positions")
    return positions


def _distinct_points(value, seat: int, what: str, size: int) -> list[bytes]:
    points = [check_point(p, seat, f"a {what} point") for p in _list(value, seat, f"{what} points", size)]
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
                   for p in _list(body["commits"], seat, "key commitments", len(self.deck))]
        self.locks.append(points)
        self.lock_commits.append(commits)

    def _accept_draw(self, seat: int, body: dict) -> None:
        to = _int(body["to"], seat, "a drawer", self.seats)
        if to == seat:
            raise DealRefused(seat, "sent its own keys to itself")
        positions = _positions(body["positions"], seat, len(self.deck))
        boxes = [_blob(b, seat, "a key box", BOX_BYTES)
                 for b in _list(body["boxes"], seat, "key boxes", len(positions))]
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
        if _x25519_public(secret) != self.draw_keys[seat]:
            raise DealRefused(seat, "accused with a draw secret that is not the one it published")
        if _box_key_is_right(secret, self.boxes[j][sender], self, j, sender, seat):
            raise DealRefused(seat, f"accused seat {sender} falsely: its key for position {j} is right")
        self.accused.add((j, sender))
        self.faults.append(DealFault(sender, f"sent seat {seat} a wrong key for position {j}"))

    def _accept_hold(self, seat: int, body: dict) -> None:
        positions = _positions(body["positions"], seat, len(self.deck))
        commits = [_blob(c, seat, "a commitment", 32)
                   for c in _list(body["commits"], seat, "commitments", len(positions))]
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
        keys = _list(body["keys"], seat, "keys", len(positions))
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
        perm = tuple(_int(p, seat, "a permutation entry", size) for p in _list(body["perm"], seat, "permutation entries", size))
        if len(set(perm)) != size:
            raise DealRefused(seat, "opened a permutation that is not a permutation")
        keys = tuple(check_scalar(k, seat, "a position key") for k in _list(body["keys"], seat, "position keys", size))
        box_seed = _blob(body["box_seed"], seat, "a box seed", 32)
        held = {}
        for entry in _list(body["held"], seat, "held cards"):
            entry = _list(entry, seat, "fields of a held card", 3)
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
                secret = X25519PrivateKey.from_private_bytes(_box_secret(opens[sender].box_seed, self.deck.id, j, to))
                if _x25519_public(_box_secret(opens[sender].box_seed, self.deck.id, j, to)) != box[:32]:
                    faults.append(DealFault(sender, f"sent seat {to} a key box for position {j} that its box seed does not make"))
                    continue
                shared = secret.exchange(X25519PublicKey.from_public_bytes(self.draw_keys[to]))
                if _open_box(shared, box, _box_context(self.table_id, self.deck.id, j, sender, to)) != opens[sender].keys[j]:
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


def _box_key_is_right(draw_secret: bytes, box: bytes, deal: "Deal", j: int, sender: int, to: int) -> bool:
    """Whether a key box opens with the drawer's secret to the key `sender` committed to for `j`."""
    try:
        shared = X25519PrivateKey.from_private_bytes(draw_secret).exchange(X25519PublicKey.from_public_bytes(box[:32]))
    except ValueError:  # a small-order ephemeral key: no box can be opened from it
        return False
    key = _open_box(shared, box, _box_context(deal.table_id, deal.deck.id, j, sender, to))
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
        return _x25519_public(self.draw_secret)

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
        boxes = [_make_box(self.box_seed, deal.draw_keys[to], deal.table_id, self.deck.id, j, self.seat, to, self.keys[j])
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
                if not _box_key_is_right(self.draw_secret, box, deal, j, sender, self.seat):
                    raise DealFault(sender, f"sent seat {self.seat} a wrong key for position {j}")
                context = _box_context(deal.table_id, self.deck.id, j, sender, self.seat)
                shared = secret.exchange(X25519PublicKey.from_public_bytes(box[:32]))
                keys.append(_open_box(shared, box, context))
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
            if box is not None and not _box_key_is_right(self.draw_secret, box, deal, j, fault.seat, self.seat):
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
        cards = _list(cards, seat, "cards")
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

