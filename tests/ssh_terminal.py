"""Helpers for the SSH tests: a throwaway OpenSSH server on 127.0.0.1, `dicetable serve-ssh` on
127.0.0.1, asyncssh logins with a pty (`Player`), and tmux panes that log in with OpenSSH's client.

`SshServer` makes a host key and a user key for the test, writes an sshd_config that listens on
127.0.0.1 on a free port (public keys only, this test's keys only) and runs `sshd -D`. `ServeSsh`
runs `dicetable serve-ssh --bind 127.0.0.1 --port 0` on a data directory of the test's and lists the
apps it runs. `Pane` is one tmux window on a private tmux server running `ssh -tt`; it sends keys,
reads the screen (capture-pane), keeps every byte the remote program wrote (pipe-pane) and reads
tmux's own record of the terminal's modes (mouse reporting, alternate screen).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncssh

# CSI / OSC / DCS sequences, charset choices and two-byte escapes: what is left is the text drawn.
CONTROLS = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[()][0-9A-Za-z]|.)")


class Player:
    """One asyncssh login with a pty; `wait_for` reads what the app drew since the last `mark`."""

    def __init__(self, conn, process) -> None:
        self.conn, self.process = conn, process
        self.stream = bytearray()
        self.since = 0
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def login(cls, port: int, name: str, key=None, size=(80, 24)) -> "Player":
        key = key or asyncssh.generate_private_key("ssh-ed25519")
        conn = await asyncssh.connect("127.0.0.1", port, username=name, client_keys=[key], known_hosts=None,
                                      agent_path=None)
        process = await conn.create_process(term_type="xterm-256color", term_size=size, encoding=None)
        return cls(conn, process)

    async def _read(self) -> None:
        while True:
            data = await self.process.stdout.read(65536)
            if not data:
                return
            self.stream.extend(data)

    def text(self, since: int = 0) -> str:
        return CONTROLS.sub(b"", bytes(self.stream[since:])).decode(errors="replace")

    def mark(self) -> None:
        self.since = len(self.stream)

    async def wait_for(self, *words: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.text(self.since)
            flat = re.sub(r"\s+", " ", text)
            if all(word in flat for word in words):
                return text
            if time.monotonic() > deadline or self.reader.done():
                raise AssertionError(f"{words!r} never appeared; the app drew:\n{self.text()[-2500:]}")
            await asyncio.sleep(0.1)

    async def press(self, keys: bytes) -> None:
        self.mark()
        self.process.stdin.write(keys)
        await asyncio.sleep(0.05)

    async def enter_lobby(self, timeout: float = 30) -> None:
        """The first login asks for the name (the login name is offered): Enter takes it."""
        await self.wait_for("Welcome to dicetable", timeout=timeout)
        await self.press(b"\r")
        await self.wait_for("Lobby", "who is here now", timeout=timeout)

    def close(self) -> None:
        self.reader.cancel()
        self.conn.close()


async def until(condition, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        await asyncio.sleep(0.1)


MOUSE_MODES = ("1000", "1002", "1003", "1006", "1015")  # X10/button/any-event/SGR/urxvt reporting


def find_sshd() -> str | None:
    return shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.path.exists(p)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SshServer:
    def __init__(self, directory: Path, sshd: str) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        for name in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.dir / name)], check=True)
        (self.dir / "authorized_keys").write_text((self.dir / "user_key.pub").read_text())
        os.chmod(self.dir / "authorized_keys", 0o600)
        self.user = os.environ.get("USER") or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        self.port = free_port()
        (self.dir / "sshd_config").write_text("\n".join([
            "ListenAddress 127.0.0.1",
            f"Port {self.port}",
            f"HostKey {self.dir / 'host_key'}",
            f"PidFile {self.dir / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "StrictModes no",
            "UsePAM no",
            "PrintMotd no",
            "PrintLastLog no",
            "AcceptEnv COLORTERM",
            "",
        ]))
        # The client trusts exactly this server's throwaway host key.
        (self.dir / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {(self.dir / 'host_key.pub').read_text()}")
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self.log = open(self.dir / "sshd.log", "wb")
        self.process = subprocess.Popen([sshd, "-D", "-e", "-f", str(self.dir / "sshd_config")],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sshd did not start: {(self.dir / 'sshd.log').read_text()[-500:]}")
                time.sleep(0.05)

    def command(self, remote: str, send_env: tuple[str, ...] = ()) -> str:
        """The shell command that logs in with `ssh -tt` and runs `remote` in the pseudo-terminal."""
        options = [
            "-tt", "-F", "/dev/null", "-i", str(self.dir / "user_key"), "-p", str(self.port),
            "-o", f"UserKnownHostsFile={self.dir / 'known_hosts'}", "-o", "StrictHostKeyChecking=yes",
            "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
        ]
        for name in send_env:
            options += ["-o", f"SendEnv={name}"]
        return shlex.join(["ssh", *options, f"{self.user}@127.0.0.1", remote])

    def close(self) -> None:
        stop(self.process, 5)
        self.log.close()


class ServeSsh:
    """`dicetable serve-ssh` on 127.0.0.1, any free port, players' data under `data`."""

    def __init__(self, data: Path, *flags: str) -> None:
        self.data = data
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dicetable.tui.cli", "serve-ssh", "--bind", "127.0.0.1", "--port", "0",
             "--data", str(data), *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        line = self.process.stdout.readline()
        match = re.fullmatch(r"ssh: listening on 127\.0\.0\.1:(\d+)\n", line)
        assert match, f"serve-ssh said {line!r}"
        self.port = int(match.group(1))
        self.limits = self.process.stdout.readline()

    def apps(self) -> list[int]:
        """The app processes the server runs now (its children but the apps' preloaded parent,
        tui/zygote.py, which runs from start to end)."""
        children = []
        for entry in Path("/proc").iterdir():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                comm = (entry / "comm").read_text().strip()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == self.process.pid and fields[0] != "Z" and comm != "dt-zygote":
                children.append(int(entry.name))
        return children

    def command(self, user: str, key: Path, known_hosts: Path) -> str:
        """OpenSSH's client logging in as `user` with `key` alone (a first meeting: the host key is
        taken and kept in the test's own known_hosts)."""
        return shlex.join(["ssh", "-tt", *client_options(key, known_hosts), "-p", str(self.port), f"{user}@127.0.0.1"])

    def download(self, key: Path, known_hosts: Path, remote: str, into: Path) -> subprocess.CompletedProcess:
        """OpenSSH's scp fetching `remote` (a path in the key's own folder, `-r`) into the folder `into`."""
        into.mkdir(parents=True, exist_ok=True)
        return subprocess.run(["scp", "-r", *client_options(key, known_hosts), "-P", str(self.port),
                               f"player@127.0.0.1:{remote}", str(into)], capture_output=True, text=True, timeout=60)

    def close(self) -> None:
        stop(self.process, 10)


def client_options(key: Path, known_hosts: Path) -> list[str]:
    """OpenSSH client options for `key` alone, no config, no agent; a first meeting takes the host key."""
    return ["-F", "/dev/null", "-i", str(key), "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "LogLevel=ERROR"]


def stop(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; reaped either way."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def user_key(path: Path) -> Path:
    """A new Ed25519 key for OpenSSH's client, made by ssh-keygen (no passphrase)."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


class Tmux:
    """A private tmux server (its own socket): nothing it does touches the user's tmux."""

    def __init__(self, directory: Path) -> None:
        self.socket = str(directory / "tmux.sock")
        self.dir = directory
        self.panes = 0

    def __call__(self, *args: str, check: bool = True) -> str:
        out = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True)
        if check and out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def pane(self, command: str, env: dict[str, str] | None = None, width: int = 100, height: int = 30) -> "Pane":
        self.panes += 1
        name = f"w{self.panes}"
        log = self.dir / f"{name}.bytes"
        log.write_bytes(b"")
        # The window waits for a line before it runs the command, so that pipe-pane records the
        # command's output from its first byte.
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        waiting = "sh -c " + shlex.quote(f"read go; exec env {prefix} {command}")
        base = ["-x", str(width), "-y", str(height)]
        if self.panes == 1:
            self("-f", "/dev/null", "new-session", "-d", "-s", "main", "-n", name, *base, waiting)
            self("set-option", "-g", "remain-on-exit", "on")  # a finished pane stays to be read
        else:
            self("new-window", "-d", "-t", "main", "-n", name, waiting)
        target = f"main:{name}"
        self("resize-window", "-t", target, *base)
        self("pipe-pane", "-o", "-t", target, f"cat >> {shlex.quote(str(log))}")
        self("send-keys", "-t", target, "Enter")
        return Pane(self, target, log)

    def close(self) -> None:
        self("kill-server", check=False)


class Pane:
    def __init__(self, tmux: Tmux, target: str, log: Path) -> None:
        self.tmux, self.target, self.log = tmux, target, log

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.target, *keys)

    def press(self, key: str, until: str, tries: int = 3) -> str:
        """Press `key` until `until` shows (a key pressed while a screen is still coming up can
        go to the one before it); returns the screen."""
        for attempt in range(tries):
            self.send(key)
            try:
                return self.wait_for(until, timeout=5)
            except AssertionError:
                if attempt == tries - 1:
                    raise
        raise AssertionError("unreachable")

    def type_into_field(self, text: str, tries: int = 4) -> None:
        """Empty the focused text field and type `text`, again if the screen does not show it (keys
        typed at a busy app under load are now and then lost)."""
        for attempt in range(tries):
            self.send("C-a", "C-k")
            time.sleep(0.2)
            self.send("-l", text)
            try:
                self.wait_for(text[-30:], timeout=3)  # the end: a long text scrolls the field
                return
            except AssertionError:
                if attempt == tries - 1:
                    raise

    def give_name(self, name: str) -> None:
        """Answer the first run's name prompt (the welcome screen), as a new player does. The field
        offers the login name, often the very name typed: it is emptied first (its placeholder
        shows), so that the name seen is the one typed, not keys lost while the screen came up."""
        self.wait_for("Welcome to dicetable")
        for attempt in range(4):
            self.send("C-a", "C-k")
            try:
                self.wait_for("your name", timeout=3)
                break
            except AssertionError:
                if attempt == 3:
                    raise
        self.type_into_field(name)
        self.send("Enter")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.target)

    def info(self, name: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.target, f"#{{{name}}}").strip()

    @property
    def dead(self) -> bool:
        return self.info("pane_dead") == "1"

    def wait_for(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline or self.dead:
                raise AssertionError(f"{text!r} never appeared; the screen:\n{screen}\nsshd/pane bytes: {self.bytes()[-300:]!r}")
            time.sleep(0.05)

    def wait_dead(self, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while not self.dead:
            if time.monotonic() > deadline:
                raise AssertionError(f"the pane's program did not end; the screen:\n{self.screen()}")
            time.sleep(0.05)
        time.sleep(0.2)  # pipe-pane's cat writes the last bytes

    def bytes(self) -> bytes:
        return self.log.read_bytes()

    def modes_on(self) -> dict[str, bool]:
        """tmux's own record of the terminal modes the program left switched on."""
        return {
            "mouse": any(self.info(f) == "1" for f in ("mouse_any_flag", "mouse_button_flag", "mouse_standard_flag", "mouse_sgr_flag")),
            "alternate screen": self.info("alternate_on") == "1",
        }


def mouse_left_on(stream: bytes) -> list[str]:
    """The mouse modes the byte stream switched on (ESC [ ? N h) and never switched off again after."""
    left = []
    for mode in MOUSE_MODES:
        on, off = stream.rfind(f"\x1b[?{mode}h".encode()), stream.rfind(f"\x1b[?{mode}l".encode())
        if on > off:
            left.append(mode)
    return left
