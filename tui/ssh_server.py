"""`dicetable serve-ssh`: the app served to any SSH client, the client's key its player's identity.

Each SSH session runs the app (`run_app`, as `dicetable` does) in a pseudo-terminal of its own, as a
child process with bounded memory, CPU and files (`Limits`), its data directory keyed by the client's
public key (so the same key finds the same profile, transcripts and unfinished games again). What a
key keeps there is capped on disk and in files, and the server keeps a reserve of free disk that no
number of keys can take (tui/ssh_quota.py): past either, the app does not start, or is closed. The
apps find each other through the lobby directory (tui/tables/lobby.py); their tables are ordinary
network tables on 127.0.0.1. This process only bridges bytes: it never reads a player's secrets.
The same key may download its own directory, read only, over SFTP or scp (tui/ssh_files.py), to
verify its games at home.

Any key is accepted (the key is who you are, there are no accounts); passwords are not offered.
A connection that has not logged in within LOGIN_GRACE seconds is dropped, at most MAX_STARTUPS
may be logging in at once, and at most `max_sessions` apps run at once. One app per key: a key that
logs in again (its old connection hung) closes the older app first, since two apps at one seat would
write one transcript twice. No app outlives the server.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import resource
import signal
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from dicetable.tui import ssh_quota
from dicetable.tui.ssh_files import Downloads, OwnFolder, Refused
from dicetable.tui.tables.lobby import SERVED_ENV, SERVED_PORT_ENV

LOGIN_GRACE = 20.0  # seconds to finish the SSH handshake and log in
MAX_STARTUPS = 256  # connections logging in at once; more are closed at once (a flood costs one fd each)
KEEPALIVE = 30.0  # seconds between keepalives; 4 unanswered ones drop a dead connection
READ_CHUNK = 65536
LAST_WORDS = 2.0  # seconds an ending app's last bytes (the terminal put back as it was) may take to the client
STOPPING = "the server has stopped; your games are kept. Log in again later."
# What an app that could not finish leaves switched on, switched off: mouse reports, bracketed
# paste, a hidden cursor, colours (the alternate screen only when it is still on: see goodbye).
TERMINAL_BACK = b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[?25h\x1b[0m"
APP = "import sys; from dicetable.tui.app import run_app; sys.exit(run_app())"  # what `dicetable` runs
SESSION_MB = 48  # memory one player's app may come to hold of its own at a game (forked: ~17 MB idle)


def default_max_sessions() -> int:
    """As many sessions as half this machine's memory holds at SESSION_MB each (the other half for the
    system, the server and whatever else runs here): 256 on a machine of 24 GB."""
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 32
    return max(4, memory // 2 // (SESSION_MB * 1024 * 1024))


@dataclass(frozen=True)
class Limits:
    """What one connection's app may use; the figures are printed at start (see README)."""

    max_sessions: int = field(default_factory=default_max_sessions)
    memory_mb: int = 512  # address space (RLIMIT_AS): an app at a game peaks at ~180 MB, 65 MB resident
    cpu_seconds: int = 3600  # CPU time (RLIMIT_CPU) over the whole connection; an idle app uses ~0.15 s a minute
    file_mb: int = 64  # largest file it may write (RLIMIT_FSIZE): transcripts are a few hundred kB
    open_files: int = 256  # RLIMIT_NOFILE
    idle_seconds: float = 1800.0  # no key pressed (a download: no request) for this long ends the connection
    disk_mb: int = 100  # what a key keeps on disk (tui/ssh_quota.py): some hundreds of games' transcripts
    files: int = 2000  # files and folders a key keeps (a game is two or three)
    min_free_mb: int = 512  # disk the server keeps free, whatever the number of keys
    downloads: int = 2  # SFTP or scp sessions one key may have open at once (tui/ssh_files.py)
    preload: bool = True  # fork each app from a preloaded parent (tui/zygote.py); False: a fresh Python each

    def describe(self) -> str:
        return (f"at most {self.max_sessions} sessions; each app: {self.memory_mb} MB address space, "
                f"{self.cpu_seconds} s CPU, {self.file_mb} MB files, {self.open_files} open files, "
                f"idle {self.idle_seconds:g} s; each key keeps at most {self.disk_mb} MB in {self.files} files; "
                f"{self.min_free_mb} MB of disk kept free; each key may download its own folder, "
                f"{self.downloads} downloads at once; apps {'forked from a preloaded parent' if self.preload else 'started afresh'}")

    def disk_refusal(self, home: Path, data: Path) -> str | None:
        """Why the key whose directory is `home` may not run its app now (tui/ssh_quota.py), or None."""
        return ssh_quota.refusal(home, data, self.disk_mb, self.files, self.min_free_mb)


def key_id(key: asyncssh.SSHKey) -> str:
    """A file-name-safe id of a public key: the player's data directory under the server's."""
    return hashlib.sha256(key.public_data).hexdigest()[:24]


def login_name(username: str) -> str:
    """The login name as a first display name (the app offers it; the player may change it)."""
    name = "".join(ch for ch in username if ch.isprintable()).strip()[:32]
    return name or "player"


def private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def host_key(path: Path) -> asyncssh.SSHKey:
    """The server's host key, made once (Ed25519, mode 0600) and kept: clients remember it."""
    if path.exists():
        return asyncssh.read_private_key(str(path))
    private_dir(path.parent)
    key = asyncssh.generate_private_key("ssh-ed25519")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key.export_private_key())
    return key


class Server:
    """The SSH side: who may log in, how many at once, and one app per session."""

    def __init__(self, data: Path, limits: Limits) -> None:
        self.data = data
        self.limits = limits
        self.lobby = private_dir(data / "lobby")
        self.players = private_dir(data / "players")
        self.logging_in = 0
        self.sessions = 0
        self.playing: dict[str, AppSession] = {}  # key_id -> its session (one app per key)
        self.connections: set = set()  # every live connection, closed with a goodbye when the server stops
        self.downloads = Downloads(per_key=limits.downloads, most=limits.max_sessions)
        self.zygote = None  # the apps' preloaded parent (tui/zygote.py), once started

    def preload(self) -> None:
        """Start the apps' preloaded parent; blocks for its imports (about a second), so it runs
        before the server listens, in the main thread (the parent dies with the thread that made it)."""
        from dicetable.tui.zygote import Zygote

        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(self.data),
               "MALLOC_ARENA_MAX": "2"}  # as each app's (environment()); nothing of the server's own
        if "PYTHONPATH" in os.environ:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self.zygote = Zygote.start(env)

    # -- asyncssh's server factory: one per connection ------------------------------------------
    def connection(self) -> asyncssh.SSHServer:
        return _Connection(self)

    def files(self, chan) -> asyncssh.SFTPServer:
        """One SFTP or scp session: the key's own folder, read only (tui/ssh_files.py)."""
        player = key_id(chan.get_connection().get_extra_info("dicetable_key"))
        home = self.players / player
        why = self.downloads.refusal(player) if home.is_dir() else \
            "this key has nothing on this server yet: log in with ssh first, then download."
        if why is not None:
            chan.write_stderr(f"dicetable: {why}\r\n".encode())
            chan.exit(1)
            return Refused(chan, why)
        self.downloads.take(player)
        return OwnFolder(chan, home, lambda: self.downloads.give_back(player), self.limits.idle_seconds)

    async def session(self, process: asyncssh.SSHServerProcess) -> None:
        """One SSH session: the app in a pty until either side ends."""
        key = process.get_extra_info("dicetable_key")
        if process.term_type is None or process.command or process.subsystem:
            process.stderr.write(b"dicetable: this server runs the dicetable app; log in with a terminal (ssh -t), or download your own files with sftp or scp.\r\n")
            process.exit(1)
            return
        player = key_id(key)
        previous = self.playing.get(player)
        if self.sessions >= self.limits.max_sessions and previous is None:
            process.stdout.write(f"dicetable: the server is full ({self.limits.max_sessions} players); "
                                 "try again in a while.\r\n".encode())
            process.exit(1)
            return
        refusal = await asyncio.to_thread(self.limits.disk_refusal, self.players / player, self.data)
        if refusal is not None:
            process.stdout.write(f"dicetable: {refusal}\r\n".encode())
            process.exit(1)
            return
        self.sessions += 1
        session = self.playing[player] = AppSession(self, process, key)
        try:
            if previous is not None:
                previous.stop("this key logged in again from another connection: this one is closed.")
                await previous.ended.wait()
            await session.run()
        finally:
            self.sessions -= 1
            session.ended.set()
            if self.playing.get(player) is session:
                del self.playing[player]

    async def close(self) -> None:
        """End every app (hang-up, then kill) before the server exits: none may outlive it. Each
        player's terminal is put back and told in one line; then every connection is closed."""
        sessions = list(self.playing.values())
        for session in sessions:
            session.stop(STOPPING)
        if sessions:
            await asyncio.wait([asyncio.create_task(session.ended.wait()) for session in sessions], timeout=15)
        connections = list(self.connections)
        if connections:  # a client whose session ended leaves by itself: closing first would make OpenSSH
            # print "Received disconnect ..." under the goodbye line
            await asyncio.wait([asyncio.create_task(conn.wait_closed()) for conn in connections], timeout=3)
        for conn in list(self.connections):  # an SSH goodbye, not a dropped socket: the rest end cleanly too
            conn.close()
        if self.connections:
            await asyncio.wait([asyncio.create_task(conn.wait_closed()) for conn in list(self.connections)], timeout=5)
        if self.zygote is not None:
            zygote, self.zygote = self.zygote, None
            await asyncio.to_thread(zygote.close)


class _Connection(asyncssh.SSHServer):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.conn = None
        self.counted = False

    def connection_made(self, conn) -> None:
        self.conn = conn
        self.server.connections.add(conn)
        if self.server.logging_in >= MAX_STARTUPS:
            conn.abort()  # a flood: refuse at once rather than let it starve the ones that log in
            return
        self.server.logging_in += 1
        self.counted = True

    def connection_lost(self, exc) -> None:
        self.server.connections.discard(self.conn)
        self._logged_in()

    def auth_completed(self) -> None:
        self._logged_in()

    def _logged_in(self) -> None:
        if self.counted:
            self.counted = False
            self.server.logging_in -= 1

    def begin_auth(self, username: str) -> bool:
        return True  # public-key auth below, always asked for

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key) -> bool:
        # Any key is welcome: it is the player's identity. The key that signs last is the one logged in.
        self.conn.set_extra_info(dicetable_key=key)
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        return False


def rlimits(limits: Limits) -> list[tuple[int, int, int]]:
    """What bounds one connection's app, as (resource, soft, hard), never above this process's own
    hard limits (an app may not raise them): set in the app's process before it runs."""
    mb = 1024 * 1024
    bounds = []
    for what, value in ((resource.RLIMIT_AS, limits.memory_mb * mb), (resource.RLIMIT_CPU, limits.cpu_seconds),
                        (resource.RLIMIT_FSIZE, min(limits.file_mb, limits.disk_mb) * mb),
                        (resource.RLIMIT_NOFILE, limits.open_files),
                        (resource.RLIMIT_CORE, 0)):
        hard = resource.getrlimit(what)[1]
        soft_hard = (value, value + 5) if what == resource.RLIMIT_CPU else (value, value)  # SIGXCPU first
        if hard != resource.RLIM_INFINITY:
            soft_hard = (min(soft_hard[0], hard), min(soft_hard[1], hard))
        bounds.append((what, *soft_hard))
    return bounds


def _child_limits(limits: Limits) -> None:
    """Run in the app's process before exec: bound what one connection can take from the host."""
    for what, soft, hard in rlimits(limits):
        resource.setrlimit(what, (soft, hard))


class AppSession:
    """The app in a pseudo-terminal, bridged to one SSH channel."""

    def __init__(self, server: Server, process: asyncssh.SSHServerProcess, key) -> None:
        self.server = server
        self.process = process
        self.key = key
        self.pid = 0
        self.master = -1
        self.last_input = time.monotonic()
        self.alternate = False  # the app's output left the client's terminal on its alternate screen
        self.stopped = asyncio.Event()  # the server ends this session (stop)
        self.ended = asyncio.Event()  # its app has ended and been reaped (set by Server.session)
        self.why = ""

    def stop(self, why: str) -> None:
        self.why = why
        self.stopped.set()

    def goodbye(self, text: str) -> None:
        """The last line to the client, once the app has gone: its terminal put back (what an app
        killed before it could do so left on, switched off), then `dicetable: text`."""
        back = TERMINAL_BACK + (b"\x1b[?1049l" if self.alternate else b"")
        try:
            self.process.stdout.write(back + f"\r\ndicetable: {text}\r\n".encode())
        except (OSError, asyncssh.Error):
            pass

    def environment(self) -> dict[str, str]:
        home = private_dir(self.server.players / key_id(self.key))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TERM": self.process.term_type or "xterm-256color",
            "LANG": "C.UTF-8",
            "HOME": str(home),
            "DICETABLE_HOME": str(home),
            "TMPDIR": str(home),  # a temporary file counts against the key's share of the disk too
            "USER": login_name(self.process.get_extra_info("username") or ""),
            "MALLOC_ARENA_MAX": "2",  # threads' malloc arenas would reserve 64 MB of address space each
            SERVED_ENV: str(self.server.lobby),
            SERVED_PORT_ENV: str((self.process.get_extra_info("sockname") or ("", 22))[1]),
        }
        colorterm = self.process.env.get("COLORTERM")
        if colorterm in ("truecolor", "24bit"):
            env["COLORTERM"] = colorterm
        return env

    def start(self) -> None:
        """The app on a pseudo-terminal of its own: forked from the preloaded parent (tui/zygote.py)
        when the server has one, else a fresh Python, as `dicetable` starts."""
        env = self.environment()
        zygote = self.server.zygote
        if zygote is not None:
            master, terminal = os.openpty()
            self.master = master
            width, height, pixwidth, pixheight = self.process.term_size
            self.resize(width or 80, height or 24, pixwidth, pixheight)  # before the app's first frame
            try:
                self.pid = zygote.spawn(terminal, env, rlimits(self.server.limits))
            finally:
                os.close(terminal)  # the app holds it now: its end is the end of output (EIO)
            if self.pid:
                os.set_blocking(master, False)
                return
            self.close_terminal()  # the parent has gone: this app and the next start as before
            self.server.zygote = None
        self._exec(env)

    def _exec(self, env: dict[str, str]) -> None:
        import pty

        argv = [sys.executable, "-c", APP]
        pid, master = pty.fork()
        if pid == 0:  # the child: limits, then the app (nothing else of this process runs here)
            try:
                _child_limits(self.server.limits)
                os.execve(sys.executable, argv, env)
            finally:
                os._exit(127)
        self.pid, self.master = pid, master
        os.set_blocking(master, False)
        width, height, pixwidth, pixheight = self.process.term_size
        self.resize(width or 80, height or 24, pixwidth, pixheight)

    def resize(self, width: int, height: int, pixwidth: int = 0, pixheight: int = 0) -> None:
        import fcntl
        import termios

        size = struct.pack("HHHH", max(1, min(height, 1000)), max(1, min(width, 1000)), pixwidth & 0xFFFF, pixheight & 0xFFFF)
        try:
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)  # the kernel tells the app (SIGWINCH)
        except OSError:
            pass

    async def run(self) -> None:
        self.start()
        shown = asyncio.create_task(self.output())
        ends = [asyncio.create_task(self.input()), asyncio.create_task(self.idle()),
                asyncio.create_task(self.disk()), asyncio.create_task(self.stopped.wait())]
        try:
            await asyncio.wait([shown, *ends], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in ends:
                task.cancel()
            status = await self.end()
            try:  # what the app wrote as it left (the terminal put back) still reaches the client
                await asyncio.wait_for(shown, LAST_WORDS)
            except (asyncio.TimeoutError, OSError, asyncssh.Error):
                pass
            self.close_terminal()
            if self.why:
                self.goodbye(self.why)
            try:
                self.process.exit(status)
            except (OSError, asyncssh.Error):
                pass

    async def output(self) -> None:
        """The app's screen to the client, never faster than the client takes it."""
        loop = asyncio.get_running_loop()
        while True:
            ready = loop.create_future()
            loop.add_reader(self.master, lambda: ready.done() or ready.set_result(None))
            try:
                await ready
            finally:
                loop.remove_reader(self.master)
            try:
                data = os.read(self.master, READ_CHUNK)
            except BlockingIOError:
                continue
            except OSError:  # EIO: the app has ended and closed the terminal
                return
            if not data:
                return
            on, off = data.rfind(b"\x1b[?1049h"), data.rfind(b"\x1b[?1049l")
            if on != off:
                self.alternate = on > off
            self.process.stdout.write(data)
            await self.process.stdout.drain()

    async def input(self) -> None:
        """The client's keys to the app; a window change resizes the pty; the end of input ends the app."""
        while True:
            try:
                data = await self.process.stdin.read(READ_CHUNK)
            except asyncssh.TerminalSizeChanged as change:
                self.resize(change.width, change.height, change.pixwidth, change.pixheight)
                continue
            except (asyncssh.BreakReceived, asyncssh.SignalReceived):
                continue
            except (asyncssh.Error, OSError, asyncio.IncompleteReadError):
                return
            if not data:
                return  # the client closed its side (or the connection dropped)
            self.last_input = time.monotonic()
            await self.write_to_app(data)

    async def write_to_app(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        while data:
            try:
                data = data[os.write(self.master, data):]
            except BlockingIOError:  # the app is not reading: wait (SSH's window holds the client back)
                ready = loop.create_future()
                loop.add_writer(self.master, lambda: ready.done() or ready.set_result(None))
                try:
                    await ready
                finally:
                    loop.remove_writer(self.master)
            except OSError:
                return

    async def idle(self) -> None:
        limit = self.server.limits.idle_seconds
        while True:
            left = self.last_input + limit - time.monotonic()
            if left <= 0:
                self.why = f"no key pressed for {limit:g} s: disconnected."
                return
            await asyncio.sleep(min(left, 30.0))

    async def disk(self) -> None:
        """Close the app once its key's directory passes its cap, or the server's disk its reserve."""
        home, data = self.server.players / key_id(self.key), self.server.data
        while True:
            await asyncio.sleep(ssh_quota.CHECK_EVERY)
            refusal = await asyncio.to_thread(self.server.limits.disk_refusal, home, data)
            if refusal is not None:
                self.why = refusal.replace("so the app does not run", "so the app is closed")
                return

    async def end(self) -> int:
        """End the app (hang-up first, as a terminal closing does, then a kill) and reap it."""
        try:
            return await self._end()
        except asyncio.CancelledError:  # the event loop is going away: kill and reap now, never leave it behind
            if self.pid:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:
                    os.waitpid(self.pid, 0)
                except ChildProcessError:
                    pass
                self.close_terminal()
            raise

    def close_terminal(self) -> None:
        if self.master >= 0:
            os.close(self.master)
            self.master = -1

    async def _end(self) -> int:
        for sig, wait in ((None, 0.0), (signal.SIGHUP, 3.0), (signal.SIGKILL, 5.0)):
            if sig is not None:
                try:
                    os.killpg(self.pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while True:
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    self.pid = 0  # reaped
                    return os.waitstatus_to_exitcode(status) & 0xFF
                if time.monotonic() >= deadline:
                    break
                await asyncio.sleep(0.05)
        return 1


async def start(bind: str, port: int, key_file: Path, data: Path, limits: Limits):
    """Listen; returns the acceptor (its port is the one bound) and the Server (close() it after)."""
    import logging

    logging.getLogger("asyncssh").setLevel(logging.WARNING)  # a flood must not flood the server's log too
    server = Server(data, limits)
    if limits.preload:
        server.preload()
    for stale in server.lobby.rglob("*"):  # a restarted server: nobody is in the lobby yet
        if stale.is_file():
            stale.unlink(missing_ok=True)
    acceptor = await asyncssh.listen(
        bind, port, server_factory=server.connection, process_factory=server.session,
        server_host_keys=[host_key(key_file)], encoding=None, line_editor=False,
        login_timeout=LOGIN_GRACE, keepalive_interval=KEEPALIVE, keepalive_count_max=4,
        agent_forwarding=False, x11_forwarding=False, allow_scp=True, sftp_factory=server.files,
        reuse_address=True,
    )
    return acceptor, server


def serve(bind: str, port: int, key_file: Path, data: Path, limits: Limits) -> int:
    """Run the server until SIGINT or SIGTERM; prints `ssh: listening on ADDR:P` when ready. Stopped by
    SIGINT (Ctrl+C), it raises KeyboardInterrupt once every app has ended, for the CLI to say so."""
    try:  # a flood of connections needs file descriptors: take all this process may have
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass

    async def main() -> None:
        acceptor, server = await start(bind, port, key_file, data, limits)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stopping(sig: int) -> None:
            stopped_by.append(sig)
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):  # before the line: who reads it may stop the server at once
            loop.add_signal_handler(sig, stopping, sig)
        print(f"ssh: listening on {bind}:{acceptor.get_port()}", flush=True)
        print(f"limits: {limits.describe()}", flush=True)
        await stop.wait()
        acceptor.close()
        await server.close()

    stopped_by: list[int] = []
    asyncio.run(main())
    if stopped_by[:1] == [signal.SIGINT]:
        raise KeyboardInterrupt
    return 0
