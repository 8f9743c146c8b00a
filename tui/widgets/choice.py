"""A radio button that reads without colour: ● for the picked choice, ○ for the others, and › at
the keyboard's place in a focused set. Textual's own draws ● for both and tells them apart by
colour alone. Every radio set in the app uses this one."""

from __future__ import annotations

from textual.widgets import RadioButton, RadioSet

PICKED, NOT_PICKED = "●", "○"
CURSOR = "›"


class Choice(RadioButton):
    @property
    def BUTTON_INNER(self) -> str:  # read by ToggleButton._button on every render
        return PICKED if self.value else NOT_PICKED

    @property
    def BUTTON_LEFT(self) -> str:  # the cursor takes the button's left edge: no extra width
        at_cursor = self.has_class("-selected") and isinstance(self.parent, RadioSet) and self.parent.has_focus
        return CURSOR if at_cursor else RadioButton.BUTTON_LEFT
