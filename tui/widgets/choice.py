"""A radio button that reads without colour: ● for the picked choice, ○ for the others, and › at
the keyboard's place in a focused set. Textual's own draws ● for both and tells them apart by
colour alone. Every radio set in the app uses these two: `Choices` holding `Choice`s."""

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


class Choices(RadioSet):
    """A radio set whose keyboard cursor is its choice: an arrow picks the choice it moves to (a setup
    screen's Start or Open then takes what the person sees marked, with no Enter needed to pick it),
    and the cursor starts at the choice picked already."""

    def action_next_button(self) -> None:
        if self._selected is None:  # RadioSet's mount, which puts the cursor on the first choice
            self._selected = next((i for i, button in enumerate(self._nodes) if button.value), None)
            if self._selected is None:  # nothing picked yet: the first choice has the cursor, not the pick
                super().action_next_button()
            return
        super().action_next_button()
        self._pick()

    def action_previous_button(self) -> None:
        super().action_previous_button()
        self._pick()

    def _pick(self) -> None:
        if self._selected is not None:
            self._nodes[self._selected].value = True  # RadioSet turns the others off and says Changed
