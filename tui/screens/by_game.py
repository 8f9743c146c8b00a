"""What the app adds to each game of core/registry.py: the screen that shows its table, and who
starts in the game's own words. A screen's module is imported only when a table of its game opens,
so the app's first frame waits for one game's screen, not every game's."""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class _Shown:
    module: str  # the screen's module, imported when a table of the game opens
    screen: str  # the screen class in it
    first: str = ""  # the new-game choice of who starts (two players); "": the game decides, not a person


_GAMES = {
    "trice": _Shown("dicetable.tui.screens.trice_screen", "TriceScreen", first="Who places first"),
    "triad": _Shown("dicetable.tui.screens.triad_screen", "TriadScreen", first="Who moves first"),
    # Dice Breaker's starting die decides who starts, with any number of players.
    "dicebreaker": _Shown("dicetable.tui.screens.dicebreaker_screen", "DiceBreakerScreen"),
    "tricolor": _Shown("dicetable.tui.screens.tricolor_screen", "TricolorScreen", first="Who plays first"),
    "diceroom": _Shown("dicetable.tui.screens.dice_room_screen", "DiceRoomScreen"),
}


def screen_for(game: str):
    """The screen class that shows a table of `game`, or None."""
    if game not in _GAMES:
        return None
    shown = _GAMES[game]
    return getattr(importlib.import_module(shown.module), shown.screen)


def first_title(game: str) -> str:
    """How the new-game screen asks who starts `game`, or "" where a person may not choose it."""
    return _GAMES[game].first if game in _GAMES else ""
