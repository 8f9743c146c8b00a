"""What tagging the host's packets end to end costs (net/table/host_packets.py), beside sending them plain.

    .venv/bin/python scripts/bench_control.py [--rounds 2000]

For packets the host sends all game long — a pong, an entries packet with one reveal frame (a fair
roll's round trip carries a few), and a full 64 KiB catch-up chunk — and those a seat sends it — a
ping, a submit of one reveal frame — it times, in the same run:
- plain: the host packs `[op, body]`, the joiner unpacks it (what went over the wire before);
- tagged: the host seals it (`Tagger.seal`, then the outer pack), the joiner unpacks the outer packet
  and opens it (`HostLink.open`: the tag checked, the counter, the inner unpack); a seat's packet the
  other way (`HostLink.seal`, `Tagger.take`);
- signed (for scale): an Ed25519 signature by the host and its check, the other way to authenticate.
It prints the median per packet in µs and the ratio to plain, then the one-off cost of a hello's key
(the joiner's fresh box, the host's `Tagger.answering`), and the joiner's box once a hand-over has it
trust the other seats' keys too (one more key derived per seat), against the host-only box.
"""

from __future__ import annotations

import argparse
import statistics
import time

from dicetable.net.table import host_packets
from dicetable.net.identity import Profile, verify_signature
from dicetable.net.reach.transport import pack, unpack

TABLE, CHALLENGE = bytes(range(16)), bytes(32)


def median_us(run, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    host, joiner = Profile.generate("ann"), Profile.generate("bob")
    link = host_packets.HostLink(TABLE, bytes(host_packets.host_box(host, True).public_key))
    box = link.box_for(CHALLENGE, joiner.public_key)
    tagger = host_packets.Tagger.answering(host_packets.host_box(host, True), box, TABLE, CHALLENGE, joiner.public_key)
    assert link.open(tagger.seal("welcome", {})) is not None  # the hello answered: the seat tags its packets now
    packets = {
        "pong": ("pong", {"length": 1234}, False),
        "entries, 1 reveal": ("entries", {"start": 1234, "frames": [bytes(180)]}, False),
        "entries, 64 KiB": ("entries", {"start": 0, "frames": [bytes(1000)] * 64}, False),
        "seat's ping": ("ping", {"next": 1234}, True),
        "seat's submit": ("submit", {"frame": bytes(180)}, True),
    }
    print(f"per packet, median of {args.rounds} (µs): plain pack+unpack | tagged seal+open | signed sign+verify")
    for name, (op, body, upward) in packets.items():
        def plain():
            unpack(pack(op, body))

        def tagged():
            if upward:
                opened = tagger.take(*unpack(pack(*link.seal(op, body))))
            else:
                opened = link.open(unpack(pack("tagged", tagger.seal(op, body)))[1])
            assert opened is not None

        def signed():
            data = pack(op, body)
            assert verify_signature(host.public_key, data, host.sign(data))
            unpack(data)

        base, tag, sign = (median_us(f, args.rounds) for f in (plain, tagged, signed))
        print(f"  {name:18} {base:8.1f} | {tag:8.1f} ({tag / base:4.1f}x, +{tag - base:.1f}) | {sign:8.1f} ({sign / base:4.1f}x)")

    def hello_key():
        fresh = link.box_for(CHALLENGE, joiner.public_key)
        host_packets.Tagger.answering(host_packets.host_box(host, True), fresh, TABLE, CHALLENGE, joiner.public_key)

    print(f"per hello (once per connection): joiner's box + host's key {median_us(hello_key, max(args.rounds // 10, 50)):.0f} µs")

    # After a hand-over (net/table/succession.py) a joiner's box also derives a key for each seat that may order.
    seats = 6
    trusting = host_packets.HostLink(TABLE, bytes(host_packets.host_box(host, True).public_key))
    trusting.trust({s: host_packets.seat_box_public(Profile.generate(f"s{s}").public_key) for s in range(1, seats)})
    hellos = max(args.rounds // 10, 50)
    before = median_us(lambda: link.box_for(CHALLENGE, joiner.public_key), hellos)
    after = median_us(lambda: trusting.box_for(CHALLENGE, joiner.public_key), hellos)
    print(f"joiner's box, host only {before:.0f} µs | after a hand-over, {seats - 1} seats trusted too {after:.0f} µs "
          f"({after / before:.1f}x)")


if __name__ == "__main__":
    main()
