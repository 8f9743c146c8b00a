"""A table past one relay (net/reach/relay_link.py, net/reach/invite.py): its invite names a second
relay, and when the first dies for good — two real `dicetable relay` processes on 127.0.0.1, the
first SIGKILLed mid-game and never restarted — the host and every seat move the table to the
second within 30 s, and the game ends there with nothing lost: every transcript verifies and all
hold the same log."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from dicetable.core import registry
from dicetable.net.identity import Profile
from dicetable.net.reach.invite import BadInvite, Invite
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_link import MOVE_AFTER, invite_for_code
from dicetable.net.table.events import Dropped
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError, bot_chooser
from net_helpers import FAST, assert_verifies, dicetable, line_of, spawn, wait_until

GAME = registry.get("dicebreaker")


@pytest.fixture
def relays(tmp_path):
    """Two relay processes, each with its own key (relays share nothing)."""
    processes = [spawn(tmp_path, f"relay{n}", "relay", "--port", "0") for n in (1, 2)]
    try:
        yield processes, [line_of(process, "relay: ") for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait(10)


def test_an_invite_names_a_second_relay_and_reads_back_with_it():
    first, second = os.urandom(32), os.urandom(32)
    invite = Invite("127.0.0.1", 7070, first, os.urandom(16), owner=os.urandom(32), fallback=("::1", 7071, second))
    assert Invite.decode(invite.encode()) == invite
    moved = invite.moved()
    assert (moved.address, moved.port, moved.host_key) == ("::1", 7071, second)
    assert moved.fallback == ("127.0.0.1", 7070, first) and moved.moved() == invite
    one = Invite("127.0.0.1", 7070, first, os.urandom(16), owner=os.urandom(32))
    assert Invite.decode(one.encode()).fallback is None  # an invite without one reads as before
    with pytest.raises(BadInvite, match="second relay"):
        Invite("127.0.0.1", 7070, first, os.urandom(16), fallback=("::1", 7071, second))  # a direct invite has none


def test_a_host_names_at_most_two_relays(relays, tmp_path):
    _, lines = relays
    with pytest.raises(SessionError, match="at most two relays"):
        HostSession(Profile.generate("host"), "dicebreaker", 2, {}, relay=[*lines, lines[0]])


def test_the_first_relay_killed_for_good_the_table_moves_to_the_second_and_ends_there(relays, tmp_path):
    processes, lines = relays
    host = HostSession(Profile.generate("host"), "dicebreaker", 3, {}, timing=FAST, relay=lines,
                       transcript=tmp_path / "host.dtt")
    host.chooser = bot_chooser(GAME, "greedy", 1)
    host.own.think = 0.05
    invite = Invite.decode(host.open())
    second = RelayAddress.decode(lines[1])
    assert invite.fallback == (second.address, second.port, second.key)  # the invite carries the second relay
    hosting = threading.Thread(target=host.run, daemon=True)
    hosting.start()
    seats, results, said = [], {}, []
    for seed, name in ((2, "bob"), (3, "cleo")):
        peer = PeerSession(Profile.generate(name), invite.encode(), timing=FAST, transcript=tmp_path / f"{name}.dtt")
        peer.chooser = bot_chooser(GAME, "greedy", seed)
        peer.own.think = 0.05
        peer.on_event = lambda event, name=name: said.append((name, event))
        peer.connect()
        seats.append(peer)
        threading.Thread(target=lambda p=peer, n=name: results.setdefault(n, p.run()), daemon=True).start()
    wait_until(lambda: len(host.replica.log) > 12, timeout=30, what="a few moves through the first relay")
    assert host.replica.result is None, "the game ended before the relay could be killed: make it longer"
    processes[0].send_signal(signal.SIGKILL)  # the first relay dies for good: never restarted
    processes[0].wait(10)
    killed_at, length = time.monotonic(), len(host.replica.log)
    wait_until(lambda: all(len(peer.replica.log) > length for peer in seats), timeout=30,
               what="every seat following the table again, at the second relay")
    moved_in = time.monotonic() - killed_at
    assert MOVE_AFTER <= moved_in + 1.0 and moved_in < 30.0
    assert host.socket.moves == 1 and host.socket.relay == second
    assert all((peer.invite.port, peer.invite.host_key) == (second.port, second.key) for peer in seats)
    assert any(isinstance(event, Dropped) and "other relay" in event.said for _, event in said)
    for seat in (host.own, *(peer.own for peer in seats)):
        seat.think = 0  # the bots slowed down only so the kill came mid-game; the rest of a 3-seat game took 25 s
    wait_until(lambda: len(results) == 2, timeout=90, what="the game ending at the second relay")
    hosting.join(15)
    assert host.replica.result is not None and all(result == host.replica.result for result in results.values())
    assert_verifies(tmp_path / "host.dtt", tmp_path / "bob.dtt", tmp_path / "cleo.dtt")


def test_host_names_its_second_relay_and_a_seat_joining_by_code_learns_it(relays, tmp_path):
    """`dicetable host --relay A --second-relay B`: the invite names B, and the invite a short code
    stands for (agreed with the host through A) names it too, so a seat that joined by code can move."""
    _, lines = relays
    second = RelayAddress.decode(lines[1])
    host = spawn(tmp_path, "host", "host", "trice", "--relay", lines[0], "--second-relay", lines[1], "--bot", "greedy")
    try:
        invite = Invite.decode(line_of(host, "invite: "))
        code = line_of(host, "code: ")
        assert invite.fallback == (second.address, second.port, second.key)
        claimed = Invite.decode(invite_for_code(RelayAddress.decode(lines[0]), code, timeout=30))
        assert claimed == invite
    finally:
        host.kill()
        host.wait(10)
    bad = dicetable("host", "trice", "--relay", lines[0], "--second-relay", "nowhere:7070", "--bot", "greedy")
    assert bad.returncode == 2 and bad.stderr.strip().startswith("dicetable: bad second relay:") and len(bad.stderr.strip().splitlines()) == 1
    alone = dicetable("host", "trice", "--port", "0", "--second-relay", lines[1], "--bot", "greedy")
    assert alone.returncode == 2 and "--second-relay needs --relay" in alone.stderr
