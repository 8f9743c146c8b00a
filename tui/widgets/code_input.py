"""The join field: an invite pasted, or a short code typed with Tab completing its words as
magic-wormhole's prompt does (net/reach/codes.py `complete`): the completion shows dimmed after the
cursor; Tab (or →) takes it, and Tab with nothing to complete moves on as usual."""

from __future__ import annotations

import os

from textual.binding import Binding
from textual.suggester import Suggester
from textual.widgets import Input

from dicetable.net.reach.codes import complete


def completion(text: str) -> str | None:
    """What the typed code goes on with: the one completion, else the part all completions share."""
    found = complete(text)
    if not found:
        return None
    shared = os.path.commonprefix(found)
    return shared if len(shared) > len(text) else None


class CodeSuggester(Suggester):
    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        done = completion(value)
        # shown as the part after what was typed: only where the completion spells that part alike
        # (`7 orbit lan` shows `tern`; Tab takes the code as written, `7-orbit-lantern`)
        same = done is not None and done[:len(value)] == value.lower().replace(" ", "-")
        return done if same else None


class CodeInput(Input):
    BINDINGS = [Binding("tab", "complete", "complete", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(suggester=CodeSuggester(), **kwargs)

    def action_complete(self) -> None:
        done = completion(self.value) if self.cursor_at_end else None  # now, not when the suggestion shows
        if done is not None:
            self.value = done
            self.cursor_position = len(done)
        else:
            self.screen.focus_next()
