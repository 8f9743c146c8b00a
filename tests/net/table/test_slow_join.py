"""Joining over a slow link (issue 37, PROTOCOL.md §3.4): the handshake's clocks count the link's time,
not only the person's. Through the real relay (tests/misbehaving_relay.py, a subclass of
net/reach/relay.py's RelayServer) holding every packet it carries, with the product's default clocks:
a host still opens its table there, a joiner is still seated, and its seat is still held until its
join, which comes a round trip after its hello."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from dicetable.net.identity import Profile
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import SeatReleased
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError
from misbehaving_relay import MisbehavingRelay, Misbehaviour
from net_helpers import Running, in_thread, stop_all, wait_until


@pytest.fixture
def relay():
    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
    yield running
    running.stop()


def joined(host, seat: int) -> bool:
    return host.replica.seats[seat] is not None if len(host.replica.seats) > seat else False


def open_host(relay, tmp_path, timing: Timing) -> HostSession:
    host = HostSession(Profile.generate("ann"), "dicebreaker", 2, {"mode": "battle", "target": 3}, timing=timing,
                       relay=relay.line, transcript=tmp_path / "ann.dtt")
    return host


@pytest.mark.slow
def test_a_joiner_is_seated_through_a_relay_that_holds_every_packet_two_seconds(relay, tmp_path):
    """ping → who → hello → welcome is two round trips of 4 s: past the default connect_timeout of 5 s,
    which on the old code ended the connect with 'did not seat us within 5 s'."""
    host = open_host(relay, tmp_path, Timing())
    invite = host.open()
    in_thread(host)
    relay.server.behave(Misbehaviour(delay=2.0))
    peer = PeerSession(Profile.generate("bob"), invite, timing=Timing(), transcript=tmp_path / "bob.dtt")
    peer.connect()
    assert peer.welcomed and peer.seat == 1
    in_thread(peer)
    wait_until(lambda: joined(host, 1) and joined(peer, 1), 30, "bob's join in both copies")
    stop_all(peer, host)


@pytest.mark.slow
def test_a_host_opens_its_table_at_a_relay_that_holds_every_packet_three_seconds(relay, tmp_path):
    """relay_hello → relay_who → serve → serving is two round trips of 3 s: past connect_timeout's 5 s."""
    relay.server.behave(Misbehaviour(delay=3.0))
    host = open_host(relay, tmp_path, Timing())
    invite = host.open()
    assert invite.startswith("dr")
    host.close()


@pytest.mark.slow
def test_a_seat_hold_lasts_the_joiners_round_trip(relay, tmp_path):
    """The join follows its hello by one round trip (welcome out, join back: 3 s here). A host whose
    clocks say a holder silent for 2 × drop_after (2 s) goes, and whose hold is 2.5 s, still keeps the
    seat: it measured the joiner's round trip (its `who` to the hello) and adds it."""
    timing = replace(Timing(), drop_after=1.0, seat_hold=2.5)
    host = open_host(relay, tmp_path, timing)
    released = []
    host.on_event = lambda event: released.append(event) if isinstance(event, SeatReleased) else None
    invite = host.open()
    in_thread(host)
    relay.server.behave(Misbehaviour(delay=1.5))
    peer = PeerSession(Profile.generate("bob"), invite, timing=Timing(), transcript=tmp_path / "bob.dtt")
    peer.connect()
    in_thread(peer)
    wait_until(lambda: joined(host, 1) or released, 30, "bob's join, or his hold released")
    assert not released, released[0].said
    assert joined(host, 1)
    stop_all(peer, host)


def test_a_joiner_whose_host_never_answers_still_gives_up_on_the_persons_clock(relay, tmp_path):
    """The link's time is added only for exchanges it showed: a relay that carries nothing of this
    joiner's to the host (it is cut) ends the connect after connect_timeout, with one clear line."""
    host = open_host(relay, tmp_path, Timing())
    invite = host.open()
    in_thread(host)
    relay.server.behave(Misbehaviour(starve={1: "all"}))
    peer = PeerSession(Profile.generate("bob"), invite, timing=Timing(connect_timeout=2.0), transcript=tmp_path / "bob.dtt")
    started = time.monotonic()
    with pytest.raises(SessionError, match=r"^the host at 127\.0\.0\.1:\d+ did not seat us within 2(\.\d)? s"):
        peer.connect()
    assert time.monotonic() - started < 6
    assert relay.server.counts["starved"] > 0
    stop_all(host)
