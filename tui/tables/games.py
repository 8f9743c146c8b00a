"""The board games the app can seat people at (against bots or hot-seat), in the home screen's order.

Kept apart from the screens (tui/screens/by_game.py) so that lists of games import no screen."""

TABLE_GAMES = ("trice", "triad", "dicebreaker", "tricolor")
