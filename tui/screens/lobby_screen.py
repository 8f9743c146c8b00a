"""The lobby of a dicetable served over SSH (`dicetable serve-ssh`): who is connected now and their
open tables; i invites the person under the cursor (one key), a accepts an invitation, Enter sits
down at someone's open table, w watches it, or their game under way, without a seat (net/table/watcher.py,
as Join's Watch does), p plays whoever is waiting for the chosen game (tui/screens/queue_screen.py),
c resumes a game left unfinished (a dropped connection lands here, so the lobby says so). The tables are ordinary network tables on the server's 127.0.0.1 (transcripts,
fairness panel, verify), opened and joined through the usual waiting room.

`open_served(app)` is the app's one hook for served mode: it puts the lobby on top of the home
screen and starts `Served`, which keeps this app's presence and invitations in the lobby directory
(tui/tables/lobby.py) and tells the player of an invitation wherever they are in the app.
"""

from __future__ import annotations

import time

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from dicetable.core import registry
from dicetable.tui.tables.lobby import REFRESH, Invitation, Lobby, OpenTable, Presence, download_command, served_lobby

TICK = 1.0  # seconds between two looks at the lobby directory

TRUST = ("[b]Served by this host.[/b] Your key for these games lives on this server, so its operator is "
         "trusted for your seats. Every game stays verifiable from its transcript (v at a table; at home: "
         "[b]{fetch}[/b], then dicetable verify). For the full guarantee, play from a dicetable of your own "
         "(its README: scripts/play installs it) with your own key.")


def _table_of(screen):
    """The table a screen shows (a game screen's controller, a waiting room's table), or None."""
    return getattr(screen, "controller", None) or getattr(screen, "table", None)


class Served:
    """This app's part in the lobby: its presence, the invitations it sends and the ones it gets."""

    def __init__(self, app, lobby: Lobby, name) -> None:
        self.app = app
        self.lobby = lobby
        self.name = name  # () -> this player's name as the app says it (tui/app.py player_name)
        self.key = ""  # this player's key as every table shows it (my_key), once there is a profile
        self.game = registry.board_games()[0]  # what i invites to (g changes it)
        self.sent: dict[object, str] = {}  # table -> the presence id invited to it
        self.delivered: set[object] = set()
        self.told: set[tuple[str, str]] = set()  # invitations already told of (sender, invite)
        self.people: list[Presence] = []
        self.invitations: list[Invitation] = []
        self.announced: tuple = ()  # the presence last written, and when (time.monotonic)
        self.announced_at = 0.0

    def tick(self) -> None:
        try:
            presence, now = (self.name(), self.my_key(), self.doing(), self.open_table()), time.monotonic()
            if presence != self.announced or now - self.announced_at >= REFRESH:  # not a write every tick
                self.lobby.announce(*presence)
                self.announced, self.announced_at = presence, now
            self.send_invitations()
            self.people = self.lobby.present()
            self.invitations = self.lobby.invitations(self.people)
        except OSError as error:  # the lobby is a convenience: the app goes on without it
            self.app.notify(f"The lobby is not reachable: {error}", severity="warning", timeout=3)
            return
        for invitation in self.invitations:
            if (invitation.sender, invitation.invite) not in self.told:
                self.told.add((invitation.sender, invitation.invite))
                where = "a accepts" if isinstance(self.app.screen, LobbyScreen) else "o on the home screen opens the lobby"
                self.app.notify(f"{invitation.sender_name} invites you to {invitation.title}: {where}.",
                                title="Invitation", timeout=10)
        for screen in self.app.screen_stack:
            if isinstance(screen, LobbyScreen):
                screen.show(self.people, self.invitations)

    def my_key(self) -> str:
        """The profile key's fingerprint (net/identity.py), the one the seats show at a table: one
        key id for one person everywhere (the SSH key only finds the profile)."""
        if not self.key:
            from dicetable.net import identity

            try:
                profile = identity.load(self.app.profile_dir)
            except identity.ProfileError:
                profile = None
            self.key = profile.fingerprint if profile is not None else ""
        return self.key

    def tables(self) -> list:
        return [table for table in map(_table_of, self.app.screen_stack) if table is not None]

    def doing(self) -> str:
        from dicetable.tui.screens.queue_screen import QueueScreen

        for screen in reversed(self.app.screen_stack):
            if isinstance(screen, LobbyScreen):
                return "in the lobby"
            if isinstance(screen, QueueScreen) and not screen.started:
                return f"waiting for whoever plays {screen.game.title} (p)"
            table = _table_of(screen)
            game = getattr(table, "game", None) if table is not None else None
            if game is not None:
                view = table.view()
                if view is not None and view.state is None:
                    return f"waiting for players: {game.title}"
                return f"playing {game.title}" + ("" if table.network else " (local)")
        return "in the menus"

    def open_table(self) -> OpenTable | None:
        """A table this app hosts that still has free seats, with its invite; else one whose game is
        under way (free 0: others may watch it)."""
        under_way = None
        for table in self.tables():
            view = table.view() if getattr(table, "role", "") == "host" and table.invite else None
            if view is None or view.game is None or getattr(table, "closed_reason", ""):
                continue
            free = sum(seat.kind == "free" for seat in view.seats)  # an open dice room has some while it runs
            if free and view.result is None:
                return OpenTable(view.game.name, view.game.title, table.invite, free)
            if view.state is not None and view.result is None and under_way is None:
                under_way = OpenTable(view.game.name, view.game.title, table.invite, 0)
        return under_way

    def send_invitations(self) -> None:
        """An invitation goes out once its table has an invite, and is withdrawn when the table has
        started, closed or been left."""
        live = self.tables()
        for table, to in list(self.sent.items()):
            view = table.view()
            gone = table not in live or getattr(table, "closed_reason", "") or (view is not None and view.state is not None)
            if gone:
                self.lobby.withdraw(to)
                del self.sent[table]
                self.delivered.discard(table)
            elif table.invite and table not in self.delivered:
                self.lobby.invite(to, self.name(), table.game.name, table.game.title, table.invite)
                self.delivered.add(table)

    # -- what the lobby screen asks for -----------------------------------------------------------
    def invite(self, person: Presence) -> str:
        """Host a table of the chosen game on 127.0.0.1 and invite `person` to it."""
        from dicetable.core import registry
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables.opening import Where, host_table

        profile = self.app.profile()
        if profile is None:
            return "Choose your name first."
        try:
            table = host_table(profile, self.game, None, Where(bind="127.0.0.1"))  # everyone in the lobby is on this machine
        except SessionError as error:
            return str(error)
        self.sent[table] = person.id
        self.app.open_waiting_room(table)
        return f"Inviting {person.name} to {registry.get(self.game).title}…"

    def join(self, invite: str, watch: bool = False) -> str:
        """Sit down at the table of `invite`, or (`watch`) follow it without a seat."""
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables.opening import join_table, watch_table

        profile = self.app.profile()
        if profile is None:
            return "Choose your name first."
        try:
            table = (watch_table if watch else join_table)(profile, invite)
        except SessionError as error:
            return str(error)
        self.app.open_waiting_room(table)
        return ""

    def accept(self, invitation: Invitation) -> str:
        self.lobby.answer(invitation)
        return self.join(invitation.invite)

    def decline(self, invitation: Invitation) -> None:
        self.lobby.answer(invitation)


class LobbyScreen(Screen):
    TOASTS_KEPT = 2  # the rack's eight rows over the people's list (app.tcss)
    CSS_PATH = "lobby_screen.tcss"
    BINDINGS = [
        Binding("i", "invite", "invite"),
        Binding("a", "accept", "accept"),
        Binding("n", "decline", "decline", show=False),  # the invitation's line says it, as #lobby-game says g
        Binding("enter", "sit_down", "join", priority=True),
        Binding("w", "watch", "watch"),
        Binding("p", "play_whoever", "play anyone"),
        Binding("g", "next_game", "game", show=False),
        Binding("c", "resume", "resume"),
        Binding("escape", "menu", "menu"),
    ]

    def __init__(self, served: Served) -> None:
        super().__init__()
        self.served = served
        self.people: list[Presence] | None = None  # None: not shown yet
        self.invitations: list[Invitation] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="lobby-box"):
            yield Static("Lobby: who is here now", id="lobby-title")
            yield Static(TRUST.format(fetch=escape(download_command("transcripts", folder=True))), id="lobby-trust")
            yield Static(id="lobby-unfinished")
            yield Static(id="lobby-invitations")
            yield DataTable(id="lobby-people", cursor_type="row", zebra_stripes=False)
            yield Static(id="lobby-game")
            yield Static("", id="lobby-note")
        yield Footer()

    def on_mount(self) -> None:
        grid = self.query_one(DataTable)
        grid.add_columns("Name", "Key", "Doing", "Open table")
        grid.focus()
        self.query_one("#lobby-unfinished").display = False  # until the games are read (on_screen_resume)
        self._show_game()
        self.show(self.served.people, self.served.invitations)

    def on_screen_resume(self) -> None:
        self.served.tick()
        self.run_worker(self._read_unfinished, thread=True, group="unfinished", exclusive=True, exit_on_error=False)

    def _read_unfinished(self) -> None:
        from dicetable.tui.screens.resume_screen import resumable_games

        games, _ = resumable_games(self.app.profile_dir)
        self.app.call_from_thread(self._show_unfinished, games)

    def _show_unfinished(self, games: list) -> None:
        if not self.is_attached:
            return
        shown = self.query_one("#lobby-unfinished", Static)
        shown.display = bool(games)
        if len(games) == 1:
            shown.update(f"[b]Your game is waiting:[/b] {escape(games[0].words())}. c resumes it.")
        elif games:
            shown.update(f"[b]{len(games)} games are waiting[/b], the newest {escape(games[0].words())}. c lists them.")

    def action_resume(self) -> None:
        self.app.open("resume")

    def show(self, people: list[Presence], invitations: list[Invitation]) -> None:
        if not self.is_mounted or not self.query(DataTable):  # not shown yet, or going (the app ends)
            return
        if (people, invitations) == (self.people, self.invitations) and self.query_one(DataTable).row_count == len(people):
            return  # nothing changed: no repaint (it would travel over SSH every tick)
        grid = self.query_one(DataTable)
        keep = self.people[grid.cursor_row].id if self.people and 0 <= grid.cursor_row < len(self.people) else None
        self.people, self.invitations = people, invitations
        grid.clear()
        for person in people:
            table = "" if person.table is None else f"{person.table.title}, " + (
                f"{person.table.free} free" if person.table.free else "under way")
            grid.add_row(person.name, person.key, person.doing, table, key=person.id)
        if keep is not None and any(p.id == keep for p in people):
            grid.move_cursor(row=next(i for i, p in enumerate(people) if p.id == keep))
        if invitations:
            first = invitations[0]
            more = f" (and {len(invitations) - 1} more)" if len(invitations) > 1 else ""
            text = f"[b]{first.sender_name} invites you to {first.title}[/b]{more}: a accepts, n declines."
        elif not people:
            text = "Nobody else is connected right now. Others who log in appear here."
        else:
            text = "i invites the person under the cursor; Enter sits down at their open table, w watches it."
        self.query_one("#lobby-invitations", Static).update(text)

    def _show_game(self) -> None:
        from dicetable.core import registry

        title = registry.get(self.served.game).title
        self.query_one("#lobby-game", Static).update(
            f"i invites to [b]{title}[/b]; p plays whoever is waiting for it (g changes the game).")

    def _note(self, text: str) -> None:
        self.query_one("#lobby-note", Static).update(text)

    def _person(self) -> Presence | None:
        row = self.query_one(DataTable).cursor_row
        return self.people[row] if self.people and 0 <= row < len(self.people) else None

    def action_invite(self) -> None:
        person = self._person()
        self._note(self.served.invite(person) if person else "Nobody to invite yet.")

    def action_sit_down(self) -> None:
        person = self._person()
        if person is None or person.table is None:
            self._note("Their table is not open: i invites them to one of yours.")
            return
        if not person.table.free:
            self._note("Their table has no free seat: w watches its game.")
            return
        self._note(self.served.join(person.table.invite))

    def action_watch(self) -> None:
        person = self._person()
        if person is None or person.table is None:
            self._note("No table to watch here: w watches the table of the person under the cursor.")
            return
        self._note(self.served.join(person.table.invite, watch=True))

    def action_accept(self) -> None:
        if not self.invitations:
            self._note("No invitation to accept.")
            return
        self._note(self.served.accept(self.invitations[0]))

    def action_decline(self) -> None:
        if self.invitations:
            self.served.decline(self.invitations[0])
            self.served.tick()

    def action_play_whoever(self) -> None:
        """The queue of the chosen game (tui/tables/queue.py): seated with whoever waits for it, else
        waiting at a table of one's own until someone asks."""
        from dicetable.tui.screens.queue_screen import QueueScreen

        profile = self.app.profile()
        if profile is not None:
            self.app.push_screen(QueueScreen(profile, self.served.game))

    def action_next_game(self) -> None:
        games = registry.board_games()
        self.served.game = games[(games.index(self.served.game) + 1) % len(games)]
        self._show_game()

    def action_menu(self) -> None:
        self.app.pop_screen()


def open_served(app, name) -> bool:
    """In an app served over SSH: the lobby above the home screen, kept up to date; `name()` is the
    player's name. False when the app is not served."""
    directory = served_lobby()
    if directory is None:
        return False
    served = Served(app, Lobby(directory), name)
    app.served = served
    app.push_screen(LobbyScreen(served))
    app.set_interval(TICK, served.tick)
    import atexit

    atexit.register(served.lobby.leave)  # gone from the lobby when the app ends, however it ends cleanly
    return True


def open_lobby(app) -> bool:
    """The home screen's way back to the lobby (o), in a served app."""
    served = getattr(app, "served", None)
    if served is None:
        return False
    app.push_screen(LobbyScreen(served))
    return True
