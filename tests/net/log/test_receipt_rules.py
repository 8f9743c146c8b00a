"""The log's rules for end receipts (PROTOCOL.md §5.13): only once a game is over, of that game, on a
log that holds its end, and only to confirm something new (a seat cannot flood the log with them);
what each seat's signed frames vouch for."""

from __future__ import annotations

import random

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.log import wire
from dicetable.net.refusals import NotDue
from dicetable.net.table.local_seats import Table


def _room(rolls: int = 2) -> Table:
    game = registry.get("diceroom")
    return Table(game, game.resolve_options({"rolls": rolls}), ["Ann", "Bob"])


def _play(table: Table) -> None:
    class Roller:
        def choose(self, view):
            return Move("roll", ("2d6",))

    table.play([Roller(), Roller()], random.Random(3))


def test_a_receipt_before_the_end_is_refused_and_changes_nothing():
    table = _room()
    before = len(table.host.log)
    with pytest.raises(NotDue, match="the game is not over"):
        table.host.accept(table.seats[1].receipt())
    assert len(table.host.log) == before and table.host.ended_at is None


def test_every_seat_vouches_for_the_end_once_and_a_second_receipt_is_refused():
    table = _room()
    _play(table)
    host = table.host
    assert host.phase == "over" and host.ended_at is not None
    assert host.confirmation().confirmed and not host.receipt_owed(0) and not host.receipt_owed(1)
    receipts = [r for r in host.log if r.kind == "receipt"]
    assert receipts and all(r.envelope.prev.entries > host.ended_at for r in receipts)
    seat = receipts[0].seat
    with pytest.raises(NotDue, match="confirmed this log already"):  # nothing new to confirm: no flood
        host.accept(table.seats[seat].receipt())


def test_a_receipt_of_another_game_is_refused_and_a_chat_needs_none():
    table = _room()
    _play(table)
    host, seat = table.host, table.seats[0]
    chat = seat.frame("chat", wire.chat_body("gg"))  # a chat is not content: it needs no receipt
    host.accept(chat)
    assert not host.receipt_owed(1)
    wrong = wire.make_frame(seat.profile, host.table, 0, host.next_seq(0), "receipt", wire.receipt_body(2), host.head)
    with pytest.raises(NotDue, match="game 2"):
        host.accept(wrong)


def test_an_unsigned_reveal_vouches_for_nothing():
    table = _room(rolls=1)
    host = table.host
    table.post(table.seats[0].move(Move("roll", ("2d6",))))
    k = host.pending.number
    table.post(table.seats[0].reveal(k))
    table.post(table.seats[1].reveal(k))
    assert host.phase == "over"
    assert host.vouched[1] < len(host.log) and host.receipt_owed(1)  # Bob signed only his join
    assert host.vouched[0] == 5  # open, two joins, start and her roll, signed on top of the four before it
    bob = table.seats[1]
    low = wire.make_frame(bob.profile, host.table, 1, host.next_seq(1), "receipt", wire.receipt_body(1),
                          wire.Link(host.ended_at, host.head_at(host.ended_at)))
    with pytest.raises(NotDue, match="holds the game's end"):  # a receipt of the log before the end
        host.accept(low)
    host.accept(bob.receipt())
    assert not host.confirmation().confirmed and host.confirmation().unconfirmed_by() == (0,)  # Ann's turn now
    host.accept(table.seats[0].receipt())
    assert host.confirmation().confirmed
