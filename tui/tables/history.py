"""The games this player has played: local games from the history file, network games from their
transcripts. No Textual here: the history screen (tui/screens/history_screen.py) draws what this reads.

Local games (against bots, hot-seat) have no transcript, so a `LocalTable` kept with a history
(tui/tables/local_save.py `kept_table`) appends one JSON line per finished game to `history.jsonl`
in the data directory:

    {"v": 1, "game": "trice", "names": [...], "result": "Ann wins (Trice)", "when": 1763780000.0,
     "moves": 27, "seed": 12345, "log": [[0, "Ann places W6 at b2"], [-1, "roll: 4"], ...]}

(`log`: the move log as the table showed it, [seat, words], seat -1 for a chance event.)

The line is written whole and fsynced before the game-over dialog can be dismissed, so a crash
loses at most the game being written; a torn last line (a crash mid-write) is skipped on reading
and the next record starts on a line of its own. Network games are the transcripts in
`transcripts/` (net/table/seat_transcript.py): each is read for its header and result (each game's, for a table
that played rematches), and checked in full by `dicetable verify` when opened.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from dicetable.tui.tables.view import LogEntry, Written, result_words, told_apart

FILE = "history.jsonl"
VERSION = 1
MAX_LINE = 1 << 20  # a local game's record (its log in words) is far smaller; longer lines are not ours


def history_path() -> Path:
    from dicetable.net.identity import home

    return home() / FILE


def record_local(path: Path, game: str, names: Sequence[str], result: str, log: Sequence[LogEntry], seed: int) -> None:
    """Append one finished local game to the history file (created 0600 with its directory); the log
    is kept in words, with the names it was played with."""
    line = json.dumps({"v": VERSION, "game": game, "names": list(names), "result": result, "when": time.time(),
                       "moves": sum(1 for entry in log if entry.seat >= 0), "seed": seed,
                       "log": [[entry.seat, entry.words(names)] for entry in log]}, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        # One write() per record: with O_APPEND, two apps of the same player (two SSH sessions)
        # never interleave their lines. A torn last line from a crash stays apart from this one.
        lead = b"\n" if os.fstat(fd).st_size and not _ends_with_newline(path) else b""
        os.write(fd, lead + line.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as data:
        data.seek(-1, os.SEEK_END)
        return data.read(1) == b"\n"


def when_words(when: float) -> str:
    """`22 Nov 05:27`: when a game was played, as the game lists show it."""
    return time.strftime("%d %b %H:%M", time.localtime(when))


def moves_words(moves: int) -> str:
    return f"{moves} move{'' if moves == 1 else 's'}"


@dataclass(frozen=True)
class Played:
    """One game in the history, local or network."""

    game: str  # the game's title
    names: tuple[str, ...]
    result: str | None  # in words; None: a network game not finished
    moves: int
    when: float  # seconds since the epoch
    path: Path | None = None  # the transcript of a network game
    log: tuple[Written, ...] = field(default=(), repr=False)  # a local game's move log

    @property
    def network(self) -> bool:
        return self.path is not None

    def words(self) -> str:
        where = "network" if self.network else "local"
        result = self.result if self.result is not None else "unfinished"
        return f"{when_words(self.when)} · {self.game} ({where}): {' vs '.join(n for n in self.names if n)} · {result} · {moves_words(self.moves)}"


def game_title(name: str) -> str:
    """A game's title by its registered name (a name no longer registered stays as it is)."""
    from dicetable.core import registry

    return registry.get(name).title if name in registry.names() else name


def local_games(path: Path) -> tuple[list[Played], list[str]]:
    """The local games in the history file, and what could not be read (as `history.jsonl line N: why`)."""
    games, unreadable = [], []
    try:
        with open(path, "rb") as data:
            lines = data.read().split(b"\n")
    except FileNotFoundError:
        return [], []
    except OSError as error:
        return [], [f"{path.name}: {error.strerror}"]
    last = max((n for n, raw in enumerate(lines, start=1) if raw.strip()), default=0)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            games.append(_played(raw))
        except (ValueError, KeyError, TypeError):  # json's own errors are ValueErrors
            why = "cut short (a crash while it was written?)" if number == last else "not a game record"
            unreadable.append(f"{path.name} line {number}: {why}")
    return games, unreadable


def _played(raw: bytes) -> Played:
    """One line of the history file, checked field by field (ValueError, KeyError or TypeError)."""
    if len(raw) > MAX_LINE:
        raise ValueError("too long")
    record = json.loads(raw)
    if not isinstance(record, dict) or record.get("v") != VERSION:
        raise ValueError("not a record of this version")
    names, log = record["names"], record["log"]
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names) and isinstance(log, list)):
        raise ValueError("names and log must be lists")
    entries = tuple(Written(int(seat), str(text)) for seat, text in log)
    return Played(game_title(str(record["game"])), tuple(names), str(record["result"]), int(record["moves"]),
                  float(record["when"]), log=entries)


def network_games(directory: Path, key: bytes | None = None) -> tuple[list[Played], list[str]]:
    """The network games whose transcripts are in `directory`, and the files that could not be read;
    the seat of `key` (this profile's public key) is named `(you)`."""
    from dicetable.net.log import wire
    from dicetable.net.identity import fingerprint
    from dicetable.net.log.transcript import DamagedTranscript, NotATranscript, read

    games, unreadable = [], []
    for path in sorted(directory.glob("*.dtt")) if directory.is_dir() else []:
        try:
            transcript = read(path)
            header = transcript.header
            names = told_apart([seat["name"] for seat in header["seats"]],
                               [fingerprint(seat["key"]) for seat in header["seats"]])
            names = tuple(f"{name} (you)" if seat["key"] == key else name if seat["key"] else ""  # "": an open room's free seat
                          for name, seat in zip(names, header["seats"]))
            moves = sum(wire.kind_of(frame) in ("move", "unseal") for frame in transcript.frames)
            when = path.stat().st_mtime
        except (NotATranscript, DamagedTranscript, OSError, KeyError, TypeError) as error:
            unreadable.append(f"{path.name}: {error}".replace(str(directory) + os.sep, ""))
            continue
        try:
            result = _result_words(transcript.results, names)
        except (KeyError, TypeError, ValueError):
            unreadable.append(f"{path.name}: its result record is damaged")
            continue
        games.append(Played(game_title(header["game"]), names, result, moves, when, path=path))
    return games, unreadable


def _result_words(results: Sequence[dict], names: Sequence[str]) -> str | None:
    """A transcript's recorded results in words with names, each game's when the table played
    rematches (None: the game did not finish)."""
    if not results:
        return None
    from dicetable.core.game import Result

    words = [result_words(Result.from_data(data), names) for data in results]
    return words[0] if len(words) == 1 else "; ".join(f"game {n}: {w}" for n, w in enumerate(words, 1))


def past_games(home: Path, key: bytes | None = None) -> tuple[list[Played], list[str]]:
    """Every game in the history, newest first, and what could not be read (`key`: network_games)."""
    local, bad_local = local_games(home / FILE)
    network, bad_network = network_games(home / "transcripts", key)
    games = sorted(local + network, key=lambda g: g.when, reverse=True)
    return games, bad_local + bad_network
