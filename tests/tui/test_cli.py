"""The headless commands of issue 2, run as a user runs them (a real process)."""

from __future__ import annotations

import json

import pytest

from net_helpers import ROOT, dicetable


def test_selfplay_json_keys_and_counts():
    run = dicetable("selfplay", "trice", "--games", "6", "--seed", "3", "--bots", "random,greedy", "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert set(summary) == {"game", "games", "wins", "draws", "mean_moves", "seconds"}
    assert summary["game"] == "trice" and summary["games"] == 6
    assert set(summary["wins"]) == {"random", "greedy"}
    assert sum(summary["wins"].values()) + summary["draws"] == 6
    assert summary["mean_moves"] > 0


def test_selfplay_is_reproducible_for_a_seed():
    a = json.loads(dicetable("selfplay", "trice", "--games", "5", "--seed", "9", "--json").stdout)
    b = json.loads(dicetable("selfplay", "trice", "--games", "5", "--seed", "9", "--json").stdout)
    assert a["wins"] == b["wins"] and a["mean_moves"] == b["mean_moves"]


def test_selfplay_text_output():
    run = dicetable("selfplay", "trice", "--games", "3", "--bots", "greedy,random")
    assert run.returncode == 0
    assert "games per second" in run.stdout and "mean moves" in run.stdout and "draws" in run.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("selfplay", "chess"), "unknown game 'chess'"),
        (("selfplay", "trice", "--bots", "random,wizard"), "unknown bot 'wizard'"),
        (("selfplay", "trice", "--option", "colours=5"), "has no option 'colours'"),
        (("selfplay", "trice", "--option", "swap_limit=soon"), "not a whole number"),
        (("analyze", "trice", "W6 P4 -- --"), "malformed TRICE board"),
        (("analyze", "trice", "W6 P4 -- -- / -- W9 O6 O4 / -- -- W5 --"), "bad square 'W9'"),
        (("rules", "chess"), "unknown game"),
    ],
)
def test_bad_input_one_clear_line_exit_2(args, message):
    run = dicetable(*args)
    assert run.returncode == 2
    assert message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.stderr


def test_analyze_rulebook_examples_json():
    expected = {
        "W6 P4 -- -- / -- W2 O6 O4 / -- -- W5 --": ("trice", ["a1", "b2", "c3"], "same colour"),
        "O4 P4 O4 W5 / -- -- O6 -- / W6 -- W2 --": ("trice", ["a1", "b1", "c1"], "same value"),
        "-- W2 -- -- / -- W3 P6 -- / -- O4 -- O6": ("trice", ["b1", "b2", "b3"], "ordered"),
        "O6 P1 -- W4 / -- O4 W3 -- / -- W2 -- P2": ("double", ["d1", "c2", "b3"], "double"),
    }
    for board, (verdict, squares, condition) in expected.items():
        run = dicetable("analyze", "trice", board, "--json")
        assert run.returncode == 0, run.stderr
        data = json.loads(run.stdout)
        assert data["verdict"] == verdict
        assert {"squares": squares, "condition": condition} in data["lines"]
        others = [line for line in data["lines"] if line["squares"] != squares]
        assert all(line["condition"] is None for line in others)


def test_analyze_text_names_condition_and_verdict():
    run = dicetable("analyze", "trice", "O6 P1 -- W4 / -- O4 W3 -- / -- W2 -- P2")
    assert "d1-c2-b3" in run.stdout and "double" in run.stdout
    assert run.stdout.strip().splitlines()[-1].startswith("verdict: double")


def test_rules_prints_the_rules_document():
    run = dicetable("rules", "trice")
    assert run.returncode == 0
    shared = ROOT.parent / "shared" / "rules" / "trice.md"
    if shared.exists():
        assert run.stdout == shared.read_text(encoding="utf-8")
    assert "Double Trice" in run.stdout


def test_shipped_rules_match_shared_rules():
    shared = ROOT.parent / "shared" / "rules"
    if not shared.exists():
        pytest.skip("shared/rules is not beside this checkout")
    for path in shared.glob("*.md"):
        assert (ROOT / "tui" / "rules" / path.name).read_text() == path.read_text(), path.name


class _Terminal:
    """stderr as a terminal is: it takes what is written and says it is a tty."""

    def __init__(self) -> None:
        self.written = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written += text
        return len(text)

    def flush(self) -> None:
        pass


def test_selfplay_shows_its_progress_on_a_terminal_only(monkeypatch, capsys):
    from dicetable.tui.cli import main

    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["selfplay", "trice", "--games", "3", "--bots", "random,random"]) == 0
    bars = terminal.written.split("\r")
    assert any("0/3" in bar and "starting" in bar for bar in bars)  # said at once, before the first game ends
    assert any("3/3 [########################]" in bar for bar in bars)
    assert terminal.written.endswith("\r")  # the bar's line cleared before the summary is printed
    assert "games per second" in capsys.readouterr().out
    quiet = _Terminal()
    monkeypatch.setattr("sys.stderr", quiet)
    assert main(["selfplay", "trice", "--games", "2", "--json"]) == 0
    assert quiet.written == ""  # --json: one JSON object and nothing else
    run = dicetable("selfplay", "trice", "--games", "2")  # not a terminal: nothing on stderr
    assert run.returncode == 0 and run.stderr == ""
