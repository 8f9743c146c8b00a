"""The rules we play, one Markdown file per game (copies of ../shared/rules/), shipped with the app."""

from __future__ import annotations

from importlib import resources

from dicetable.core import registry


def rules_text(game: str) -> str:
    """The rules document of `game` (an unknown game raises registry.UnknownGame)."""
    return resources.files(__name__).joinpath(registry.get(game).rules_file).read_text(encoding="utf-8")
