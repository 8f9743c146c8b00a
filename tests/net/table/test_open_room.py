"""An open dice room over real sockets on 127.0.0.1 (PROTOCOL.md §5.2, §5.11): a room of two rolls,
a third person who was not there at the start joins while it runs and rolls; every copy verifies,
tells the join by name, and `verify A B C` agrees. A newcomer cannot put its value into a roll
ordered before it joined: the host's replica refuses it and the roll is decided without it."""

from __future__ import annotations

import pytest

from dicetable.core.game import Move
from dicetable.net.identity import Profile
from dicetable.net.log import wire
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import compare, verify
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from net_helpers import in_thread, wait_until
from tests.net.table.test_room_stays import FAST, decided


def seated(session, count: int) -> bool:
    replica = session.replica
    return replica is not None and replica.phase == "playing" and len(replica.membership.present) >= count


def verified(tmp_path, names) -> list[str]:
    """Every copy verifies and all agree; their verdict lines."""
    paths = [tmp_path / f"{name}.dtt" for name in names]
    lines = []
    for path in paths:
        verdict = verify(path)
        assert verdict.valid, verdict.line()
        lines.append(verdict.line())
    agreement = compare([read(p) for p in paths])
    assert agreement.fork is None, agreement
    return lines


@pytest.mark.slow
def test_a_third_person_joins_a_room_of_two_while_it_runs_and_every_copy_agrees(tmp_path):
    host = HostSession(Profile.generate("ann"), "diceroom", 4, {"turns": False}, start_with=2, timing=FAST,
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt")
    sessions = [host, bob]
    for session in sessions:
        in_thread(session)
    try:
        wait_until(lambda: all(seated(s, 2) for s in sessions), 20, "a room of two to start")
        host.move(Move("roll", ("1d20+5 [attack]",)))
        bob.move(Move("roll", ("2d6",)))
        wait_until(lambda: all(decided(s, 2) for s in sessions), 20, "the two rolls")
        cy = PeerSession(Profile.generate("cy"), invite, timing=FAST, transcript=tmp_path / "cy.dtt")
        sessions.append(cy)
        in_thread(cy)
        wait_until(lambda: all(seated(s, 3) for s in sessions) and cy.own.chains[0].first == 3, 20, "cy to join the room")
        c = cy.seat  # its chain placed where its join's record says: after the two rolls before it
        assert host.replica.membership.first_event(c) == 3 and cy.own.chains[0].first == 3
        cy.move(Move("roll", ("1d8+2 [damage]",)))
        wait_until(lambda: all(decided(s, 3) for s in sessions), 20, "cy's roll")
        events = host.replica.events
        assert [e.reveals[c] for e in events[:2]] == [b"", b""] and events[2].reveals[c] not in (None, b"")
        host.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None and s.finished for s in sessions), 20, "the room to close")
    finally:
        for session in sessions:
            session.stop()
    for line in verified(tmp_path, ("ann", "bob", "cy")):
        assert line.startswith("valid: dice room (rolls: ann 1, bob 1, cy 1; cy joined)"), line


@pytest.mark.slow
def test_a_newcomer_cannot_change_a_roll_ordered_before_it_joined(tmp_path):
    bob_profile = Profile.generate("bob")
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"turns": False}, start_with=2, timing=FAST,
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    bob = PeerSession(bob_profile, invite, timing=FAST, transcript=tmp_path / "bob.dtt")
    sessions = [host, bob]
    for session in sessions:
        in_thread(session)
    try:
        wait_until(lambda: all(seated(s, 2) for s in sessions), 20, "a room of two to start")
        bob.stop()  # away (not left): the next roll waits for its reveal
        wait_until(lambda: bob.stopped, 10, "bob's session to stop")
        host.move(Move("roll", ("1d20 [initiative]",)))
        wait_until(lambda: host.replica.pending is not None and host.replica.pending.missing == (1,), 20, "ann's roll")
        cy = PeerSession(Profile.generate("cy"), invite, timing=FAST, transcript=tmp_path / "cy.dtt")
        sessions.append(cy)
        in_thread(cy)
        wait_until(lambda: seated(host, 2) and cy.replica is not None and cy.own.seated(), 20, "cy to join mid-roll")
        c, pending = cy.seat, host.replica.pending
        assert pending.number == 1 and pending.reveals[c] == b""  # ordered before cy joined: decided without it
        # cy's client sends its chain's value for event 1 anyway: the host's replica refuses it, nothing moves
        frame = cy.own.author("reveal", wire.reveal_body(1, cy.own.chains[0].values[1]), sign=False)
        wait_until(lambda: any("already revealed" in r for r in cy.own.refusals), 20, "the host to refuse cy's reveal")
        assert host.replica.pending == pending and frame not in [r.frame for r in host.replica.log]
        back = PeerSession(bob_profile, resume=tmp_path / "bob.dtt", timing=FAST)
        sessions[1] = back
        in_thread(back)
        wait_until(lambda: all(decided(s, 1) for s in sessions), 20, "the roll to be decided by ann and bob")
        assert host.replica.events[0].reveals[c] == b""
        host.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None and s.finished for s in sessions), 20, "the room to close")
    finally:
        for session in sessions:
            session.stop()
    for line in verified(tmp_path, ("ann", "bob", "cy")):
        assert line.startswith("valid: dice room (rolls: ann 1; cy joined)"), line


@pytest.mark.slow
def test_the_host_leaves_the_room_goes_on_under_the_next_person_and_ends_with_the_last(tmp_path, monkeypatch):
    """Through a relay the host's leave hands the room over (§11): the next seat orders the log at once
    (no grace: the host is not coming back), the others roll on, a second orderer's leave hands it over
    again, and the last person's leave closes the room."""
    from dicetable.net.reach.relay import RelayServer
    from dicetable.net.reach.transport import curve_keypair
    from dicetable.net.table import succession
    from net_helpers import Running

    monkeypatch.setattr(succession, "HOST_AWAY", 1.0)  # the seats know the relay's clock
    relay = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0, host_away=1.0))
    timing = FAST.__class__(**{**FAST.__dict__, "grace": 60.0})  # a grace no hand-over here waits for
    host = HostSession(Profile.generate("ann"), "diceroom", 4, {"turns": False}, start_with=3, timing=timing,
                       relay=relay.line, transcript=tmp_path / "ann.dtt")
    invite = host.open()
    bob = PeerSession(Profile.generate("bob"), invite, timing=timing, transcript=tmp_path / "bob.dtt")
    cy = PeerSession(Profile.generate("cy"), invite, timing=timing, transcript=tmp_path / "cy.dtt")
    sessions = [host, bob, cy]
    for session in sessions:
        in_thread(session)
    try:
        wait_until(lambda: all(seated(s, 3) for s in sessions), 20, "a room of three to start")
        host.move(Move("roll", ("1d20 [initiative]",)))
        wait_until(lambda: all(decided(s, 1) for s in sessions), 20, "ann's roll")
        wait_until(lambda: bob.listing is not None and cy.listing is not None, 20, "the owner's deputies")
        host.leave_room()
        wait_until(lambda: host.stopped and all(s.replica.out == {0, 3} for s in (bob, cy)), 20, "ann to leave")
        wait_until(lambda: bob.successor is not None or cy.successor is not None, 30, "a seat to order the room")
        bob.move(Move("roll", ("2d6 [damage]",)))
        cy.move(Move("roll", ("1d8",)))
        wait_until(lambda: all(decided(s, 3) for s in (bob, cy)), 30, "the rolls after ann left")
        first = bob if bob.successor is not None else cy
        other = cy if first is bob else bob
        first.leave_room()  # the orderer leaves too: the room goes on under the last person
        wait_until(lambda: first.stopped and other.successor is not None, 30, "the second hand-over")
        other.move(Move("roll", ("d4",)))
        wait_until(lambda: decided(other, 4), 20, "the last person's roll")
        other.leave_room()
        wait_until(lambda: other.replica.result is not None and other.finished, 20, "the room to end with the last one out")
    finally:
        for session in sessions:
            session.stop()
        relay.stop()
    paths = [tmp_path / f"{name}.dtt" for name in ("ann", "bob", "cy")]
    last = verify(paths[[bob, cy].index(other) + 1])
    assert last.valid and "left last: the room is closed" in last.line(), last.line()
    for path in paths:  # those who left first hold the room up to their leave: checked so far
        verdict = verify(path)
        assert verdict.fault_kind in (None, "unfinished"), verdict.line()
    assert compare([read(p) for p in paths]).fork is None


@pytest.mark.slow
def test_a_room_starts_with_its_host_alone_and_takes_no_one_past_its_places(tmp_path):
    """The host alone rolls at once; a newcomer takes the one free place; the next hears the room is
    full and gets no seat (joins are capped by the room's places, each a key's for good)."""
    from dicetable.net.table.session import SessionError

    host = HostSession(Profile.generate("ann"), "diceroom", 2, {"turns": False}, start_with=1, timing=FAST,
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    sessions = [host]
    in_thread(host)
    try:
        wait_until(lambda: seated(host, 1), 20, "the host's room to start with the host alone")
        host.move(Move("roll", ("3d6",)))
        wait_until(lambda: decided(host, 1), 20, "the host's roll alone")
        bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt")
        sessions.append(bob)
        in_thread(bob)
        wait_until(lambda: seated(host, 2) and seated(bob, 2), 20, "bob to take the free place")
        eve = PeerSession(Profile.generate("eve"), invite, timing=FAST, transcript=tmp_path / "eve.dtt")
        with pytest.raises(SessionError, match="every seat is taken: ann, bob"):
            eve.run()
        assert host.replica.membership.free_seats() == () and len(host.replica.seats) == 2
        bob.move(Move("roll", ("d20",)))
        wait_until(lambda: all(decided(s, 2) for s in sessions), 20, "bob's roll")
        host.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None and s.finished for s in sessions), 20, "the room to close")
    finally:
        for session in sessions:
            session.stop()
    for line in verified(tmp_path, ("ann", "bob")):
        assert line.startswith("valid: dice room (rolls: ann 1, bob 1; bob joined)"), line


@pytest.mark.slow
def test_a_newcomer_joins_a_running_room_by_its_short_code(tmp_path):
    """Through a relay the host keeps offering its short code while the room runs with a place free
    (PROTOCOL.md §13): a newcomer claims it after the first roll and joins the room."""
    from dicetable.net.reach.relay import RelayServer
    from dicetable.net.reach.relay_address import RelayAddress
    from dicetable.net.reach.relay_link import invite_for_code
    from dicetable.net.reach.transport import curve_keypair
    from dicetable.net.table.events import CodeOffered
    from net_helpers import Running

    relay = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0))
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"turns": False}, start_with=1, timing=FAST,
                       relay=relay.line, transcript=tmp_path / "ann.dtt")
    heard = []
    host.on_event = heard.append
    host.open()
    sessions = [host]
    in_thread(host)
    try:
        wait_until(lambda: seated(host, 1), 20, "the host's room to start")
        host.move(Move("roll", ("1d20 [initiative]",)))
        wait_until(lambda: decided(host, 1), 20, "the host's roll")
        codes = [e.code for e in heard if isinstance(e, CodeOffered)]
        assert codes, heard  # still offered: the room runs with places free
        invite = invite_for_code(RelayAddress.decode(relay.line), codes[-1], timeout=20)
        bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt")
        sessions.append(bob)
        in_thread(bob)
        wait_until(lambda: seated(host, 2) and seated(bob, 2), 20, "bob to join by the code")
        bob.move(Move("roll", ("2d6",)))
        wait_until(lambda: all(decided(s, 2) for s in sessions), 20, "bob's roll")
        host.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None and s.finished for s in sessions), 20, "the room to close")
    finally:
        for session in sessions:
            session.stop()
        relay.stop()
    for line in verified(tmp_path, ("ann", "bob")):
        assert line.startswith("valid: dice room (rolls: ann 1, bob 1; bob joined)"), line


@pytest.mark.slow
def test_a_running_room_stays_in_this_machines_lobby_while_a_place_is_free_and_a_newcomer_joins_from_it(tmp_path):
    """The same-machine lobby (PROTOCOL.md §15.4) lists a room while it runs with a place free; a newcomer
    joins from the listing (its invite) and, the room full, the listing goes."""
    from dicetable.net.reach import same_machine

    host = HostSession(Profile.generate("ann"), "diceroom", 2, {"turns": False}, start_with=1, timing=FAST,
                       bind="127.0.0.1", transcript=tmp_path / "ann.dtt")
    host.open()
    announcer = same_machine.session_announcer(host, ["127.0.0.1"])
    sessions = [host]
    in_thread(host)
    try:
        wait_until(lambda: seated(host, 1), 20, "the room to start with the host alone")
        host.move(Move("roll", ("d20",)))
        wait_until(lambda: decided(host, 1), 20, "the host's roll")
        wait_until(lambda: [(a.seats_taken, a.seats_total) for a in same_machine.scan()] == [(1, 2)], 10,
                   "the running room listed with a place free")
        [listed] = same_machine.scan()
        bob = PeerSession(Profile.generate("bob"), listed.invite(), timing=FAST, transcript=tmp_path / "bob.dtt")
        sessions.append(bob)
        in_thread(bob)
        wait_until(lambda: seated(host, 2) and seated(bob, 2), 20, "bob to join from the lobby")
        wait_until(lambda: same_machine.scan() == [], 10, "the full room to leave the lobby")
        host.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None and s.finished for s in sessions), 20, "the room to close")
    finally:
        for session in sessions:
            session.stop()
        if announcer is not None:
            announcer.close()
    for line in verified(tmp_path, ("ann", "bob")):
        assert "bob joined" in line, line
