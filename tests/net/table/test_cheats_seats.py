"""Seat squatting, performed through the real sessions over sockets on 127.0.0.1: a hello that holds
a free seat and never joins loses it after a short hold, the host sees who waits and can refuse a
key, a full table names who sits at it, and fresh keys from one address cannot take the seat again
and again (that squatter's connections leave from 127.0.0.2: tests/stranger.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dicetable.net.table.door import HOLD_COOLDOWN, HOLD_LAPSES_FREE
from dicetable.net.table.events import SeatHeld, SeatReleased
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.reach.relay import RelayServer
from dicetable.net.table.session import SessionError
from dicetable.net.reach.transport import curve_keypair
from dicetable.tui.commands.host import print_event
from net_helpers import FAST, Running, in_thread, stop_all, wait_until
from stranger import HoldLoop, second_source

ROOM = ("diceroom", {"rolls": 0})


class Squatter(PeerSession):
    """Holds the seat its hello got, and never sends the signed join that should follow."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._joined_sent = True  # as if its join had gone: it never will
        self.error: SessionError | None = None

    def run(self):
        try:
            return super().run()
        except SessionError as error:
            self.error = error


def seat_refused(profile: Profile, invite: str) -> str:
    """What a person joining with `profile` is told when the host gives no seat."""
    with pytest.raises(SessionError) as refused:
        PeerSession(profile, invite, timing=FAST).connect()
    return str(refused.value)


def events_of(events, kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def the_release(events):
    """The host's one `released` event. The host tells the held connection before it reports the
    release, so on a busy machine the squatter's thread may end first: wait for the report."""
    wait_until(lambda: events_of(events, SeatReleased), what="the host to report the release")
    [released] = events_of(events, SeatReleased)
    return released


def test_a_squatters_hold_runs_out_and_the_honest_joiner_takes_the_seat(capsys):
    events = []
    hold = 1.5  # long enough for bob to hear the table is full meanwhile, short for a test
    host = HostSession(Profile.generate("alice"), ROOM[0], 2, ROOM[1], timing=replace(FAST, seat_hold=hold),
                       on_event=events.append)
    invite = host.open()
    in_thread(host)
    squatter_profile = Profile.generate("mallory")
    squatter = Squatter(squatter_profile, invite, timing=FAST)
    thread = in_thread(squatter)
    bob = Profile.generate("bob")
    honest = None
    try:
        wait_until(lambda: events_of(events, SeatHeld), what="the host to see who waits")
        [waiting] = events_of(events, SeatHeld)
        assert waiting.seat == 1 and waiting.key == squatter_profile.public_key
        assert waiting.said == f"{squatter_profile.fingerprint} holds seat 1 for its join (at most {hold:g} s)"
        print_event(waiting)  # what `dicetable host` prints
        assert capsys.readouterr().out == f"waiting: {waiting.said}\n"
        # While the hold lasts the table is full, and says who sits at it.
        assert seat_refused(bob, invite).startswith(
            "the host did not seat us: the table is full: alice; seat 1 held for a joiner for "), events
        # No join comes: the hold runs out, the squatter is told so, and the seat is free again.
        thread.join(5)
        assert f"your hold on seat 1 ran out: no join came within {hold:g} s" in str(squatter.error)
        released = the_release(events)
        assert released.seat == 1 and released.key == squatter_profile.public_key
        assert released.said == f"{squatter_profile.fingerprint} did not join within {hold:g} s: seat 1 is free again"
        assert host.door.reserved == {} and host.replica.seats[1] is None
        honest = PeerSession(bob, invite, timing=FAST)
        in_thread(honest)
        wait_until(lambda: host.replica.phase == "playing", what="bob seated and the game started")
        assert host.replica.seats[1].key == bob.public_key and honest.seat == 1
        # The squatter's key gets no second hold; a late comer hears who plays.
        assert "your hold on seat 1 ran out" in seat_refused(squatter_profile, invite)
        assert seat_refused(Profile.generate("carol"), invite) == (
            "the host did not seat us: the game has already started and every seat is taken: alice, bob")
    finally:
        for session in (honest, squatter, host):
            if session is not None:
                session.stop()


def test_the_host_refuses_a_waiting_key_and_the_seat_goes_to_the_next_joiner():
    events = []
    host = HostSession(Profile.generate("alice"), ROOM[0], 3, ROOM[1], timing=FAST, on_event=events.append)
    invite = host.open()
    in_thread(host)
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST)
    in_thread(bob)
    wait_until(lambda: host.replica.seats[1] is not None, what="bob's join")
    squatter = Squatter(Profile.generate("mallory"), invite, timing=FAST)  # the default hold: 10 s
    thread = in_thread(squatter)
    carol = None
    try:
        wait_until(lambda: events_of(events, SeatHeld)[1:], what="the squatter waiting")
        waiting = events_of(events, SeatHeld)[-1]
        assert waiting.seat == 2 and waiting.key == squatter.profile.public_key
        assert seat_refused(Profile.generate("dave"), invite).startswith(
            "the host did not seat us: the table is full: alice, bob; seat 2 held for a joiner for ")
        host.refuse(waiting.key)
        thread.join(5)
        assert str(squatter.error) == "the host did not seat us: the host refused you a seat at this table"
        released = the_release(events)
        assert released.seat == 2 and released.said == f"the host refused {squatter.profile.fingerprint}: seat 2 is free again"
        carol = PeerSession(Profile.generate("carol"), invite, timing=FAST)
        in_thread(carol)
        wait_until(lambda: host.replica.phase == "playing", what="carol seated at once")
        assert [info.name for info in host.replica.seats] == ["alice", "bob", "carol"]
        assert "the host refused you a seat" in seat_refused(squatter.profile, invite)
    finally:
        for session in (carol, squatter, bob, host):
            if session is not None:
                session.stop()


@pytest.mark.parametrize("through", ["direct", "relay"])
def test_fresh_keys_from_one_address_cannot_hold_a_seat_in_a_loop(through):
    """Mallory, at 127.0.0.2, takes the free seat with a hello and a fresh key, never joins, and takes
    it again the moment each hold runs out. The host counts the holds that lapsed per address (the
    connection's own, or the relay's tag of it): after the first, Mallory's address waits a minute,
    then longer, and the host is told; Bob, at 127.0.0.1, is seated meanwhile."""
    second_source()
    hold = 0.5
    relay = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0)) if through == "relay" else None
    events = []
    host = HostSession(Profile.generate("alice"), ROOM[0], 2, ROOM[1], timing=replace(FAST, seat_hold=hold),
                       on_event=events.append, relay=relay.line if relay else None)
    bob = None
    try:
        invite = host.open()
        in_thread(host)
        from dicetable.net.reach.invite import Invite

        squatter = HoldLoop(Invite.decode(invite)).run(seconds=12 * hold)
        assert squatter.holds == HOLD_LAPSES_FREE + 1, (squatter.holds, squatter.refusals)  # not one hold every 0.5 s
        wait = f"for {HOLD_COOLDOWN:g} s more"
        assert squatter.refusals and all(
            r.startswith("someone at your address held a seat at this table and did not join: no seat for your "
                         "address for ") for r in squatter.refusals), squatter.refusals
        assert squatter.refusals[0].endswith(wait) or squatter.refusals[0].endswith(f"for {HOLD_COOLDOWN - 1:g} s more")
        released = events_of(events, SeatReleased)
        assert len(released) == HOLD_LAPSES_FREE + 1
        assert released[-1].said.endswith(f"seat 1 is free again (its address has let holds lapse before: "
                                          f"it gets no seat for {HOLD_COOLDOWN:g} s)"), released[-1].said
        bob = PeerSession(Profile.generate("bob"), invite, timing=FAST)
        in_thread(bob)
        wait_until(lambda: host.replica.phase == "playing", what="bob seated while mallory's address waits")
        assert [info.name for info in host.replica.seats] == ["alice", "bob"]
    finally:
        stop_all(*(s for s in (bob, host) if s is not None))
        if relay is not None:
            relay.stop()
