"""The seat clocks a network table shows (tui/tables/net_table.py) are the deadlines the sessions claim
by (net/table/deadlines.py): one rule, read from a real replica fed real frames (net/table/local_seats.py)."""

from __future__ import annotations

import random
import time

from dicetable.core import registry
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.local_seats import Table
from dicetable.net.table.events import Recorded
from dicetable.tui.tables.net_table import NetTable

TRICE = registry.get("trice")
TIMING = Timing(turn_deadline=30.0, reveal_deadline=45.0)


class Seat:
    """What the controller reads of a session: its seat's replica, its clocks, no network."""

    def __init__(self, replica, seat: int) -> None:
        self.replica, self.seat, self.timing = replica, seat, TIMING
        self.transcript_path = None
        self.finished = False
        self.on_event = self.games = None

    def can_rematch(self) -> bool:
        return False


def clocks(table: Table, seat: int = 0) -> tuple[float, dict[int, float]]:
    """When the controller's snapshot began, and each clocked seat's seconds left from then."""
    session = Seat(table.peers[seat], seat)
    controller = NetTable(session, "host")
    began = time.monotonic()
    session.on_event(Recorded(table.peers[seat].log[-1]))
    return began, {s: info.deadline for s, info in enumerate(controller.view().seats) if info.deadline is not None}


def test_the_seats_a_roll_waits_for_show_the_reveal_deadline():
    table = Table(TRICE, {}, ["ann", "bob"])
    assert table.host.waiting_for.action == "reveal"  # the setup roll
    began, shown = clocks(table)
    assert set(shown) == {0, 1}
    assert all(began <= at - TIMING.reveal_deadline <= time.monotonic() for at in shown.values())


def test_the_seat_due_to_move_shows_the_turn_deadline_and_no_one_else_a_clock():
    table = Table(TRICE, {}, ["ann", "bob"])
    rng = random.Random(3)
    bots = [TRICE.bots["random"](TRICE, random.Random(s)) for s in range(2)]
    while table.host.waiting_for.action != "move":
        table.step(bots, rng)
    (actor,) = table.host.waiting_for.seats
    began, shown = clocks(table, 1 - actor)
    assert set(shown) == {actor}
    assert began <= shown[actor] - TIMING.turn_deadline <= time.monotonic()
