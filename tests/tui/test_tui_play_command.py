"""`dicetable play`: bad input is one clear line and exit 2, before any screen opens."""

import subprocess
import sys

import pytest

from dicetable.tui.cli import main


def exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as leaving:  # argparse's own refusals
        return leaving.code


@pytest.mark.parametrize(
    "argv, words",
    [
        (["play", "trice", "--vs", "nobody"], "unknown bot 'nobody' for TRICE"),
        (["play", "chess"], "unknown game 'chess'"),
        (["play", "trice", "--first", "later"], "invalid choice: 'later'"),
        (["play", "trice", "--option", "swap_limit=0"], "swap_limit: 0 is below 1"),
    ],
)
def test_bad_play_arguments_are_one_line_and_exit_2(argv, words, capsys):
    assert exit_code(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_play_help_names_the_choices():
    done = subprocess.run([sys.executable, "-m", "dicetable.tui.cli", "play", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    assert "--vs BOT" in done.stdout and "--first {me,bot,roll}" in done.stdout
