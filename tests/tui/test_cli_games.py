"""The command line over the games' rules: `dicetable analyze` for TRIAD and Dice Breaker, and
`selfplay` between TRIAD's bots (the rules themselves: tests/core/test_triad.py, test_dicebreaker.py).
"""

from __future__ import annotations

import json

import pytest

from dicetable.core import triad
from dicetable.tui.cli import main
from dicetable.tui.commands.selfplay import selfplay
from net_helpers import dicetable


# -- TRIAD's bots, played by `selfplay` -------------------------------------------------------------
@pytest.mark.slow
def test_search_beats_greedy_with_seats_alternating():
    summary = selfplay("triad", ["search", "greedy"], games=6, seed=5)
    assert summary["wins"]["search"] >= 5, summary


# -- `dicetable analyze triad` --------------------------------------------------------------------

EMPTY_ROW = "-- -- -- -- -- --"
ANALYSED = (
    "-- -- -- -- -- -- / -- -- -- -- -- -- / -- -- W3 -- -- -- / "
    "-- W2 -- -- -- -- / B1 -- -- -- -- -- / -- -- -- -- -- --"
)


def test_analyze_json_counts_moves_and_lists_triads(capsys):
    assert main(["analyze", "triad", ANALYSED, "--to-move", "black", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # B1 on a2: n to a4/a5 and e to c2/d2; ne is blocked by W2 on b3
    assert data == {"moves": 4, "triads": [["a2", "b3", "c4"]]}
    assert main(["analyze", "triad", ANALYSED, "--to-move", "WHITE", "--json"]) == 0
    white = json.loads(capsys.readouterr().out)
    board = triad.parse_board(ANALYSED)
    assert white["moves"] == len(triad.normal_moves(board, "W")) > 4


def test_analyze_lists_moves_and_triads_for_people(capsys):
    assert main(["analyze", "triad", ANALYSED, "--to-move", "black"]) == 0
    out = capsys.readouterr().out
    assert "a2 (B1) -> 2 n" in out and "a2 (B1) -> 3 e" in out and "-> 2 ne" not in out
    assert "a2-b3-c4  B1 W2 W3" in out


def test_analyze_triads_in_board_order(capsys):
    text = ("-- -- -- -- -- -- / -- -- -- -- -- -- / B1 -- -- -- -- -- / "
            "-- W1 -- -- -- -- / -- -- B1 -- -- -- / -- -- -- W1 -- --")  # d1 W1, c2 B1, b3 W1, a4 B1
    assert main(["analyze", "triad", text, "--to-move", "white", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["triads"] == [["d1", "c2", "b3"], ["c2", "b3", "a4"]]


@pytest.mark.parametrize(
    "board, to_move, message",
    [
        (ANALYSED, None, "--to-move black or --to-move white"),
        (ANALYSED, "red", "--to-move black or --to-move white"),
        ("-- -- -- -- -- -- / " + EMPTY_ROW, "black", "6 rows"),
        (ANALYSED.replace("W3", "W4"), "black", "bad cell 'W4'"),
        (ANALYSED.replace("W3", "R1"), "white", "bad cell 'R1'"),
        (ANALYSED.replace("B1 --", "B1 -- --"), "black", "6 cells"),
        (" / ".join(["B1 B1 B1 B1 B1 B1", "B2 -- -- -- -- --"] + [EMPTY_ROW] * 4), "black",
         "at most 6"),
    ],
)
def test_analyze_refuses_bad_input_with_one_line(capsys, board, to_move, message):
    argv = ["analyze", "triad", board] + (["--to-move", to_move] if to_move else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and captured.err.count("\n") == 1


# -- `dicetable analyze dicebreaker` --------------------------------------------------------------
def analyze(capsys, *args):
    code = main(["analyze", "dicebreaker", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_command_json_and_text():
    run = dicetable("analyze", "dicebreaker", "3 3 5 5 5 6", "--json")  # as a user runs it
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"hand": "full house", "points": 5}
    text = dicetable("analyze", "dicebreaker", "3 3 5 5 5 6").stdout
    assert "best five: 5 5 5 3 3" in text and "full house: 5 points" in text


@pytest.mark.parametrize(
    "hand, expected",
    [
        ("1 2 4 6 5 3", {"hand": "straight", "points": 4}),
        ("1 2 4 6 6 3", {"hand": "one pair", "points": 1}),
        ("1 2 4", {"hand": "nothing", "points": 0}),
        ("4 4 4 4 4", {"hand": "five of a kind", "points": None}),
        ("2,2,5,5,1,1,6", {"hand": "two pairs", "points": 2}),
    ],
)
def test_analyze_json_names_the_rules_categories(capsys, hand, expected):
    code, out, _ = analyze(capsys, hand, "--json")
    assert code == 0 and json.loads(out) == expected


@pytest.mark.parametrize("hand", ["3 7", "", "a b", "3.5", "0 1"])
def test_analyze_refuses_a_malformed_hand(capsys, hand):
    code, out, err = analyze(capsys, hand)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Dice Breaker hand" in err
