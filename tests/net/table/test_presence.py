"""A relay or a bad link can stop a game, never decide it (issue 37, FAIRNESS.md §5b, PROTOCOL.md §7.5):
presence is not lateness — a seat whose pings arrive is claimed only for a wait it provably received,
after the deadline plus its link's time — and no witness wins by its witness. Real sockets through a
relay that misbehaves on what it carries (tests/misbehaving_relay.py), and the log's rules frame by frame.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.identity import Profile
from dicetable.net.log import transcript as tr
from dicetable.net.log import wire
from dicetable.net.log.verify import verify
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.refusals import BadClaim
from dicetable.net.table.deadlines import Receipts, Timing, waiting_key
from dicetable.net.table.events import ClaimDisputed, Claimable, Refused, Unwitnessed
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.local_seats import Table
from dicetable.net.table.defaults import Defaults
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import TableSession, bot_chooser
from misbehaving_relay import MisbehavingRelay, Misbehaviour
from net_helpers import Running, in_thread, stop_all, wait_until

BREAKER = registry.get("dicebreaker")
ROOM = registry.get("diceroom")
# Short clocks: a reveal or a default answer is due within DEADLINE s; the relay's lateness is measured against it.
DEADLINE = 1.0
TIMING = Timing(heartbeat=0.25, drop_after=4.0, grace=30.0, turn_deadline=DEADLINE, reveal_deadline=DEADLINE,
                answer_deadline=DEADLINE, connect_timeout=30.0)


class WithholdingSeat(Seat):
    """A seat that never reveals (and pings all the while)."""

    def reveal_if_due(self) -> bool:
        return False


class Withholding(PeerSession):
    seat_type = WithholdingSeat


class Impatient(Defaults):
    """A clock that claims the moment the table waits for seat 1's reveal (once)."""

    claimed = False

    def watch_deadlines(self, now: float) -> None:
        if not self.claimed and self.replica.pending is not None and 1 in self.replica.waiting_for.seats:
            self.claimed = True
            self.author("claim", wire.claim_body(1, "seat 1 did not reveal within 1 s"))
        super().watch_deadlines(now)


class ImpatientSeat(Seat):
    defaults_type = Impatient


class ImpatientPeer(PeerSession):
    seat_type = ImpatientSeat


class RelayedTable:
    """A 3-seat Dice Breaker table to 3 points (bots) through a MisbehavingRelay: seat k is joiner k."""

    def __init__(self, tmp_path, timing: Timing = TIMING, seats: int = 3) -> None:
        self.running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
        self.relay = self.running.server
        self.events: list[list] = [[] for _ in range(seats)]
        self.paths = [tmp_path / f"t{s}.dtt" for s in range(seats)]
        host = HostSession(Profile.generate("ann"), "dicebreaker", seats, {"target": 3}, timing=timing,
                           relay=self.running.line, chooser=bot_chooser(BREAKER, "greedy", 1),
                           on_event=self.events[0].append, transcript=self.paths[0])
        invite = host.open()
        in_thread(host)
        self.sessions = [host]
        for s, name in enumerate(("bob", "cy")[:seats - 1], 1):
            peer = PeerSession(Profile.generate(name), invite, timing=timing, chooser=bot_chooser(BREAKER, "greedy", s + 1),
                               on_event=self.events[s].append, transcript=self.paths[s])
            peer.connect()  # one by one: joiner k is seat k at the relay
            in_thread(peer)
            self.sessions.append(peer)
        wait_until(lambda: all(s.replica.phase == "playing" for s in self.sessions), 15, "the start, at every seat")

    @property
    def host(self):
        return self.sessions[0]

    def claims(self) -> list:
        return [c for s in self.sessions for c in s.replica.claims]

    def stop(self) -> None:
        try:
            stop_all(*self.sessions)
        finally:
            self.running.stop()


def waited_past(session, seat: int, past: float) -> bool:
    """`session`'s own clock has waited `past` s beyond the deadline for what it awaits from `seat`."""
    defaults = session.own.defaults
    return seat in session.replica.waiting_for.seats and defaults._waiting_key == waiting_key(session.replica) \
        and time.monotonic() - defaults._waiting_since > DEADLINE + past


@pytest.mark.slow
def test_every_packet_late_by_more_than_half_the_deadline_defaults_no_present_seat(tmp_path):
    """Finding 1: every packet 0.8 s late, so each answer reaches the orderer 1.6 s after it asked, past
    the 1 s deadline; every seat is present (its pings arrive, late). No copy holds any claim."""
    table = RelayedTable(tmp_path)
    try:
        start = len(table.host.replica.events)
        table.relay.behave(Misbehaviour(delay=0.8))
        wait_until(lambda: table.host.finished or len(table.host.replica.events) >= start + 4, 40, "four late rounds of dice")
    finally:
        table.stop()
    assert table.relay.counts["held"] > 50
    assert table.claims() == [], [str(c.reason) for c in table.claims()]
    assert not [e for events in table.events for e in events if isinstance(e, (Claimable, ClaimDisputed))]
    for s, session in enumerate(table.sessions):
        assert session.replica.out == frozenset()
        verdict = verify(table.paths[s])
        assert verdict.valid or verdict.fault_kind == "unfinished", verdict.line()
        assert "default" not in verdict.line()


def test_a_seat_starved_of_the_orderers_entries_is_claimed_by_nobody(tmp_path):
    """Finding 3: the relay drops the host's entries to joiner 1 after the start; its pings (and the
    pongs) pass, so it is present, and its acknowledgements show it never received the wait. Nobody
    claims it, however long past the deadline the others' clocks run; every copy agrees nothing was
    defaulted."""
    table = RelayedTable(tmp_path)
    host, bob, cy = table.sessions
    try:
        table.relay.behave(Misbehaviour(starve={1: "entries"}))
        wait_until(lambda: host.finished or table.claims() or waited_past(host, 1, 2.0) and waited_past(cy, 1, 2.0), 20,
                   "the host's and cy's clocks past the deadline for bob")
    finally:
        table.stop()
    assert table.relay.counts["starved"] > 0
    assert table.claims() == [], [str(c.reason) for c in table.claims()]
    assert host.acked.get(1, 0) < host.own.defaults.waiting_len  # bob never acknowledged the wait
    assert 1 not in host.due(time.monotonic())
    for s, session in enumerate(table.sessions):
        assert session.replica.out == frozenset() and session.replica.result is None
        verdict = verify(table.paths[s])
        assert verdict.fault_kind == "unfinished" and "default" not in verdict.line(), verdict.line()


def test_a_present_seat_that_withholds_its_reveal_is_still_defaulted_and_an_early_claim_is_not_ordered(tmp_path):
    """Honest clocks still catch a withholding seat: bob is present (its pings arrive, it acknowledged
    the wait) and never reveals; the host claims it once the deadline plus its round trip passed, and cy,
    told by the orderer that bob is due and agreeing by its own clock, witnesses it. cy claiming at once,
    before that, is a race, not a fault: the host does not order it, tells cy, records nothing."""

    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
    paths = [tmp_path / f"t{s}.dtt" for s in range(3)]
    timing = replace(TIMING, heartbeat=0.2)
    roller = bot_chooser(ROOM, "roller")
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"rolls": 1}, timing=timing, relay=running.line,
                       chooser=roller, transcript=paths[0])
    invite = host.open()
    in_thread(host)
    bob = Withholding(Profile.generate("bob"), invite, timing=timing, chooser=roller, transcript=paths[1])
    bob.connect()
    events = []
    cy = ImpatientPeer(Profile.generate("cy"), invite, timing=timing, chooser=roller, on_event=events.append,
                       transcript=paths[2])
    cy.connect()
    threads = [in_thread(bob), in_thread(cy)]
    try:
        wait_until(lambda: any(isinstance(e, Refused) for e in events), 10, "cy's early claim refused")
        assert not host.replica.claims
        for thread in threads:
            thread.join(20)
        assert all(s.finished for s in (host, bob, cy))
    finally:
        stop_all(host, bob, cy)
        running.stop()
    (early,) = [e for e in events if isinstance(e, Refused)]
    assert early.seat == 2 and str(early.said) == "seat 1 is not due for a claim yet: it is present and its link's time has not passed"
    assert tr.read(paths[0]).refused == [] and host.refusals == []  # a race: nothing recorded, nobody blamed
    for session in (host, bob, cy):
        (claim,) = session.replica.claims
        assert claim.against == 1 and claim.state == "out" and len(claim.signers) == 2 and 1 not in claim.signers
        assert session.replica.out == {1} and session.replica.result is not None
    assert all(verify(p).valid for p in paths)


def test_no_witness_wins_by_its_witness_and_a_claim_no_neutral_seat_can_sign_stays_pending(tmp_path):
    """Finding 1's end, frame by frame: bob and cy each claim the other (both pending, 2 signatures
    needed); ann's witness puts cy out and the game goes on; a default of bob now would hand ann the
    game, so her witness is refused by the log's rules, the claim stays pending, and verify says so."""
    table = Table(ROOM, ROOM.resolve_options({"rolls": 1}), ["ann", "bob", "cy"], transcript=tmp_path / "room.dtt")
    ann, bob, cy = table.seats
    host = table.host
    table.post(ann.move(Move("roll", ("d6",))))
    table.post(ann.reveal(1))
    against_cy = table.post(bob.frame("claim", wire.claim_body(2, "seat 2 did not reveal within 1 s")))
    against_bob = table.post(cy.frame("claim", wire.claim_body(1, "seat 1 did not reveal within 1 s")))
    claims = host.default_claims
    assert claims.winners_by_default(2) == () and not claims.unwitnessable(host.pending_claim(2))
    table.post(ann.frame("witness", wire.witness_body(against_cy.index)))  # neutral: the game goes on without cy
    assert host.out == {2} and host.pending_claim(1).index == against_bob.index
    assert claims.winners_by_default(1) == (0,) and host.needed(1) == 1
    witness = ann.frame("witness", wire.witness_body(against_bob.index))
    with pytest.raises(BadClaim, match="would win the game by this default: it cannot witness it"):
        host.accept(witness)
    assert claims.unwitnessable(host.pending_claim(1)) and host.out == {2} and host.result is None
    # Ann's own seat, on her copy of this log, with a clock that finds bob late: it says once, in one
    # line, that the claim stays unwitnessed, and sends no witness (its driver here takes no frames).
    told = []
    mine = Seat(ann.profile, timing=Timing(reveal_deadline=0.5), on_event=told.append)
    mine.seat, mine.replica = 0, table.peers[0]
    TableSession(mine)
    now = time.monotonic()
    for later in (0.0, 1.0, 2.0):
        mine.defaults.watch_deadlines(now + later)
    assert [type(e) for e in told] == [Unwitnessed, Claimable]
    assert str(told[0].said) == (f"seat 2 (cy)'s claim against seat 1 (bob) (entry {against_bob.index + 1}) stays pending, "
                                 "unwitnessed: every seat that could witness it would win the game by it")
    table.writer.sync()
    line = verify(tmp_path / "room.dtt").line()
    assert line.endswith("; seat 2 (cy)'s claim against seat 1 (bob) (entry "
                         f"{against_bob.index + 1}) is pending, unwitnessed: every seat that could witness it would win by it"), line
    # bob's answer, however late, ends the claim: accepted, the claim lapses, the die is decided.
    table.post(bob.reveal(1))
    assert [c.state for c in host.claims] == ["out", "lapsed"] and host.out == {2} and host.events[0].outcome is not None
    table.writer.close()


def test_what_a_seat_provably_received_and_its_round_trip_by_the_orderers_clock():
    """The orderer's receipts (PROTOCOL.md §7.5): a seat received a length when its ping acknowledged
    it; its round trip runs from the relay of a length to that first acknowledgement; a seat whose
    acknowledgements stop short of what was relayed a while ago is kept behind, not late."""
    receipts, timing = Receipts(), Timing(heartbeat=1.0)
    receipts.relayed(5, 10.0)
    receipts.acked(1, 5, 13.0)  # 3 s late: a slow link
    receipts.acked(1, 4, 13.5)  # an older ping arriving late changes nothing
    receipts.relayed(6, 14.0)
    assert receipts.received_at(1, 5) == 13.0 and receipts.received_at(1, 6) is None
    assert receipts.round_trip(1, 60.0, timing) == 3.0 and receipts.round_trip(1, 1.0, timing) == 2.0  # capped
    assert not receipts.behind(1, 13.9) and receipts.behind(1, 14.0)  # entry 6 was relayed and never acknowledged
    receipts.acked(1, 6, 15.0)
    assert not receipts.behind(1, 20.0) and receipts.round_trip(1, 60.0, timing) == 2.0  # median of 3 s and 1 s
    assert receipts.received_at(2, 5) is None and receipts.behind(2, 20.0)  # a seat never heard from received nothing
