"""`verify` on an accused seat's signed dispute that a copy kept aside (net/log/kept_disputes.py, PROTOCOL.md
§16.3 item 9, §16.4): said with the default it disputes, as the accused's word — never as "invalid" — and
only when it is what it claims to be: signed by the accused, of the very claim the log holds, one per
claim and seat."""

from __future__ import annotations

import random

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.log import transcript as tr
from dicetable.net.log import wire
from dicetable.net.log.verify import compare, verify
from dicetable.net.table.local_seats import Table

ROOM = registry.get("diceroom")
SAID = ("cy in default (claim by ann, witnessed by bob) — disputed by cy: it revealed at once (its signed word, "
        "kept aside, never in the log)")


class Game:
    """A 3-seat dice room where ann claims cy in default, bob witnesses, and the room goes on without cy:
    the frames of the log, with cy's dispute of that claim made but never ordered."""

    def __init__(self, path) -> None:
        table = self.table = Table(ROOM, ROOM.resolve_options({"rolls": 1}), ["ann", "bob", "cy"], transcript=path)
        self.ann, self.bob, self.cy = table.seats
        table.post(self.ann.move(Move("roll", ("d6",))))
        table.post(self.ann.reveal(1))
        table.post(self.bob.reveal(1))
        self.lost = self.cy.reveal(1)  # the orderer never ordered it
        self.claim = table.post(self.ann.frame("claim", wire.claim_body(2, "seat 2 did not reveal within 30 s")))
        table.post(self.bob.frame("witness", wire.witness_body(self.claim.index)))
        assert table.host.out == {2}
        self.dispute = self.cy.frame("dispute", wire.dispute_body(self.claim.index, self.claim.frame, "it revealed at once",
                                                                  [self.lost]))
        self.cy.seq -= 2  # neither was ordered: its receipt at the end takes the log's next number
        table.play([ROOM.bots["roller"](ROOM, random.Random(s)) for s in range(3)], random.Random(1), close=False)

    def keep(self, *frames: bytes) -> None:
        for frame in frames:
            self.table.writer.append_evidence(frame, "kept aside")
        self.table.writer.close()


@pytest.fixture
def game(tmp_path):
    return Game(tmp_path / "ann.dtt")


def test_without_the_dispute_the_default_stands_unanswered(game, tmp_path):
    game.keep()
    line = verify(tmp_path / "ann.dtt").line()
    assert "cy in default (claim by ann, witnessed by bob), the game went on without" in line and "disputed" not in line


def test_the_accused_signed_dispute_kept_aside_is_said_with_the_default_it_disputes(game, tmp_path):
    game.keep(game.dispute)
    verdict = verify(tmp_path / "ann.dtt")
    assert verdict.valid and verdict.line().startswith("valid: ")  # its word, not a fault of the log
    assert f"{SAID}, the game went on without" in verdict.line(), verdict.line()
    assert "kept aside, never in this log" not in verdict.line()  # said once, with its claim
    assert [(d.seat, d.claim, d.claimant) for d in verdict.disputes] == [(2, game.claim.index, 0)]


def test_one_dispute_per_claim_and_seat_the_first_kept(game, tmp_path):
    again = game.cy.frame("dispute", wire.dispute_body(game.claim.index, game.claim.frame, "and again", []))
    game.keep(game.dispute, again, game.dispute)
    verdict = verify(tmp_path / "ann.dtt")
    assert len(verdict.disputes) == 1 and verdict.line().count("disputed by cy") == 1
    assert "it revealed at once" in verdict.line() and "and again" not in verdict.line()


def _forgeries(game) -> dict[str, bytes]:
    claim, table, head = game.claim, game.table.table, game.table.host.head
    return {
        # bob signs a "dispute" in cy's name: not cy's signature
        "in another's name": wire.make_frame(game.bob.profile, table, 2, 9, "dispute",
                                             wire.dispute_body(claim.index, claim.frame, "forged", []), head),
        # bob disputes cy's claim as himself: the claim is not against him
        "of another's claim": game.bob.frame("dispute", wire.dispute_body(claim.index, claim.frame, "not mine", [])),
        # cy points at another entry (bob's witness) than the claim it quotes
        "of another entry": game.cy.frame("dispute", wire.dispute_body(claim.index + 1, claim.frame, "elsewhere", [])),
        # cy quotes a claim the log does not hold at that entry (signed by ann, but never ordered)
        "of a claim not in the log": game.cy.frame("dispute", wire.dispute_body(
            claim.index, wire.make_frame(game.ann.profile, table, 0, 99, "claim", wire.claim_body(2, "x"), head), "no", [])),
        # of another table
        "of another table": wire.make_frame(game.cy.profile, bytes(16), 2, 9, "dispute",
                                            wire.dispute_body(claim.index, claim.frame, "elsewhere", []), head),
        "not a frame": b"\x93garbage",
    }


@pytest.mark.parametrize("what", ["in another's name", "of another's claim", "of another entry", "of a claim not in the log",
                                  "of another table", "not a frame"])
def test_a_forged_or_misplaced_dispute_is_not_said(game, tmp_path, what):
    game.keep(_forgeries(game)[what])
    verdict = verify(tmp_path / "ann.dtt")
    assert verdict.valid and not verdict.disputes and "disputed by" not in verdict.line(), verdict.line()


def test_a_tampered_dispute_is_not_said(game, tmp_path):
    forged = bytearray(game.dispute)
    forged[forged.index(b"at once")] ^= 1  # its reason changed after cy signed it
    game.keep(bytes(forged))
    verdict = verify(tmp_path / "ann.dtt")
    assert verdict.valid and not verdict.disputes


def test_several_copies_say_a_dispute_any_copy_kept(game, tmp_path):
    """Only the accused's copy holds its dispute (nobody else received it): comparing the copies says it."""
    game.keep(game.dispute)
    plain = tr.read(tmp_path / "ann.dtt")
    plain.evidence.clear()  # the others' copies: the same log, no dispute
    agreement = compare([plain, tr.read(tmp_path / "ann.dtt"), plain])
    assert agreement.fork is None
    assert agreement.line().endswith(
        f"; seat 2 (cy) in default by seat 0 (ann)'s claim at entry {game.claim.index + 1} — disputed by seat 2 (cy): "
        "it revealed at once (its signed word, kept aside in 1 copy, never in the log)"), agreement.line()
    plain.evidence.append((_forgeries(game)["in another's name"], "kept aside"))
    assert "disputed" not in compare([plain, plain]).line()


def test_a_game_stopped_on_a_claim_its_accused_disputes_is_disputed_not_invalid(tmp_path):
    """No witness came (a seat held cy's answer): the log ends with ann's claim pending. With cy's signed
    dispute kept aside the copy says so, cy's word; with a forged one, it is only unfinished."""
    for kept, said in ((True, "disputed: "), (False, "invalid: ")):
        path = tmp_path / f"{kept}.dtt"
        table = Table(ROOM, ROOM.resolve_options({"rolls": 1}), ["ann", "bob", "cy"], transcript=path)
        ann, bob, cy = table.seats
        table.post(ann.move(Move("roll", ("d6",))))
        table.post(ann.reveal(1))
        claim = table.post(ann.frame("claim", wire.claim_body(2, "seat 2 did not reveal within 30 s")))
        dispute = (cy if kept else bob).frame("dispute", wire.dispute_body(claim.index, claim.frame, "it revealed at once", []))
        table.writer.append_evidence(dispute, "kept aside")
        table.writer.close()
        line = verify(path).line()
        assert line.startswith(said + "the game is unfinished: the log ends waiting for seat 1, seat 2 to reveal"), line
        assert ("— disputed by seat 2: it revealed at once" in line) == kept, line
        if kept:
            assert f"with seat 0's claim against seat 2 pending (entry {claim.index + 1})" in line
            assert "kept aside, never in this log" not in line  # said once, with its claim
