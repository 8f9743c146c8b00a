"""A room that stays (issue 33) over real sockets on 127.0.0.1: three seats roll, one rolls secretly
and sees its dice alone, leaves (opening its secret roll first) while the others roll on without it,
comes back from its transcript, rolls again, and the host closes the room; every copy verifies, tells
the comings and goings by name, and the three agree (PROTOCOL.md §5.11, §16.6)."""

from __future__ import annotations

import pytest

from dicetable.core.game import Move
from dicetable.net.identity import Profile
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import compare, verify
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from net_helpers import in_thread, wait_until

FAST = Timing(heartbeat=0.1, drop_after=2.0, grace=30.0, reveal_deadline=30.0, connect_timeout=3.0)


def decided(session, count: int) -> bool:
    replica = session.replica
    return replica is not None and replica.state is not None and len(replica.state.rolls) >= count \
        and replica.pending is None


@pytest.mark.slow
def test_a_seat_leaves_the_others_roll_on_it_comes_back_and_every_copy_agrees(tmp_path):
    cy_profile = Profile.generate("cy")
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"turns": False}, timing=FAST, transcript=tmp_path / "ann.dtt")
    invite = host.open()
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt")
    cy = PeerSession(cy_profile, invite, timing=FAST, transcript=tmp_path / "cy.dtt")
    sessions = [host, bob, cy]
    for session in sessions:
        in_thread(session)
    try:
        wait_until(lambda: all(s.replica is not None and s.replica.phase == "playing" for s in sessions), 20, "the room to open")
        bob.move(Move("roll", ("1d20+5 [attack]",)))
        wait_until(lambda: all(decided(s, 1) for s in sessions), 20, "bob's roll")
        cy.roll_secretly("1d20 [stealth]")
        wait_until(lambda: all(decided(s, 2) for s in sessions), 20, "cy's secret roll")
        sealed = host.replica.state.rolls[1]
        c = cy.seat  # seats go to joiners as they come
        assert sealed.sealed and sealed.seat == c and bob.replica.state.rolls[1] == sealed
        k = len(host.replica.events)
        mine = cy.own.room.peek(k)  # cy alone sees its dice now
        assert mine is not None and host.own.room.peek(k) is None
        cy.leave_room()  # its secret roll opened first, then it leaves
        wait_until(lambda: host.replica.out == {c} and bob.replica.out == {c}, 20, "cy to leave")
        opened = host.replica.state.rolls[1]
        assert not opened.sealed and opened.faces == (mine[0] + 1,)
        cy.stop()
        wait_until(lambda: cy.stopped, 10, "cy's session to stop")
        host.move(Move("roll", ("2d6",)))
        bob.move(Move("roll", ("d8",)))
        wait_until(lambda: all(decided(s, 4) for s in (host, bob)), 20, "the rolls without cy")
        assert all(e.reveals[c] == b"" for e in host.replica.events[-2:])  # nobody waited for cy
        back = PeerSession(cy_profile, resume=tmp_path / "cy.dtt", timing=FAST)
        sessions[2] = back
        in_thread(back)
        wait_until(lambda: host.replica.out == frozenset() and back.replica is not None and back.replica.out == frozenset(),
                   20, "cy to come back")
        back.move(Move("roll", ("d4",)))
        wait_until(lambda: all(decided(s, 5) for s in sessions), 20, "cy's roll after coming back")
        assert host.replica.events[-1].reveals[c] not in (None, b"")  # its chain opened across what it missed
        host.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None and s.finished for s in sessions), 20, "the room to close")
    finally:
        for session in sessions:
            session.stop()
    paths = [tmp_path / f"{name}.dtt" for name in ("ann", "bob", "cy")]
    for path in paths:
        verdict = verify(path)
        assert verdict.valid, verdict.line()
        line = verdict.line()
        assert all(f"{who} {n}" in line for who, n in (("ann", 1), ("bob", 2), ("cy", 2))) and ", 1 secret" in line, line
        assert "never opened" not in line and "cy left, came back" in line, line
    assert read(paths[0]).frames == read(paths[1]).frames == read(paths[2]).frames
    agreement = compare([read(p) for p in paths])
    assert agreement.fork is None, agreement
