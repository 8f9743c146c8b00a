"""Signed messages: the one codec of the table's log (PROTOCOL.md §4; every kind's body: §4.5).

Signed bytes (what the author's Ed25519 key signs) are the canonical msgpack of the map

    {"body": {...}, "kind": str, "prev": [int, bin32], "seat": int, "seq": int, "table": bin16, "v": 2}

`prev` is the frame's parent: `[n, head]` says the author had seen the first n entries of the log,
whose head hash is `head` (net/log/links.py). Every frame thereby commits to the log before it, so
the log is a hash chain that nobody can rewrite behind a later frame of another seat, and a frame
whose parent a peer does not have is proof that the log was forked (FAIRNESS.md §3). A reveal's
`prev` is not signed and so proves nothing; it is checked all the same.

with every map's keys in sorted order (canonical: the decoder re-encodes and refuses any other
encoding of the same content, so one message has exactly one byte string). On the wire a frame is
the msgpack array `[signed_bytes, signature]`; the signature is 64 bytes, or empty for a "reveal"
(a reveal authenticates itself through the seat's hash chain, FAIRNESS.md §1).

`decode(frame)` returns an `Envelope` or raises a `WireError` subclass, whatever the input; it does
not check the signature (the Replica knows the keys: `envelope.signed_by(key)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import msgpack

from dicetable.net.identity import SIGNATURE_BYTES, verify_signature

VERSION = 2  # 2: the hash-linked log (`prev`) and chains bound to table and seat
TABLE_BYTES = 16
MAX_FRAME = 256 * 1024
MAX_SEATS = 16
MAX_SEQ = 2**32 - 1
MAX_CHAIN = 1 << 20  # longest hash chain a seat may commit to
MAX_EVENT = 2**40
MAX_LOG = 2**32  # log entries a table may have
HASH_BYTES = 32

# Frame size caps per kind: the general cap is for the card deal's point lists.
KIND_CAP = {"deal": MAX_FRAME, "dispute": MAX_FRAME, "chat": 2048, "reveal": 512, "unveil": 8192}
DEFAULT_CAP = 4096
MAX_EVIDENCE = 16  # frames a dispute may carry: its author's frames the log does not hold


class WireError(Exception):
    """A frame that is not a well-formed message of this protocol."""


class TooLarge(WireError):
    pass


class Malformed(WireError):
    pass


class UnknownVersion(WireError):
    pass


class UnknownKind(WireError):
    pass


class BadBody(WireError):
    pass


# -- schemas ---------------------------------------------------------------------------------------
def _bytes(n: int) -> Callable[[Any], bool]:
    return lambda x: type(x) is bytes and len(x) == n


def _int(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda x: type(x) is int and lo <= x <= hi


def _str(most: int, least: int = 0) -> Callable[[Any], bool]:
    """Printable text only: names, chat and reasons reach people's terminals."""
    return lambda x: type(x) is str and least <= len(x) <= most and x.isprintable()


def _bool(x: Any) -> bool:
    return type(x) is bool


def _options(x: Any) -> bool:
    return (
        type(x) is dict
        and len(x) <= 32
        and all(
            type(k) is str
            and 0 < len(k) <= 32
            and k.isprintable()
            and (type(v) in (int, bool) or (type(v) is str and len(v) <= 64 and v.isprintable()))
            for k, v in x.items()
        )
    )


def _move(x: Any) -> bool:
    return (
        type(x) is list
        and 1 <= len(x) <= 16
        and type(x[0]) is str
        and 0 < len(x[0]) <= 32
        and x[0].isprintable()
        and all(
            (type(a) is str and len(a) <= 64 and a.isprintable()) or (type(a) is int and -(2**63) <= a < 2**63)
            for a in x[1:]
        )
    )


def _plain(x: Any, depth: int = 0) -> bool:
    """msgpack-plain data: maps with str keys, lists, bytes, str, int, bool, None."""
    if depth > 8:
        return False
    if type(x) is str:
        return x.isprintable()
    if type(x) in (bytes, bool) or x is None:
        return True
    if type(x) is int:
        return -(2**63) <= x < 2**64
    if type(x) is list:
        return all(_plain(i, depth + 1) for i in x)
    if type(x) is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in x.items())
    return False


def _frame(x: Any) -> bool:
    return type(x) is bytes and 0 < len(x) <= MAX_FRAME


def _frames(x: Any) -> bool:
    return type(x) is list and len(x) <= MAX_EVIDENCE and all(_frame(f) for f in x)


def _shown(x: Any) -> bool:
    """A secret roll shown to one seat: `[seat, box]`, the roller's secret boxed to that seat's key."""
    return (type(x) is list and len(x) == 2 and type(x[0]) is int and 0 <= x[0] < MAX_SEATS
            and type(x[1]) is bytes and 0 < len(x[1]) <= MAX_SHOWN_BOX)


def _draws(x: Any) -> bool:
    return type(x) is list and len(x) <= MAX_DRAWS and all(type(v) is int and 0 <= v < 2**20 for v in x)


MAX_SHOWN_BOX = 1024  # a shown secret roll's box: 552 bytes (net/table/answer_path.py seal, one PAD block)
MAX_DRAWS = 1000  # values one secret roll's opening may list (core/dice_expr.py MAX_DRAWS)
KEY = _bytes(32)
# kind -> {field: (check, required)}
SCHEMAS: dict[str, dict[str, tuple[Callable[[Any], bool], bool]]] = {
    "open": {
        "game": (_str(32, 1), True),
        "options": (_options, True),
        "seats": (_int(1, MAX_SEATS), True),
        "key": (KEY, True),
    },
    "join": {
        "name": (_str(32, 1), True),
        "key": (KEY, True),
        "curve": (KEY, False),
        "anchor": (KEY, True),
        "length": (_int(1, MAX_CHAIN), True),
    },
    "start": {},
    # `to`: a `secret` roll shown now to one seat, the game master (PROTOCOL.md §16.6 step 7); the
    # frame stays under DEFAULT_CAP (a move's 16 arguments of 64 characters and a full box: ~2.3 KB)
    "move": {"move": (_move, True), "to": (_shown, False)},
    "reveal": {"k": (_int(1, MAX_EVENT), True), "value": (KEY, True)},
    "anchor": {
        "anchor": (KEY, True),
        "length": (_int(1, MAX_CHAIN), True),
        "first": (_int(1, MAX_EVENT), True),
    },
    "seal": {"step": (_int(1, MAX_EVENT), True), "commit": (KEY, True)},
    "unseal": {"step": (_int(1, MAX_EVENT), True), "move": (_move, True), "nonce": (KEY, True)},
    "claim": {"against": (_int(0, MAX_SEATS - 1), True), "reason": (_str(200), True)},
    # a co-signature of the pending claim at log index `claim`, by a seat whose own clock agrees
    "witness": {"claim": (_int(0, MAX_LOG), True)},
    # the accused's answer to the claim at log index `claim` (its exact frame), with its own frames
    # that the log does not hold (FAIRNESS.md §4)
    "dispute": {
        "claim": (_int(0, MAX_LOG), True),
        "frame": (_frame, True),
        "reason": (_str(200), True),
        "evidence": (_frames, True),
    },
    "chat": {"text": (_str(500, 1), True)},
    "resign": {},
    # a seat's consent to game `game` at this table (agree) or its refusal, which ends the series; the
    # options are the ones the previous game's end decides (PROTOCOL.md §5.10)
    "rematch": {"game": (_int(2, MAX_LOG), True), "options": (_options, True), "agree": (_bool, True)},
    # a seat's confirmation of the log that holds game `game`'s end: its signed `prev` is what it
    # confirms (PROTOCOL.md §5.13)
    "receipt": {"game": (_int(1, MAX_LOG), True)},
    "deal": {},  # opaque: any plain map, checked by net/cards/deal.py
    # a secret roll opened: the roller's secret for event k and the draws it gives (PROTOCOL.md §16.6)
    "unveil": {"k": (_int(1, MAX_EVENT), True), "secret": (KEY, True), "values": (_draws, True)},
    "leave": {},  # the author leaves a room that goes on without it (PROTOCOL.md §5.11)
    "back": {},  # the author, out of the room, comes back (PROTOCOL.md §5.11)
}
KINDS = tuple(SCHEMAS)
UNSIGNED_KINDS = frozenset({"reveal"})


def check_body(kind: str, body: Any) -> None:
    """Raise UnknownKind or BadBody unless `body` fits the kind's schema exactly."""
    schema = SCHEMAS.get(kind) if type(kind) is str else None
    if schema is None:
        raise UnknownKind(f"unknown message kind {kind!r:.40}")
    if type(body) is not dict:
        raise BadBody(f"a {kind} body is a map, not {type(body).__name__}")
    if kind == "deal":
        if not _plain(body):
            raise BadBody("a deal body holds only plain data (maps with text keys, lists, bytes, numbers)")
        return
    for name in body:
        if name not in schema:
            raise BadBody(f"a {kind} message has no field {name!r:.40}")
    for name, (ok, required) in schema.items():
        if name not in body:
            if required:
                raise BadBody(f"a {kind} message needs the field {name!r}")
        elif not ok(body[name]):
            raise BadBody(f"field {name!r} of a {kind} message is malformed: {body[name]!r:.60}")


# -- canonical encoding ----------------------------------------------------------------------------
def canonical(value: Any) -> Any:
    """The same data with every map's keys sorted and tuples as lists (one encoding per content)."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def pack(value: Any) -> bytes:
    return msgpack.packb(canonical(value), use_bin_type=True)


def _unpack(data: bytes) -> Any:
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
        )
    except Exception as error:  # msgpack raises many types on bad input; all mean "not a frame"
        raise Malformed(f"not a msgpack message ({type(error).__name__})") from None


def _sorted_maps(value: Any) -> bool:
    if type(value) is dict:
        keys = list(value)
        return keys == sorted(keys) and all(_sorted_maps(v) for v in value.values())
    if type(value) is list:
        return all(_sorted_maps(v) for v in value)
    return True


def _is_canonical(data: bytes, value: Any) -> bool:
    """Decoded maps keep the encoded key order, so: keys sorted and the shortest encodings."""
    try:
        return _sorted_maps(value) and msgpack.packb(value, use_bin_type=True) == data
    except Exception:  # e.g. map keys of mixed types cannot be sorted: not canonical anyway
        return False


@dataclass(frozen=True)
class Link:
    """Where a frame's author stood in the log: it had seen `entries` entries, whose head is `head`."""

    entries: int
    head: bytes

    def to_data(self) -> list:
        return [self.entries, self.head]


@dataclass(frozen=True)
class Envelope:
    v: int
    table: bytes
    seat: int
    seq: int
    kind: str
    body: dict
    prev: Link
    signed: bytes  # the exact bytes the signature covers
    signature: bytes  # 64 bytes, or b"" for an unsigned reveal
    frame: bytes  # the exact frame as received

    def signed_by(self, public_key: bytes) -> bool:
        return verify_signature(public_key, self.signed, self.signature)


def signed_bytes(table: bytes, seat: int, seq: int, kind: str, body: dict, prev: Link) -> bytes:
    """The canonical bytes an author signs; the body is checked against its kind's schema."""
    check_body(kind, body)
    if type(table) is not bytes or len(table) != TABLE_BYTES:
        raise Malformed("a table id is 16 bytes")
    if not _link(prev.to_data()):
        raise Malformed("a frame's parent is [entries, 32-byte head]")
    return pack({"v": VERSION, "table": table, "seat": seat, "seq": seq, "kind": kind, "body": body,
                 "prev": prev.to_data()})


def _link(x: Any) -> bool:
    return type(x) is list and len(x) == 2 and _int(0, MAX_LOG)(x[0]) and _bytes(HASH_BYTES)(x[1])


def make_frame(profile, table: bytes, seat: int, seq: int, kind: str, body: dict, prev: Link,
               sign: bool = True) -> bytes:
    """A frame authored by `profile` (anything with `sign(bytes) -> bytes`), on the log `prev`.

    `sign=False` is allowed only for reveals, which the hash chain authenticates.
    """
    data = signed_bytes(table, seat, seq, kind, body, prev)
    if not sign and kind not in UNSIGNED_KINDS:
        raise ValueError(f"a {kind} message must be signed")
    signature = profile.sign(data) if sign else b""
    frame = msgpack.packb([data, signature], use_bin_type=True)
    if len(frame) > KIND_CAP.get(kind, DEFAULT_CAP):  # never author what every replica refuses (decode)
        raise TooLarge(f"a {kind} frame of {len(frame)} bytes is over its limit")
    return frame


def kind_of(frame: bytes) -> str | None:
    """The kind a frame says it has, checking nothing: for counting moves in a list of games
    (tui/tables/history.py). Anything that matters goes through `decode` and the Replica."""
    try:
        signed, _ = msgpack.unpackb(frame, raw=False)
        kind = msgpack.unpackb(signed, raw=False).get("kind")
    except Exception:  # msgpack raises several unrelated types on garbage
        return None
    return kind if type(kind) is str else None


def decode(frame: Any) -> Envelope:
    """The Envelope in `frame`, or a WireError subclass naming what is wrong with it."""
    if type(frame) is not bytes:
        raise Malformed(f"a frame is bytes, not {type(frame).__name__}")
    if len(frame) > MAX_FRAME:
        raise TooLarge(f"a frame of {len(frame)} bytes is over the {MAX_FRAME}-byte limit")
    outer = _unpack(frame)
    if (
        type(outer) is not list
        or len(outer) != 2
        or type(outer[0]) is not bytes
        or type(outer[1]) is not bytes
    ):
        raise Malformed("a frame is [signed bytes, signature]")
    signed, signature = outer
    if len(signature) not in (0, SIGNATURE_BYTES):
        raise Malformed(f"a signature is {SIGNATURE_BYTES} bytes, not {len(signature)}")
    if not _is_canonical(frame, outer):
        raise Malformed("the frame is not in canonical encoding")
    inner = _unpack(signed)
    if type(inner) is not dict:
        raise Malformed("the signed part of a frame is a map")
    version = inner.get("v")
    if type(version) is not int or version != VERSION:
        newer = type(version) is int and version > VERSION
        raise UnknownVersion(f"protocol version {version!r:.20} is not {VERSION}: "
                             + ("update dicetable" if newer else "the other side runs an older dicetable"))
    if set(inner) != {"v", "table", "seat", "seq", "kind", "body", "prev"}:
        raise Malformed("the signed part has the fields v, table, seat, seq, kind, body, prev")
    kind = inner["kind"]
    if type(kind) is not str or kind not in SCHEMAS:
        raise UnknownKind(f"unknown message kind {kind!r:.40}")
    if len(frame) > KIND_CAP.get(kind, DEFAULT_CAP):
        raise TooLarge(f"a {kind} frame of {len(frame)} bytes is over its limit")
    table, seat, seq = inner["table"], inner["seat"], inner["seq"]
    if type(table) is not bytes or len(table) != TABLE_BYTES:
        raise Malformed("a table id is 16 bytes")
    if type(seat) is not int or not 0 <= seat < MAX_SEATS:
        raise Malformed(f"seat {seat!r:.20} is not a seat number")
    if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
        raise Malformed(f"sequence number {seq!r:.20} is out of range")
    check_body(kind, inner["body"])
    if not _link(inner["prev"]):
        raise Malformed("a frame's parent is [entries, 32-byte head]")
    if not signature and kind not in UNSIGNED_KINDS:
        raise Malformed(f"a {kind} message must be signed")
    if not _is_canonical(signed, inner):
        raise Malformed("the signed part is not in canonical encoding")
    prev = Link(*inner["prev"])
    return Envelope(VERSION, table, seat, seq, kind, inner["body"], prev, signed, signature, frame)


# -- bodies, built the one way every author builds them ----------------------------------------------
def open_body(game: str, options: dict, seats: int, key: bytes) -> dict:
    return {"game": game, "options": dict(options), "seats": seats, "key": key}


def join_body(name: str, key: bytes, anchor: bytes, length: int, curve: bytes | None = None) -> dict:
    body = {"name": name, "key": key, "anchor": anchor, "length": length}
    if curve is not None:
        body["curve"] = curve
    return body


def move_body(move, to: tuple[int, bytes] | None = None) -> dict:
    """A move; `to` (seat, box) shows a secret roll to that seat (PROTOCOL.md §16.6 step 7)."""
    return {"move": move.to_data()} if to is None else {"move": move.to_data(), "to": [to[0], to[1]]}


def reveal_body(k: int, value: bytes) -> dict:
    return {"k": k, "value": value}


def seal_body(step: int, commit: bytes) -> dict:
    return {"step": step, "commit": commit}


def unseal_body(step: int, move, nonce: bytes) -> dict:
    return {"step": step, "move": move.to_data(), "nonce": nonce}


def anchor_body(anchor: bytes, length: int, first: int) -> dict:
    return {"anchor": anchor, "length": length, "first": first}


def claim_body(against: int, reason: str) -> dict:
    return {"against": against, "reason": reason}


def witness_body(claim: int) -> dict:
    return {"claim": claim}


def dispute_body(claim: int, frame: bytes, reason: str, evidence: list[bytes]) -> dict:
    return {"claim": claim, "frame": frame, "reason": reason, "evidence": list(evidence)}


CHAT_BYTES = 1536  # a chat's text in UTF-8: 500 characters may be 2000 bytes, over the chat frame's cap


def unveil_body(k: int, secret: bytes, values: tuple[int, ...]) -> dict:
    return {"k": k, "secret": secret, "values": list(values)}


def chat_body(text: str) -> dict:
    """A chat line cut to 500 characters and CHAT_BYTES bytes (whole characters), so its frame fits
    the chat cap whatever the script: a frame over its cap would be refused by every replica."""
    text = text[:500]
    while len(text.encode()) > CHAT_BYTES:
        text = text[:-1]
    return {"text": text or " "}


def rematch_body(game: int, options: dict, agree: bool) -> dict:
    return {"game": game, "options": dict(options), "agree": agree}


def receipt_body(game: int) -> dict:
    return {"game": game}


# -- the joiner's proof of its key on one connection (net/table/session.py, "hello") -----------------------
HELLO_LABEL = b"dicetable/hello/v2"  # no log frame starts so: their signed bytes are a msgpack map
NONCE_BYTES = 32


def hello_bytes(table: bytes, host_key: bytes, nonce: bytes, key: bytes, box: bytes) -> bytes:
    """What a joiner signs in its hello: label, table id, the host's curve key, the host's challenge
    for this connection, the joiner's own Ed25519 key and the box key the host's packets to this
    hello are tagged with (net/table/host_packets.py) (fixed sizes, so the fields cannot slide)."""
    for what, value, size in (("table id", table, TABLE_BYTES), ("host key", host_key, 32),
                              ("challenge", nonce, NONCE_BYTES), ("key", key, 32), ("box", box, 32)):
        if type(value) is not bytes or len(value) != size:
            raise Malformed(f"a hello's {what} is {size} bytes")
    return HELLO_LABEL + table + host_key + nonce + key + box
