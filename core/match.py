"""Driving a game locally: bots (or any chooser per seat) and a random source, to the end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from dicetable.core.chance import RandomSource
from dicetable.core.game import CHANCE, Move, Outcome


@dataclass(frozen=True)
class Step:
    """One entry of a game's history: a seat's move, or chance's outcome (seat is CHANCE)."""

    seat: int
    move: Move | None
    outcome: Outcome | None


def advance(state: Any, bots: Sequence[Any], source: RandomSource) -> tuple[Any, Step]:
    """One step: chance is resolved from `source`, a seat's move comes from its bot's view."""
    actor = state.actor
    if actor == CHANCE:
        outcome = source.outcome(state.chance())
        return state.resolve(outcome), Step(CHANCE, None, outcome)
    move = bots[actor].choose(state.view(actor))
    return state.apply(move), Step(actor, move, None)


def play_out(state: Any, bots: Sequence[Any], source: RandomSource, max_steps: int = 100_000):
    """Play to the end; returns the final state and the list of steps."""
    steps = []
    while state.actor is not None:
        if len(steps) >= max_steps:
            raise RuntimeError(f"game did not end within {max_steps} steps")
        state, step = advance(state, bots, source)
        steps.append(step)
    return state, steps
