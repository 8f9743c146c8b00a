"""End receipts over real sockets (FAIRNESS.md §3b, PROTOCOL.md §5.13): every seat confirms the end
of a game it played, so one copy alone says `confirmed by every seat`; and the tail-rewrite attack
of issue 32 — a player cuts its own copy after the other seat's last signed frame, re-signs its last
roll with another expression once the outcome is public and re-authors the other seat's unsigned
reveal — no longer verifies as a plain result on that copy alone."""

from __future__ import annotations

import pytest

from dicetable.core.game import Move
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.identity import Profile
from dicetable.net.log import wire
from dicetable.net.log.replica import Replica
from dicetable.net.log.transcript import TranscriptWriter, read
from dicetable.net.log.verify import verify
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession

from net_helpers import FAST, assert_verifies, in_thread, wait_until


class _RollOnce:
    """A seat that rolls `expr` once, on its turn."""

    def __init__(self, expr: str) -> None:
        self.expr, self.rolled = expr, False

    def __call__(self, view):
        if self.rolled:
            return Move("pass")
        self.rolled = True
        return Move("roll", (self.expr,))


def _room(tmp_path):
    """A turn-based dice room of 2 rolls (Ann's, then Bob's) between a host and a joiner over sockets."""
    ann, bob = Profile.generate("Ann"), Profile.generate("Bob")
    host = HostSession(ann, "diceroom", 2, {"rolls": 2}, timing=FAST, chooser=_RollOnce("2d6"),
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    joiner = PeerSession(bob, invite, timing=FAST, chooser=_RollOnce("2d6"), transcript=tmp_path / "bob.dtt")
    threads = [in_thread(host), in_thread(joiner)]
    try:
        wait_until(lambda: host.finished and joiner.finished, 20, "both seats to finish the room")
    finally:
        for session, thread in zip((host, joiner), threads):
            session.stop()
            thread.join(5)
    return bob


@pytest.mark.slow
def test_both_seats_confirm_the_end_and_a_lone_copy_says_so(tmp_path):
    _room(tmp_path)
    logs = assert_verifies(tmp_path / "ann.dtt", tmp_path / "bob.dtt")
    kinds = [wire.decode(frame).kind for frame in logs[0]]
    assert "receipt" in kinds  # the last roller's reveal is unsigned: someone had to confirm after it
    for name in ("ann", "bob"):
        line = verify(tmp_path / f"{name}.dtt").line()
        assert line.startswith("valid: dice room (rolls: Ann 1, Bob 1); 2 rolls: ") and line.endswith("; confirmed by every seat"), line


@pytest.mark.slow
def test_a_tail_rewritten_after_the_other_seats_last_signed_frame_is_not_a_plain_result(tmp_path):
    """Bob cuts his copy before his own last roll (after Ann's last signed frame), rolls `d100` instead
    of `2d6` now that both seats' values for that event are public, re-signs it with his key, re-authors
    Ann's reveal from its public value, signs his own receipt and writes the transcript. Every frame checks; the end does not."""
    bob = _room(tmp_path)
    original = read(tmp_path / "bob.dtt")
    envelopes = [wire.decode(frame) for frame in original.frames]
    last_roll = max(i for i, e in enumerate(envelopes) if e.kind == "move" and e.seat == 1)
    event = [e for e in envelopes[last_roll:] if e.kind == "reveal"]
    values = {e.seat: e.body["value"] for e in event}
    assert set(values) == {0, 1}
    replica = Replica(deal_handler=TableDeals())
    for frame in original.frames[:last_roll]:
        replica.accept(frame)
    table = replica.table
    replica.accept(wire.make_frame(bob, table, 1, envelopes[last_roll].seq, "move",
                                   wire.move_body(Move("roll", ("d100",))), replica.head))
    k = replica.pending.number
    for seat in (0, 1):  # Ann's reveal is unsigned: anyone holding its public value can place it
        replica.accept(wire.make_frame(None, table, seat, replica.next_seq(seat), "reveal",
                                       wire.reveal_body(k, values[seat]), replica.head, sign=False))
    assert replica.result is not None and replica.state.rolls[-1].expr == "1d100"
    replica.accept(wire.make_frame(bob, table, 1, replica.next_seq(1), "receipt", wire.receipt_body(1), replica.head))
    forged = tmp_path / "bob-rewritten.dtt"
    with TranscriptWriter.create(forged, original.header) as writer:
        for record in replica.log:
            writer.append_frame(record.frame)
        writer.append_result(replica.result)
    verdict = verify(forged)
    assert verdict.valid and verdict.unconfirmed, verdict.line()  # every frame checks ...
    since = replica.vouched[0]  # Ann's last signed frame: her roll
    assert len(replica.log) - since >= 4  # Bob's roll, both reveals, Bob's receipt
    assert verdict.line().endswith(f"; end not confirmed: the last {len(replica.log) - since} entries are signed only "
                                   "by Bob (not confirmed by Ann)"), verdict.line()  # ... but the end is Bob's alone
