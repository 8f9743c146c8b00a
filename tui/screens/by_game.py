"""Which screen shows a table of which game (imported late: each game's screen is loaded when first used)."""

from __future__ import annotations


def table_screens() -> dict:
    """The board games the app can seat people at (against bots or hot-seat), with their screens."""
    from dicetable.tui.screens.dicebreaker_screen import DiceBreakerScreen
    from dicetable.tui.screens.triad_screen import TriadScreen
    from dicetable.tui.screens.trice_screen import TriceScreen
    from dicetable.tui.screens.tricolor_screen import TricolorScreen

    return {"trice": TriceScreen, "triad": TriadScreen, "dicebreaker": DiceBreakerScreen,
            "tricolor": TricolorScreen}


def screen_for(game: str):
    """The screen class that shows a table of `game` (board games and the dice room), or None."""
    from dicetable.tui.screens.dice_room_screen import DiceRoomScreen

    return {**table_screens(), "diceroom": DiceRoomScreen}.get(game)
