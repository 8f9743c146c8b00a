"""The orderer's entries packets (net/table/outbox.py, PROTOCOL.md §10.5): a batch is relayed in
packets under the packet cap, however large its frames (§19 point 9: a batch of deal frames made one
packet over MAX_PACKET, which a joiner's socket refuses)."""

from __future__ import annotations

from types import SimpleNamespace

from dicetable.net.reach.transport import MAX_PACKET, pack
from dicetable.net.table.outbox import ENTRIES_CHUNK, Outbox, chunks


def test_chunks_keep_order_and_size_and_put_a_large_frame_alone():
    frames = [b"a" * 200_000, b"b" * 10, b"c" * 200_000, *(bytes([i]) * 20_000 for i in range(7))]
    parts = list(chunks(frames, 40))
    assert [f for _, part in parts for f in part] == frames
    assert [first for first, _ in parts] == [40 + sum(len(p) for _, p in parts[:k]) for k in range(len(parts))]
    assert all(len(part) == 1 or sum(map(len, part)) <= ENTRIES_CHUNK for _, part in parts)
    assert list(chunks([], 3)) == []


def test_a_batch_of_large_frames_goes_out_in_packets_a_joiner_takes():
    told = []
    orderer = SimpleNamespace(socket=object(), routes=[b"bob", b"cy"],
                              tell_all=lambda peers, op, body: told.extend((peer, body) for peer in peers),
                              own=SimpleNamespace(transcript=SimpleNamespace(sync_soon=lambda: None)))
    outbox = Outbox(orderer)
    frames = [bytes([i]) * 200_000 for i in range(3)]  # three deal-sized frames accepted in one turn
    outbox.unsent, outbox.unsent_start = list(frames), 12
    outbox.release()
    for peer in (b"bob", b"cy"):
        packets = [body for to, body in told if to == peer]
        assert [f for body in packets for f in body["frames"]] == frames
        assert [body["start"] for body in packets] == [12, 13, 14]
        assert all(len(pack("entries", body)) <= MAX_PACKET for body in packets)
    assert len(pack("entries", {"start": 12, "frames": frames})) > MAX_PACKET  # what one packet would have been
