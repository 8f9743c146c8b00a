"""The served apps' preloaded parent (`dicetable serve-ssh`): one process that has imported Textual
and the app once, and forks each SSH session's app from itself.

A fresh Python per session pays the imports again (a login's most of a second of CPU) and keeps its
own copy of every module and class (~30 MB each). Forked from this parent, an app starts at once and
shares those pages with the parent and every other app until it writes to them; `gc.freeze()` keeps
the collector from writing to every preloaded object (its header) and so unsharing them.

Why a process of its own rather than forking the server: the server runs an event loop, threads and
its host key; a child forked from it would carry all three. This one is started with a clean
environment from `python -m dicetable.tui.zygote FD`, holds no secret, runs no thread and no loop.
The server (`Zygote`) sends it, on a SOCK_SEQPACKET socket, one message per session: the app's
environment and resource limits, with the pseudo-terminal's slave end (SCM_RIGHTS). The parent forks
twice: the middle process forks the app and exits at once, so the app is re-parented to the server,
which has made itself the child subreaper (PR_SET_CHILD_SUBREAPER) — the server waits for, hangs up
and kills its apps exactly as for an app it started itself. The app then takes the terminal as its
own (a new session, the slave as controlling terminal and standard input, output and error), drops
to the session's limits, takes the session's environment and runs `run_app()` as `dicetable` does.

What stays shared. Before forking, the parent runs the app once, headless, to the lobby (`warm_up`,
in a home of its own thrown away after: the profile made there is a throwaway), so the modules the
lobby imports late, Textual's and Rich's caches and the specialised bytecode are the parent's; and
each CSS source is parsed once for all apps (`share_parsed_css`). Still, CPython writes a reference
count into every object it touches, so an app running the lobby unshares the parent's pages it
touches. Measured page by page (/proc/PID/pagemap, `scripts/bench_serve_ssh.py` as root), an app in
the lobby holds ~17 MB of pages copied from this parent and well under 1 MB of new ones: its own
objects fit in the parent's free blocks, so filling those before fork (tried) only moves them, and
the cost is the code it runs (code objects and constants counted, bytecode counters, caches
reordered), not what it keeps. Measured so, ~20 MB proportional per idle app with 30 in the lobby
against 33 MB for a fresh Python. Many of those touched pages hold
the same bytes in every app (a count raised and lowered again), so the parent opts itself and every
app into the kernel's same-page merging (PR_SET_MEMORY_MERGE, kept across fork): where the operator
runs KSM (`echo 1 > /sys/kernel/mm/ksm/run`) identical pages are shared again (~14 MB per app with
10, ~20 MB with 200); where KSM is off the opt-in costs nothing. Merging lets a process that can run
code time its own writes to learn whether another process holds a page; a served player runs no
code of their own on the host, only keys into the app.

The parent ends when the server does (its socket reaches end of file, or PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import atexit
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import subprocess
import sys

NAME = b"dt-zygote"  # the parent's name in `ps` (/proc/PID/comm); its apps take `dicetable`
MESSAGE = 65536  # the largest request: an environment and a few limits
PR_SET_PDEATHSIG, PR_SET_NAME, PR_SET_CHILD_SUBREAPER, PR_SET_MEMORY_MERGE = 1, 15, 36, 67


def _prctl(option: int, value) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux: no subreaper, so no zygote (the server execs each app)
        return False


# -- the server's side ---------------------------------------------------------------------------
class Zygote:
    """The server's handle on the preloaded parent: `spawn` an app on a terminal, `close` at the end."""

    def __init__(self, process: subprocess.Popen, sock: socket.socket) -> None:
        self.process = process
        self.sock = sock

    @classmethod
    def start(cls, env: dict[str, str]) -> Zygote | None:
        """Start the parent and wait until it has preloaded the app (a second or two); None when this
        system cannot re-parent its apps to the server, or the parent did not come up."""
        if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = subprocess.Popen([sys.executable, "-m", "dicetable.tui.zygote", str(theirs.fileno())],
                                       pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL)  # the server's output is its own lines
        finally:
            theirs.close()
        ours.settimeout(60)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        ours.settimeout(10)  # a fork takes milliseconds; a parent that does not answer has gone wrong
        if ready != b"ready":
            ours.close()
            process.kill()
            process.wait()
            return None
        return cls(process, ours)

    def spawn(self, terminal: int, env: dict[str, str], limits: list[tuple[int, int, int]]) -> int:
        """Fork an app on the pseudo-terminal slave `terminal`: its pid (a child of this process once
        it runs), or 0 when the parent has gone. Takes a few milliseconds (two forks)."""
        request = json.dumps({"env": env, "limits": limits}).encode()
        try:
            socket.send_fds(self.sock, [request], [terminal])
            answer = self.sock.recv(32)
        except OSError:
            answer = b""
        if not answer.isdigit():
            self.process.poll()  # a parent that died is reaped, not left a zombie
            return 0
        return int(answer)

    def close(self) -> None:
        self.sock.close()  # end of file: the parent leaves
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- the parent's side ---------------------------------------------------------------------------
def preload() -> None:
    """Import what a served app's first screens need, then keep it all out of the collector's way."""
    import importlib

    for module in ("dicetable.net.identity", "dicetable.tui.app", "dicetable.tui.screens.home_screen",
                   "dicetable.tui.screens.lobby_screen", "dicetable.tui.screens.too_small_screen",
                   "dicetable.tui.screens.welcome_screen", "textual.drivers.linux_driver",
                   "textual.scrollbar"):  # the lobby's table scrolls (else imported by each app)
        importlib.import_module(module)
    share_parsed_css()
    warm_up()
    gc.collect()
    gc.freeze()


def share_parsed_css() -> None:
    """Parse each CSS source once for every app forked from here, not once per app: Textual keeps
    what it parsed per app (Stylesheet._parse_cache, cleared when the app sets its variables at
    start); here it is kept per process, by source and variables, so the warm-up's rule sets are
    the parent's and every app reuses them. Textual never changes a rule set once parsed (its own
    cache hands out the same lists)."""
    from textual.css.stylesheet import Stylesheet

    parse_rules = Stylesheet._parse_rules
    parsed: dict[tuple, list] = {}

    def _parse_rules(self, css, read_from, is_default_rules=False, tie_breaker=0, scope=""):
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(sorted(self._variables.items())))
        rules = parsed.get(key)
        if rules is None:
            rules = parsed[key] = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
        return rules

    Stylesheet._parse_rules = _parse_rules


def warm_up() -> None:
    """Run the app once, headless, from its first screen to the lobby, in a home and lobby of its own
    thrown away after: the modules it imports on the way, the caches it fills (parsed CSS selectors,
    Rich's styles and cell widths) and its code's specialised bytecode are then the parent's, shared
    by every app, instead of each app's own copy."""
    import asyncio
    import tempfile

    from dicetable.tui.app import DiceTableApp
    from dicetable.tui.screens.lobby_screen import LobbyScreen

    kept = dict(os.environ)
    with tempfile.TemporaryDirectory() as home:
        os.environ.update(HOME=home, DICETABLE_HOME=home, DICETABLE_SERVED=os.path.join(home, "lobby"),
                          USER="warm-up")
        app = DiceTableApp(ask_name=True)

        async def visit() -> None:
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                await pilot.press("enter")  # the name offered
                for _ in range(200):
                    if isinstance(app.screen, LobbyScreen):
                        break
                    await pilot.pause(0.01)
                await pilot.pause(0.1)
                served = getattr(app, "served", None)
                if served is not None:
                    atexit.unregister(served.lobby.leave)
                    served.lobby.leave()

        try:
            asyncio.run(visit())
        except Exception:  # noqa: BLE001 — a warm-up that fails leaves less shared, nothing else
            pass
        finally:
            os.environ.clear()
            os.environ.update(kept)


def serve(sock: socket.socket) -> None:
    """Fork one app per request until the server closes its end."""
    while True:
        try:
            request, fds, _, _ = socket.recv_fds(sock, MESSAGE, 1)
        except OSError:
            return
        if not request:
            return  # the server has gone
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            sock.send(b"0")
            continue
        try:
            order = json.loads(request)
            pid = _fork_app(fds[0], sock, order["env"], order["limits"])
        except (ValueError, KeyError, TypeError, OSError):
            pid = 0
        finally:
            os.close(fds[0])
        try:
            sock.send(str(pid).encode())
        except OSError:  # the server has gone; the app it asked for ends with its terminal
            return


def _fork_app(terminal: int, sock: socket.socket, env: dict, limits: list) -> int:
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:  # the middle process: fork the app, tell its pid, leave (the app goes to the server)
        try:
            os.close(read)
            app = os.fork()
            if app == 0:
                os.close(write)
                _become_app(terminal, sock, env, limits)  # never returns
            os.write(write, str(app).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as told:
        pid = told.read()
    os.waitpid(middle, 0)  # once it is reaped, the app is the server's child
    return int(pid) if pid.isdigit() else 0


def _become_app(terminal: int, sock: socket.socket, env: dict, limits: list) -> None:
    """In the app's process: the terminal, the limits, the environment, then the app; never returns."""
    status = 1
    try:
        import fcntl
        import termios

        sock.close()
        _prctl(PR_SET_NAME, b"dicetable")
        os.setsid()
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(terminal, fd)
        os.closerange(3, 1 << 16)  # nothing of the parent's but the preloaded memory
        for what, soft, hard in limits:
            resource.setrlimit(what, (soft, hard))
        os.environ.clear()
        os.environ.update(env)
        sys.argv = ["dicetable"]  # as `dicetable` runs it (the parent's are its own); `random` was re-seeded at fork
        os.chdir(env.get("HOME", "/"))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # Standard streams on the terminal, as Python makes them at start for a terminal (Textual's
        # driver writes to sys.__stderr__)
        sys.stdin = sys.__stdin__ = open(0, "r", encoding="utf-8", closefd=False)
        sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False, buffering=1)
        sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace",
                                           closefd=False, buffering=1)
        from dicetable.tui.app import run_app

        try:
            status = run_app()
        except KeyboardInterrupt:
            from dicetable.tui.commands.args import INTERRUPTED

            status = INTERRUPTED
        finally:  # what a Python leaving normally runs (the lobby's goodbye), since os._exit runs none
            atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 — whatever happens, this process never returns into the parent's loop
        try:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(status if isinstance(status, int) else 1)


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the server killed: no parent left behind
    _prctl(PR_SET_NAME, NAME)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C at the server's terminal is the server's to meet
    _prctl(PR_SET_MEMORY_MERGE, 1)  # inherited by every app: see the module's note
    if os.getppid() == 1:
        return
    preload()
    import threading

    if threading.active_count() != 1:  # a thread would not be in the forked apps, its locks would
        return  # the server starts each app afresh instead
    sock.send(b"ready")
    serve(sock)


if __name__ == "__main__":
    main()
