"""Games by name, each bound to its bots; adding a game is one line here.

Each game module exposes `GAME: GameInfo` and knows nothing of bots: a rules module never imports
the bots that play it. Here each game is joined to its bots module (`BOTS`, and `HEURISTIC` where
the bots bring the game's evaluation), so `get(name)` gives the whole game; the levels `easy`,
`medium` and `hard` (core/levels.py) join the algorithm bots under their own names.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

from dicetable.core import levels
from dicetable.core.game import GameError, GameInfo

# name: (rules module, bots module or None when the rules module's GAME names its own)
_GAMES = {
    "trice": ("dicetable.core.trice", "dicetable.core.bots"),
    "dicebreaker": ("dicetable.core.dicebreaker", "dicetable.core.dicebreaker_bots"),
    "triad": ("dicetable.core.triad", "dicetable.core.triad_bots"),
    "diceroom": ("dicetable.core.diceroom", None),
    "tricolor": ("dicetable.core.tricolor", "dicetable.core.tricolor_bots"),
}


class UnknownGame(GameError):
    pass


def names() -> list[str]:
    return list(_GAMES)


@functools.cache
def get(name: str) -> GameInfo:
    if name not in _GAMES:
        raise UnknownGame(f"unknown game {name!r} (games: {', '.join(_GAMES)})")
    rules, bots = _GAMES[name]
    game = importlib.import_module(rules).GAME
    if bots is None:
        return game
    module = importlib.import_module(bots)
    bound = {"bots": {**levels.bind(name, module.BOTS), **module.BOTS}}
    if hasattr(module, "HEURISTIC"):
        bound["heuristic"] = module.HEURISTIC
    return dataclasses.replace(game, **bound)
