"""An open dice room (PROTOCOL.md §5.2, §5.11): it starts with whoever is there, a newcomer's `join`
takes a free seat while it runs, a roll ordered before the join is decided without the newcomer,
the host leaves like anyone and the last one out closes the room — through the real replicas of
in-process seats (net/table/local_seats.py), and `verify` over their transcript."""

from __future__ import annotations

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.log import verify, wire
from dicetable.net.refusals import BadJoin, NotDue, NotSeated, SeatTaken
from dicetable.net.table.local_seats import ProtocolSeat, Table
from dicetable.net.identity import Profile

from tests.net.log.test_secret_rolls import refused, reveal_all

ROOM = registry.get("diceroom")
FREE = {"turns": False, "rolls": 0}


def open_room(names=("ann", "bob", "cy", "dee"), present=2, transcript=None) -> Table:
    return Table(ROOM, ROOM.resolve_options(FREE), list(names), present=present, transcript=transcript)


def own_value(table: Table, seat: int, k: int) -> bytes:
    """A reveal of `seat`'s chain value h[k] for event k, as if its chain opened event 1: what a newcomer
    would send to get its value into a roll ordered before it joined."""
    seat = table.seats[seat]
    return seat.frame("reveal", wire.reveal_body(k, seat.chains[0].values[k]), sign=False)


def test_a_room_starts_with_whoever_is_there_and_its_free_seats_are_out():
    table = open_room()
    for replica in [table.host, *table.peers]:
        assert replica.phase == "playing" and replica.out == {2, 3}
        assert replica.membership.present == (0, 1) and replica.membership.free_seats() == (2, 3)
    table.post(table.seats[0].move(Move("roll", ("d6",))))
    assert table.host.pending.missing == (0, 1)  # nobody waits for a seat nobody took
    reveal_all(table, 1, (0, 1))
    assert table.host.events[0].reveals[2:] == (b"", b"")


def test_a_game_of_turns_still_waits_for_every_seat():
    with pytest.raises(NotDue, match="cannot start: seat 2 to join"):  # the host's start, two of three in
        Table(ROOM, ROOM.resolve_options({"turns": True}), ["ann", "bob", "cy"], present=2)


def test_a_newcomer_joins_mid_room_and_is_not_in_the_rolls_ordered_before_it():
    table = open_room()
    table.post(table.seats[0].move(Move("roll", ("d20",))))  # event 1: ordered, collecting reveals
    table.post(table.seats[1].move(Move("roll", ("2d6",))))  # event 2: queued behind it
    table.post(table.seats[0].reveal(1))  # ann's reveal for event 1 is public now
    record = table.post(table.seats[2].join())
    assert "joins the room at seat 2" in str(record.note) and "reveals from event 3" in str(record.note)
    for replica in [table.host, *table.peers]:
        assert replica.out == {3} and replica.membership.first_event(2) == 3
        assert replica.pending.reveals[2] == b""  # event 1: decided without cy
    # cy cannot put its value into the roll under way, nor into the one queued before it joined
    refused(table, own_value(table, 2, 1), NotDue, "already revealed", 2)
    reveal_all(table, 1, (1,))
    assert table.host.pending.number == 2 and table.host.pending.missing == (0, 1)
    refused(table, own_value(table, 2, 2), NotDue, "already revealed", 2)
    reveal_all(table, 2, (0, 1))
    # the first roll ordered after the join waits for cy, and cy rolls too
    table.post(table.seats[2].move(Move("roll", ("1d8+1",))))
    assert table.host.pending.number == 3 and table.host.pending.missing == (0, 1, 2)
    reveal_all(table, 3, (2, 0, 1))
    assert table.host.events[2].reveals[2] not in (None, b"")
    assert [r.seat for r in table.host.state.rolls] == [0, 1, 2]


def test_a_newcomer_takes_only_a_free_seat_of_its_own_and_the_room_caps_them():
    table = open_room(names=("ann", "bob", "cy"))
    eve = ProtocolSeat(Profile.generate("eve"), 1, table.table)
    eve.view = table.host
    with pytest.raises(SeatTaken, match="bob"):  # bob's seat, whatever key signs for it
        table.host.accept(eve.join())
    copy = ProtocolSeat(table.seats[1].profile, 2, table.table)  # bob's key again, at the free seat
    copy.view = table.host
    with pytest.raises(BadJoin, match="already sits at seat 1"):
        table.host.accept(copy.join())
    table.post(table.seats[2].join())  # the last free seat
    late = ProtocolSeat(Profile.generate("fay"), 3, table.table)
    late.view = table.host
    with pytest.raises(NotSeated, match="seats 0 to 2"):  # the room holds as many as it opened for
        table.host.accept(late.join())


def test_the_host_leaves_the_others_roll_on_and_the_last_one_out_closes_the_room(tmp_path):
    path = tmp_path / "room.dt"
    table = open_room(transcript=path)
    table.post(table.seats[0].frame("leave", {}))
    assert table.host.out == {0, 2, 3} and table.host.result is None
    table.post(table.seats[1].move(Move("roll", ("d6",))))
    assert table.host.pending.missing == (1,)
    reveal_all(table, 1, (1,))
    table.post(table.seats[2].join())  # a newcomer while the host is away
    table.post(table.seats[0].frame("back", {}))  # and the host comes back
    shown = wire.move_body(Move("secret", ("1d20 [perception]", "ab" * 32)), (1, bytes(552)))  # to bob (§16.6 step 7)
    table.post(table.seats[2].frame("move", shown))
    reveal_all(table, 2, (0, 1, 2))
    for seat in (1, 0):
        table.post(table.seats[seat].frame("leave", {}))
    assert table.host.result is None
    record = table.post(table.seats[2].frame("leave", {}))
    assert table.host.phase == "over" and "leaves last: the room is closed" in str(record.note)
    for seat in range(3):
        if table.host.receipt_owed(seat):
            table.post(table.seats[seat].receipt())
    table.writer.close()
    verdict = verify.verify(path)
    line = verdict.line()
    assert verdict.valid, line
    assert line.startswith("valid: dice room (rolls: bob 1, cy 1, 1 secret (cy's secret 1d20 [perception] shown to bob); "
                           "1 secret roll never opened (cy); "
                           "ann left, came back, left; cy joined, left; bob left)"), line
    assert "cy left last: the room is closed" in line
