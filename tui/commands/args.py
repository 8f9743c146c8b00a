"""What the sub-commands share: the one-line error a person gets, and `--option NAME=VALUE` pairs."""

from __future__ import annotations


INTERRUPTED = 130  # the exit status of a command ended by Ctrl+C: 128 + SIGINT


class CommandError(Exception):
    """A mistake a person made on the command line: printed as one line, exit 2."""


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """`--option name=value` pairs as a dict (values are checked by the game)."""
    options = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CommandError(f"option {pair!r} is not name=value")
        options[name.strip()] = value.strip()
    return options
