"""Widgets for the things on a table: dice, the board, seats, the move log, chat, fairness."""
