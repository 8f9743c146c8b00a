"""Resume a game: the network games this profile left unfinished (a crash, a closed terminal),
reopened as `dicetable host --resume` / `join --resume` do, then played on in the usual screens;
and the local games left unfinished, rebuilt from their saves (tui/tables/local_save.py).

A game is listed when its transcript in the data directory (net/log/transcript.py `transcript_dir()`) has
its seat file (net/table/seat_file.py) beside it, no result yet, and the player has not forgotten it (`x`:
a local game's save is deleted; a network game's transcript stays, its seat file marked, since the
transcript is the table's record). Reopening runs in a thread (a resumed
host waits up to 5 s for its port, a joiner up to 5 s for the host); an error is one line here and
changes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from textual.binding import Binding
from textual.widgets import OptionList

from dicetable.tui.screens.game_list_screen import GameListScreen
from dicetable.tui.tables.history import game_title, moves_words, when_words
from dicetable.tui.tables.lobby import shown_path
from dicetable.tui.tables.view import told_apart

EMPTY = "No unfinished games: there is nothing to resume."


@dataclass(frozen=True)
class Unfinished:
    path: Path
    game: str  # the game's title
    names: tuple[str, ...]
    moves: int
    when: float  # last written (seconds since the epoch)
    seat: int

    def words(self) -> str:
        names = " vs ".join(f"{name} (you)" if seat == self.seat else name for seat, name in enumerate(self.names)
                            if name)  # "": a free seat of an open room
        who = "you host" if self.seat == 0 else "you joined"
        return f"{self.game}: {names}, {moves_words(self.moves)}, {when_words(self.when)}, {who}"


def read_unfinished(path: Path, key: bytes | None) -> Unfinished | None:
    """The game in `path` when it is unfinished, None when it is over or forgotten; raises ValueError
    (why) when it cannot be resumed by this profile."""
    from dicetable.net.log import wire
    from dicetable.net.identity import fingerprint
    from dicetable.net.table.seat_file import SeatFileError, load_seat
    from dicetable.net.log.transcript import DamagedTranscript, NotATranscript, read

    try:
        seat_data = load_seat(path)
        transcript = read(path)
    except (SeatFileError, NotATranscript, DamagedTranscript) as error:
        raise ValueError(str(error)) from None
    seat = seat_data["seat"]
    if transcript.result is not None or seat_data.get("forgotten"):
        return None
    seats = transcript.header["seats"]
    if type(seat) is not int or not 0 <= seat < len(seats):
        raise ValueError(f"its seat file names seat {seat!r}, not one of the table's")
    if key is not None and seats[seat]["key"] != key:
        raise ValueError(f"seat {seat} there is another profile's")
    moves = 0
    for frame in transcript.frames:
        try:
            moves += wire.decode(frame).kind in ("move", "unseal")
        except wire.WireError as error:
            raise ValueError(f"a frame is unreadable: {error}") from None
    names = told_apart([s["name"] for s in seats], [fingerprint(s["key"]) for s in seats])
    names = tuple(name if s["key"] else "" for name, s in zip(names, seats))  # an open room's free seats: nobody
    return Unfinished(path, game_title(transcript.header["game"]), names, moves, path.stat().st_mtime, seat)


def unfinished_games(directory: Path, key: bytes | None = None) -> tuple[list[Unfinished], list[str]]:
    """The unfinished games in `directory`, newest first, and the files that could not be read
    (as `name: why`). `key`: this profile's public key (a seat of another profile is not ours)."""
    games, unreadable = [], []
    paths = sorted(directory.glob("*.dtt")) if directory.is_dir() else []
    for path in paths:
        if not Path(str(path) + ".seat").exists():
            continue  # no secrets beside it (e.g. a copy to verify): nothing to resume with
        try:
            game = read_unfinished(path, key)
        except (ValueError, OSError) as error:
            unreadable.append(f"{path.name}: {str(error).replace(str(directory) + os.sep, '')}")  # names, not paths
            continue
        if game is not None:
            games.append(game)
    games.sort(key=lambda g: (g.when, g.path.name), reverse=True)
    return games, unreadable


def resumable_games(profile_dir=None) -> tuple[list, list[str]]:
    """What this profile can resume, newest first: its unfinished network games (Unfinished) and
    local games (SavedGame); and the files that could not be read (as `name: why`). Reads every
    transcript: call it in a thread."""
    from dicetable.net import identity
    from dicetable.net.identity import home
    from dicetable.net.log.transcript import transcript_dir
    from dicetable.tui.tables.local_save import saved_games

    try:
        profile = identity.load(profile_dir)
    except identity.ProfileError:
        profile = None
    network, unreadable = unfinished_games(transcript_dir(), profile.public_key if profile else None)
    local, bad_saves = saved_games(home())
    return sorted(network + local, key=lambda g: g.when, reverse=True), unreadable + bad_saves


class ResumeScreen(GameListScreen):
    CSS_PATH = "resume_screen.tcss"
    BINDINGS = [*GameListScreen.BINDINGS, Binding("x", "forget", "forget a game")]
    PREFIX = "resume"
    HEADING = "Resume a game"
    HELP = "Unfinished games, newest first (Enter or a click reopens one; x forgets one):"
    EMPTY = EMPTY

    def __init__(self) -> None:
        super().__init__()
        self.games: list = []  # Unfinished (network) and SavedGame (local)
        self.busy = False

    def load(self) -> tuple[list[str], list[str]]:
        self.games, unreadable = resumable_games(self.app.profile_dir)
        return [game.words() for game in self.games], unreadable

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        game = self.games[int(event.option.id)]
        if isinstance(game, Unfinished):
            self.reopen(game)
        else:
            self.reopen_local(game)

    def action_forget(self) -> None:
        """Take the highlighted game off the list: a local game's save is deleted; a network game's
        transcript stays (the table's record, which `dicetable verify` checks), its seat file marked."""
        from dicetable.net.table.seat_file import SeatFileError, forget

        menu = self.query_one("#resume-list", OptionList)
        if not self.loaded or menu.highlighted is None or not self.games or self.busy:
            return
        game = self.games[menu.highlighted]
        kept = ""
        if isinstance(game, Unfinished):
            try:
                forget(game.path)
            except (SeatFileError, OSError) as error:
                self.note(f"Could not forget it: {error}")
                return
            kept = f" Its transcript stays: {shown_path(game.path)}."
        else:
            game.path.unlink(missing_ok=True)
        del self.games[menu.highlighted]
        menu.clear_options()
        self.list_games([g.words() for g in self.games], self.unreadable)
        self.note(f"Forgot {game.words()}.{kept}" + ("" if self.games else f" {EMPTY}"))

    def reopen_local(self, game) -> None:
        """A local game rebuilt from its save, on its table screen; one line here if it cannot be."""
        from dicetable.tui.tables.history import history_path
        from dicetable.tui.tables.local_save import resume

        try:
            table = resume(game.path, bot_delay=self.app.bot_delay, history=history_path())
        except ValueError as error:
            self.note(f"Could not resume: {game.path.name} is {error}")
            return
        self.app.pop_screen()
        self.app.open_table(table)

    def reopen(self, game: Unfinished) -> None:
        if self.busy:
            return
        profile = self.app.profile()
        if profile is None:
            return
        self.busy = True
        waiting = "waiting for its port" if game.seat == 0 else "waiting for the host"
        self.note(f"Reopening {game.game} ({waiting}, up to 5 s)…")
        self.run_worker(lambda: self._reopen(profile, game), thread=True, group="resume", exit_on_error=False)

    def _reopen(self, profile, game: Unfinished) -> None:
        """In a thread: open the table (host) or reach the host (joiner), as the CLI's --resume."""
        from dicetable.net.table.seat_file import SeatFileError
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables.opening import reopened_table

        try:
            table = reopened_table(profile, game.path, game.seat)
        except Exception as error:  # these two are meant for a person; anything else still reaches them as words
            reason = str(error) if isinstance(error, (SessionError, SeatFileError)) else f"the table did not reopen: {error}"
            self.app.call_from_thread(self._failed, reason)
            return
        self.app.call_from_thread(self._opened, table)

    def _failed(self, reason: str) -> None:
        self.busy = False
        if not self.is_mounted:  # the person left this screen meanwhile
            return
        self.note(f"Could not resume: {reason}")

    def _opened(self, table) -> None:
        if self.app.screen is not self:  # the person left this screen meanwhile: leave the table too
            table.session.close()
            return
        self.app.open_waiting_room(table, replace=self)
