"""A roll shared in one line (net/log/roll_line.py, the dice room's F5) and checked against a
transcript with `dicetable verify FILE --roll LINE`: the right line is confirmed, a changed one is
answered with what the transcript says, a line of another table or no table is one line, exit 2."""

from __future__ import annotations

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.log.roll_line import RollLineError, check, roll_line
from dicetable.net.log.verify import verify
from dicetable.net.table.local_seats import Table
from net_helpers import dicetable

ROOM = registry.get("diceroom")


def room(path):
    """Two seats roll twice in a room of three rolls left open (its transcript ends unfinished)."""
    table = Table(ROOM, ROOM.resolve_options({"rolls": 3}), ["ann", "bob"], transcript=path)
    ann, bob = table.seats
    for k, (seat, expr) in enumerate(((ann, "1d20+5 [attack]"), (bob, "4d6kh3")), start=1):
        table.post(seat.move(Move("roll", (expr,))))
        for s in table.seats:
            table.post(s.reveal(k))
    return table


def test_a_roll_line_names_the_roller_the_dice_the_table_and_the_event(tmp_path):
    table = room(tmp_path / "room.dtt")
    line = roll_line(table.host, 2)
    roll = table.host.state.rolls[1]
    assert line.startswith("bob rolls 4d6kh3: ") and roll.describe() in line
    assert line.endswith(f" — table {table.table.hex()[:8]}, event 2, revealed by 2 seats")
    assert check(line, table.host) == line
    for bad, says in (("no table named", "copy the whole line"),
                      (line.replace(table.table.hex()[:8], "00000000"), "about table 00000000"),
                      (line.replace("event 2", "event 9"), "no decided event 9")):
        try:
            check(bad, table.host)
        except RollLineError as error:
            assert says in str(error)
        else:
            raise AssertionError(f"{bad!r} was taken")


def test_verify_confirms_a_shared_roll_and_answers_a_changed_one_with_the_truth(tmp_path):
    path = tmp_path / "room.dtt"
    table = room(path)
    assert verify(path).fault_kind == "unfinished"  # the room is still open: its rolls can be checked all the same
    line = roll_line(table.host, 1)
    done = dicetable("verify", str(path), "--roll", line)
    assert done.returncode == 0 and done.stdout == f"roll confirmed: {line}\n", done.stdout + done.stderr
    total = table.host.state.rolls[0].total
    forged = line.replace(f"attack: {total} ", f"attack: {total + 1} ", 1)
    assert forged != line
    done = dicetable("verify", str(path), "--roll", forged)
    assert done.returncode == 1 and done.stdout == f"roll not confirmed: the transcript says {line}\n"
    done = dicetable("verify", str(path), "--roll", "ann rolled a 20")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "copy the whole line" in done.stderr
