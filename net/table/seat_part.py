"""What every part of a Seat (net/table/seat.py) reads of it: its replica and its seat number, through
`own` — the Seat, which outlives any driver (a hand-over gives it a new one)."""

from __future__ import annotations


class SeatPart:
    own: object  # the Seat this part belongs to

    @property
    def replica(self):
        return self.own.replica

    @property
    def seat(self) -> int | None:
        return self.own.seat
