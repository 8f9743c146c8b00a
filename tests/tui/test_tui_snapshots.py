"""Snapshots at 80 × 24 (pytest-textual-snapshot): the home screen, a mid-game board, the swap
phase and the fairness panel. Deterministic: seeded hot-seat games with scripted moves.

Update after a deliberate change of the look: `pytest tests/test_tui_snapshots.py --snapshot-update`.
"""

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.tui.app import DiceTableApp
from dicetable.tui.tables.controller import LocalTable, Player

TRICE = registry.get("trice")
# Seed 2: twelve placements without a Trice, then the swap phase (found with greedy bots).
SEED = 2
MOVES = (
    "choose P3", "place a1", "choose O4", "place c3", "choose W6", "place c1", "choose P6",
    "place a2", "choose W3", "place b2", "choose O1", "place a3", "choose W1", "place c2",
    "choose P3", "place b1", "choose P5", "place d2", "choose W4", "place b3", "choose O5",
    "place d3", "choose O1", "place d1", "indicate d1",
)


def table_after(count: int) -> DiceTableApp:
    table = LocalTable(TRICE, [Player("Ann"), Player("Bob")], seed=SEED, bot_delay=0)
    for move in MOVES[:count]:
        table.submit(Move.parse(move))
    assert len(table.view().log) == count + 1  # the setup roll, then every move went through
    return DiceTableApp(table)


def test_home_screen(snap_compare):
    assert snap_compare(DiceTableApp(), terminal_size=(80, 24))


def test_mid_game_board(snap_compare):
    # P6 was just placed on a2 (marked as the last move); the cursor waits in the pool.
    assert snap_compare(table_after(8), terminal_size=(80, 24))


def test_swap_phase(snap_compare):
    # d1 is indicated: its neighbours c1 and d2 are marked as the squares to swap with.
    app = table_after(len(MOVES))
    assert app.first_table.state.phase == "swap"
    assert snap_compare(app, terminal_size=(80, 24))


def test_fairness_panel(snap_compare):
    assert snap_compare(table_after(4), press=["f"], terminal_size=(80, 24))
