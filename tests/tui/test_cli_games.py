"""The command line over the games' rules: `dicetable analyze` for TRIAD, Dice Breaker and Tricolor
Line, and `selfplay` between TRIAD's bots (the rules themselves: tests/core/test_triad.py,
test_dicebreaker.py, test_tricolor_routes.py).
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


# -- `dicetable analyze tricolor` -----------------------------------------------------------------
def analyze_tricolor(capsys, board, *args):
    code = main(["analyze", "tricolor", board, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_tricolor_the_example_of_the_issue():
    run = dicetable("analyze", "tricolor", "0,0 start; 1,0 road R EW built; 2,0 road Y NSW built; 2,1 end", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"ends": [{"at": "2,1", "shortest": 4}], "valid_pair": None, "tiles": None}
    text = dicetable("analyze", "tricolor", "0,0 start; 1,0 road R EW built; 2,0 road Y NSW built; 2,1 end").stdout
    assert text.splitlines() == ["End Tile 2,1: shortest route 4 tiles", "no valid pair: the game goes on"]


def test_analyze_tricolor_names_the_valid_pair(capsys):
    board = "0,0 start; -1,0 road B EW built; -2,0 end; 1,0 road R EW built; 2,0 road Y NSW built; 2,1 end"
    code, out, _ = analyze_tricolor(capsys, board, "--json")
    assert code == 0 and json.loads(out) == {
        "ends": [{"at": "-2,0", "shortest": 3}, {"at": "2,1", "shortest": 4}],
        "valid_pair": [["0,0", "-1,0", "-2,0"], ["0,0", "1,0", "2,0", "2,1"]],
        "tiles": 6,
    }
    code, out, _ = analyze_tricolor(capsys, board)
    assert "valid pair: 6 tiles" in out and "  0,0 1,0 2,0 2,1" in out.splitlines()


@pytest.mark.parametrize("east_first", [True, False])
def test_analyze_tricolor_placement_order_never_decides_a_pair(capsys, east_first):
    # End Tile 1,1 is reached via 1,0 or via 0,1; End Tile 2,0 only via 1,0.
    east, north = "1,0 road R NESW built", "0,1 road Y NESW built"
    crosses = f"{east}; {north}" if east_first else f"{north}; {east}"
    code, out, _ = analyze_tricolor(capsys, f"0,0 start; {crosses}; 1,1 end; 2,0 end", "--json")
    assert code == 0 and json.loads(out) == {
        "ends": [{"at": "1,1", "shortest": 3}, {"at": "2,0", "shortest": 3}],
        "valid_pair": [["0,0", "0,1", "1,1"], ["0,0", "1,0", "2,0"]],
        "tiles": 5,
    }


@pytest.mark.parametrize(
    "board, shortest",
    [
        ("0,0 start; 0,1 road R NS built; 0,2 end", 3),  # N faces y+1
        ("0,0 start; 1,0 road R WN built; 1,1 end", 3),
        ("0,0 start; 1,0 road R WS built; 1,1 end", None),  # S faces y-1: the road turns away
        ("0,0 start; 1,0 road R EW plan; 2,0 end", None),  # a blueprint carries no route
        ("0,0 start; 1,0 deadend R EW built; 2,0 end", None),  # nor does a dead end
        ("0,0 start; 3,3 end", None),
    ],
)
def test_analyze_tricolor_shortest_routes(capsys, board, shortest):
    code, out, _ = analyze_tricolor(capsys, board, "--json")
    assert code == 0 and json.loads(out)["ends"][0]["shortest"] == shortest
    if shortest is None:
        assert "no route" in analyze_tricolor(capsys, board)[1]


@pytest.mark.parametrize(
    "board, message",
    [
        ("0,0 start; 1,0 end", "next to the Start Tile"),
        ("0,0 start; 1,0 road R EW built; 0,-1 end", "next to the Start Tile"),
        ("0,0 start; 1,0 road R EW built; 1,0 road Y NS plan", "two tiles on 1,0"),
        ("0,0 start; 0,0 end", "two tiles on 0,0"),
        ("1,0 road R EW built; 2,0 end", "no Start Tile"),
        ("0,0 start; 2,0 start", "the Start Tile lies on 0,0"),
        ("0,0 start; 1,0 bridge R EW built", "start, end, road or deadend"),
        ("0,0 start; 1,0 road G EW built", "R, Y or B"),
        ("0,0 start; 1,0 road R E built", "two, three or four roads"),
        ("0,0 start; 1,0 road R EXW built", "letters among N, E, S and W"),
        ("0,0 start; 1,0 road R EW done", "built or plan"),
        ("0,0 start; 1,0 road R EW", "write X,Y road COLOUR EDGES STATE"),
        ("0,0 start; 2,0 end R", "take no colour"),
        ("0,0 start; 1;0 end", "not a position"),
        ("0,0 start; " + "; ".join(f"{x},5 road R NS built" for x in range(4)), "only 3 red straight"),
        ("0,0 start; " + "; ".join(f"{x},5 end" for x in range(7)), "only 6 End Tiles"),
    ],
)
def test_analyze_tricolor_refuses_what_the_rules_forbid_with_one_line(capsys, board, message):
    code, out, err = analyze_tricolor(capsys, board)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and err.startswith("dicetable: not a Tricolor Line position")
