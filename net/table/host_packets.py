"""The host's packets to a joiner, tagged end to end: a relay (or anything on the path) can drop them, never forge or replay them.
(PROTOCOL.md §10.4)

Frames are signed by their seats, but the host's own control packets (`welcome`, `full`, `refused`,
`pong`, `presence`, `fault`, and the `entries` that carry the log) are not frames: through a relay
(net/reach/relay.py) the relay could otherwise speak for the host, e.g. tell every seat "seat 2 is away"
until they claim an honest seat in default. So every packet the host sends to a connection whose
hello proved its key travels as

    tagged {n: int, packet: bin, tag: bin16}     packet: the inner `[op, body]`, as the host packed it

with `tag` = HMAC-SHA256(key, TAG_LABEL ‖ n as 8 bytes ‖ packet), cut to 16 bytes, and `n` counting
up from 1 per key. The key is one hello's: the joiner makes a fresh X25519 key pair for each hello
and puts its public half (`box`) into the hello, under its signed proof (`wire.hello_bytes`); the
host answers with its own static X25519 key, which the joiner already holds from the invite:

    direct invite (`dt1-`)   the host's CurveZMQ key (the invite's host key: the same profile key)
    relay invite (`dr1-`)    the owner's Ed25519 key as an X25519 key (the birational map libsodium uses)

    key = HMAC-SHA256(crypto_box_beforenm(host box, joiner box), KEY_LABEL ‖ table ‖ host box ‖
                      joiner box ‖ challenge ‖ joiner's Ed25519 key)

Only the host and that joiner can compute it, it is new for every hello (fresh box, and the host's
challenge changes with each connection and host run), and it is bound to the table and to this one
direction (only the host tags). The joiner keeps the keys of its last few hellos and takes a packet
only under one of them, each counter once: a sliding window per key (`Window`, as IPsec and DTLS
keep one) holds the highest counter taken and which of the WINDOW below it were, so a packet that
a slow or reordering path delivers after a later one is still taken, once; a copy of one taken
(a replay, or a packet the path doubled) is refused, and one older than the window is stale: dropped,
blamed on nobody (its tag is the host's; the seat asks for what it lacks by log index anyway).
Once a newer hello's key is in use nothing is taken under the older ones; a packet copied from
another connection or an earlier host run opens under no key and is refused. (A late answer to a
superseded hello — two hellos racing after a reconnect — is still known as the host's: dropped,
but blamed on nobody.) `who` (the host's challenge, before any key) is the
one untagged packet: all it can make a joiner do is say hello again.

The joiner's packets to the orderer (`ping`, `submit`, `give`: all but the hello itself) travel the
same way under the same key and the joiner's own counter, for the newest hello the orderer answered
(`HostLink.seal`), but sealed rather than tagged: `packet` is encrypted (ChaCha20-Poly1305 under
HMAC-SHA256(key, SEAL_LABEL), nonce = n as 12 bytes, SEAT_LABEL as associated data) and `tag` is its
16-byte Poly1305 tag. A relay carries a seat's unordered reveals and moves: were they readable, it could
read a seat's reveal before the orderer has ordered it and then drop that seat's packets (PROTOCOL.md
§10.4, §19 point 2). Before any answer they go plain, and a joiner holds its `submit`s until one comes
(net/table/joiner.py). The
orderer (`Tagger.take`) opens them under that hello's key, or an earlier hello's of the same seat
until one under the newer key arrives (sent before the answer came); any other packet before then
makes it ask for a hello again (the seat may have missed the answer, e.g. after a hand-over). The
orderer keeps the same window per key: a late or reordered packet is taken once, a stale one (older
than the window, or under an earlier hello's key once the newer one is in use) is dropped and
blamed on nobody (LATE), and it counts for nothing, presence included. Once the seat has used the key, a plain, replayed or unopenable
packet on its connection is not the seat's (`Forged`): a relay cannot keep a gone seat "present" with
its old pings, nor have its old submit ordered again.

A seat that orders in the host seat's place (net/table/succession.py) tags with its own seat key, its
Ed25519 key from its join frame mapped to X25519 (`host_box(profile, relayed=True)`, as the owner's).
A joiner takes those tags only once its own clock says the orderer is gone past the grace (`trust`,
called by the succession logic), and only from seats of the log; until then the owner's key alone
opens anything. Each hello is answered by one orderer: the first whose tag opens a packet under it,
after which no other seat's key opens anything under that hello, nor under a later one until `trust`
is called again (the next hand-over); `orderer` names that seat, so a seat that sent what does not
fit the log is named, not "the host or the relay".
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from nacl.bindings import crypto_box_beforenm
from nacl.exceptions import CryptoError
from nacl.public import PrivateKey
from nacl.signing import VerifyKey

from dicetable.net.reach.transport import BadPacket, pack, unpack

KEY_LABEL = b"dicetable/control-key/v1"
TAG_LABEL = b"dicetable/host-to-seat/v1"
SEAT_LABEL = b"dicetable/seat-to-host/v1"
SEAL_LABEL = b"dicetable/seat-to-host-seal/v1"
TAG_BYTES = 16
BOX_BYTES = 32
MAX_COUNTER = 2**63 - 1
KEYS_KEPT = 4  # a joiner's hellos whose answer may still be on its way (a lost ping makes a second)
WINDOW = 256  # counters below the highest taken that may still arrive late, once (a second of a busy table's packets and more)
FIELDS = frozenset({"n", "packet", "tag"})
LATE = ("late", {})  # HostLink.open, Tagger.take: the other side's own packet, stale (taken never, blamed on nobody)


class BadBox(ValueError):
    """A box key no shared secret comes from (a low-order point): the hello proved a useless key."""


class Forged(ValueError):
    """A packet on a seat's connection that the seat did not send (the message says how it fails)."""


def host_box(profile, relayed: bool) -> PrivateKey:
    """The host's static X25519 key, as its joiners' invites name it (module docstring)."""
    if relayed:
        return profile.signing_key.to_curve25519_private_key()
    return PrivateKey(profile.curve_secret)


def host_box_public(invite) -> bytes:
    """The host's X25519 key the joiner holding `invite` trusts: from the owner key, or the host key."""
    if invite.owner is None:
        return invite.host_key
    box = seat_box_public(invite.owner)
    if box is None:
        raise BadBox("its owner key is not an Ed25519 public key")
    return box


def seat_box_public(key: bytes) -> bytes | None:
    """The X25519 key a seat with Ed25519 key `key` tags with when it orders, or None if it has none."""
    try:
        return bytes(VerifyKey(key).to_curve25519_public_key())
    except (CryptoError, ValueError, TypeError):  # not a point of the curve: nobody holds its secret
        return None


def link_key(shared: bytes, table: bytes, host_public: bytes, joiner_box: bytes, challenge: bytes, joiner_key: bytes) -> bytes:
    return hmac.digest(shared, KEY_LABEL + table + host_public + joiner_box + challenge + joiner_key, "sha256")


def _tag(key: bytes, n: int, packet: bytes, label: bytes = TAG_LABEL) -> bytes:
    return hmac.digest(key, label + n.to_bytes(8, "big") + packet, "sha256")[:TAG_BYTES]


def _seat_cipher(key: bytes) -> ChaCha20Poly1305:
    """What a seat's packets to the orderer are sealed with under one hello's key (module docstring)."""
    return ChaCha20Poly1305(hmac.digest(key, SEAL_LABEL, "sha256"))


def _seat_sealed(cipher: ChaCha20Poly1305, n: int, op: str, body: dict | None) -> dict:
    sealed = cipher.encrypt(n.to_bytes(12, "big"), pack(op, body), SEAT_LABEL)
    return {"n": n, "packet": sealed[:-TAG_BYTES], "tag": sealed[-TAG_BYTES:]}


def _seat_opened(cipher: ChaCha20Poly1305, n: int, packet: bytes, tag: bytes) -> bytes | None:
    try:
        return cipher.decrypt(n.to_bytes(12, "big"), packet + tag, SEAT_LABEL)
    except InvalidTag:
        return None


def _fields(body) -> tuple[int, bytes, bytes] | None:
    """A `tagged` body's counter, packet and tag, or None when it is not one."""
    if type(body) is not dict or set(body) != FIELDS:
        return None
    n, packet, tag = body["n"], body["packet"], body["tag"]
    if type(n) is not int or not 0 < n <= MAX_COUNTER or type(packet) is not bytes or type(tag) is not bytes:
        return None
    return n, packet, tag


class Window:
    """Which counters under one key were taken (RFC 4303 §3.4.3's anti-replay window): the highest,
    and a bitmap of the WINDOW below it. A counter above the highest, or inside the window and not
    yet taken, is new; one taken is a replay; one below the window is stale (it may be new, or not:
    nobody can tell any more, so it is dropped, and blamed on nobody)."""

    __slots__ = ("top", "bits")

    def __init__(self) -> None:
        self.top = 0  # the highest counter taken (0: none yet)
        self.bits = 0  # bit i set: counter top - i was taken (bit 0 is `top` itself)

    def check(self, n: int) -> str:
        """"new", "replayed" or "stale" for counter `n` (nothing changes: `take` once the packet opened)."""
        if n > self.top:
            return "new"
        behind = self.top - n
        if behind >= WINDOW:
            return "stale"
        return "replayed" if self.bits >> behind & 1 else "new"

    def take(self, n: int) -> None:
        if n > self.top:
            self.bits = (self.bits << (n - self.top) | 1) & ((1 << WINDOW) - 1)
            self.top = n
        else:
            self.bits |= 1 << (self.top - n)


@dataclass
class Tagger:
    """The host's side of one hello: tags every packet it sends that connection, opens the seat's."""

    key: bytes
    sent: int = 0
    older: list["Tagger"] = field(default_factory=list, repr=False)  # the seat's earlier hellos, until this one is used
    retired: list["Tagger"] = field(default_factory=list, repr=False)  # ... and after: what opens under them is stale

    def __post_init__(self) -> None:
        self.cipher = _seat_cipher(self.key)  # opens the seat's sealed packets
        self.window = Window()  # the counters taken from the seat under this key

    @property
    def received(self) -> int:
        """The highest counter taken from the seat under this key (0: the seat has not used it yet)."""
        return self.window.top

    @classmethod
    def answering(cls, box: PrivateKey, joiner_box: bytes, table: bytes, challenge: bytes, joiner_key: bytes) -> "Tagger":
        """The tagger for a hello that proved `joiner_key` and offered `joiner_box`; BadBox if it is useless."""
        try:
            shared = crypto_box_beforenm(joiner_box, bytes(box))
        except (CryptoError, ValueError, TypeError):
            raise BadBox("the hello's box key gives no shared secret") from None
        return cls(link_key(shared, table, bytes(box.public_key), joiner_box, challenge, joiner_key))

    def seal(self, op: str, body: dict | None) -> dict:
        """The body of the `tagged` packet that carries `[op, body]`."""
        return self.seal_packed(pack(op, body))

    def seal_packed(self, packet: bytes) -> dict:
        """The body of the `tagged` packet that carries `packet`, an `[op, body]` packed already: a
        packet for every seat is packed once and only tagged per seat (`Orderer.tell_all`)."""
        self.sent += 1
        return {"n": self.sent, "packet": packet, "tag": _tag(self.key, self.sent, packet)}

    def keep(self, previous: list["Tagger"]) -> None:
        """The same seat's earlier hellos (this connection's, or its last one's) still open what it sent
        before this hello's answer reached it, until a packet under this one's key arrives."""
        self.older = [t for p in previous for t in (*p.older, p)][-(KEYS_KEPT - 1):]

    def take(self, op: str, body) -> tuple[str, dict] | None:
        """The seat's packet `[op, body]` opened; None when it may be the seat's own from before this
        key (plain: it has no answer yet; tagged: an earlier orderer's key); LATE when it is the seat's
        but stale (older than the window, or under a key a newer one replaced); Forged when it is not
        the seat's, or a copy of one taken."""
        fields = _fields(body) if op == "tagged" else None
        if fields is not None:
            n, packet, tag = fields
            for tagger in (self, *reversed(self.older)):
                inner = _seat_opened(tagger.cipher, n, packet, tag)
                if inner is not None:
                    seen = tagger.window.check(n)
                    if seen == "replayed":
                        raise Forged("replayed")
                    if seen == "stale":
                        return LATE
                    try:
                        opened = unpack(inner)
                    except BadPacket:
                        raise Forged("not a packet inside its tag") from None
                    tagger.window.take(n)
                    if tagger is self and self.older:
                        self.retired, self.older = self.older, []
                    return opened
            if any(_seat_opened(t.cipher, n, packet, tag) is not None for t in self.retired):
                return LATE  # sent before this key's answer reached the seat, arriving after its first packet under it
        if self.received:  # the seat tags everything once it has used this key
            raise Forged("altered or forged" if op == "tagged" else "untagged")
        return None


@dataclass
class Hello:
    """One hello of the joiner: its fresh box, and the key each orderer it may hear from answers with."""

    mine: PrivateKey
    challenge: bytes
    joiner_key: bytes
    keys: dict[int, list] = field(default_factory=dict)  # orderer's seat -> [key, Window of the counters taken]
    answered: bool = False  # a packet under it opened: its orderer is the one left in `keys`
    sent: int = 0  # packets this joiner sealed under it
    cipher: ChaCha20Poly1305 | None = field(default=None, repr=False)  # its key's, once answered

    def add(self, table: bytes, seat: int, public: bytes) -> bool:
        """Derive the key under which `seat` (X25519 key `public`) answers this hello; False if none."""
        try:
            shared = crypto_box_beforenm(public, bytes(self.mine))
        except (CryptoError, ValueError, TypeError):
            return False
        box = bytes(self.mine.public_key)
        self.keys[seat] = [link_key(shared, table, public, box, self.challenge, self.joiner_key), Window()]
        return True


@dataclass
class HostLink:
    """The joiner's side: a fresh box for each hello, and the check of every packet from the orderer
    (the host seat, or after a hand-over a seat `trust` named)."""

    table: bytes
    host_public: bytes
    orderers: dict[int, bytes] = field(default_factory=dict)  # seat -> X25519 key it may tag with; 0: the host's
    hellos: list[Hello] = field(default_factory=list, repr=False)  # oldest first; their keys are secrets
    retired: list[Hello] = field(default_factory=list, repr=False)  # older hellos a newer one's answer superseded
    refused: int = 0  # packets that were not the orderer's, or not new
    orderer: int | None = None  # the seat whose tag opened the last packet taken

    def __post_init__(self):
        self.orderers.setdefault(0, self.host_public)

    def box_for(self, challenge: bytes, joiner_key: bytes) -> bytes:
        """A fresh box public key for a hello answering `challenge`; its keys are kept for the answer."""
        hello = Hello(PrivateKey.generate(), challenge, joiner_key)
        if not hello.add(self.table, 0, self.host_public):
            raise BadBox("the invite's host key gives no shared secret (a damaged invite?)")
        for seat, public in self.orderers.items():
            if seat != 0:
                hello.add(self.table, seat, public)
        self._retire(self.hellos[:-(KEYS_KEPT - 1)])
        self.hellos = [*self.hellos[-(KEYS_KEPT - 1):], hello]
        return bytes(hello.mine.public_key)

    def trust(self, orderers: dict[int, bytes]) -> None:
        """Also take tags from these seats (seat -> X25519 key): the orderer is gone past the grace
        (net/table/succession.py). Hellos no orderer has answered yet take them too; the host's key stays."""
        for seat, public in orderers.items():
            if seat in self.orderers:
                continue
            self.orderers[seat] = public
            for hello in self.hellos:
                if not hello.answered:
                    hello.add(self.table, seat, public)

    def answered(self) -> bool:
        """Whether the orderer answered one of my hellos: my packets to it go sealed from now on."""
        return any(hello.answered for hello in self.hellos)

    def seal(self, op: str, body: dict | None) -> tuple[str, dict | None]:
        """A packet for the orderer: sealed under the newest hello it answered, or plain before any answer."""
        for hello in reversed(self.hellos):
            if hello.answered:
                ((key, _),) = hello.keys.values()
                if hello.cipher is None:
                    hello.cipher = _seat_cipher(key)
                hello.sent += 1
                return "tagged", _seat_sealed(hello.cipher, hello.sent, op, body)
        return op, body

    def open(self, body: dict) -> tuple[str, dict] | None:
        """The orderer's packet inside a `tagged` body; None (counted) when it is forged, altered or
        a copy of one taken (`Window`); LATE when it is the orderer's own word but stale: older than
        the window, or an answer to a hello a newer one's answer superseded (two hellos racing after a
        reconnect), so taken never and blamed on nobody."""
        fields = _fields(body)
        if fields is None:
            return self._refuse()
        n, packet, tag = fields
        for index in range(len(self.hellos) - 1, -1, -1):
            hello = self.hellos[index]
            for seat, (key, window) in hello.keys.items():
                if hmac.compare_digest(_tag(key, n, packet), tag):
                    seen = window.check(n)
                    if seen == "replayed":
                        return self._refuse()  # a copy of a packet taken: the path replayed or doubled it
                    if seen == "stale":
                        return LATE
                    try:
                        opened = unpack(packet)
                    except BadPacket:
                        return self._refuse()
                    window.take(n)
                    self._retire(self.hellos[:index])  # a newer hello answered: the older keys take nothing any more
                    self.hellos = self.hellos[index:]
                    hello.keys, hello.answered = {seat: [key, window]}, True  # no other seat speaks under this hello
                    if self.orderer != seat:
                        self._settle(seat)
                    self.orderer = seat
                    return opened
        for hello in self.retired:
            if any(hmac.compare_digest(_tag(key, n, packet), tag) for key, _ in hello.keys.values()):
                return LATE
        return self._refuse()

    def _retire(self, hellos: list[Hello]) -> None:
        """Keep superseded hellos' keys a while, to know a late answer to one (not to take it)."""
        self.retired = [*self.retired, *hellos][-KEYS_KEPT:]

    def _settle(self, seat: int) -> None:
        """`seat` orders now: until `trust` is called again, only it and the host may answer a hello."""
        self.orderers = {s: public for s, public in self.orderers.items() if s in (0, seat)}
        for hello in self.hellos:
            if not hello.answered:
                hello.keys = {s: k for s, k in hello.keys.items() if s in self.orderers}

    def _refuse(self) -> None:
        self.refused += 1
        return None
