"""scripts/ladder.py run as a person runs it (a field of several seats, bad input refused), and the
Tricolor hand-clue measure beside it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

LADDER = Path(__file__).resolve().parents[2] / "scripts" / "ladder.py"


def ladder(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LADDER), *args], capture_output=True, text=True, timeout=300)


def test_a_field_of_three_seats_gives_the_first_bot_its_share_of_the_wins_and_both_bots_move_times():
    run = ladder("dicebreaker", "--seats", "3", "--bots", "greedy,random", "--games", "3", "--seed", "1")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("Dice Breaker: greedy against 2 random, 3 games, seed 1")
    share = re.match(r"greedy wins ([\d.]+) of 3: ([\d.]+)% \(95% (\d+)-(\d+)%; an equal share is 33%\)", lines[1])
    assert share, lines[1]
    won, low, high = float(share[1]), int(share[3]), int(share[4])
    assert low <= 100 * won / 3 <= high
    # One progress line per game on stderr, the last with the same total.
    games = [line for line in run.stderr.splitlines() if line.strip().startswith("game ")]
    assert len(games) == 3 and games[-1].endswith(f"{won:g} of 3")
    assert [line.split()[0] for line in lines[3:5]] == ["greedy", "random"]


def test_a_field_names_two_bots_and_seats_the_game_allows():
    for args, words in ((("--seats", "7", "--bots", "greedy,random"), "--seats 7: name two bots and 2-6 seats"),
                        (("--seats", "3", "--bots", "greedy,random,hard"), "--seats 3: name two bots")):
        run = ladder("dicebreaker", *args, "--games", "1")
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.count("\n") == 1 and run.stderr.startswith(f"ladder: {words}")


def results(run: subprocess.CompletedProcess) -> list[str]:
    """The lines that say who won, without the times (which differ from run to run)."""
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    wins = [line for line in lines if " wins " in line]
    table = [line.split()[:4] for line in lines if line.split()[0] in ("greedy", "random", "medium") and "%" in line]
    return wins + [" ".join(cells) for cells in table]  # Elo, its interval and the score


def test_games_played_in_several_processes_are_the_same_games():
    for args in (("--bots", "greedy,random,medium", "--games", "4", "--seed", "2"),
                 ("--seats", "3", "--bots", "greedy,random", "--games", "3", "--seed", "5")):
        alone, shared = ladder("dicebreaker", *args), ladder("dicebreaker", *args, "--jobs", "2")
        assert results(alone) == results(shared) and results(alone)
        assert [line for line in alone.stderr.splitlines() if "game" in line] == \
            [line for line in shared.stderr.splitlines() if "game" in line]


def test_jobs_must_be_at_least_one():
    run = ladder("dicebreaker", "--bots", "greedy,random", "--jobs", "0")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == "ladder: --jobs must be at least 1\n"


def test_tricolor_hand_clues_reports_every_kind_of_card():
    script = LADDER.parent / "tricolor_hand_clues.py"
    done = subprocess.run([sys.executable, str(script), "--games", "2", "--seed", "3"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: float(line.split()[1]) for line in done.stdout.splitlines()[1:]}
    assert set(rows) == {"own1", "own2", "other1", "other2", "wild"}
    # Builders keep their own colour and throw others away, even over two games.
    assert rows["own1"] > 1 > rows["other1"]
