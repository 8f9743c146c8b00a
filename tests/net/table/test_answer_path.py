"""Answers the orderer cannot hide (FAIRNESS.md §3c, PROTOCOL.md §10.10), over real sockets on
127.0.0.1: issue 32's attack — in a 3-seat dice room the host drops seat 1's reveal (whoever carries
it) and seat 1's disputes, and claims seat 1 in default once the deadline has passed by every clock.
Seat 1 sent its reveal boxed to every seat too; seat 2 holds it, so it never witnesses the claim (which
then never takes effect), carries the reveal to the log itself, and keeps it as evidence; the victim's
own copy keeps its reveal and its dispute, and `verify` (alone, and beside the host's copy) shows them.

The stronger host holds ALL of seat 1's packets, its `forward` of boxes included, reads its reveal and
drops everything: boxes through the host would then reach nobody. So a seat's boxes go by a path the
host does not carry: on a relay table, seat to seat through the relay (net/reach/seat_boxes.py); on a
direct table, over direct links (net/table/direct_links.py). Both are played here, and a successor
that does the same after a hand-over (PROTOCOL.md §11)."""

from __future__ import annotations

import time
from dataclasses import replace

from dicetable.core import registry
from dicetable.net.identity import Profile
from dicetable.net.log import wire
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.defaults import Defaults
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table import succession
from dicetable.net.table.orderer import Orderer
from dicetable.net.table.answer_path import HeldAnswers
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import bot_chooser
from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.table.events import AnswerPath
from dicetable.tui.cli import main

import pytest

from net_helpers import Running, in_thread, stop_all, wait_until

ROOM = registry.get("diceroom")
# Reveal deadline 1 s: every seat's clock finds seat 1 late soon; the rest as FAST.
TIMING = Timing(heartbeat=0.1, drop_after=3.0, grace=30.0, reveal_deadline=1.0, connect_timeout=3.0)


class DroppingHost(HostSession):
    """A host that drops every reveal and dispute of seat 1, whoever brings it: its own clock then finds
    seat 1 in default and claims. It relays the boxes between the other seats as it must relay every
    box: it cannot read them or tell them apart."""

    victim = 1

    def open(self) -> str:
        self.dropped: list[bytes] = []
        return super().open()

    def order(self, frame: bytes, origin: bytes | None) -> None:
        env = wire.decode(frame)
        if env.seat == self.victim and env.kind in ("reveal", "dispute"):
            self.dropped.append(frame)
            return
        super().order(frame, origin)


class HoldingHost(DroppingHost):
    """Worse: it holds all of seat 1's packets, its boxes for the other seats as well, until it has read
    seat 1's reveal, then drops them all (PROTOCOL.md §19 point 2): boxes it carries reach nobody."""

    def forward_boxes(self, seat: int, boxes: list) -> None:
        if seat == self.victim:
            self.held_boxes = getattr(self, "held_boxes", 0) + len(boxes)
            return
        super().forward_boxes(seat, boxes)


class Watching(Defaults):
    """An honest seat's clocks and claims, counting its passes (the test waits for one after its clock
    agrees that seat 1 is late: the pass where it would have witnessed)."""

    passes = 0

    def watch_deadlines(self, now: float) -> None:
        super().watch_deadlines(now)
        self.passes += 1


class WatchingSeat(Seat):
    defaults_type = Watching


class WatchedPeer(PeerSession):
    seat_type = WatchingSeat


def drop_and_claim(host_type, tmp_path, capsys, **where) -> tuple:
    """Issue 32's 3-seat room against `host_type`: it drops seat 1's answers and claims it in default.
    Checks that seat 2 holds seat 1's reveal, never witnesses, and carries it; that the victim stays in;
    and that the copies keep the evidence. Returns the host and the seats' events."""
    host = host_type(Profile.generate("Ann"), "diceroom", 3, {"rolls": 1}, timing=TIMING,
                     chooser=bot_chooser(ROOM, "roller"), transcript=tmp_path / "ann.dtt", **where)
    invite = host.open()
    in_thread(host)
    victim = PeerSession(Profile.generate("Bob"), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                         transcript=tmp_path / "bob.dtt")
    victim.connect()  # seats in order: Bob is seat 1
    third = WatchedPeer(Profile.generate("Cy"), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                        transcript=tmp_path / "cy.dtt")
    third.connect()
    told = {"bob": [], "cy": []}
    victim.on_event, third.on_event = told["bob"].append, told["cy"].append
    in_thread(victim)
    in_thread(third)
    try:
        wait_until(lambda: host.replica.pending_claim(1) is not None, 20, "the host's claim against seat 1")
        claim = host.replica.pending_claim(1)
        assert claim.seat == 0 and host.replica.needed(1) == 2  # one witness away from taking seat 1 out
        # Seat 2's own clock agrees seat 1 is late (its log never got the reveal) ...
        wait_until(lambda: third.own.defaults.default_reason(1, time.monotonic()), 10,
                   "seat 2's clock to find seat 1 late")
        passes = third.own.defaults.passes
        wait_until(lambda: third.own.defaults.passes > passes + 2, 5, "seat 2's next passes over its clocks")
        wait_until(lambda: victim.own.defaults._disputed and len(host.dropped) >= 3, 10,
                   "the victim's dispute, and seat 2 carrying the victim's reveal, both dropped")
        # ... but it holds seat 1's reveal, boxed to it by seat 1: it never co-signs, the claim changes nothing.
        for replica in (host.replica, third.replica, victim.replica):
            assert not [r for r in replica.log if r.kind == "witness"]
            assert replica.pending_claim(1) is not None and replica.out == frozenset() and replica.result is None
        assert third.own.held.answer(1) is not None
        kinds = sorted({wire.decode(f).kind for f in host.dropped})
        assert kinds == ["dispute", "reveal"]  # the victim's reveal (also as seat 2 carried it) and its dispute
    finally:
        stop_all(host, victim, third)
    # The victim's copy keeps its own reveal and its dispute; seat 2's keeps both as it held them.
    mine = {wire.decode(f).kind for f, _ in read(tmp_path / "bob.dtt").evidence}
    assert mine == {"reveal", "dispute"}
    held = [wire.decode(f) for f, _ in read(tmp_path / "cy.dtt").evidence]
    assert sorted((e.kind, e.seat) for e in held) == [("dispute", 1), ("reveal", 1)]
    k = next(e for e in held if e.kind == "reveal").body["k"]
    # The game stopped on a claim its accused disputes: said as such, the accused's word (§16.3 item 6).
    stopped = (f"disputed: the game is unfinished: the log ends waiting for seat 1 to reveal, with seat 0's claim "
               f"against seat 1 pending (entry {claim.index + 1}) — disputed by seat 1: ")
    kept = f" (its signed word, kept aside, never in the log); kept aside, never in this log: Bob's reveal for event {k}"
    for name in ("bob", "cy"):
        line = verify(tmp_path / f"{name}.dtt").line()
        assert line.startswith(stopped) and line.endswith(kept), line
    # Beside the host's copy: the same log, and the victim's evidence in its line.
    main(["verify", str(tmp_path / "ann.dtt"), str(tmp_path / "bob.dtt")])
    out = capsys.readouterr().out
    assert stopped in out and f"Bob's reveal for event {k}" in out, out
    return host, told, third


def test_a_host_dropping_a_seats_reveal_and_disputes_gets_no_witness_and_the_victim_keeps_its_evidence(tmp_path, capsys):
    drop_and_claim(DroppingHost, tmp_path, capsys)


def test_a_host_holding_all_a_seats_packets_on_a_direct_table_gets_no_witness(tmp_path, capsys):
    """The victim's boxes go over its direct link to seat 2, which the host does not carry."""
    host, told, third = drop_and_claim(HoldingHost, tmp_path, capsys)
    assert third.paths.path.taken >= 1  # seat 1's answers came to seat 2's own listener
    assert not [e for e in told["bob"] if isinstance(e, AnswerPath) and e.seat == 2]  # never only through the host


@pytest.fixture
def relay():
    running = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0))
    yield running
    running.stop()


def test_a_host_holding_all_a_seats_packets_on_a_relay_table_gets_no_witness(tmp_path, capsys, relay):
    """The victim's boxes go seat to seat through the relay, on its own connection; not through the host."""
    host, told, third = drop_and_claim(HoldingHost, tmp_path, capsys, relay=relay.line)
    assert relay.server.seat_boxes.carried >= 1
    assert not [e for e in told["bob"] if isinstance(e, AnswerPath) and e.seat == 2]


class HoldingSuccessor(Orderer):
    """A seat that took over ordering (net/table/succession.py) and then does what HoldingHost does: it
    holds all of seat 2's packets, boxes included, drops its reveals and disputes whoever brings them, and
    its own clock claims seat 2 in default (it forgets the answers seat 2 boxed to it)."""

    victim = 2
    dropped: list[bytes] = []

    def order(self, frame: bytes, origin: bytes | None) -> None:
        env = wire.decode(frame)
        if origin is not None and env.seat == self.victim and env.kind in ("reveal", "dispute"):
            self.dropped.append(frame)
            return
        super().order(frame, origin)

    def forward_boxes(self, seat: int, boxes: list) -> None:
        if seat != self.victim:
            super().forward_boxes(seat, boxes)

    def step(self, timeout: float) -> None:
        self.own.held.held.pop(self.victim, None)  # it claims whatever seat 2 boxed to it before the hand-over
        super().step(timeout)


def test_a_successor_holding_all_a_seats_packets_gets_no_witness(tmp_path, relay, monkeypatch):
    """After a hand-over the seat that orders is the attacker: seat 3 holds seat 2's reveals, which came
    seat to seat through the relay, and never witnesses; seat 2 stays in."""
    monkeypatch.setattr(succession, "HOST_AWAY", 1.0)
    monkeypatch.setattr(succession, "Orderer", HoldingSuccessor)
    HoldingSuccessor.dropped = []
    short = replace(TIMING, grace=2.0)
    relay.server.host_away = 1.0
    names = ["Ann", "Bob", "Cy", "Di"]
    host = HostSession(Profile.generate("Ann"), "diceroom", 4, {"rolls": 3}, timing=short, relay=relay.line,
                       chooser=bot_chooser(ROOM, "roller"), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    seats = []
    for name in names[1:]:
        seat = (WatchedPeer if name == "Di" else PeerSession)(
            Profile.generate(name), invite, timing=short, chooser=bot_chooser(ROOM, "roller"),
            transcript=tmp_path / f"{name.lower()}.dtt")
        seat.connect()
        seats.append(seat)
    bob, cy, di = seats
    for seat in seats:
        in_thread(seat)
    try:
        wait_until(lambda: host.replica.phase not in ("new", "joining", "ready"), 20, "the room to start")
        host.stop()  # the host seat is gone for good: a seat takes over ordering at the relay
        wait_until(lambda: bob.successor is not None, 30, "Bob to order the log")
        successor = bob.successor
        wait_until(lambda: successor.replica.pending_claim(2) is not None, 30, "the successor's claim against seat 2")
        wait_until(lambda: di.own.defaults.default_reason(2, time.monotonic()), 10, "Di's clock to find seat 2 late")
        passes = di.own.defaults.passes
        wait_until(lambda: di.own.defaults.passes > passes + 2, 5, "Di's next passes over its clocks")
        assert di.own.held.answer(2) is not None  # seat 2's reveal, seat to seat through the relay
        claim = successor.replica.pending_claim(2)
        for replica in (successor.replica, cy.replica, di.replica):
            assert not [r for r in replica.log if r.kind == "witness" and r.envelope.body.get("claim") == claim.index]
            assert 2 not in replica.out
        assert {wire.decode(f).kind for f in HoldingSuccessor.dropped} >= {"reveal"}
    finally:
        stop_all(*seats)


class FalseBoxes(HeldAnswers):
    """A seat that boxes the others a reveal that is not its chain's (the value altered), and none of its
    disputes, hoping a held reveal alone keeps them from witnessing its default."""

    def boxes(self, frame: bytes, orderer: int | None) -> list[list]:
        env = wire.decode(frame)
        if env.kind != "reveal":
            return []
        body = {**env.body, "value": bytes(b ^ 0xFF for b in env.body["value"])}
        return super().boxes(wire.make_frame(None, env.table, env.seat, env.seq, "reveal", body, env.prev, sign=False), orderer)


class FalseBoxingSeat(Seat):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.held = FalseBoxes(self)


class FalseBoxingPeer(PeerSession):
    seat_type = FalseBoxingSeat


def test_a_boxed_reveal_that_does_not_open_its_chain_is_no_answer_however_often_it_is_asked(tmp_path):
    """Seat 1 boxes seat 2 a false reveal and the host drops its true one: seat 2 holds a reveal of seat
    1's, but it does not open seat 1's chain, so it is no answer to the wait (worked out once per log,
    asked at every pass of seat 2's clocks): seat 2 witnesses and the claim takes seat 1 out."""
    host = DroppingHost(Profile.generate("Ann"), "diceroom", 3, {"rolls": 1}, timing=TIMING,
                        chooser=bot_chooser(ROOM, "roller"), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    cheat = FalseBoxingPeer(Profile.generate("Bob"), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                            transcript=tmp_path / "bob.dtt")
    cheat.connect()  # seat 1
    third = WatchedPeer(Profile.generate("Cy"), invite, timing=TIMING, chooser=bot_chooser(ROOM, "roller"),
                        transcript=tmp_path / "cy.dtt")
    third.connect()
    in_thread(cheat)
    in_thread(third)
    try:
        wait_until(lambda: third.own.held.held.get(1), 20, "seat 1's boxed reveal at seat 2")
        assert 1 not in host.replica.out  # held long before the 1 s deadline lets anyone claim
        (kind, _), held = next(iter(third.own.held.held[1].items()))
        assert kind == "reveal" and held != next(f for f in host.dropped if wire.decode(f).kind == "reveal")
        wait_until(lambda: 1 in host.replica.out, 20, "seat 2's witness taking seat 1 out")
        assert [r.seat for r in host.replica.log if r.kind == "witness"] == [2]
    finally:
        stop_all(host, cheat, third)
