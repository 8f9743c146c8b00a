"""Games by name. Each game module exposes `GAME: GameInfo`; adding a game is one line here."""

from __future__ import annotations

import importlib

from core.game import GameError, GameInfo

_MODULES = {
    "trice": "core.trice",
    "dicebreaker": "core.dicebreaker",
    "triad": "core.triad",
    "diceroom": "core.diceroom",
    "tricolor": "core.tricolor",
}


class UnknownGame(GameError):
    pass


def names() -> list[str]:
    return list(_MODULES)


def get(name: str) -> GameInfo:
    module = _MODULES.get(name)
    if module is None:
        raise UnknownGame(f"unknown game {name!r} (games: {', '.join(_MODULES)})")
    return importlib.import_module(module).GAME
