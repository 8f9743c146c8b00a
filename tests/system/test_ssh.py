"""The app over a real SSH session: OpenSSH's server on 127.0.0.1, `ssh -tt` inside tmux, keys in.

Each test logs in with a key made for it (tests/ssh_terminal.py), runs the venv's `dicetable` in
the pseudo-terminal, plays with send-keys and reads the screen with capture-pane. It checks that
the app falls back from truecolor when COLORTERM is not forwarded, and that the terminal is left
with mouse reporting and the alternate screen off after a quit, a kill, a hang-up or a dropped
connection.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from net_helpers import COMMAND, dicetable
from ssh_terminal import SshServer, Tmux, find_sshd, mouse_left_on

pytestmark = pytest.mark.slow

TRUECOLOR = re.compile(rb"\x1b\[[0-9;]*[34]8;2;")  # a 24-bit colour in an SGR sequence
COLOR256 = re.compile(rb"\x1b\[[0-9;]*[34]8;5;")


@pytest.fixture
def ssh(tmp_path):
    sshd = find_sshd()
    if sshd is None:
        pytest.skip("OpenSSH's server is not installed (Debian: apt-get install openssh-server; .ci/run does)")
    for tool in ("ssh", "ssh-keygen", "tmux"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            pytest.skip(f"{tool} is not installed")
    try:
        server = SshServer(tmp_path / "ssh", sshd)
    except (RuntimeError, subprocess.CalledProcessError) as error:
        pytest.skip(f"cannot run an SSH server here: {error}")
    tmux = Tmux(tmp_path)
    yield server, tmux
    tmux.close()
    server.close()


def login(server: SshServer, tmux: Tmux, home: Path, argv: str = "", colorterm: str | None = None,
          pidfile: Path | None = None, user: str = "Sam"):
    """A pane logged in over SSH, running `dicetable ARGV` with its own profile directory (a new
    profile takes its name from USER)."""
    lobby = shlex.quote(str(home.parent / "lobby"))  # this machine's lobby: the test's own, never /tmp's
    remote = f"exec env DICETABLE_HOME={shlex.quote(str(home))} DICETABLE_LOBBY_DIR={lobby} USER={user} {COMMAND} {argv}"
    if pidfile is not None:  # the remote shell's pid is the app's after exec
        remote = f"echo $$ > {shlex.quote(str(pidfile))}; {remote}"
    env = {"TERM": "xterm-256color"}
    send = ()
    if colorterm is not None:
        env["COLORTERM"], send = colorterm, ("COLORTERM",)
    return tmux.pane(server.command(remote, send), env)


def status_changes(pane, before: str, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = pane.screen()
        if screen != before:
            return screen
        time.sleep(0.03)
    return pane.screen()


def play_trice(*panes, over: str = "Home (h)", timeout: float = 120) -> list[str]:
    """Press Enter in whichever pane it is the turn of (the screen puts the cursor on a legal place;
    when a move is refused, the cursor moves on) until every pane shows `over`; the final screens."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screens = [pane.screen() for pane in panes]
        if all(over in screen for screen in screens):
            return screens
        for pane, screen in zip(panes, screens):
            if pane.dead:
                raise AssertionError(f"the app ended during the game:\n{screen}")
            if "Your turn" in screen and over not in screen:
                if "Not accepted" in screen:
                    pane.send("Right")
                pane.send("Enter")
                status_changes(pane, screen, timeout=5)
        time.sleep(0.03)
    raise AssertionError("the game did not end within {} s:\n{}".format(timeout, "\n".join(p.screen() for p in panes)))


def invite_on(screen: str, home: Path) -> str:
    """The invite of the waiting room: on one line of the screen (cut with … at 80 columns, never
    wrapped), and whole in the file the room names (invite.txt in the profile directory)."""
    lines = [line.strip().strip("│").strip() for line in screen.splitlines()]
    shown = next(line for line in lines if line.startswith("dt1-"))
    invite = (home / "invite.txt").read_text()
    assert invite.endswith("\n") and "\n" not in invite.strip(), "one line"
    assert shown.endswith("…") and invite.startswith(shown[:-1]), (shown, invite)
    return invite.strip()


def assert_clean(pane) -> None:
    stream = pane.bytes()
    assert b"\x1b[?1000h" in stream  # the app did switch mouse reporting on...
    assert mouse_left_on(stream) == []  # ...and off again before it ended
    assert pane.modes_on() == {"mouse": False, "alternate screen": False}


def test_two_ssh_sessions_play_trice_against_each_other(ssh, tmp_path):
    """Alice hosts from the home screen, Bob pastes her invite; both play with the keyboard alone."""
    server, tmux = ssh
    alice = login(server, tmux, tmp_path / "alice", user="Alice")
    bob = login(server, tmux, tmp_path / "bob", user="Bob")
    alice.give_name("Alice")  # the first run asks the name (the login name is offered)
    bob.give_name("Bob")
    alice.wait_for("Play against a bot")
    alice.press("h", "Open the table")
    invite = invite_on(alice.press("C-o", "dt1-"), tmp_path / "alice")  # Open: on 127.0.0.1, any free port
    bob.wait_for("Play against a bot")
    bob.press("j", "Paste the invite")
    bob.type_into_field(invite)
    bob.send("Enter")
    screens = play_trice(alice, bob)
    headlines = {re.search(r"(Alice|Bob) wins|draw", screen).group(0) for screen in screens}
    assert len(headlines) == 1, screens  # both sides saw the same end
    for pane in (alice, bob):
        pane.send("C-q")  # quit from the table
    for pane, home in ((alice, "alice"), (bob, "bob")):
        pane.wait_dead()
        assert_clean(pane)
        # COLORTERM was not forwarded: 256 colours, never a 24-bit colour the terminal may lack.
        assert COLOR256.search(pane.bytes()) and not TRUECOLOR.search(pane.bytes())
        transcripts = list((tmp_path / home / "transcripts").glob("*.dtt"))
        assert len(transcripts) == 1, transcripts
        verdict = dicetable("verify", str(transcripts[0]))
        assert verdict.returncode == 0 and verdict.stdout.startswith("valid: trice,"), verdict


def test_the_terminal_is_left_clean_however_the_app_ends(ssh, tmp_path):
    """Four logins at once: quit with Ctrl+Q (COLORTERM forwarded this time), killed (SIGTERM), hung
    up (SIGHUP), and a dropped connection (its server-side sshd dies without a goodbye)."""
    server, tmux = ssh
    game = "play trice --vs random --first me --seed 3"
    quit_ = login(server, tmux, tmp_path / "quit", colorterm="truecolor")
    ends = {how: login(server, tmux, tmp_path / how, game, pidfile=tmp_path / f"{how}.pid") for how in ("TERM", "HUP", "drop")}
    quit_.give_name("Sam")
    quit_.wait_for("Play against a bot")
    quit_.send("C-q")
    for how, pane in ends.items():
        pane.wait_for("Your turn")
        assert pane.modes_on()["mouse"]
        app = int((tmp_path / f"{how}.pid").read_text())
        if how == "drop":
            session = int(subprocess.run(["ps", "-o", "ppid=", "-p", str(app)], capture_output=True, text=True).stdout)
            assert "sshd" in subprocess.run(["ps", "-o", "comm=", "-p", str(session)], capture_output=True, text=True).stdout
            os.kill(session, signal.SIGKILL)
            ends[how] = (pane, app)
        else:
            os.kill(app, getattr(signal, f"SIG{how}"))
    quit_.wait_dead()
    assert TRUECOLOR.search(quit_.bytes())  # forwarded COLORTERM: 24-bit colour
    assert_clean(quit_)
    for how in ("TERM", "HUP"):
        ends[how].wait_dead()
        assert_clean(ends[how])
    # Dropped: no byte from the far side can reach this terminal any more (what it shows is up to
    # the local ssh client); the app must hear the hang-up and end rather than run on.
    pane, app = ends["drop"]
    pane.wait_dead()
    deadline = time.monotonic() + 15
    while _alive(app):
        assert time.monotonic() < deadline, "the app kept running after its connection dropped"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")
