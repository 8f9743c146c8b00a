"""An idle host is present at the relay while its connection is open, and sends it nothing (PROTOCOL.md
§12.4, net/reach/relay_presence.py): a real `dicetable host --relay` process, a real relay on 127.0.0.1.
Waiting with a short code, it fetches its mailbox only when the relay rings (PROTOCOL.md §13.1).
A host frozen (SIGSTOP: its heartbeats stop, no FIN) and a host killed (SIGKILL) are each dropped from
the relay's table within HOST_AWAY; a frozen one that wakes serves its table again."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from dicetable.net.identity import Profile
from dicetable.net.reach.relay import CONNECTION_IDLE, HOST_AWAY, RelayServer
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_key import load_relay_key
from dicetable.net.reach.relay_link import RelayClient, RelayHostSocket
from dicetable.net.reach.transport import curve_keypair
from net_helpers import Running, read_invite, spawn, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals to a child process")


class Counting(RelayServer):
    """A relay that counts the packets each connection sent it, and its own sweeps (one a second)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.packets: dict[bytes, int] = {}
        self.sweeps = 0

    def handle(self, peer, data, address=""):
        self.packets[peer] = self.packets.get(peer, 0) + 1
        super().handle(peer, data, address)

    def sweep(self, now):
        self.sweeps += 1
        super().sweep(now)


@pytest.fixture
def relay_server():
    running = Running(Counting(curve_keypair()[1], "127.0.0.1", 0))
    yield running.server, running.line
    running.stop()


def served(relay: Counting) -> tuple[bytes, bytes] | None:
    """(table, its host's connection) once the relay has one served table."""
    present = [(table, entry.host) for table, entry in list(relay.tables.items()) if entry.host is not None]
    return present[0] if len(present) == 1 else None


def dropped_within(relay: Counting, table: bytes, what: str) -> float:
    """Seconds until the relay's table has no host (failing past three times the documented bound)."""
    start = time.monotonic()
    wait_until(lambda: relay.tables[table].host is None, 3 * HOST_AWAY, f"the relay to drop the {what} host")
    return time.monotonic() - start


@pytest.mark.slow
def test_an_idle_host_sends_the_relay_nothing_and_a_frozen_or_killed_one_is_dropped_within_host_away(tmp_path):
    running = Running(Counting(curve_keypair()[1], "127.0.0.1", 0))
    relay = running.server
    host = spawn(tmp_path, "ann", "host", "trice", "--relay", running.line, "--bot", "greedy")
    try:
        read_invite(host)
        wait_until(lambda: served(relay) is not None, 20, "the host to serve its table")
        table, connection = served(relay)
        wait_until(lambda: any(box.ring for box in list(relay.boxes.boxes.values())), 20,
                   "the host's code, and its first fetch (which tells the relay where to ring)")
        sent, sweeps = relay.packets[connection], relay.sweeps
        wait_until(lambda: relay.sweeps >= sweeps + 5, 20, "five more of the relay's sweeps (a second each)")
        assert relay.packets[connection] == sent, "an idle host sent the relay packets (keepalives?)"
        assert relay._host_present(relay.tables[table], time.monotonic())

        host.send_signal(signal.SIGSTOP)  # frozen: its heartbeats stop and nothing closes the connection
        took = dropped_within(relay, table, "frozen")
        assert took < HOST_AWAY, f"a silent host stayed present {took:.1f} s (HOST_AWAY is {HOST_AWAY:g} s)"
        assert connection not in relay.connections
        host.send_signal(signal.SIGCONT)  # it wakes, finds its connection closed, and serves again on a new one
        wait_until(lambda: served(relay) is not None and served(relay)[1] != connection, 20, "the host to serve again")

        host.send_signal(signal.SIGKILL)
        took = dropped_within(relay, table, "killed")
        assert took < HOST_AWAY, f"a killed host stayed present {took:.1f} s"
        assert not relay.connections  # the killed host's connection is forgotten with it, not left to CONNECTION_IDLE
    finally:
        if host.poll() is None:
            host.send_signal(signal.SIGCONT)
            host.kill()
        host.wait(10)
        running.stop()


def test_hosts_that_close_are_dropped_and_the_next_on_their_descriptor_is_kept(relay_server):
    """Hosts one after another on real RelayHostSockets, each closed before the next serves: the relay
    drops each closed one (it hears the closing, net/reach/relay_presence.py), and the next connection,
    which the kernel gives the closed one's descriptor number, is present and stays so over the sweeps."""
    relay, line = relay_server
    address = RelayAddress.decode(line)
    seen_fds, tables = [], []
    for k in range(8):  # until a host got a descriptor a closed one had (the kernel hands out the lowest free)
        table = os.urandom(16)
        host = RelayHostSocket(Profile.generate(f"host{k}"), address, table, timeout=5.0)
        entry = relay.tables[table]
        wait_until(lambda: entry.host in relay.presence.fds, 10, "the relay to tie the host's descriptor")
        seen_fds.append(relay.presence.fds[entry.host])
        assert all(relay.tables[t].host is None for t in tables), "a closed host is still present"
        sweeps = relay.sweeps
        wait_until(lambda: relay.sweeps >= sweeps + 1, 10, "one of the relay's sweeps")
        assert relay._host_present(entry, time.monotonic())  # silent, and open: present
        tables.append(table)
        host.close()
        wait_until(lambda: entry.host is None, HOST_AWAY, "the relay to drop the closed host")
        if seen_fds[-1] in seen_fds[:-1]:
            break
    assert len(set(seen_fds)) < len(seen_fds), f"no descriptor was reused ({seen_fds}): the case was not met"


def test_a_silent_host_outlives_connection_idle_and_a_silent_stranger_does_not():
    """The relay's clock jumps past CONNECTION_IDLE: the serving host, silent all along, is kept (its
    connection is open); a connection that serves nothing and said one thing is forgotten."""
    offset = [0.0]
    running = Running(Counting(curve_keypair()[1], "127.0.0.1", 0, clock=lambda: time.monotonic() + offset[0]))
    relay, address = running.server, RelayAddress.decode(running.line)
    table = os.urandom(16)
    host = RelayHostSocket(Profile.generate("ann"), address, table, timeout=5.0)
    stranger = RelayClient(address, timeout=5.0)
    try:
        stranger.send("mb_fetch", {"nameplate": 1, "side": bytes(16), "after": 0})  # any packet: it is known now
        assert stranger.recv(5.0) is not None
        assert len(relay.connections) == 2
        offset[0] += CONNECTION_IDLE + 1
        sweeps = relay.sweeps
        wait_until(lambda: relay.sweeps >= sweeps + 2, 10, "two of the relay's sweeps")
        assert list(relay.connections) == [relay.tables[table].host]
        assert relay._host_present(relay.tables[table], relay.clock())
    finally:
        stranger.close()
        host.close()
        running.stop()


def test_a_host_served_on_a_new_connection_is_told_to_fetch_its_mail_again(tmp_path):
    """The relay restarts: the host's link serves the table on a new connection, and tells its mailbox
    user to fetch (a ring for its code would have gone to the old connection, PROTOCOL.md §13.1)."""
    key_file = tmp_path / "relay_key"
    first = Running(RelayServer(load_relay_key(key_file), "127.0.0.1", 0))
    host = RelayHostSocket(Profile.generate("ann"), RelayAddress.decode(first.line), os.urandom(16), timeout=5.0)
    rings = []
    host.on_mail = lambda op, body: rings.append((op, body))
    again = None
    try:
        first.stop()
        again = Running(RelayServer(load_relay_key(key_file), "127.0.0.1", first.server.port))
        wait_until(lambda: host.recv(0.05) is None and host.link.renewals > 0 and host.serving, 20,
                   "the host to serve its table on a new connection")
        assert rings == [("mb_ring", {"nameplate": None})]
    finally:
        host.close()
        if again is not None:
            again.stop()
