"""`dicetable` processes, network namespaces and waits in this thread, shared by the tests (imported by
them; not a test module)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from contextlib import contextmanager
from pathlib import Path

import pytest

from dicetable.net.table import host_packets
from dicetable.net.log import wire
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.seat import Seat
from dicetable.net.log.transcript import TranscriptWriter, read
from dicetable.net.reach.transport import unpack

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).with_name("dicetable")  # the console script: the command a user types
NETNS = str(ROOT / "scripts" / "lan_netns.sh")
# Session clocks quick enough for tests to see drops and returns within a second.
FAST = Timing(heartbeat=0.1, drop_after=0.6, grace=30.0, reveal_deadline=30.0, connect_timeout=3.0)
# Clocks for tables where a seat runs out of time on purpose. The accused checks a claim by its own
# clock, which starts up to one delivery after the claimant's, so it lets a claim come `slack` early:
# min(heartbeat, deadline / 4) (net/table/deadlines.py). FAST's 0.1 s of slack is less than a busy machine
# can delay a delivery, and an honest clock then disputed a rightful claim: here it is half a second.
LATE = Timing(heartbeat=0.5, drop_after=3.0, grace=30.0, reveal_deadline=2.0, connect_timeout=3.0)


def wait_until(condition, timeout: float = 10.0, what="condition") -> None:
    """Block this thread until `condition()` holds (the app's Pilot has its own: tui_pilot.wait_until);
    `what` names it, or says it when called (what was still missing when the wait ran out)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")


def as_at_a_terminal() -> None:
    """Run in a child before it execs (Popen's `preexec_fn`): Ctrl+C (SIGINT) reaches it as it reaches
    a command typed at a terminal. pytest-xdist's workers ignore SIGINT, an ignored signal stays ignored
    across exec, and Python then leaves it ignored (as it must for `nohup` or `&`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(tmp_path: Path, who: str, *args: str) -> subprocess.Popen:
    """A `dicetable` process with its own profile directory (each player is a different person)."""
    env = {**os.environ, "DICETABLE_HOME": str(tmp_path / who)}
    return subprocess.Popen([str(COMMAND), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env, preexec_fn=as_at_a_terminal)


def dicetable(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`dicetable` run to its end as a user runs it, with the test's profile (conftest's `home`)."""
    return subprocess.run([str(COMMAND), *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def host_and_join(tmp_path: Path, host_args: tuple[str, ...], join_args: tuple[str, ...], timeout: float = 60):
    """`dicetable host ...` as alice, then `dicetable join INVITE ...` as bob, both run to their end
    (killed if they outlive the test): ((host, out, err), (joiner, out, err))."""
    host = spawn(tmp_path, "alice", "host", *host_args)
    joiner = None
    try:
        invite = read_invite(host)
        joiner = spawn(tmp_path, "bob", "join", invite, *join_args)
        out_j, err_j = joiner.communicate(timeout=timeout)
        out_h, err_h = host.communicate(timeout=30)
    finally:
        for process in (host, joiner):
            if process is not None and process.poll() is None:
                process.kill()
    return (host, out_h, err_h), (joiner, out_j, err_j)


def read_invite(process: subprocess.Popen) -> str:
    for line in process.stdout:
        if line.startswith("invite: "):
            return line.split()[1]
    raise AssertionError(f"no invite printed: {process.stderr.read()}")


def finish(process: subprocess.Popen, timeout: float = 30) -> tuple[int, str, str]:
    """Wait for a `dicetable` process: its exit code, stdout and stderr."""
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def assert_verifies(*paths) -> list[list[bytes]]:
    """Every seat's transcript verifies and all hold the same log; returns the logs."""
    from dicetable.net.log.verify import verify

    logs = []
    for path in paths:
        verdict = verify(path)
        assert verdict.valid, verdict.line()
        logs.append(read(path).frames)
    assert all(log == logs[0] for log in logs), "the peers' transcripts hold different logs"
    return logs


def before_receipts(frames: list[bytes]) -> list[bytes]:
    """A log's frames without the end receipts that follow a game's last record (PROTOCOL.md §5.13)."""
    from dicetable.net.log import wire

    end = len(frames)
    while end and wire.kind_of(frames[end - 1]) == "receipt":
        end -= 1
    return frames[:end]


def line_of(process, prefix: str, timeout: float = 15.0) -> str:
    """The rest of the next line `process` prints that starts with `prefix`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = process.stdout.readline()
        if line.startswith(prefix):
            return line[len(prefix):].strip()
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"no {prefix!r} line: {process.stderr.read() if process.poll() is not None else ''}")


def frames_in(path: Path) -> int:
    """Frames in a transcript another process is writing (-1 while it is not there yet)."""
    try:
        return len(read(path).frames)
    except Exception:  # not created yet, or its first bytes not written yet
        return -1


def cut_back(path: Path, keep: int) -> None:
    """What a crash can leave of a transcript: its first `keep` frames (a record is written whole, or
    is a torn tail that reading drops; the records of a batch not yet fsync'ed may all be lost)."""
    old = read(path)
    path.unlink()
    with TranscriptWriter.create(path, old.header) as writer:
        for frame in old.frames[:keep]:
            writer.append_frame(frame)


def last_line(out: str, prefix: str) -> str:
    found = [line for line in out.splitlines() if line.startswith(prefix)]
    assert found, f"no {prefix!r} line in {out!r}"
    return found[-1][len(prefix):].strip()


@contextmanager
def private_lan(count: int, tested: str):
    """Network namespaces PREFIX-1..`count` on a private bridge (eth0 = 10.231.0.k, see
    scripts/lan_netns.sh) and `run(k, home, *argv)` for `dicetable` (or `python=True`: Python)
    inside namespace k. Skips the test, saying what `tested` needs, without root or namespaces; at
    the end every process started is stopped and every namespace removed."""
    if os.geteuid() != 0:
        pytest.skip(f"{tested} inside network namespaces, which need root")
    prefix = f"dtt{os.getpid() % 100000}"
    made = subprocess.run([NETNS, "up", prefix, str(count)], capture_output=True, text=True)
    if made.returncode != 0:
        subprocess.run([NETNS, "down", prefix], capture_output=True)
        pytest.skip(f"cannot make network namespaces here: {made.stderr.strip()[:200]}")
    processes: list[subprocess.Popen] = []

    def run(k: int, home: Path, *argv: str, background=False, stdin=None, python=False, timeout=60):
        command = ["ip", "netns", "exec", f"{prefix}-{k}", sys.executable if python else str(COMMAND), *argv]
        env = {**os.environ, "DICETABLE_HOME": str(home), "PYTHONPATH": str(ROOT)}
        if background:
            p = subprocess.Popen(command, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            processes.append(p)
            return p
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)

    run.prefix = prefix
    try:
        yield run
    finally:
        for p in processes:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        subprocess.run([NETNS, "down", prefix], capture_output=True)


class Running:
    """A relay (net/reach/relay.py's RelayServer) served by its own thread until the test stops it."""

    def __init__(self, server):
        self.server = server
        self.thread = threading.Thread(target=server.run, daemon=True)
        self.thread.start()

    @property
    def line(self) -> str:
        return self.server.address().encode()

    def stop(self) -> None:
        self.server.stopped = True
        self.thread.join(5)


def host_link(invite) -> host_packets.HostLink:
    """What a joiner holding `invite` checks the host's packets with (net/table/host_packets.py)."""
    return host_packets.HostLink(invite.table_id, host_packets.host_box_public(invite))


def hello_body(profile, invite, link: host_packets.HostLink, nonce: bytes, seat: int = -1, proof: bytes | None = None) -> dict:
    """A hello as PeerSession.hello makes it (net/table/joiner.py), for tests that speak to the host by hand;
    `proof` replaces the real one."""
    box = link.box_for(nonce, profile.public_key)
    if proof is None:
        proof = profile.sign(wire.hello_bytes(invite.table_id, invite.host_key, nonce, profile.public_key, box))
    return {"seat": seat, "key": profile.public_key, "next": 0, "nonce": nonce, "proof": proof, "box": box}


def host_packet(link: host_packets.HostLink, data: bytes) -> tuple[str, dict]:
    """A packet from the host as a joiner reads it: a tagged one opened (it stays `tagged` if it does not open)."""
    op, body = unpack(data)
    return (link.open(body) or (op, body)) if op == "tagged" else (op, body)


def namespaces() -> set[str]:
    """This machine's network namespaces by name (the demos' tests check theirs are gone)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in out.stdout.splitlines() if line.strip()}


DEMO_SKIP = 77  # a demo script's exit code where what it needs cannot be made here (namespaces, NAT)


def run_demo(script: str, needs: str, timeout: float) -> tuple[str, set[str]]:
    """Run scripts/`script` as root (else skip: it needs `needs`): its stdout once it passed, and the
    namespaces there were before it (to check it removed its own)."""
    if os.geteuid() != 0:
        pytest.skip(f"the demo makes {needs}, which needs root")
    before = namespaces()
    root = Path(__file__).resolve().parent.parent
    demo = subprocess.run([str(root / "scripts" / script)], capture_output=True, text=True, timeout=timeout)
    if demo.returncode == DEMO_SKIP:
        pytest.skip(f"{script} cannot run here: {demo.stderr.strip()}")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    return demo.stdout, before


def in_thread(session) -> threading.Thread:
    """Run a host or peer session's loop in a daemon thread, as the app's worker does."""
    thread = threading.Thread(target=session.run, daemon=True)
    thread.start()
    _threads[session] = thread
    return thread


class RawSeat(Seat):
    """A seat that makes no move of its own: it sends the raw frames the test gives it (the `raw`
    command), and otherwise behaves as any seat."""

    def act(self) -> None:
        pass

    def handle_command(self, name, arg) -> None:
        if name == "raw":
            self.driver.submit(arg)
        else:
            super().handle_command(name, arg)


class RawSession(PeerSession):
    """A joiner whose seat is a RawSeat."""

    seat_type = RawSeat


_threads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> the thread `in_thread` gave it


def stop_all(*sessions, timeout: float = 30.0) -> None:
    """Stop the sessions and wait until their loops (started by `in_thread`) have ended: their
    transcripts are written and closed, ready to be read."""
    for session in sessions:
        session.stop()
    for session in sessions:
        thread = _threads.get(session)
        if thread is not None:
            thread.join(timeout)
            assert not thread.is_alive(), f"{type(session).__name__} did not stop within {timeout:g} s"
