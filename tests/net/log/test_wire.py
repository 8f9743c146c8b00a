"""The wire codec: round trips, signatures over exact bytes, and every named refusal."""

from __future__ import annotations

import msgpack
import pytest

from dicetable.core.game import Move
from dicetable.net.log import wire
from dicetable.net.identity import Profile

TABLE = bytes(range(16))
KEY = bytes(32)
ALICE = Profile.generate("alice")
LINK = wire.Link(3, bytes(range(32)))  # any parent: decoding does not check it against a log
BOB = Profile.generate("bob")

BODIES = {
    "open": wire.open_body("trice", {"swap_limit": 40, "fast": True, "mode": "x"}, 2, KEY),
    "join": wire.join_body("bob", KEY, KEY, 1024, curve=KEY),
    "start": {},
    "move": wire.move_body(Move("place", ("b2",))),
    "reveal": wire.reveal_body(3, KEY),
    "anchor": wire.anchor_body(KEY, 1024, 1025),
    "seal": wire.seal_body(12, KEY),
    "unseal": wire.unseal_body(12, Move("latent", ("yes",)), KEY),
    "claim": wire.claim_body(1, "no move within 120 s"),
    "witness": wire.witness_body(41),
    "dispute": wire.dispute_body(41, b"the claim's frame", "by its own clock the table had waited 2.0 s", [b"a frame"]),
    "chat": wire.chat_body("good luck"),
    "resign": {},
    "rematch": wire.rematch_body(2, {"black": "seat1", "first": "white"}, True),
    "receipt": wire.receipt_body(1),
    "deal": {"deck": b"d1", "step": "shuffle", "points": [b"\x01" * 32, b"\x02" * 32]},
    "unveil": wire.unveil_body(9, KEY, (19, 0, 5)),
    "leave": {},
    "back": {},
}


def raw_frame(inner: dict, signature: bytes = b"\x00" * 64) -> bytes:
    return msgpack.packb([wire.pack(inner), signature], use_bin_type=True)


def inner(kind="chat", body=None, **fields) -> dict:
    base = {"v": 2, "table": TABLE, "seat": 0, "seq": 0, "kind": kind, "body": body if body is not None else {"text": "hi"},
            "prev": LINK.to_data()}
    base.update(fields)
    return base


@pytest.mark.parametrize("kind", wire.KINDS)
def test_every_kind_round_trips_and_is_signed(kind):
    frame = wire.make_frame(ALICE, TABLE, 1, 7, kind, BODIES[kind], LINK)
    env = wire.decode(frame)
    assert (env.v, env.table, env.seat, env.seq, env.kind, env.prev) == (2, TABLE, 1, 7, kind, LINK)
    assert env.body == wire.canonical(BODIES[kind])
    assert env.frame == frame
    assert env.signed_by(ALICE.public_key) and not env.signed_by(BOB.public_key)


@pytest.mark.parametrize("kind", wire.KINDS)
def test_kind_of_names_a_frames_kind_and_none_for_garbage(kind):
    assert wire.kind_of(wire.make_frame(ALICE, TABLE, 1, 7, kind, BODIES[kind], LINK)) == kind
    for junk in (b"", b"\xc1", msgpack.packb([1, 2]), msgpack.packb([msgpack.packb({"kind": 5}), b""])):
        assert wire.kind_of(junk) is None


def test_only_a_reveal_may_be_unsigned():
    env = wire.decode(wire.make_frame(ALICE, TABLE, 0, 0, "reveal", BODIES["reveal"], LINK, sign=False))
    assert env.signature == b"" and not env.signed_by(ALICE.public_key)
    with pytest.raises(ValueError):
        wire.make_frame(ALICE, TABLE, 0, 0, "move", BODIES["move"], LINK, sign=False)
    with pytest.raises(wire.Malformed, match="must be signed"):
        wire.decode(raw_frame(inner("move", BODIES["move"]), b""))


def test_signature_covers_the_exact_signed_bytes():
    frame = wire.make_frame(ALICE, TABLE, 0, 0, "chat", {"text": "hi"}, LINK)
    signed, signature = msgpack.unpackb(frame)
    forged = msgpack.packb([wire.pack(inner(body={"text": "ho"})), signature], use_bin_type=True)
    assert not wire.decode(forged).signed_by(ALICE.public_key)


@pytest.mark.parametrize(
    "data, error",
    [
        (b"", wire.Malformed),
        (b"\xc1", wire.Malformed),
        ("text", wire.Malformed),
        (b"\x00" * (wire.MAX_FRAME + 1), wire.TooLarge),
        (msgpack.packb([b"x", b"y", b"z"]), wire.Malformed),
        (msgpack.packb([b"x", b"\x00" * 10]), wire.Malformed),
        (msgpack.packb([wire.pack([1, 2]), b""]), wire.Malformed),
        (raw_frame(inner(v=3)), wire.UnknownVersion),
        (raw_frame(inner(v=1)), wire.UnknownVersion),  # before the hash-linked log
        (raw_frame({k: v for k, v in inner().items() if k != "prev"}), wire.Malformed),
        (raw_frame(inner(prev=[1, b"\x00" * 31])), wire.Malformed),
        (raw_frame(inner(prev=[-1, b"\x00" * 32])), wire.Malformed),
        (raw_frame(inner(prev=[1, b"\x00" * 32, 0])), wire.Malformed),
        (raw_frame(inner(kind="teleport")), wire.UnknownKind),
        (raw_frame(inner(table=b"short")), wire.Malformed),
        (raw_frame(inner(seat=True)), wire.Malformed),
        (raw_frame(inner(seat=99)), wire.Malformed),
        (raw_frame(inner(seq=-1)), wire.Malformed),
        (raw_frame(inner(body={"text": "hi", "extra": 1})), wire.BadBody),
        (raw_frame(inner(body={"text": 5})), wire.BadBody),
        (raw_frame(inner(body={"text": "x" * 501})), wire.BadBody),
        (raw_frame(inner(body={"text": "\x1b[2Jgotcha"})), wire.BadBody),  # terminal escapes
        (raw_frame(inner("move", {"move": ["place", "b2\n"]})), wire.BadBody),
        (raw_frame(inner("reveal", {"k": 0, "value": KEY})), wire.BadBody),
        (raw_frame(inner("reveal", {"k": 1, "value": b"\x00" * 31})), wire.BadBody),
        (raw_frame(inner("move", {"move": ["place", 1.5]})), wire.BadBody),
        (raw_frame(inner("move", {"move": []})), wire.BadBody),
        (raw_frame(inner("join", {"name": "x", "key": KEY, "anchor": KEY})), wire.BadBody),
        (raw_frame(inner("deal", {"points": [1.5]})), wire.BadBody),
        (raw_frame(inner("rematch", {"game": 2, "options": {}, "agree": 1})), wire.BadBody),  # agree is a bool
        (raw_frame(inner("rematch", {"game": 1, "options": {}, "agree": True})), wire.BadBody),  # game 1 is no rematch
        (raw_frame(inner("rematch", {"game": 2, "options": {"first": "\x1b[2J"}, "agree": True})), wire.BadBody),
        (raw_frame(inner("chat", {"text": "\U0001F600" * 500})), wire.TooLarge),  # 2000 bytes of text
        (msgpack.packb([wire.pack(inner()), b"\x00" * 64]) + b"\x00", wire.Malformed),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_bad_frames_get_named_errors(data, error):
    with pytest.raises(error):
        wire.decode(data)


def test_non_canonical_encodings_are_refused():
    unsorted = msgpack.packb({"v": 2, "table": TABLE, "seat": 0, "seq": 0, "kind": "chat", "body": {"text": "hi"},
                              "prev": LINK.to_data()}, use_bin_type=True)
    with pytest.raises(wire.Malformed, match="canonical"):
        wire.decode(msgpack.packb([unsorted, b"\x00" * 64], use_bin_type=True))
    # The same integer in a wider encoding (uint32 for 0) is another byte string: refused too.
    good = wire.pack(inner())
    wide = good.replace(b"\xa3seq\x00", b"\xa3seq\xce\x00\x00\x00\x00")
    assert wide != good and msgpack.unpackb(wide) == msgpack.unpackb(good)
    with pytest.raises(wire.Malformed, match="canonical"):
        wire.decode(msgpack.packb([wide, b"\x00" * 64], use_bin_type=True))


def test_an_older_or_newer_version_says_which_side_to_update():
    with pytest.raises(wire.UnknownVersion, match="older dicetable"):
        wire.decode(raw_frame(inner(v=1)))
    with pytest.raises(wire.UnknownVersion, match="update dicetable"):
        wire.decode(raw_frame(inner(v=3)))


def test_every_error_is_a_wire_error():
    for name in ("TooLarge", "Malformed", "UnknownVersion", "UnknownKind", "BadBody"):
        assert issubclass(getattr(wire, name), wire.WireError)


def test_a_chat_in_any_script_fits_its_frame_and_nothing_over_a_cap_is_authored():
    """PROTOCOL.md §19 point 8 (fixed): 500 characters of four bytes each passed the schema but not
    the chat frame's 2048-byte cap, so a seat signed a frame every replica refused, and kept sending
    it. The chat line is cut to fit; and the codec never makes a frame that decode refuses."""
    body = wire.chat_body("😀" * 500)
    assert len(body["text"].encode()) <= wire.CHAT_BYTES and body["text"] == "😀" * (wire.CHAT_BYTES // 4)
    frame = wire.make_frame(ALICE, TABLE, 0, 0, "chat", body, LINK)
    assert wire.decode(frame).body == body
    assert wire.chat_body("good luck") == {"text": "good luck"} and wire.chat_body("") == {"text": " "}
    with pytest.raises(wire.TooLarge, match="chat frame of .* bytes is over its limit"):
        wire.make_frame(ALICE, TABLE, 0, 0, "chat", {"text": "😀" * 500}, LINK)
