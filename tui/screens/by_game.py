"""Which screen shows a table of which game. A screen's module is imported only when a table of its
game opens, so the app's first frame waits for one game's screen, not every game's."""

from __future__ import annotations

import importlib

# game -> (module, class) of the screen that shows its table
_SCREENS = {
    "trice": ("dicetable.tui.screens.trice_screen", "TriceScreen"),
    "triad": ("dicetable.tui.screens.triad_screen", "TriadScreen"),
    "dicebreaker": ("dicetable.tui.screens.dicebreaker_screen", "DiceBreakerScreen"),
    "tricolor": ("dicetable.tui.screens.tricolor_screen", "TricolorScreen"),
    "diceroom": ("dicetable.tui.screens.dice_room_screen", "DiceRoomScreen"),
}


def screen_for(game: str):
    """The screen class that shows a table of `game` (board games and the dice room), or None."""
    if game not in _SCREENS:
        return None
    module, name = _SCREENS[game]
    return getattr(importlib.import_module(module), name)
