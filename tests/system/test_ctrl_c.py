"""Ctrl+C in every command, as a person meets it: a real `dicetable` process gets SIGINT once it is
running (its first line printed, a file made, a connection opened — never after a guessed pause) and
ends with exit 130 and one line on stderr, never a traceback; what it was writing (transcripts) is
whole. The app and `play` run in a pseudo-terminal, where the line follows the app's last frame.

`analyze` and `verify` print everything at once when they are done, so no output tells that they are
running; they end through the same place in tui/cli.py. Every socket is on 127.0.0.1.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest
import zmq

from dicetable.net.reach.invite import Invite
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.log.transcript import read
from net_helpers import COMMAND, ROOT, as_at_a_terminal, line_of, spawn, wait_until

LINE = "dicetable: interrupted"


def interrupted(process: subprocess.Popen, timeout: float = 60) -> str:
    """SIGINT once, then the process ends with 130, one line on stderr and no traceback: its stdout."""
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in out + err, err
    assert err.splitlines() == [LINE], err
    assert process.returncode == 130, (process.returncode, err)
    return out


def whole(path: Path) -> int:
    """A transcript another process was writing when it was interrupted reads whole: its frames."""
    transcript = read(path)
    assert not transcript.torn, f"{path} ends in a torn record"
    return len(transcript.frames)


def test_selfplay_recording_transcripts(tmp_path):
    records = tmp_path / "records"
    process = spawn(tmp_path, "ann", "selfplay", "trice", "--games", "100000", "--record", str(records))
    wait_until(lambda: any(records.glob("*.transcript")), timeout=60, what="the first transcript")
    interrupted(process)
    files = sorted(records.glob("*.transcript"))
    for path in files[:-1]:
        assert whole(path) > 0
    if files[-1].stat().st_size:  # the game under way (unless it was made at the very instant)
        whole(files[-1])


CONNECTING = [  # a command that dials `{at}`: an invite, or a relay's line with a short code
    ("join", "{at}", "--bot", "random", "--timeout", "600"),
    ("join", "7-orbit-lantern", "--relay", "{at}", "--bot", "random", "--timeout", "600"),
    ("roll", "--join", "{at}", "--timeout", "600"),
    ("deal", "--join", "{at}", "--timeout", "600"),
]


@pytest.mark.parametrize("argv", [pytest.param(argv, id=" ".join(argv[:2]).replace("{at}", "INVITE")
                                               .replace("7-orbit-lantern", "CODE")) for argv in CONNECTING])
def test_a_command_while_it_connects(tmp_path, argv):
    """The host (or the relay) here is a listening socket that never answers: the command is
    connecting for good when it is interrupted."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(60)
        port = listener.getsockname()[1]
        key = zmq.utils.z85.decode(zmq.curve_keypair()[0])
        at = (RelayAddress("127.0.0.1", port, key).encode() if "--relay" in argv
              else Invite("127.0.0.1", port, key, os.urandom(16)).encode())
        process = spawn(tmp_path, "bob", *(arg.replace("{at}", at) for arg in argv))
        try:
            connection, _ = listener.accept()  # it is connecting now
        except BaseException:
            process.kill()
            raise
        with connection:
            interrupted(process)


def test_host_and_join_at_a_table_in_play(tmp_path):
    """Both seats are in the game (their bots think 60 s a move) when each is interrupted: each leaves
    with one line and its transcript ends in a whole record."""
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "random", "--think", "60")
    joiner = None
    try:
        invite = line_of(host, "invite: ", timeout=60)
        joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--think", "60")
        joined = Path(line_of(joiner, "transcript: ", timeout=60))  # said once its first frames are in
        interrupted(joiner)
        assert whole(joined) > 0
        hosted = Path(line_of(host, "transcript: ", timeout=60))
        interrupted(host)
        assert whole(hosted) > 0
    finally:
        for process in (host, joiner):
            if process is not None and process.poll() is None:
                process.kill()


WAITING = [  # the command, and the start of the line it prints once it waits for people
    (("lan", "--timeout", "600", "--interface", "lo"), "listening 600 s"),
    (("roll", "3d6", "--host", "--seats", "2"), "invite: "),
    (("deal", "--host", "--seats", "2", "--port", "0"), "invite: "),
    (("host", "triad", "--port", "0", "--bot", "random"), "invite: "),
    (("relay", "--port", "0"), "relay: "),
    (("serve-ssh", "--port", "0", "--data", "{tmp}/served"), "ssh: listening"),
]


@pytest.mark.parametrize("argv, first", [pytest.param(*case, id=case[0][0]) for case in WAITING])
def test_a_command_waiting_for_people(tmp_path, argv, first):
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    if argv[0] == "serve-ssh":
        pytest.importorskip("asyncssh")
    process = spawn(tmp_path, "ann", *argv)
    try:
        line_of(process, first, timeout=60)
    except BaseException:
        process.kill()
        raise
    interrupted(process)


def test_a_command_whose_reader_holds_its_output_back(tmp_path):
    """`rules` into a pipe nobody reads past the first line (as `| less` on its first page): the
    process waits to write, and Ctrl+C ends it there."""
    process = subprocess.Popen([str(COMMAND), "rules", "tricolor"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=ROOT, pipesize=4096, preexec_fn=as_at_a_terminal)  # the rules are about 7.7 kB: more than the pipe holds
    first = b""
    while not first.endswith(b"\n"):  # a byte at a time: the pipe stays full
        first += os.read(process.stdout.fileno(), 1)
    assert first.startswith(b"# Tricolor Line")
    try:  # nothing more is read: the rest is dropped or stays in the pipe
        process.send_signal(signal.SIGINT)
        err = process.stderr.read().decode()
        assert process.wait(60) == 130 and err.splitlines() == [LINE], err
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()


# -- the app, in a terminal -------------------------------------------------------------------------
ESCAPES = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z])")


class Terminal:
    """`dicetable ARGS` in an 80 x 24 pseudo-terminal; `screen` is all it wrote, escapes removed."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {**os.environ, "DICETABLE_HOME": str(tmp_path / "ann"), "TERM": "xterm-256color"}
        self.process = subprocess.Popen([str(COMMAND), *args], stdin=slave, stdout=slave, stderr=slave,
                                        env=env, cwd=ROOT, start_new_session=True)
        os.close(slave)
        self.written = b""

    def read(self, until, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not until():
            assert time.monotonic() < end, f"timed out; the terminal shows: {self.text()[-600:]!r}"
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # EIO: every end of the terminal is closed
                    data = b""
                if not data:
                    return
                self.written += data

    def text(self) -> str:
        return ESCAPES.sub(b"", self.written).decode(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        os.close(self.master)


@pytest.mark.parametrize("args, shown", [
    ((), "Welcome to dicetable"),  # the first run asks for the name
    (("play", "trice", "--vs", "random", "--name", "Ann"), "Ann (you)"),
    (("replay", str(ROOT / "tests" / "fixtures" / "old_transcripts" / "trice.transcript")), "step 0 of 17"),
], ids=["app", "play", "replay"])
def test_the_app(tmp_path, args, shown):
    terminal = Terminal(tmp_path, *args)
    try:
        terminal.read(lambda: shown in terminal.text())
        terminal.process.send_signal(signal.SIGINT)
        terminal.read(lambda: False)  # to the end
        assert terminal.process.wait(60) == 130
        assert "Traceback" not in terminal.text()
        after = terminal.written.rsplit(b"\x1b[?1049l", 1)  # what follows the app leaving the alternate screen
        assert len(after) == 2, terminal.text()[-600:]
        assert ESCAPES.sub(b"", after[1]).decode().splitlines() == [LINE]
    finally:
        terminal.close()
