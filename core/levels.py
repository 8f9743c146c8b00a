"""Bots a person chooses by strength: `easy`, `medium` and `hard` for every game.

A level is a name in `GameInfo.bots` like any algorithm bot (core/registry.py binds them), so every
place that takes a bot name takes a level. `LEVELS` says what each level plays in each game; the
figures behind it come from `scripts/ladder.py GAME` (README, "Bot levels").
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

from dicetable.core.game import Bot, Move

# game: level: (algorithm bot, its settings, share of moves played at random instead)
LEVELS: dict[str, dict[str, tuple[str, dict[str, Any], float]]] = {
    "trice": {
        "easy": ("random", {}, 0.0),
        "medium": ("greedy", {}, 0.0),
        "hard": ("search", {"nodes": 20000}, 0.0),
    },
    "triad": {
        "easy": ("random", {}, 0.0),
        "medium": ("greedy", {}, 0.0),
        "hard": ("search", {"nodes": 1500}, 0.0),
    },
    "dicebreaker": {
        "easy": ("random", {}, 0.0),
        "medium": ("greedy", {}, 0.5),  # greedy itself loses to hard too seldom to sit between
        "hard": ("lookahead", {}, 0.0),  # deepest 4 within 150000 positions: measured no stronger
    },
    "tricolor": {
        "easy": ("random", {}, 0.0),
        "medium": ("greedy", {}, 0.2),  # as dicebreaker; at 0.4 it beat easy only 28-12 of 40
        "hard": ("search", {}, 0.0),
    },
}
NAMES = ("easy", "medium", "hard")


class Slipping(Bot):
    """A bot that plays `slip` of its moves at random (from the same seeded rng): a weaker level
    made from a stronger bot, where no weaker algorithm sits between two levels."""

    def __init__(self, bot: Bot, rng: random.Random, slip: float) -> None:
        self.bot = bot
        self.rng = rng
        self.slip = slip
        self.name = bot.name
        self.hurry = bot.hurry  # core/bots.py `hurry` reaches the bot inside

    def choose(self, view: Any) -> Move:
        if self.rng.random() < self.slip:
            return self.rng.choice(view.legal_moves())
        return self.bot.choose(view)


def _level(make: Callable[..., Any], settings: Mapping[str, Any], slip: float) -> Callable[..., Any]:
    def build(game: Any, rng: random.Random, **more: Any) -> Any:
        bot = make(game, rng, **{**settings, **more})
        return Slipping(bot, rng, slip) if slip else bot

    return build


def bind(game: str, bots: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """The level factories of `game`, built on its algorithm bots `bots`."""
    table = LEVELS.get(game)
    if table is None:
        return {}
    return {level: _level(bots[algorithm], settings, slip) for level, (algorithm, settings, slip) in table.items()}
