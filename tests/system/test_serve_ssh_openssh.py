"""`dicetable serve-ssh` on 127.0.0.1 with OpenSSH's own client, in tmux at 80 × 24, by keys alone.

Two keys made by ssh-keygen log in with `ssh -tt`; both players see each other in the lobby, alice
picks TRICE (g) and invites bob (i), bob accepts (a), and they play the whole game as people do:
each reads the screen (capture-pane) to see whose turn it is and what is legal, and types a square
(`b2`) or a pool die (`w6`), then Enter. Mid-game one ssh client is killed (the host's, or the
joiner's); that player logs in again with the same key, is told in the lobby that the game is
waiting, resumes it (c, from the lobby or from the home screen) and they finish it. Both transcripts
then verify, alone and as copies of one table, with exactly the moves typed, as each player downloads
them with scp (tui/ssh_files.py).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

import pytest

from dicetable.core.trice import SQUARES
from net_helpers import dicetable, wait_until
from ssh_terminal import Pane, ServeSsh, Tmux, user_key

pytestmark = pytest.mark.slow

# Where the TRICE table draws its die cells at 80 × 24 (tui/widgets/die.py: 9 × 4 cells, the 4th
# row a caption): the board's columns from x = 2, the pool's from x = 40, both rows from y = 2.
BOARD_X, POOL_X, TOP, CELL_W, CELL_H = 2, 40, 2, 9, 4
OVER = "Home (h)"  # the game-over dialog's button
MOVES_BEFORE_THE_DROP = 5  # choose, place, choose, place, choose: no line can be full yet (3 dice)


@pytest.fixture
def served(tmp_path):
    for tool in ("ssh", "ssh-keygen", "tmux"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian: openssh-client, tmux; .ci/run installs them)")
    server = ServeSsh(tmp_path / "served")
    tmux = Tmux(tmp_path)
    yield server, tmux
    tmux.close()
    server.close()


@dataclass(frozen=True)
class Cell:
    face: str  # "W6", or "" when empty
    caption: str
    cursor: bool
    label: str  # an empty board square's name as drawn


def cell_at(lines: list[str], x: int, y: int) -> Cell:
    def row(dy: int) -> str:
        line = lines[y + dy] if y + dy < len(lines) else ""
        return line[x:x + CELL_W].ljust(CELL_W)

    letter, value = row(0)[1], row(2)[1]
    face = letter + value if letter in "WPO" and value in "123456" else ""
    return Cell(face, row(3).strip(), row(0)[0] == "┌", row(1)[1:-1].strip())


@dataclass(frozen=True)
class TriceTable:
    """What a TRICE screen shows: its status line, the board's squares and the pool's places."""

    status: str
    board: dict[str, Cell]
    pool: list[Cell]

    @classmethod
    def read(cls, screen: str) -> "TriceTable":
        lines = screen.splitlines() or [""]
        board = {SQUARES[r * 4 + c]: cell_at(lines, BOARD_X + CELL_W * c, TOP + CELL_H * r)
                 for r in range(3) for c in range(4)}
        pool = [cell_at(lines, POOL_X + CELL_W * (k % 4), TOP + CELL_H * (k // 4)) for k in range(12)]
        return cls(lines[0].strip(), board, pool)

    def choices(self) -> tuple[str, list[str]]:
        """What a person may do now, read off the screen: ("pool", faces) or ("board", squares)."""
        what = self.status.partition(": ")[2]  # after "Your turn: " (tui/screens/trice_screen.py status_line)
        if what.startswith("choose a die"):
            return "pool", [cell.face for cell in self.pool if cell.face]
        if what.startswith("place"):
            return "board", [sq for sq, cell in self.board.items() if not cell.face and cell.label == sq]
        if what.startswith("indicate"):
            return "board", [sq for sq, cell in self.board.items() if cell.face]
        if what.startswith("swap"):
            return "board", [sq for sq, cell in self.board.items() if cell.caption == "↔ swap"]
        if what.startswith("add 1"):
            return "board", [sq for sq, cell in self.board.items() if cell.caption == "+1 ?"]
        raise AssertionError(f"a turn the test does not know: {self.status!r}")

    def cursor_on(self, area: str, choice: str) -> bool:
        if area == "pool":
            return any(cell.cursor and cell.face == choice for cell in self.pool)
        return self.board[choice].cursor


def wait_screen(pane: Pane, condition, what: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        screen = pane.screen()
        if condition(screen):
            return screen
        if time.monotonic() > deadline or pane.dead:
            raise AssertionError(f"{what}: not within {timeout} s; the screen:\n{screen}")
        time.sleep(0.05)


def settled(pane: Pane, timeout: float = 30) -> str:
    """The screen once two looks in a row agree: not a frame the terminal has half drawn."""
    deadline = time.monotonic() + timeout
    before = pane.screen()
    while True:
        time.sleep(0.1)
        now = pane.screen()
        if now == before or time.monotonic() > deadline:
            return now
        before = now


def take_turn(pane: Pane, rng: random.Random) -> str | None:
    """Type one legal move as a person does: the die's colour and value, or the square's column and
    row, until the cursor is on it (a key typed while the app is busy can be lost), then Enter."""
    deadline = time.monotonic() + 20  # a notice (someone dropped, came back) may cover the pool for a few seconds
    while True:
        screen = settled(pane)
        table = TriceTable.read(screen)
        if not table.status.startswith("Your turn") or OVER in screen:
            return None
        area, legal = table.choices()
        if legal:
            break
        assert time.monotonic() < deadline, f"nothing legal on the screen for {table.status!r}:\n{screen}"
        time.sleep(0.2)
    choice = rng.choice(legal)
    for attempt in range(4):
        pane.send("-l", choice.lower())
        try:
            wait_screen(pane, lambda s: TriceTable.read(s).cursor_on(area, choice), f"the cursor on {choice}", 5)
            break
        except AssertionError:
            if attempt == 3:
                raise
    pane.send("Enter")
    wait_screen(pane, lambda s: TriceTable.read(s).status != table.status, f"{choice} taken", 30)
    return choice


def login(server: ServeSsh, tmux: Tmux, name: str, key, known_hosts) -> Pane:
    return tmux.pane(server.command(name, key, known_hosts), {"TERM": "xterm-256color"}, width=80, height=24)


@pytest.mark.parametrize("dropped_seat", ["alice", "bob"], ids=["host-drops", "joiner-drops"])
def test_two_openssh_clients_play_trice_with_a_dropped_connection(served, tmp_path, dropped_seat):
    """Alice hosts (she invites), Bob joins; one of them loses the connection after five moves."""
    server, tmux = served
    keys = {name: user_key(tmp_path / name) for name in ("alice", "bob")}
    known_hosts = tmp_path / "known_hosts"
    alice, bob = (login(server, tmux, name, keys[name], known_hosts) for name in ("alice", "bob"))
    for pane in (alice, bob):
        pane.wait_for("Welcome to dicetable", timeout=60)  # the first login: the login name is offered
        pane.press("Enter", "Lobby: who is here now", tries=4)
    alice.wait_for("bob   ", timeout=30)  # each sees the other in the lobby's list
    bob.wait_for("alice  ", timeout=30)
    alice.wait_for("i invites to TRICE;")
    for title in ("TRIAD", "Dice Breaker", "Tricolor Line", "TRICE"):  # g goes round the games, back to TRICE
        alice.send("g")
        alice.wait_for(f"i invites to {title};", timeout=30)
    alice.press("i", "Waiting room")
    bob.wait_for("alice invites you to TRICE", timeout=30)
    bob.press("a", "Pool:", tries=2)
    for pane in (alice, bob):
        wait_screen(pane, lambda s: "Pool: 12 dice" in s and "setup roll" in s, "at the table, the setup roll made")

    rng = random.Random(17)
    panes = {"alice": alice, "bob": bob}
    moves, dropped = [], False
    deadline = time.monotonic() + 900
    while True:
        screens = {name: pane.screen() for name, pane in panes.items()}
        if all(OVER in screen for screen in screens.values()):
            break
        assert time.monotonic() < deadline and len(moves) < 300, f"the game did not end: {moves}\n{screens}"
        if len(moves) >= MOVES_BEFORE_THE_DROP and not dropped:
            panes[dropped_seat] = come_back(server, tmux, dropped_seat, panes, keys[dropped_seat], known_hosts)
            dropped = True
            continue
        for name, screen in screens.items():
            table = TriceTable.read(screen)
            if table.status.startswith("Your turn") and OVER not in screen:
                typed = take_turn(panes[name], rng)
                if typed is not None:
                    moves.append((name, typed))
        time.sleep(0.05)
    assert dropped, f"the game ended before the drop: {moves}"

    ends = {re.search(r"(alice|bob) wins|draw", screen).group(0) for screen in screens.values()}
    assert len(ends) == 1, screens  # both saw the same end
    transcripts = []
    for name, key in keys.items():  # each downloads their own copy with scp, and checks it at home
        fetched = server.download(key, known_hosts, "transcripts", tmp_path / f"{name}_home")
        assert fetched.returncode == 0, fetched
        transcripts += list((tmp_path / f"{name}_home").glob("transcripts/*.dtt"))
    assert len(transcripts) == 2 and len({t.name for t in transcripts}) == 2, transcripts
    for transcript in transcripts:  # one file each: alice's resumed game went on in her first one
        verdict = dicetable("verify", str(transcript))
        assert verdict.returncode == 0, verdict
        # every move of the game is one this test typed
        assert verdict.stdout.startswith(f"valid: trice, {len(moves)} moves, result: "), (verdict.stdout, moves)
    both = dicetable("verify", *map(str, transcripts))
    assert both.returncode == 0 and "copies agree: 2 copies" in both.stdout, both


def come_back(server: ServeSsh, tmux: Tmux, name: str, panes: dict[str, Pane], key, known_hosts) -> Pane:
    """Kill `name`'s ssh client mid-game; they log in again with the same key and resume the game."""
    gone = panes[name]
    other = next(pane for who, pane in panes.items() if who != name)
    client = int(gone.info("pane_pid"))  # the pane's shell exec'd ssh
    command = subprocess.run(["ps", "-o", "comm=", "-p", str(client)], capture_output=True, text=True).stdout
    assert command.strip() == "ssh", command
    os.kill(client, signal.SIGKILL)
    gone.wait_dead()
    wait_until(lambda: len(server.apps()) == 1, 30, f"{name}'s app ended with the connection")
    other.wait_for("DISCONNECTED", timeout=30)  # the seat, on the other player's screen
    again = login(server, tmux, name, key, known_hosts)
    again.wait_for("Lobby: who is here now", timeout=60)  # the key is known: no name asked
    assert "Welcome to dicetable" not in again.screen()
    listed = "TRICE: alice (you) vs bob" if name == "alice" else "TRICE: alice vs bob (you)"
    told = again.wait_for("c resumes it", timeout=30)  # the lobby says the game is waiting
    assert "Your game is waiting: " + listed in " ".join(told.split()), told
    if name == "bob":  # the home screen's way, as the other one
        again.press("Escape", "Resume a game that stopped", tries=4)
    again.press("c", "Resume a game", tries=4)
    again.wait_for(listed, timeout=30)
    for attempt in range(3):  # Enter again only when the list was not ready for it (a second one would move)
        again.send("Enter")
        try:
            wait_screen(again, lambda s: "Reopening TRICE" in s or "Pool:" in s, "the game reopening", 5)
            break
        except AssertionError:
            if attempt == 2:
                raise
    again.wait_for("Pool:", timeout=60)
    wait_screen(other, lambda s: "DISCONNECTED" not in s and "· connected" in s, "the seat back on the other screen")
    return again


def test_a_stopping_server_says_so_in_one_line_and_puts_each_terminal_back(served, tmp_path):
    """The operator stops serve-ssh (SIGTERM) while Alice and Bob sit at a table: each OpenSSH client
    ends by itself with status 0, its terminal off the app's screen and with no mouse reporting left
    on, and shows one line: the server has stopped (tmux adds its own line for the ended pane)."""
    from dicetable.tui.ssh_server import STOPPING

    server, tmux = served
    known_hosts = tmp_path / "known_hosts"
    alice, bob = (login(server, tmux, name, user_key(tmp_path / name), known_hosts) for name in ("alice", "bob"))
    for pane in (alice, bob):
        pane.wait_for("Welcome to dicetable", timeout=60)
        pane.press("Enter", "Lobby: who is here now", tries=4)
    alice.wait_for("bob   ", timeout=30)
    alice.press("i", "Waiting room")
    bob.wait_for("alice invites you to TRICE", timeout=30)
    bob.press("a", "Pool:", tries=2)
    server.process.terminate()
    assert server.process.wait(30) == 0
    for pane in (alice, bob):
        pane.wait_dead(20)
        assert pane.info("pane_dead_status") in ("0", "")  # ssh's own exit, when tmux has it (not always at once)
        shown = [line.strip() for line in pane.screen().splitlines() if line.strip()]
        assert shown[0] == f"dicetable: {STOPPING}", pane.screen()
        assert all(line.startswith("Pane is dead (status 0,") for line in shown[1:]), pane.screen()  # tmux's, when drawn
        assert pane.modes_on() == {"mouse": False, "alternate screen": False}

