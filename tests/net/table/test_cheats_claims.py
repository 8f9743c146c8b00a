"""Cheats on default claims, performed through the real classes (real sockets on 127.0.0.1) and shown
to fail (FAIRNESS.md §4, §5): a host that claims the game at will, a host that re-rolls a die by
claiming against whichever seat's missing reveal suits it, a player who cuts its own transcript and
appends its own claim — and what a withholding seat still buys, and pays, at a table of three.
"""

from __future__ import annotations

import random
import threading

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.chance import outcomes
from dicetable.net.log import wire
from dicetable.net.log import transcript as tr
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.table.events import ClaimDisputed
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import Table, play_table
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.defaults import Defaults
from dicetable.net.table.seat import Seat
from dicetable.net.refusals import BadClaim, NotDue, OutOfOrder
from dicetable.net.log.replica import Replica
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.log.verify import verify
from dicetable.tui.cli import main
from net_helpers import FAST, LATE, in_thread, stop_all, wait_until

ROOM = registry.get("diceroom")
TRICE = registry.get("trice")
TRICOLOR = registry.get("tricolor")


def replayed(frames: list[bytes]) -> Replica:
    replica = Replica()
    for frame in frames:
        replica.accept(frame)
    return replica


def kinds(path) -> list[wire.Envelope]:
    return [wire.decode(frame) for frame in tr.read(path).frames]


# -- the log's rules for claims, witnesses and disputes, frame by frame ----------------------------------
def test_a_claim_waits_for_a_witness_a_dispute_carries_evidence_and_the_claim_lapses_when_the_seat_acts():
    table = Table(ROOM, ROOM.resolve_options({"rolls": 1}), ["ann", "bob", "cy"])
    ann, bob, cy = table.seats
    host = table.host
    table.post(ann.move(Move("roll", ("d6",))))
    table.post(ann.reveal(1))
    table.post(bob.reveal(1))
    claim = table.post(ann.frame("claim", wire.claim_body(2, "seat 2 did not reveal within 30 s")))
    assert host.pending_claim(2).signers == (0,) and host.needed(2) == 2 and host.out == frozenset()

    def refused(author, frame, fault, match):
        before = (len(host.log), host.claims, host.disputes, host.out, host.pending, host.next_seq(author.seat))
        with pytest.raises(fault, match=match) as caught:
            host.accept(frame)
        author.seq -= 1
        assert caught.value.seat == author.seat
        assert (len(host.log), host.claims, host.disputes, host.out, host.pending, host.next_seq(author.seat)) == before

    refused(cy, cy.frame("witness", wire.witness_body(claim.index)), BadClaim, "against itself")
    refused(ann, ann.frame("witness", wire.witness_body(claim.index)), NotDue, "already signed")
    refused(bob, bob.frame("witness", wire.witness_body(claim.index - 1)), BadClaim, "is not a default claim")
    refused(bob, bob.frame("claim", wire.claim_body(2, "me too")), BadClaim, "is pending: witness it instead")
    refused(cy, cy.frame("dispute", wire.dispute_body(claim.index, b"not the claim", "no", [])), BadClaim, "not a frame")
    # The host "lost" cy's reveal; cy's dispute shows it, and takes its sequence number.
    lost = cy.reveal(1)
    record = table.post(cy.frame("dispute", wire.dispute_body(claim.index, claim.frame, "it revealed at once", [lost])))
    assert record.note == ("seat 2 (cy) disputes seat 0 (ann)'s claim (entry "
                           f"{claim.index + 1}): it revealed at once; it shows 1 frame of its own the log does not hold")
    assert host.disputes[0].held and host.pending_claim(2) is not None  # a dispute alone lapses nothing
    with pytest.raises(OutOfOrder):
        host.accept(lost)
    table.post(cy.reveal(1))  # the seat does what the table waits for: the claim lapses, nobody is out
    assert [c.state for c in host.claims] == ["lapsed"] and host.out == frozenset() and all(host.events[0].reveals)
    assert all(peer.claims == host.claims and peer.disputes == host.disputes for peer in table.peers)


def test_a_refused_claim_is_disputed_in_its_place_in_the_accused_copy():
    table = Table(ROOM, ROOM.resolve_options({"rolls": 0}), ["ann", "bob"])
    ann, bob = table.seats
    mine = table.peers[0]  # ann's own copy, where bob's claim against her never lands
    claim = bob.frame("claim", wire.claim_body(0, "seat 0 did not move within 60 s"))
    forged = wire.make_frame(ann.profile, table.table, 1, bob.seq, "claim", wire.claim_body(0, "x"), mine.head)
    with pytest.raises(BadClaim, match="not signed by the seat that made it"):
        mine.accept(ann.frame("dispute", wire.dispute_body(len(mine.log), forged, "no", [])))
    ann.seq -= 1
    with pytest.raises(BadClaim, match="no log entry"):
        mine.accept(ann.frame("dispute", wire.dispute_body(len(mine.log) + 1, claim, "no", [])))
    ann.seq -= 1
    record = mine.accept(ann.frame("dispute", wire.dispute_body(len(mine.log), claim, "by its own clock 1.0 s", [])))
    assert record.note == ("seat 0 (ann) disputes seat 1 (bob)'s claim against it (seat 0 did not move within 60 s): "
                           "by its own clock 1.0 s; this copy does not hold the claim")
    assert not mine.disputes[0].held and mine.result is None and mine.phase == "playing"


# -- a host that claims the game at will (2 seats) ------------------------------------------------------
class ClaimingAtWill(Defaults):
    """A host's clock that says whatever suits it: the moment the joiner is due to move, it claims the
    game. Its own replica orders its own claim; only the claimed seat's own view can object."""

    claimed = False

    def watch_deadlines(self, now: float) -> None:
        waiting = self.replica.waiting_for
        if not self.claimed and self.replica.phase == "playing" and waiting.action == "move" and waiting.seats == (1,):
            self.claimed = True
            self.author("claim", wire.claim_body(1, "seat 1 did not move within 60 s"))
        super().watch_deadlines(now)


class ClaimingSeat(Seat):
    defaults_type = ClaimingAtWill


class ClaimsAtWill(HostSession):
    """A host whose seat claims the game at will."""

    seat_type = ClaimingSeat


def test_a_host_claiming_the_game_at_will_is_disputed_and_verify_says_unwitnessed(tmp_path, capsys):
    host = ClaimsAtWill(Profile.generate("ann"), "trice", 2, timing=FAST, chooser=bot_chooser(TRICE, "random", 1),
                        transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    events, stopped = [], []
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, chooser=bot_chooser(TRICE, "random", 2),
                      think=60.0, on_event=events.append, transcript=tmp_path / "bob.dtt")  # thinks, as people do

    def run_bob():
        try:
            bob.run()
        except SessionError as error:  # what `dicetable join` prints as its one line
            stopped.append(str(error))

    thread = threading.Thread(target=run_bob, daemon=True)
    thread.start()
    try:
        thread.join(20)
        assert not thread.is_alive() and stopped, "the joiner played on under a claim it disputes"
        wait_until(lambda: any(r.kind == "dispute" for r in host.replica.log), what="the dispute in the host's log")
    finally:
        stop_all(host, bob)
    # The joiner was told, naming the claimant, and left the host's log with its state as it stood.
    disputed = [e for e in events if isinstance(e, ClaimDisputed)]
    assert len(disputed) == 1 and disputed[0].claimant == 0
    assert disputed[0].said.startswith("seat 0 (ann) claims this seat is in default: by its own clock the table had waited")
    assert stopped[0].startswith("seat 0 (ann) claimed this seat in default at entry ")
    assert "this seat disputes it" in stopped[0]
    claim = next(r for r in host.replica.log if r.kind == "claim")
    assert bob.replica.result is None and bob.replica.phase == "playing" and bob.replica.out == frozenset()
    assert bob.replica.state == replayed([r.frame for r in host.replica.log[:claim.index]]).state
    # Its transcript records the refused claim (for people) and, in the claim's place, its signed dispute.
    got = tr.read(tmp_path / "bob.dtt")
    assert [frame for frame, _ in got.refused] == [claim.frame]
    assert got.refused[0][1].startswith("disputed: seat 0: seat 1 (bob) disputes seat 0 (ann)'s claim: ")
    dispute = wire.decode(got.frames[-1])
    assert (len(got.frames) - 1, dispute.kind, dispute.seat) == (claim.index, "dispute", 1)
    assert dispute.body["claim"] == claim.index and dispute.body["frame"] == claim.frame
    assert verify(tmp_path / "bob.dtt").line().startswith(
        f"disputed: trice, {bob.replica.moves} moves, no result: seat 1 (bob) disputes seat 0 (ann)'s claim against it "
        "(seat 1 did not move within 60 s): by its own clock the table had waited ")
    # The host's copy: a win by a claim nobody else signed, disputed by the seat it names.
    verdict = verify(tmp_path / "ann.dtt")
    assert verdict.valid and verdict.result == "seat 0 wins (seat 1 in default — unwitnessed claim by seat 0, disputed by seat 1)"
    # Both copies together: they part at the claim, and the joiner's signed dispute answers it.
    assert main(["verify", str(tmp_path / "ann.dtt"), str(tmp_path / "bob.dtt")]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"copies fork: at entry {claim.index + 1} the copies hold different frames (dispute by seat 1 / claim by seat 0); "
        "seat 0's claim against seat 1 is disputed by seat 1's signed dispute on the same log")


# -- a host that re-rolls by claiming against a seat (3 seats) --------------------------------------------
class Rerolling(HostSession):
    """A host that holds back seat 2's reveal for the first roll and claims seat 2 in default instead:
    with its reveal counted as zeros the die is drawn again, and the host keeps whichever face it
    likes. `relent` lets seat 2's frames through again."""

    victim = 2
    relent = False

    def open(self) -> str:
        self.held: list[bytes] = []
        return super().open()

    def order(self, frame: bytes, origin: bytes | None) -> None:
        if origin is not None and wire.decode(frame).seat == self.victim and not self.relent:
            env = wire.decode(frame)  # whoever carries it: seat 1 holds seat 2's reveal too (answer_path.py)
            if env.kind == "reveal":
                self.held.append(frame)  # and every copy resent
                if len(self.held) == 1:
                    self.own.author("claim", wire.claim_body(self.victim, "seat 2 did not reveal within 30 s"))
                return
        super().order(frame, origin)


def test_a_host_re_rolling_by_a_claim_gets_no_redraw_without_another_seats_witness(tmp_path):
    host = Rerolling(Profile.generate("ann"), "diceroom", 3, {"rolls": 1}, timing=FAST,
                     chooser=bot_chooser(ROOM, "roller"), transcript=tmp_path / "t0.dtt")
    invite = host.open()
    in_thread(host)
    events = {1: [], 2: []}
    peers = {}
    for s in (1, 2):
        peers[s] = PeerSession(Profile.generate(f"p{s}"), invite, timing=FAST, chooser=bot_chooser(ROOM, "roller"),
                               on_event=events[s].append, transcript=tmp_path / f"t{s}.dtt")
        peers[s].connect()  # seats in order: seat 2 is the victim
        in_thread(peers[s])
    honest, victim = peers[1], peers[2]
    try:
        wait_until(lambda: any(r.kind == "claim" for r in honest.replica.log), what="the host's claim")
        claim = next(c for c in host.replica.claims)
        wait_until(lambda: any(r.kind == "dispute" for r in host.replica.log), what="the victim's dispute")
        # Seat 1's clock says seat 2 is not late: it never co-signs, so the claim changes nothing.
        # The host claims as soon as seat 2's reveal reaches it, which may be before seat 1's does.
        wait_until(lambda: host.replica.pending is not None and host.replica.pending.missing == (2,),
                   what="seat 1's reveal ordered")
        wait_until(lambda: len(honest.replica.log) == len(host.replica.log), what="seat 1 caught up")
        for replica in (host.replica, honest.replica, victim.replica):
            assert replica.pending_claim(2) == claim and replica.needed(2) == 2
            assert replica.out == frozenset() and replica.result is None
            assert replica.pending.number == 1 and replica.pending.missing == (2,)  # nothing redrawn
        assert not [r for r in host.replica.log if r.kind == "witness"]
        # The victim was told, naming the host, and its dispute shows the reveal the host held back.
        told = [e for e in events[2] if isinstance(e, ClaimDisputed)]
        assert told and told[0].claimant == 0 and "the log does not hold its answer" in told[0].said
        dispute = next(r for r in host.replica.log if r.kind == "dispute")
        assert dispute.envelope.body["evidence"] == host.held[:1] and dispute.envelope.body["claim"] == claim.index
        assert host.replica.disputes[0].held and "shows 1 frame of its own the log does not hold" in dispute.note
        # The host gives up: seat 2's reveal lands, the claim lapses and the die is the one all three chose.
        host.relent = True
        wait_until(lambda: all(p.finished for p in peers.values()), 15, "the roll and the end of the room")
    finally:
        stop_all(host, *peers.values())  # their transcripts written whole before they are read
    event = honest.replica.events[0]
    assert all(event.reveals) and event.seed == outcomes.event_seed(host.replica.table, 1, event.reveals)
    assert event.outcome == outcomes.draw(event.chance, event.seed)
    assert [c.state for c in honest.replica.claims] == ["lapsed"] and honest.replica.out == frozenset()
    for s in (0, 1, 2):
        verdict = verify(tmp_path / f"t{s}.dtt")
        assert verdict.valid and "in default" not in verdict.line(), verdict.line()


# -- a player who cuts its own transcript and appends its own claim --------------------------------------
def _write(path, header, frames, result):
    data = tr.MAGIC + tr._record("header", header) + b"".join(tr._record("frame", f) for f in frames)
    path.write_bytes(data + (tr._record("result", result) if result is not None else b""))


def _entries(replica) -> str:
    """`n entries are` (or `entry is`): the cut copy's entries ann's signed frames do not vouch for."""
    n = len(replica.log) - replica.vouched[0]
    return "entry is" if n == 1 else f"{n} entries are"


def _cut_and_claim(table, tmp_path, name: str):
    """Bob (seat 1) keeps the honest log up to a point where ann (seat 0) is due to move, appends his own
    signed claim of the game and the result it gives, and writes that as his copy."""
    honest = [r.frame for r in table.host.log]
    replica = Replica(deal_handler=TableDeals())  # as verify replays it: every deal message checked
    cut = None
    for index, frame in enumerate(honest):
        waiting = replica.waiting_for
        if index > len(honest) // 2 and replica.phase == "playing" and waiting.action == "move" and waiting.seats == (0,):
            cut = index
            break
        replica.accept(frame)
    assert cut is not None, "ann was never due to move in the second half"
    bob = table.seats[1]
    seq = replica.next_seq(1)
    claim = wire.make_frame(bob.profile, table.table, 1, seq, "claim", wire.claim_body(0, "seat 0 did not move within 60 s"),
                            replica.head)
    replica.accept(claim)
    header = tr.header_for(table.host)
    _write(tmp_path / "honest.dtt", header, honest, table.host.result.to_data())
    _write(tmp_path / name, header, honest[:cut] + [claim], replica.result.to_data())
    return cut, replica


def test_a_cut_transcript_with_its_owners_claim_verifies_only_as_unwitnessed_and_the_honest_copy_shows_the_fork(
        tmp_path, capsys):
    bots = [TRICE.bots["random"](TRICE, random.Random(s)) for s in (3, 4)]
    table = play_table(TRICE, {}, bots, ["ann", "bob"], random.Random(3))
    cut, replica = _cut_and_claim(table, tmp_path, "cut.dtt")
    verdict = verify(tmp_path / "cut.dtt")
    assert verdict.line() == (f"valid: trice, {replica.moves} moves, "
                              "result: bob wins (ann in default — unwitnessed claim by bob)"  # names: issue 34
                              # the claim is bob's alone, and ann signed nothing after it (PROTOCOL.md §5.13)
                              f"; end not confirmed: the last {_entries(replica)} signed only by bob "
                              "(not confirmed by ann, out of the game)")
    assert main(["verify", str(tmp_path / "honest.dtt"), str(tmp_path / "cut.dtt")]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    next_frame = wire.decode(table.host.log[cut].frame)
    assert next_frame.seat == 0  # the honest log goes on with ann's own frame where bob put his claim
    assert last.startswith("copies fork: ") and last.endswith(
        f"seat 1's claim against seat 0 is disputed by seat 0's signed {next_frame.kind} on the same log"), last
    if "signed two different frames" in last:  # bob's claim took the number of one of his later frames
        assert last.startswith("copies fork: seat 1 (bob) signed two different frames with sequence number ")


def test_a_cut_tricolor_transcript_with_its_owners_claim_says_its_card_audit_was_not_done(tmp_path, capsys):
    options = TRICOLOR.resolve_options({"turn_limit": 12})
    bots = [TRICOLOR.bots["random"](TRICOLOR, random.Random(s)) for s in (5, 6)]
    table = play_table(TRICOLOR, options, bots, ["ann", "bob"], random.Random(5))
    _, replica = _cut_and_claim(table, tmp_path, "cut.dtt")
    verdict = verify(tmp_path / "cut.dtt")
    assert verdict.valid and verdict.result == "seat 1 wins (seat 0 in default — unwitnessed claim by seat 1)"
    assert verdict.unopened >= 1 and verdict.line().endswith(
        f"; card audit not done: {verdict.unopened} deck{'s' if verdict.unopened > 1 else ''} never opened "
        f"(the game ended by a claim); end not confirmed: the last {_entries(replica)} signed only by bob "
        "(not confirmed by ann, out of the game)"), \
        verdict.line()
    honest = verify(tmp_path / "honest.dtt")
    assert honest.valid and "card audit not done" not in honest.line() and honest.deals >= 1
    assert main(["verify", str(tmp_path / "honest.dtt"), str(tmp_path / "cut.dtt")]) == 1
    assert "seat 1's claim against seat 0 is disputed by seat 0's signed" in capsys.readouterr().out.splitlines()[-1]


# -- withholding at a table of three: what it buys and what it costs --------------------------------------
class WithholdingSeat(Seat):
    """A seat that never reveals: it sees the others' values first and takes the redraw with zeros."""

    def reveal_if_due(self) -> bool:
        return False


class Withholder(PeerSession):
    seat_type = WithholdingSeat


def test_a_withholding_seat_is_out_by_a_co_signed_claim_and_the_die_is_the_documented_redraw(tmp_path):
    timing = LATE
    events = []
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"rolls": 1}, timing=timing,
                       chooser=bot_chooser(ROOM, "roller"), on_event=events.append, transcript=tmp_path / "t0.dtt")
    invite = host.open()
    in_thread(host)
    honest = PeerSession(Profile.generate("bob"), invite, timing=timing, chooser=bot_chooser(ROOM, "roller"),
                         on_event=events.append, transcript=tmp_path / "t1.dtt")
    honest.connect()
    withholder = Withholder(Profile.generate("cy"), invite, timing=timing, chooser=bot_chooser(ROOM, "roller"),
                            on_event=events.append, transcript=tmp_path / "t2.dtt")
    withholder.connect()
    threads = [in_thread(honest), in_thread(withholder)]
    try:
        for thread in threads:
            thread.join(20)
        assert all(s.finished for s in (honest, withholder))
    finally:
        stop_all(host, honest, withholder)
    for replica in (host.replica, honest.replica, withholder.replica):
        assert replica.out == {2} and replica.result is not None
        (claim,) = replica.claims
        assert claim.against == 2 and claim.state == "out" and {claim.seat, *claim.witnesses} == {0, 1}
    assert not [e for e in events if isinstance(e, ClaimDisputed)]  # by its own clock too, it was late
    # The die: seat 2's value counted as 32 zero bytes, as documented (net/table/deadlines.py).
    event = host.replica.events[0]
    assert event.reveals[2] == b"" and event.seed == outcomes.event_seed(host.replica.table, 1,
                                                                      (event.reveals[0], event.reveals[1], bytes(32)))
    assert event.outcome == outcomes.draw(event.chance, event.seed)
    took = next(r for r in host.replica.log if r.kind == "witness")
    assert "seat 2 in default" in took.note and "the game goes on without it" in took.note
    names = ("ann", "bob", "cy")  # the verdict names people (issue 34)
    basis = f"claim by {names[claim.seat]}, witnessed by {names[claim.witnesses[0]]}"
    for s in (0, 1, 2):
        verdict = verify(tmp_path / f"t{s}.dtt")
        assert verdict.valid and f"; cy in default ({basis}), the game went on without; " in verdict.line()
