"""A relay can stop a game, never decide it: a seat's dispute is kept and spread (issue 37, finding 2;
FAIRNESS.md §3c, §5b; PROTOCOL.md §5.7, §10.10, §16.3, §16.4).

Real sessions over real sockets on 127.0.0.1, through a relay that misbehaves on what it carries
(tests/misbehaving_relay.py): once a 3-seat Dice Breaker game is under way, it drops every packet of
joiner 1 (Bob) to the host bigger than a ping — its moves, reveals and disputes — and carries its pings.
The host's clock claims Bob in default, Cy's clock agrees and witnesses, and Bob, present all along,
disputes. Bob's dispute must then be in Bob's own copy and reach the other seats by the path the host
does not carry (seat to seat through the relay), be kept by them and carried to the log, and `verify`
must say "disputed by bob" on every copy — and when the relay drops Bob's boxes too, on Bob's copy and
when the copies are compared. Before, Bob's copy verified as a clean default of Bob (with no word of
its dispute when the claim and its witness came in one batch), and the others knew nothing of it."""

from __future__ import annotations

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.identity import Profile
from dicetable.net.log import wire
from dicetable.net.log.transcript import TranscriptWriter, header_for, read
from dicetable.net.log.verify import verify
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import ClaimDisputed
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.local_seats import Table
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import bot_chooser
from dicetable.tui.cli import main

from misbehaving_relay import MisbehavingRelay, Misbehaviour
from net_helpers import Running, in_thread, stop_all, wait_until

BREAKER = registry.get("dicebreaker")
ROOM = registry.get("diceroom")
# Every wait 2 s: Bob's unanswered move or reveal is late by every clock soon; slack 0.5 s (net_helpers.LATE).
TIMING = Timing(heartbeat=0.5, drop_after=3.0, grace=30.0, reveal_deadline=2.0, turn_deadline=2.0,
                answer_deadline=2.0, connect_timeout=5.0)
NAMES = ("ann", "bob", "cy")


@pytest.fixture
def relay():
    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
    yield running
    running.stop()


def starved_game(relay, tmp_path, starve: str) -> dict:
    """A 3-seat Dice Breaker game to 3 points; once it is under way the relay starves Bob (`starve`).
    Runs until the game has ended on every seat, or has stopped on a claim against Bob that Cy holds
    Bob's dispute of (Cy then never witnesses it: a relay can stop a game). Returns the host's replica
    and what Bob was told; the transcripts are closed."""
    told: list = []
    host = HostSession(Profile.generate("ann"), "dicebreaker", 3, {"target": 3}, timing=TIMING, relay=relay.line,
                       chooser=bot_chooser(BREAKER, "greedy", 1), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    seats = [host]
    for n, name in enumerate(NAMES[1:], 2):
        seat = PeerSession(Profile.generate(name), invite, timing=TIMING, chooser=bot_chooser(BREAKER, "greedy", n),
                           transcript=tmp_path / f"{name}.dtt", on_event=told.append if name == "bob" else None)
        seat.connect()  # one by one: Bob is seat 1, the relay's joiner 1
        seats.append(seat)
        in_thread(seat)
    cy = seats[2]

    def stopped() -> bool:  # a claim against Bob pending, and Cy holding Bob's dispute of it
        claim = host.replica.pending_claim(1)
        return claim is not None and ("dispute", claim.index) in cy.own.held.held.get(1, {})

    try:
        wait_until(lambda: host.replica.phase == "playing" and host.replica.moves >= 1, 20, "the game under way")
        relay.server.behave(Misbehaviour(starve={1: starve}))
        wait_until(lambda: all(seat.finished for seat in seats) or stopped(), 40, "the game's end, or its stop")
    finally:
        stop_all(*seats)
    assert [e for e in told if isinstance(e, ClaimDisputed)], "Bob never disputed"  # present all along, it objects
    return {"host": host.replica, "bob": told}


def lines(tmp_path, capsys) -> list[str]:
    """`dicetable verify ann.dtt bob.dtt cy.dtt`, as a person runs it: one line per copy, then the comparison."""
    main(["verify", *(str(tmp_path / f"{name}.dtt") for name in NAMES)])
    return capsys.readouterr().out.splitlines()


def disputes_by_bob(path) -> set[int]:
    """The claims (log index) Bob's signed disputes in this copy answer, in its log or kept aside."""
    transcript = read(path)
    frames = [wire.decode(f) for f in transcript.frames] + [wire.decode(f) for f, _ in transcript.evidence]
    return {e.body["claim"] for e in frames if e.kind == "dispute" and e.seat == 1}


@pytest.mark.slow
def test_a_starved_seats_dispute_reaches_every_seat_and_no_copy_says_a_clean_default(relay, tmp_path, capsys):
    game = starved_game(relay, tmp_path, "submissions")
    mine = disputes_by_bob(tmp_path / "bob.dtt")
    assert mine, "Bob's copy keeps its signed dispute"
    # Bob's submissions never reached the host: its dispute reached Cy seat to seat through the relay,
    # and Cy kept it (and carried it to the log once the claim took effect: every copy holds it then).
    assert disputes_by_bob(tmp_path / "cy.dtt") & mine
    out = [c for c in game["host"].claims if c.against == 1 and c.state == "out"]
    said = lines(tmp_path, capsys)
    assert len(said) == 4 and said[3].startswith("copies agree"), said
    if out:  # Bob in default by a witnessed claim: every copy says Bob disputes it, none a clean default
        by, witness = NAMES[out[0].seat], NAMES[out[0].witnesses[0]]
        assert all(f"bob in default (claim by {by}, witnessed by {witness}, disputed by bob)" in line for line in said[:3]), said
    else:  # the game stopped on a claim Cy holds Bob's dispute of: never a default, and said so
        assert all(line.split(": ", 1)[1].startswith("disputed: the game is unfinished") and "disputed by seat 1: " in line
                   for line in (said[1], said[2])), said
    assert all(line.split(": ", 1)[1].startswith(("valid: ", "disputed: ", "invalid: the game is unfinished"))
               for line in said[:3])


@pytest.mark.slow
def test_with_its_boxes_dropped_too_the_victims_own_copy_still_says_disputed(relay, tmp_path, capsys):
    """The relay drops Bob's boxes to the other seats as well: only Bob's copy holds its dispute; it says
    so — Bob's word, signed, never in the log — and so does comparing the copies. Not "invalid": the log
    is sound, and the claim stands on its signers; what Bob's copy proves is that Bob disputes it."""
    game = starved_game(relay, tmp_path, "answers")
    claim = next(c for c in game["host"].claims if c.against == 1 and c.state == "out")  # nobody held Bob's answers
    by, witness = NAMES[claim.seat], NAMES[claim.witnesses[0]]  # Ann's claim and Cy's witness, or the other way round
    bob = verify(tmp_path / "bob.dtt")
    assert bob.valid and [(d.seat, d.claim) for d in bob.disputes] == [(1, claim.index)], bob.line()
    assert f"bob in default (claim by {by}, witnessed by {witness}) — disputed by bob: " in bob.line(), bob.line()
    assert "(its signed word, kept aside, never in the log)" in bob.line()
    for name in ("ann", "cy"):  # they never received it: their copies say the claim and its signers only
        assert "disputed" not in verify(tmp_path / f"{name}.dtt").line()
    said = lines(tmp_path, capsys)
    assert said[3].startswith("copies agree") and (
        f"seat 1 (bob) in default by seat {claim.seat} ({by})'s claim at entry {claim.index + 1} — disputed by seat 1 (bob): "
        in said[3]) and "kept aside in 1 copy, never in the log)" in said[3], said[3]


# -- what a seat does with another seat's dispute boxed to it (net/table/answer_path.py, PROTOCOL.md §10.10) --
class Recorder:
    """A joiner's driver as far as held answers use it: what they submit to the orderer."""

    orders_log = False

    def __init__(self) -> None:
        self.submitted: list[bytes] = []

    def submit(self, frame: bytes) -> None:
        self.submitted.append(frame)


def seated(table: Table, seat: int, path) -> Seat:
    """A real Seat on `table`'s replica of `seat`, writing its transcript to `path`."""
    own = Seat(table.seats[seat].profile)
    own.replica, own.seat, own.driver = table.peers[seat], seat, Recorder()
    own.transcript.reopened(TranscriptWriter.create(path, header_for(own.replica)), path)
    return own


def test_a_held_dispute_is_checked_kept_once_and_carried_once_its_claim_took_effect(tmp_path):
    """Bob holds Cy's dispute, boxed to him, of Ann's claim against Cy: kept in his transcript at once,
    carried to the log only once Bob's witness lands (before, it would use up the numbers of the answers
    it shows), and once. A second dispute of the claim, or one of a claim not against its sender, or of
    a claim its claimant never signed, is kept nowhere."""
    table = Table(ROOM, ROOM.resolve_options({"rolls": 1}), ["ann", "bob", "cy"])
    ann, bob, cy = table.seats
    table.post(ann.move(Move("roll", ("d6",))))
    table.post(ann.reveal(1))
    claim = table.post(ann.frame("claim", wire.claim_body(2, "seat 2 did not reveal within 30 s")))
    held_by, sent_by = seated(table, 1, tmp_path / "bob.dtt"), seated(table, 2, tmp_path / "cy.dtt")

    def boxed(frame: bytes) -> bytes:
        (to, box), = [b for b in sent_by.held.boxes(frame, 0) if b[0] == 1]
        return box

    dispute = cy.frame("dispute", wire.dispute_body(claim.index, claim.frame, "it revealed at once", []))
    assert held_by.held.take(2, boxed(dispute))
    assert held_by.driver.submitted == []  # pending: kept, not carried
    again = cy.frame("dispute", wire.dispute_body(claim.index, claim.frame, "and again", []))
    assert held_by.held.take(2, boxed(again)) and held_by.held.held[2][("dispute", claim.index)] == dispute
    record = table.post(bob.frame("witness", wire.witness_body(claim.index)))  # Bob's clock agreed: Cy is out
    assert table.peers[1].claims[0].state == "out"
    held_by.applied(record)
    held_by.held.keep_disputes()  # a second look carries nothing twice
    assert held_by.driver.submitted == [dispute]
    # Not Cy's to dispute: a claim against Bob; nor a claim Ann never signed.
    against_bob = ann.frame("claim", wire.claim_body(1, "x"))
    assert not held_by.held.take(2, boxed(cy.frame("dispute", wire.dispute_body(claim.index, against_bob, "x", []))))
    forged = wire.make_frame(cy.profile, table.table, 0, 9, "claim", wire.claim_body(2, "x"), table.host.head)
    assert not held_by.held.take(2, boxed(cy.frame("dispute", wire.dispute_body(claim.index, forged, "x", []))))
    held_by.transcript.close()
    kept = read(tmp_path / "bob.dtt").evidence
    assert [frame for frame, _ in kept] == [dispute]
