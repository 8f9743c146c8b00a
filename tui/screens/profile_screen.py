"""The profile: your name at tables and the fingerprint others use to recognise your key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Static

from dicetable.net import identity


class ProfileScreen(Screen):
    BINDINGS = [Binding("escape", "back", "back")]

    def compose(self) -> ComposeResult:
        with Vertical(id="profile-box"):
            yield Static("Profile", id="profile-title")
            yield Static(id="profile-info")
            yield Static("Name (what others see at a table):", classes="profile-label")
            with Horizontal(id="profile-name-row"):
                yield Input(id="profile-name", max_length=identity.NAME_MAX)
                yield Button("Save", id="profile-save", variant="primary")
            yield Static(id="profile-note")
        yield Footer()

    def on_mount(self) -> None:
        try:
            self.profile = identity.load_or_create(directory=getattr(self.app, 'profile_dir', None))
        except identity.ProfileError as error:
            self.profile = None
            self.query_one("#profile-info", Static).update(f"Your profile cannot be read: {error}")
            return
        self.query_one("#profile-name", Input).value = self.profile.name
        self._show()
        self.query_one("#profile-name").focus()

    def _show(self) -> None:
        profile = self.profile
        self.query_one("#profile-info", Static).update(
            f"Name:        {profile.name}\n"
            f"Fingerprint: [b]{profile.fingerprint}[/b]\n"
            f"Stored in:   {profile.path}\n\n"
            "Read your fingerprint to the people you play with (by voice or a channel you trust):\n"
            "if it matches what their table shows for you, nobody is in the middle."
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._save()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._save()

    def _save(self) -> None:
        if self.profile is None:
            return
        name = self.query_one("#profile-name", Input).value.strip()
        try:
            self.profile = self.profile.renamed(name)
        except identity.ProfileError as error:
            self.query_one("#profile-note", Static).update(f"Not saved: {error}")
            return
        self.query_one("#profile-note", Static).update(f"Saved: you are {self.profile.name}.")
        self._show()

    def action_back(self) -> None:
        self.app.pop_screen()
