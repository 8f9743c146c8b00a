"""Secret rolls and a room that goes on (PROTOCOL.md §16.6, §5.11), through the real replicas of
in-process seats (net/table/local_seats.py): the expression public and signed before the reveals, the
dice sealed until the roller's secret opens them, every forged opening refused with nothing changed;
a seat that leaves is out while the others roll on, and comes back."""

from __future__ import annotations

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.chance import secret_roll
from dicetable.net.log import wire
from dicetable.net.refusals import BadUnveil, IllegalMoveRefused, NotDue
from dicetable.net.table.local_seats import Table

ROOM = registry.get("diceroom")
FREE = {"turns": False, "rolls": 0}


def room(names=("ann", "bob", "cy")) -> Table:
    return Table(ROOM, ROOM.resolve_options(FREE), list(names))


def refused(table: Table, frame: bytes, kind, match: str, seat: int) -> None:
    """Every replica refuses `frame` with `kind`, and nothing changes (the seat's number is not used up)."""
    for replica in [table.host, *table.peers]:
        length, state, out = len(replica.log), replica.state, replica.out
        with pytest.raises(kind, match=match):
            replica.accept(frame)
        assert len(replica.log) == length and replica.state == state and replica.out == out
    table.seats[seat].seq -= 1


def reveal_all(table: Table, k: int, seats=None) -> None:
    for s in seats if seats is not None else range(len(table.seats)):
        pending = table.host.pending
        if pending is not None and pending.number == k and pending.reveals[s] is None:
            table.post(table.seats[s].reveal(k))


def secret_roll_by(table: Table, seat: int, expr: str) -> tuple[bytes, int]:
    """Seat rolls `expr` secretly and every seat reveals: (its secret, the event)."""
    secret = secret_roll.fresh_secret()
    commit = secret_roll.commitment(table.table, seat, secret).hex()
    table.post(table.seats[seat].move(Move("secret", (expr, commit))))
    k = table.host.pending.number
    reveal_all(table, k)
    return secret, k


def unveil(table: Table, seat: int, k: int, secret: bytes, values=None) -> bytes:
    if values is None:
        values = secret_roll.values(table.host.state.rolls[-1].expr, table.host.events[k - 1].seed, secret)
    return table.seats[seat].frame("unveil", wire.unveil_body(k, secret, values))


def test_a_secret_roll_shows_its_expression_seals_its_dice_and_opens_to_the_draws_of_its_event():
    table = room()
    secret, k = secret_roll_by(table, 1, "1d20+5 [stealth]")
    record = table.host.log[-1]
    assert str(record.event.label) == "seat 1 rolls 1d20+5 [stealth] secretly"
    roll = table.host.state.rolls[-1]
    assert roll.sealed and roll.seat == 1 and roll.expr == "1d20+5 [stealth]" and roll.tallies == ()
    assert "sealed" in roll.describe()
    event = table.host.events[k - 1]
    # The dice: a DRBG of H(domain ‖ r ‖ s), not of the event seed r alone.
    expected = secret_roll.values(roll.expr, event.seed, secret)
    table.post(unveil(table, 1, k, secret))
    opened = table.host.state.rolls[-1]
    assert not opened.sealed and opened.faces == (expected[0] + 1,) and opened.total == expected[0] + 6
    assert "opens the secret roll of event 1: bob rolled 1d20+5 [stealth]" in str(table.host.log[-1].note)
    assert all(peer.state == table.host.state for peer in table.peers)
    # Opened once: a second opening is not due.
    refused(table, unveil(table, 1, k, secret, expected), NotDue, "already open", 1)


def test_a_forged_opening_another_secret_or_other_dice_is_refused_and_changes_nothing():
    table = room()
    secret, k = secret_roll_by(table, 0, "3d6")
    seed = table.host.events[k - 1].seed
    honest = secret_roll.values("3d6", seed, secret)
    other = secret_roll.fresh_secret()  # the roller tries another secret after seeing the reveals
    refused(table, unveil(table, 0, k, other, secret_roll.values("3d6", seed, other)), BadUnveil,
            "does not open the commitment", 0)
    dice = list(honest)
    dice[0] = (dice[0] + 1) % 6  # the right secret, a die it would rather have
    refused(table, unveil(table, 0, k, secret, dice), BadUnveil, "not the ones its seed and secret draw", 0)
    # Dice from outside the event's stream: the event seed r alone, not H(r ‖ s).
    from dicetable.net.chance.outcomes import draw
    from dicetable.core.game import Chance
    from dicetable.core.dice_expr import parse
    plain = draw(Chance("", ranges=parse("3d6").ranges), seed).values
    if plain != honest:
        refused(table, unveil(table, 0, k, secret, plain), BadUnveil, "not the ones", 0)
    # Another seat cannot open it without the secret, and an event that was no secret roll opens nothing.
    refused(table, unveil(table, 2, k, other, honest), BadUnveil, "does not open the commitment", 2)
    table.post(table.seats[1].move(Move("roll", ("d6",))))
    reveal_all(table, k + 1)
    refused(table, unveil(table, 1, k + 1, secret, (0,)), BadUnveil, "decided no secret roll", 1)
    table.post(unveil(table, 0, k, secret, honest))
    assert table.host.state.rolls[0].faces and not table.host.state.rolls[0].sealed


def test_a_secret_roll_commitment_must_be_a_commitment():
    table = room()
    for bad in ("ab" * 31, "AB" * 32, "z" * 64):
        refused(table, table.seats[1].move(Move("secret", ("d20", bad))), IllegalMoveRefused, "not a legal move", 1)


def test_a_closing_room_waits_for_its_secret_rolls_and_the_host_may_close_it_with_them_sealed():
    table = room()
    secret, k = secret_roll_by(table, 2, "d100")
    table.post(table.seats[0].move(Move("close")))
    assert table.host.result is None and table.host.state.closing
    refused(table, table.seats[1].move(Move("roll", ("d6",))), NotDue, "may not move", 1)
    table.post(unveil(table, 2, k, secret))  # the roller's opening closes the room
    assert table.host.result is not None and "closed the room after 1 rolls" in str(table.host.result.reason)

    table = room()
    secret_roll_by(table, 2, "d100")
    table.post(table.seats[0].move(Move("close")))
    table.post(table.seats[0].move(Move("close")))  # the host does not wait for a roller who keeps it sealed
    assert "1 secret still sealed" in str(table.host.result.reason)


def test_the_roll_is_fixed_before_the_reveals_a_changed_expression_is_another_signed_move():
    """The expression and the commitment are in the roller's signed move, the event's chance comes from
    that move: after the reveals the roller can change neither without a second signed frame at its
    sequence number (equivocation) — and its opening must match that move's expression."""
    table = room()
    secret, k = secret_roll_by(table, 1, "1d20")
    move_record = next(r for r in table.host.log if r.kind == "move")
    changed = wire.make_frame(table.seats[1].profile, table.table, 1, move_record.envelope.seq, "move",
                              wire.move_body(Move("secret", ("1d4", move_record.envelope.body["move"][2]))),
                              move_record.envelope.prev)
    from dicetable.net.refusals import Equivocation
    with pytest.raises(Equivocation):
        table.host.accept(changed)
    # Dice drawn for another expression do not open this roll.
    seed = table.host.events[k - 1].seed
    refused(table, unveil(table, 1, k, secret, secret_roll.values("2d20", seed, secret)), BadUnveil, "not the ones", 1)


def test_a_seat_leaves_the_room_goes_on_without_it_and_it_comes_back():
    table = room()
    table.post(table.seats[1].move(Move("roll", ("d6",))))
    refused(table, table.seats[1].frame("leave", {}), NotDue, "waits for its reveal", 1)
    table.post(table.seats[1].reveal(1))
    refused(table, table.seats[0].frame("leave", {}), NotDue, "waits for its reveal", 0)  # the host may leave now (§5.11), but not owing its reveal
    table.post(table.seats[1].frame("leave", {}))
    assert table.host.out == {1} and table.host.result is None
    assert "(bob) leaves the room; it goes on" in str(table.host.log[-1].note)
    reveal_all(table, 1, (0, 2))  # event 1 is decided with bob's reveal, which was in before he left
    assert table.host.events[0].reveals[1] != b""
    table.post(table.seats[2].move(Move("roll", ("2d6",))))
    assert table.host.waiting_for.seats == (0, 2)  # nobody waits for bob
    refused(table, table.seats[1].move(Move("roll", ("d6",))), NotDue, "out of the game", 1)
    reveal_all(table, 2, (0, 2))
    assert table.host.events[1].reveals[1] == b""
    table.post(table.seats[1].frame("back", {}))
    assert table.host.out == set()
    table.post(table.seats[1].move(Move("roll", ("d8",))))
    reveal_all(table, 3)  # bob's chain opens across the event he missed
    assert [r.seat for r in table.host.state.rolls] == [1, 2, 1]
    refused(table, table.seats[1].frame("back", {}), NotDue, "not out", 1)
    assert all(peer.state == table.host.state and peer.out == table.host.out for peer in table.peers)


def test_a_table_of_turns_takes_no_leave():
    table = Table(ROOM, ROOM.resolve_options({"rolls": 0}), ["ann", "bob"])
    refused(table, table.seats[1].frame("leave", {}), NotDue, "resign instead", 1)


def test_verify_tells_an_unopened_secret_roll_and_who_left_and_came_back(tmp_path):
    from dicetable.net.log.verify import verify

    path = tmp_path / "room.dtt"
    table = Table(ROOM, ROOM.resolve_options(FREE), ["ann", "bob", "cy"], transcript=path)
    table.post(table.seats[1].move(Move("roll", ("1d20+2 [attack]",))))
    reveal_all(table, 1)
    table.post(table.seats[2].frame("leave", {}))
    secret, k = secret_roll_by(table, 1, "d20")
    table.post(table.seats[2].frame("back", {}))
    secret_roll_by(table, 0, "d6")
    table.post(unveil(table, 1, k, secret, secret_roll.values("1d20", table.host.events[k - 1].seed, secret)))
    table.post(table.seats[0].move(Move("close")))
    table.post(table.seats[0].move(Move("close")))
    table.writer.close()
    verdict = verify(path)
    assert verdict.valid, verdict.line()
    line = verdict.line()
    assert "1 secret roll never opened (ann)" in line, line
    assert "cy left, came back" in line, line


def test_an_opening_out_of_shape_is_refused_at_the_wire_and_a_late_one_still_opens_the_closed_room():
    table = room()
    secret, k = secret_roll_by(table, 1, "d20")
    wire.check_body("unveil", wire.unveil_body(k, secret, (3,)))  # the shape every decoder takes
    for values in ([-1], [0] * (wire.MAX_DRAWS + 1), ["7"], [2**20]):
        with pytest.raises(wire.BadBody):  # what wire.decode refuses, so every replica (MalformedFrame)
            wire.check_body("unveil", {"k": k, "secret": secret, "values": values})
    with pytest.raises(wire.BadBody):
        wire.check_body("unveil", {"k": k, "secret": secret[:31], "values": [3]})
    table.post(table.seats[0].move(Move("close")))
    table.post(table.seats[0].move(Move("close")))  # closed with the roll sealed
    assert table.host.phase == "over" and table.host.state.rolls[0].sealed
    table.post(unveil(table, 1, k, secret))  # its roller opens it after the room's end: every copy checks it
    assert not table.host.state.rolls[0].sealed and all(not p.state.rolls[0].sealed for p in table.peers)


def test_a_roll_shown_to_one_seat_is_a_secret_roll_shown_to_another_seated_seat():
    """`to` (PROTOCOL.md §16.6 step 7): every replica records who a secret roll was shown to; `to` on
    a plain roll, to the roller itself or to no seat is refused, and a malformed `to` is not a frame."""
    table = room()
    box = bytes(552)  # the log cannot open the box (only its receiver can): it checks the rest
    commit = secret_roll.commitment(table.table, 2, secret_roll.fresh_secret()).hex()
    refused(table, table.seats[2].frame("move", wire.move_body(Move("roll", ("d20",)), (1, box))),
            IllegalMoveRefused, "only a secret roll", 2)
    for to, match in ((2, "another seated seat, not seat 2"), (5, "not seat 5")):
        refused(table, table.seats[2].frame("move", wire.move_body(Move("secret", ("d20", commit)), (to, box))),
                IllegalMoveRefused, match, 2)
    for bad in ([1], [1, b""], [1, bytes(wire.MAX_SHOWN_BOX + 1)], [True, box], ["1", box], [16, box]):
        with pytest.raises(wire.BadBody):
            table.seats[2].frame("move", {"move": ["secret", "d20", commit], "to": bad})
    table.post(table.seats[2].frame("move", wire.move_body(Move("secret", ("d20", commit)), (1, box))))
    reveal_all(table, table.host.pending.number)
    for replica in [table.host, *table.peers]:
        assert replica.shown == {commit: (2, 1, box)} and replica.state.rolls[0].sealed
    refused(table, table.seats[2].frame("move", wire.move_body(Move("secret", ("d6", commit)), (0, box))),
            IllegalMoveRefused, "shown before", 2)  # a commitment is shown once
