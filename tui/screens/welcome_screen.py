"""The first run: the name others see at a table, asked once, before anything else; it makes the
profile (net/identity.py: the name and a new key pair). The profile screen changes it later."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static

from dicetable.net import identity


class WelcomeScreen(Screen[identity.Profile]):
    """Answers with the profile it made; it cannot be dismissed without a name (Ctrl+Q still quits)."""

    def __init__(self, directory=None) -> None:
        super().__init__()
        self.directory = directory  # where the profile is made; None: the data directory

    def compose(self) -> ComposeResult:
        with Vertical(id="welcome-box"):
            yield Static("Welcome to dicetable", id="welcome-title")
            yield Static("Your name at the table (what the other players see):")
            yield Input(identity.login_name(), id="welcome-name", max_length=identity.NAME_MAX,
                        placeholder="your name")
            yield Static("Enter saves it. A key is made for you too: its fingerprint lets the people you "
                         "play with recognise you (Profile, p on the home screen, shows it and changes the name).",
                         id="welcome-note")

    def on_mount(self) -> None:
        self.query_one("#welcome-name", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        if not name:
            self.query_one("#welcome-note", Static).update("Type a name first: 1 to 32 characters.")
            return
        try:
            profile = identity.load_or_create(name, directory=self.directory)
        except identity.ProfileError as error:
            self.query_one("#welcome-note", Static).update(f"Not saved: {error}")
            return
        self.dismiss(profile)
