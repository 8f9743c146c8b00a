"""The games, listed once: by name, in the order the app lists them, each bound to its bots.

Each game module exposes `GAME: GameInfo` and knows nothing of bots: a rules module never imports
the bots that play it. Here each game is joined to its bots module (`BOTS`, and `HEURISTIC` where
the bots bring the game's evaluation), so `get(name)` gives the whole game; the levels `easy`,
`medium` and `hard` (core/levels.py) join the algorithm bots under their own names. Adding a game is
one line here (and its screen in tui/screens/by_game.py).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

from dicetable.core import levels
from dicetable.core.game import GameError, GameInfo


@dataclasses.dataclass(frozen=True)
class _Listed:
    rules: str  # the rules module
    bots: str | None  # the bots module, or None when the rules module's GAME names its own
    board: bool = True  # a game at a board (new game, host, invite); False: the dice room, opened on its own


_GAMES = {
    "trice": _Listed("dicetable.core.trice", "dicetable.core.bots"),
    "triad": _Listed("dicetable.core.triad", "dicetable.core.triad_bots"),
    "dicebreaker": _Listed("dicetable.core.dicebreaker", "dicetable.core.dicebreaker_bots"),
    "tricolor": _Listed("dicetable.core.tricolor", "dicetable.core.tricolor_bots"),
    "diceroom": _Listed("dicetable.core.diceroom", None, board=False),
}


class UnknownGame(GameError):
    pass


def names() -> list[str]:
    """Every game, in the order the app lists them."""
    return list(_GAMES)


def board_games() -> list[str]:
    """The games played at a board (every game but the dice room), in the order the app lists them."""
    return [name for name, listed in _GAMES.items() if listed.board]


@functools.cache
def get(name: str) -> GameInfo:
    if name not in _GAMES:
        raise UnknownGame(f"unknown game {name!r} (games: {', '.join(_GAMES)})")
    listed = _GAMES[name]
    game = importlib.import_module(listed.rules).GAME
    if listed.bots is None:
        return game
    module = importlib.import_module(listed.bots)
    bound = {"bots": {**levels.bind(name, module.BOTS), **module.BOTS}}
    if module.HEURISTIC is not None:
        bound["heuristic"] = module.HEURISTIC
    return dataclasses.replace(game, **bound)
