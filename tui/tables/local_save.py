"""Local games survive a crash: a `LocalTable` made by `kept_table` with a save path rewrites one small
file after every move, and the resume screen (home, `c`) reopens it where it stood; once the game is
over the save goes and the game joins the history (tui/tables/history.py).

A save holds what the table was made with (game, players, seed, options, who starts, the rematch
number) and the moves made so far, each with its seat:

    {"v": 1, "game": "tricolor", "players": [["Ann", ""], ["greedy 2", "greedy"]], "seed": 7,
     "options": {...}, "first": "roll", "number": 0, "when": 1763780000.0, "moves": [[0, ["draw", 2]], ...]}

Chance comes from a LocalSource seeded by (seed, number), so replaying the same moves asks the same
chances in the same order and gets the same dice and cards: the position is rebuilt exactly. (A
bot's own random choices after the resume may differ from the ones it would have made.) The file is
written to a temporary name, fsynced and renamed over the old one, so a crash leaves either the
previous save or the new one; it is removed when the game ends (the history keeps the game).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dicetable.core import registry
from dicetable.core.game import GameError, GameInfo, Move
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.tables.history import moves_words, record_local, when_words
from dicetable.tui.tables.view import result_words

DIRECTORY = "saved"
VERSION = 1


def new_save_path(game: str) -> Path:
    """A fresh save file for a new local table in the data directory."""
    from dicetable.net.identity import home

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return home() / DIRECTORY / f"{stamp}-{game}-{secrets.token_hex(3)}.json"


def kept_table(game: GameInfo, players: Sequence[Player], save: Path | None = None, history: Path | None = None,
               **settings) -> LocalTable:
    """A LocalTable (`settings`: its other arguments) whose game is saved to `save` after every move
    and, once over, added to `history`; None keeps no save / no history."""

    def moved(table: LocalTable) -> None:
        if save is not None:
            write(save, table)

    def finished(table: LocalTable) -> None:
        if save is not None:
            save.unlink(missing_ok=True)
        if history is None or table.game.name == "diceroom":
            return
        names = table.names
        record_local(history, table.game.name, names, result_words(table.state.result, names), table.log, table.seed)

    return LocalTable(game, players, on_move=moved, on_finish=finished, **settings)


def write(path: Path, table: LocalTable) -> None:
    """Save `table`'s game as it stands (atomically, 0600)."""
    data = {"v": VERSION, "game": table.game.name, "players": [[p.name, p.bot] for p in table.players],
            "seed": table.seed, "options": table.options, "first": table.first, "number": table.number,
            "when": time.time(), "moves": [[seat, move.to_data()] for seat, move in table.moves]}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, ensure_ascii=False)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def read(path: Path) -> dict:
    """A save's data, checked field by field; ValueError (one line) when it is not a usable save."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"unreadable ({type(error).__name__})") from None
    try:
        if data["v"] != VERSION:
            raise ValueError(f"a save of version {data['v']!r}")
        registry.get(data["game"])
        players = [Player(str(name), str(bot)) for name, bot in data["players"]]
        moves = [(int(seat), Move.from_data(move)) for seat, move in data["moves"]]
        checked = {"game": data["game"], "players": players, "seed": int(data["seed"]), "number": int(data["number"]),
                   "options": dict(data["options"]), "first": str(data["first"]), "when": float(data["when"]),
                   "moves": moves}
    except (KeyError, TypeError, ValueError, GameError) as error:
        raise ValueError(f"damaged ({error})") from None
    return checked


def resume(path: Path, bot_delay: float = 0.5, history: Path | None = None) -> LocalTable:
    """The saved game rebuilt by replaying its moves; ValueError (one line) when it cannot be."""
    data = read(path)
    try:
        table = kept_table(registry.get(data["game"]), data["players"], save=path, history=history, seed=data["seed"],
                           options=data["options"], first=data["first"], bot_delay=bot_delay, number=data["number"])
        for seat, move in data["moves"]:
            if table.state.actor != seat:
                raise GameError(f"the saved move {move} is seat {seat}'s, but seat {table.state.actor} acts")
            table.replay(seat, move)
    except GameError as error:
        raise ValueError(f"its moves do not replay: {error}") from None
    if table.state.result is not None:
        raise ValueError("the game in it is already over")
    table.kept = True  # the save it was read from holds it as it stands
    return table


@dataclass(frozen=True)
class SavedGame:
    path: Path
    game: str  # the game's title
    names: tuple[str, ...]
    moves: int
    when: float

    def words(self) -> str:
        return f"{self.game} (local): {' vs '.join(self.names)}, {moves_words(self.moves)}, {when_words(self.when)}"


def saved_games(home: Path) -> tuple[list[SavedGame], list[str]]:
    """The local games saved in `home`, newest first, and the files that could not be read."""
    games, unreadable = [], []
    directory = home / DIRECTORY
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            data = read(path)
        except ValueError as error:
            unreadable.append(f"{path.name}: {error}")
            continue
        title = registry.get(data["game"]).title
        games.append(SavedGame(path, title, tuple(p.name for p in data["players"]), len(data["moves"]), data["when"]))
    games.sort(key=lambda g: (g.when, g.path.name), reverse=True)
    return games, unreadable
