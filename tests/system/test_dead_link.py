"""A link that dies in silence (net/reach/transport.py's ZMTP heartbeats), between real `dicetable host`
and `dicetable join` processes in network namespaces on a private bridge (scripts/lan_netns.sh).

The joiner's cable is pulled from the bridge (its port leaves the bridge: no FIN, no RST, no carrier
change) and its address changes meanwhile, as when a laptop switches Wi-Fi: the old connection can
never work again, so only a transport that notices the dead link, closes it and dials anew brings
the seat back. The namespaces need root, so these tests are skipped with the reason elsewhere.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from net_helpers import dicetable, private_lan

HOST_IP, OLD_IP, NEW_IP = "10.231.0.1", "10.231.0.2", "10.231.0.3"  # lan_netns.sh's eth0 of namespaces 1 and 2
HOLD = 2.0  # seconds the cable stays out after both ends noticed
NOTICE = 10.0  # seconds: heartbeat 1 s + timeout 5 s (net/reach/transport.py), with room for a busy machine


class Output:
    """A process's output lines, read by a thread so a test can wait for one with a timeout."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process, self.lines = process, []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, prefix: str, timeout: float, after: int = 0) -> int:
        """The index of the first line from `after` on that starts with `prefix`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, line in enumerate(self.lines[after:], after):
                if line.startswith(prefix):
                    return i
            time.sleep(0.05)
        raise AssertionError(f"no {prefix!r} line within {timeout:g} s; saw: {self.lines}")


@pytest.fixture
def lan():
    """Namespaces PREFIX-1 and PREFIX-2 on a private bridge (net_helpers.private_lan)."""
    if shutil.which("ss") is None:
        pytest.skip("dead links are watched with ss (iproute2), which is not installed")
    with private_lan(2, "dead links are tested") as run:

        def started(k: int, home: Path, *argv: str) -> subprocess.Popen:
            return run(k, home, *argv, background=True)

        started.prefix = run.prefix
        yield started


def ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True)


def established(ns: str, *where: str) -> list[str]:
    """Established TCP connections in namespace `ns` matching ss's filter `where`."""
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Htn", "state", "established", *where],
                         capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def gone_within(timeout: float, ns: str, *where: str) -> float:
    """Seconds until no connection in `ns` matches `where` (fails after `timeout`)."""
    start = time.monotonic()
    while established(ns, *where):
        assert time.monotonic() - start < timeout, f"still established after {timeout:g} s in {ns}: {established(ns, *where)}"
        time.sleep(0.1)
    return time.monotonic() - start


@pytest.mark.slow
def test_a_silently_dead_link_is_noticed_and_the_joiner_comes_back(lan, tmp_path):
    host_ns, joiner_ns, bridge_ns = f"{lan.prefix}-1", f"{lan.prefix}-2", f"{lan.prefix}-br"
    hosting = Output(lan(1, tmp_path / "host", "host", "trice", "--port", "0", "--bind", HOST_IP, "--bot", "random",
                         "--think", "0.3", "--transcript", str(tmp_path / "host.dtt")))
    invite = hosting.lines[hosting.wait_for("invite: ", 20)].split()[1]
    joining = Output(lan(2, tmp_path / "joiner", "join", invite, "--bot", "random", "--think", "0.3",
                         "--transcript", str(tmp_path / "joiner.dtt"), "--timeout", "20"))
    hosting.wait_for("started", 20)
    assert len(established(host_ns, "dst", OLD_IP)) == 1

    # Pull the cable: the joiner's bridge port leaves the bridge (both stay up: nothing is told),
    # and the joiner's address changes, so its old connection is dead for good. Its neighbour entry
    # for the host is pinned, as for a router's: frames keep leaving, and no failed ARP reports the
    # host unreachable, so even its new dials vanish in silence.
    mac = subprocess.run(["ip", "-n", host_ns, "-br", "link", "show", "eth0"], capture_output=True, text=True,
                         check=True).stdout.split()[2]
    ip("-n", joiner_ns, "neigh", "replace", HOST_IP, "lladdr", mac, "dev", "eth0", "nud", "permanent")
    ip("-n", bridge_ns, "link", "set", "v2", "nomaster")
    ip("-n", joiner_ns, "addr", "del", f"{OLD_IP}/24", "dev", "eth0")
    ip("-n", joiner_ns, "addr", "add", f"{NEW_IP}/24", "dev", "eth0")
    cut = len(hosting.lines)
    try:
        # Both ends' heartbeats close the dead connection: the host frees the pipe, the joiner
        # renews its socket and keeps dialling into the void.
        host_noticed = gone_within(NOTICE, host_ns, "dst", OLD_IP)
        joiner_noticed = gone_within(NOTICE, joiner_ns, "src", OLD_IP)
        hosting.wait_for("dropped: seat 1", NOTICE, after=cut)
        assert joining.process.poll() is None and hosting.process.poll() is None
        time.sleep(HOLD)  # the renewed socket's dials get no answer either
    finally:
        ip("-n", bridge_ns, "link", "set", "v2", "master", "br0")  # the cable is back, on the new network
    back = time.monotonic()

    # The renewed socket's next dial gets through; the seat proves itself again with a hello and
    # catches up by log index, and the game plays on to the end.
    hosting.wait_for("returned: seat 1", 15, after=cut)
    returned = time.monotonic() - back
    joining.wait_for("returned: seat 0", 15)  # the joiner, too, saw the host go and come back
    assert hosting.process.wait(60) == 0, hosting.lines
    assert joining.process.wait(30) == 0, joining.lines
    result = hosting.lines[hosting.wait_for("result: ", 1)]
    assert joining.lines[joining.wait_for("result: ", 1)] == result
    for name in ("host.dtt", "joiner.dtt"):
        verified = dicetable("verify", str(tmp_path / name))
        assert verified.returncode == 0 and "valid: trice" in verified.stdout, verified.stdout + verified.stderr
    print(f"dead link noticed by the host in {host_noticed:.1f} s, by the joiner {joiner_noticed:.1f} s later; "
          f"back {returned:.1f} s after the link was")
