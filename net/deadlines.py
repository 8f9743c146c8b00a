"""Deadlines and defaults at a networked table (FAIRNESS.md §4): the table's clocks, and whether a
seat that keeps the table waiting is in default, by one seat's clock.

No clock is read here: the session (net/session.py) says how long the table has waited for the
thing it waits for (one `waiting_key` per thing) and how long a seat has been away; the host checks
a claim with the same rule before ordering it (net/host.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dicetable.core.game import Move


@dataclass(frozen=True)
class Timing:
    """Clocks of a table, in seconds (the host's values reach the joiners in its welcome)."""

    heartbeat: float = 1.0  # between pings
    drop_after: float = 4.0  # silence after which a seat counts as dropped
    grace: float = 120.0  # how long a dropped seat may stay away before it is in default
    turn_deadline: float = 0.0  # for a move; 0: no per-turn deadline
    reveal_deadline: float = 60.0  # for a reveal once the table waits for chance
    connect_timeout: float = 5.0
    answer_deadline: float = 20.0  # for a move with a default answer (state.default_move()); 0: none
    seat_hold: float = 10.0  # how long a hello holds a free seat for the signed join that should follow

    def to_data(self) -> dict:
        return asdict(self)

    @classmethod
    def from_data(cls, data: Any) -> "Timing":
        known = {k: float(v) for k, v in (data or {}).items() if k in cls.__dataclass_fields__ and isinstance(v, (int, float))}
        return cls(**known)


def answer_default(replica) -> Move | None:
    """The move the seat due to act is taken to make if it does not answer in time, or None."""
    default = getattr(replica.state, "default_move", None)
    return default() if default is not None and replica.pending is None else None


def waiting_key(replica) -> tuple:
    """One key per thing awaited: a state step or an event (not the seats still missing); a deal
    step's clock restarts when the seats it waits for change (a shuffle pass goes seat by seat)."""
    waiting = replica.waiting_for
    return (waiting.action, replica.steps, len(replica.events)) + ((waiting.seats,) if waiting.action == "deal" else ())


def default_reason(replica, timing: Timing, seat: int, waited: float, away: float | None) -> str:
    """Why `seat` is in default after the table has waited `waited` s for what it waits for and the
    seat has been away `away` s (None: it is here), or "" when it is not."""
    if seat not in replica.waiting_for.seats:
        return ""
    if away is not None and away > timing.grace:
        return f"seat {seat} dropped and did not return within {timing.grace:g} s"
    action = replica.waiting_for.action
    limit = timing.turn_deadline if action == "move" else timing.reveal_deadline
    default = answer_default(replica)
    if action in ("move", "seal", "unseal") and default is not None:  # a late answer is given for the seat
        limit = min(x for x in (limit, timing.answer_deadline, float("inf")) if x)
        if limit < float("inf") and waited > limit:
            return f"seat {seat} did not answer within {limit:g} s: {default}"
        return ""
    if limit and waited > limit:
        what = {"move": "move", "reveal": "reveal", "deal": "deliver its part of the card deal"}.get(action, action)
        return f"seat {seat} did not {what} within {limit:g} s"
    return ""
