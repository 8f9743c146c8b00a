"""What every board table screen shares: the keys belong to the board, never to a panel.

Textual's `Screen.AUTO_FOCUS = None` does not turn autofocus off: it falls back to the app's "*",
which focuses the first focusable widget (the panel tabs, or a network table's chat log), so the
arrows would switch tabs instead of moving the cursor. "" turns it off; the panels are made
unfocusable and the focus is dropped again on mount and whenever the screen comes back from a dialog.
Only the chat line takes the focus, when the player opens it (t).
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Input

# The panels of a table screen that must never hold the focus.
PANELS = "Tabs, MoveLog, FairnessPanel, #chat-log"


class TableScreen(Screen):
    AUTO_FOCUS = ""  # "" is off; None would mean the app's "*" (whichever widget is first)

    def keep_keys_on_board(self) -> None:
        """Call from on_mount, after compose: no panel may take the cursor keys from the board."""
        for widget in self.query(PANELS):
            widget.can_focus = False
        self.set_focus(None)  # the tabs may have taken the focus already

    def on_screen_resume(self) -> None:
        if not isinstance(self.focused, Input):  # back from a dialog: the arrows belong to the board
            self.set_focus(None)
