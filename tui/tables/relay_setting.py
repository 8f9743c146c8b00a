"""The relay a player uses, remembered in its profile directory (`relay.txt`, one line) once a table
was hosted or joined through it, so the app offers it next time (the CLI takes `--relay` each time)."""

from __future__ import annotations

from pathlib import Path

FILE = "relay.txt"
MAX_LINE = 400  # characters: a relay line is about 80


def remembered(directory: Path | None) -> str:
    """The relay line last used from this profile, or ""."""
    from dicetable.net.identity import home

    try:
        text = ((directory or home()) / FILE).read_text()[:MAX_LINE]
    except (OSError, UnicodeDecodeError):
        return ""
    return text.strip()


def remember(directory: Path | None, line: str) -> None:
    from dicetable.net.identity import home

    path = (directory or home()) / FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line.strip() + "\n")
    except OSError:
        pass  # a convenience: the player types it again next time
