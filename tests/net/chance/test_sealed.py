"""Sealed answers (net/chance/seal.py, net/log/sealing.py): Dice Breaker's Latent Dice claim asks every seat at
once, so over the network each answer is a commitment first and is opened only once every seat has
sealed its own. Real frames between in-process seats (net/table/local_seats.py), each checked by every replica.
"""

from __future__ import annotations

import random

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.chance import seal
from dicetable.net.log import wire
from dicetable.net.table.local_seats import Table
from dicetable.net.refusals import BadSeal, IllegalMoveRefused, NotDue

GAME = registry.get("dicebreaker")
# Every landed die spins: the claim step comes with the first die thrown after the Trump Die.
OPTIONS = {"mode": "battle", "spinning_num": 1, "spinning_den": 1, "target": 3}
YES, NO = Move("latent", ("yes",)), Move("latent", ("no",))


def at_the_claim(seed: int = 1, seats: int = 3) -> Table:
    """A table played by greedy bots until it asks its seats for sealed answers."""
    table = Table(GAME, OPTIONS, [f"p{s}" for s in range(seats)])
    rng = random.Random(seed)
    bots = [GAME.bots["greedy"](GAME, random.Random(seed + s)) for s in range(seats)]
    while table.host.waiting_for.action != "seal":
        table.step(bots, rng)
    return table


def refused(table: Table, frame: bytes, kind, match: str) -> None:
    """Every replica refuses `frame` with `kind`, and nothing changes."""
    for replica in [table.host, *table.peers]:
        length, sealing = len(replica.log), replica.sealing
        with pytest.raises(kind, match=match):
            replica.accept(frame)
        assert len(replica.log) == length and replica.sealing is sealing


def test_the_claim_asks_every_seat_at_once_and_no_move_is_taken_meanwhile():
    table = at_the_claim()
    host = table.host
    sealing = host.sealing
    assert host.waiting_for.seats == sealing.asked == host.state.sealed() and len(sealing.asked) == 3
    first = host.state.actor
    last = sealing.asked[-1]
    # The last seat asked may answer first: nobody waits for the seats before it.
    table.post(table.seats[last].seal(sealing.step, YES))
    assert host.waiting_for.seats == tuple(s for s in sealing.asked if s != last)
    # A plain move is refused while the answers are sealed, even from the seat the state points at.
    refused(table, table.seats[first].move(NO), NotDue, "sealed")
    table.seats[first].seq -= 1  # that frame never counted


def test_answers_open_only_after_every_seat_has_sealed_and_apply_in_the_states_order():
    table = at_the_claim(seed=2)
    host = table.host
    step, order = host.sealing.step, host.sealing.asked
    answers = {order[0]: NO, order[1]: YES, order[2]: YES}
    table.post(table.seats[order[2]].seal(step, answers[order[2]]))
    early = table.seats[order[2]].unseal(step)
    refused(table, early, NotDue, "once every seat has sealed")
    table.seats[order[2]].seq -= 1
    # The log holds only commitments until then: no frame names another seat's answer.
    for record in host.log[-1:]:
        assert record.kind == "seal" and set(record.envelope.body) == {"step", "commit"}
    for seat in order[:2]:
        table.post(table.seats[seat].seal(step, answers[seat]))
    assert host.waiting_for.action == "unseal" and host.waiting_for.seats == order
    for seat in reversed(order):  # openings in any order
        table.post(table.seats[seat].unseal(step))
    assert host.sealing is None and host.state.answers == tuple(answers[s].args[0] for s in range(3))
    # The same answers given one by one to the engine make the same state.
    assert all(peer.state == host.state for peer in table.peers)
    assert host.state.phase == "latent draw" and host.state._claimants() == tuple(s for s in order if answers[s] == YES)


def test_an_opening_that_does_not_match_its_seal_is_refused_and_named():
    table = at_the_claim(seed=3)
    host = table.host
    step, order = host.sealing.step, host.sealing.asked
    for seat in order:
        table.post(table.seats[seat].seal(step, NO))
    cheat = table.seats[order[0]]
    nonce = seal.nonce_for(cheat.chains[0].secret, table.table, step, cheat.seat)
    changed = cheat.frame("unseal", wire.unseal_body(step, YES, nonce))  # sealed "no", opens "yes"
    refused(table, changed, BadSeal, f"does not open seat {cheat.seat} .*'s seal")
    cheat.seq -= 1
    other_nonce = cheat.frame("unseal", wire.unseal_body(step, NO, bytes(32)))
    refused(table, other_nonce, BadSeal, "does not open")
    cheat.seq -= 1
    table.post(cheat.unseal(step))  # the honest opening still goes
    with pytest.raises(NotDue, match="already opened"):
        table.host.accept(cheat.unseal(step))


def test_an_illegal_answer_is_refused_when_opened():
    table = at_the_claim(seed=4)
    host = table.host
    step, order = host.sealing.step, host.sealing.asked
    maybe = Move("latent", ("maybe",))
    table.post(table.seats[order[0]].seal(step, maybe))  # a commitment cannot be checked until opened
    for seat in order[1:]:
        table.post(table.seats[seat].seal(step, NO))
    refused(table, table.seats[order[0]].unseal(step), IllegalMoveRefused, "not a legal answer")


def test_seals_are_checked_for_step_seat_and_repetition():
    table = at_the_claim(seed=5)
    host = table.host
    step, order = host.sealing.step, host.sealing.asked
    author = table.seats[order[0]]
    refused(table, author.seal(step + 1, NO), NotDue, f"for step {step + 1} while step {step} is asked")
    author.seq -= 1
    table.post(author.seal(step, NO))
    refused(table, author.seal(step, YES), NotDue, "already answered")


def test_a_seat_late_to_seal_or_to_open_answers_no_and_stays_in():
    table = at_the_claim(seed=6)
    host = table.host
    step, order = host.sealing.step, host.sealing.asked
    late_to_seal, late_to_open, honest = order
    table.post(table.seats[honest].seal(step, YES))
    table.post(table.seats[late_to_open].seal(step, YES))
    claim = table.post(table.seats[honest].frame("claim", wire.claim_body(late_to_seal, "no answer within 20 s")))
    assert host.pending_claim(late_to_seal) is not None and host.sealing.answers[late_to_seal] is None
    # Three seats: the claim takes effect once another seat's clock agrees (FAIRNESS.md §4).
    record = table.post(table.seats[late_to_open].frame("witness", wire.witness_body(claim.index)))
    assert "did not answer in time" in record.note and "latent no" in record.note
    assert host.claims[-1].state == "answered"
    assert host.waiting_for.action == "unseal" and late_to_seal not in host.waiting_for.seats
    with pytest.raises(NotDue, match="already answered"):
        host.accept(table.seats[late_to_seal].seal(step, YES))  # too late: its answer was given
    table.seats[late_to_seal].seq -= 1
    table.post(table.seats[honest].unseal(step))
    claim = table.post(table.seats[honest].frame("claim", wire.claim_body(late_to_open, "did not open")))
    table.post(table.seats[late_to_seal].frame("witness", wire.witness_body(claim.index)))
    assert host.sealing is None and host.out == frozenset()
    assert host.state.answers[late_to_seal] == "no" and host.state.answers[late_to_open] == "no"
    assert host.state.answers[honest] == "yes"


def test_a_restarted_seat_finds_its_own_answer_from_its_commitment():
    table, step, secret = b"t" * 16, 7, b"s" * 32
    nonce = seal.nonce_for(secret, table, step, 2)
    commit = seal.commitment(table, step, 2, YES.to_data(), nonce)
    assert seal.recover(table, step, 2, commit, nonce, (NO, YES)) == YES
    assert seal.recover(table, step, 1, commit, seal.nonce_for(secret, table, step, 1), (NO, YES)) is None
    assert seal.nonce_for(b"x" * 32, table, step, 2) != nonce  # others cannot rebuild the nonce


def test_a_whole_recorded_battle_game_with_sealed_claims_verifies(tmp_path):
    from dicetable.net.table.local_seats import play_table
    from dicetable.net.log.verify import verify

    bots = [GAME.bots[name](GAME, random.Random(n)) for n, name in enumerate(("greedy", "search", "random"))]
    path = tmp_path / "battle.dtt"
    table = play_table(GAME, OPTIONS, bots, ["a", "b", "c"], random.Random(9), transcript=path)
    kinds = [record.kind for record in table.host.log]
    assert kinds.count("seal") >= 3 and kinds.count("unseal") >= 3
    verdict = verify(path)
    assert verdict.valid, verdict.line()


def test_a_seat_out_of_the_game_is_not_asked_and_declines():
    table = Table(GAME, OPTIONS, ["a", "b", "c", "d"])
    rng = random.Random(8)
    bots = [GAME.bots["greedy"](GAME, random.Random(s)) for s in range(4)]
    host = table.host
    while not (host.waiting_for.action == "move" and host.state.phase == "throw"):
        table.step(bots, rng)
    gone = host.state.actor
    claimer = (gone + 1) % 4
    claim = table.post(table.seats[claimer].frame("claim", wire.claim_body(gone, "left the table")))
    assert host.out == frozenset() and host.needed(gone) == 2  # a majority of the three others
    table.post(table.seats[(gone + 2) % 4].frame("witness", wire.witness_body(claim.index)))
    assert host.out == frozenset({gone})
    while host.waiting_for.action != "seal":
        table.step(bots, rng)
    sealing = host.sealing
    assert gone in sealing.order and gone not in sealing.asked and len(sealing.asked) == 3
    table.step(bots, rng)  # every seat asked seals
    table.step(bots, rng)  # and opens
    assert host.sealing is None or host.sealing.step != sealing.step
    assert host.state.answers[gone] == "no" and all(peer.state == host.state for peer in table.peers)


def test_a_frame_sent_ahead_is_tried_on_a_tentative_copy_and_stays_valid_whatever_is_ordered_before_it():
    # A joiner's seal and opening made in one loop turn (net/table/following.py `act_ahead`): the
    # opening is tried on a copy of the replica that holds the seal, changing nothing in the replica,
    # and both build on the log as the seat held it, so a chat ordered between them leaves the opening valid.
    table = at_the_claim(seed=2)
    host = table.host
    step, order = host.sealing.step, host.sealing.asked
    for seat in order[:2]:
        table.post(table.seats[seat].seal(step, NO))
    last = table.seats[order[2]]
    seal_frame, opening = last.seal(step, YES), last.unseal(step)
    assert wire.decode(opening).prev == wire.decode(seal_frame).prev == host.head
    length, sealing, head = len(host.log), host.sealing, host.head
    tentative = host.tentative()
    tentative.accept(seal_frame)
    assert tentative.waiting_for.action == "unseal" and tentative.head == head  # what is authored on it builds on the log
    tentative.accept(opening)
    assert tentative.sealing.answers[order[2]] == YES
    assert len(host.log) == length and host.sealing is sealing and host.head == head  # the replica itself: untouched
    assert host.waiting_for.action == "seal" and tentative.log[-1].kind == "unseal" and len(tentative.log) == length + 2
    table.post(seal_frame)
    table.post(table.seats[order[0]].frame("chat", wire.chat_body("between")))
    table.post(opening)  # two entries past the log it was built on
    assert host.log[-1].kind == "unseal" and host.log[-1].envelope.prev.entries == length
    assert host.sealing.answers[order[2]] == YES and all(peer.log[-1].frame == opening for peer in table.peers)
