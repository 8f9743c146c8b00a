"""A stranded seat (issues 16, 17): a joiner claimed in default while away hears the outcome in plain
words when it returns (the finished host stays open for it, within the grace), and a joiner whose host
is gone for good is told what happened and what it can do, never left waiting — real host and joiner
sessions on 127.0.0.1."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from dicetable.core import registry
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import Defaulted, Dropped, Failed, Lingering
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from net_helpers import frames_in, in_thread, read_invite, spawn, wait_until

TRICE = registry.get("trice")
LINGER = 3.0  # what a finished host waited for a joiner before this change (max(3 s, two heartbeats))


class Gone(Exception):
    """The joiner's program dies mid-game (its session is left as a kill leaves it)."""


def leaving_bot(seed: int, after: int):
    """A random bot that makes `after` moves, then dies when asked for the next: on its turn."""
    bot, made = bot_chooser(TRICE, "random", seed), []

    def choose(view):
        if len(made) == after:
            raise Gone()
        made.append(1)
        return bot(view)

    return choose


def run_caught(session, caught: list) -> threading.Thread:
    """The session's loop in a thread; whatever ends it (an exception) lands in `caught`."""

    def run():
        try:
            session.run()
        except Exception as error:  # noqa: BLE001 - the test reads it
            caught.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_a_joiner_claimed_in_default_while_away_is_told_the_outcome_on_its_return(tmp_path):
    timing = Timing(heartbeat=0.1, drop_after=0.4, grace=LINGER + 3.0, reveal_deadline=30.0, connect_timeout=3.0)
    alice, bob = Profile.generate("alice"), Profile.generate("bob")
    path = tmp_path / "bob.dtt"
    host_events = []
    host = HostSession(alice, "trice", 2, port=0, timing=timing, chooser=bot_chooser(TRICE, "random", 1),
                       on_event=host_events.append, transcript=tmp_path / "alice.dtt")
    invite = host.open()
    host_thread = in_thread(host)
    gone = []
    run_caught(PeerSession(bob, invite, timing=timing, chooser=leaving_bot(2, 2), transcript=path), gone).join(15)
    assert gone and isinstance(gone[0], Gone) and read(path).result is None
    wait_until(lambda: host.replica.result is not None, 15, "the host's claim of the game")
    assert "seat 1 in default" in host.replica.result.reason
    time.sleep(LINGER + 0.5)  # past the short wait a finished host used to give: it stays for the away seat
    assert any(isinstance(e, Lingering) and "seat 1 (bob), away" in e.said for e in host_events)
    events = []
    back = PeerSession(bob, resume=path, timing=timing, chooser=bot_chooser(TRICE, "random", 3), on_event=events.append)
    result = back.run()
    assert result is not None and result.winners == (0,)
    told = [e for e in events if isinstance(e, Defaulted)]
    assert len(told) == 1 and told[0].claimant == 0
    assert told[0].said.startswith("bob: alice claimed the game while you were away (since ")
    assert told[0].said.endswith(f" — you were in default (seat 1 dropped and did not return within {timing.grace:g} s); "
                                 "alice wins (seat 1 in default)"), told[0].said
    assert read(path).result is not None  # the transcript has the outcome: nothing left to resume
    assert verify(path).valid
    host_thread.join(3)
    assert not host_thread.is_alive(), "the host stays only until the away seat has caught up"


def test_a_host_that_never_went_away_is_not_waited_for_past_the_short_linger(tmp_path):
    """Both seats caught up at the end: the host leaves at once (no grace-long wait)."""
    timing = Timing(heartbeat=0.1, drop_after=0.6, grace=60.0, reveal_deadline=30.0, connect_timeout=3.0)
    events = []
    host = HostSession(Profile.generate("alice"), "trice", 2, port=0, timing=timing, on_event=events.append,
                       chooser=bot_chooser(TRICE, "random", 1), transcript=tmp_path / "alice.dtt")
    invite = host.open()
    thread = in_thread(host)
    peer = PeerSession(Profile.generate("bob"), invite, timing=timing, chooser=bot_chooser(TRICE, "random", 2),
                       transcript=tmp_path / "bob.dtt")
    assert peer.run() is not None
    thread.join(LINGER)
    assert not thread.is_alive() and not any(isinstance(e, Lingering) for e in events)


@pytest.mark.slow
def test_a_joiner_whose_host_is_killed_is_told_plainly_after_the_grace(tmp_path):
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "random", "--think", "0.15",
                 "--heartbeat", "0.1", "--grace", "1", "--transcript", str(tmp_path / "alice.dtt"))
    path = tmp_path / "bob.dtt"
    try:
        invite = read_invite(host)
        events, caught = [], []
        peer = PeerSession(Profile.generate("bob"), invite, chooser=bot_chooser(TRICE, "random", 2), transcript=path,
                           on_event=events.append)
        thread = run_caught(peer, caught)
        wait_until(lambda: frames_in(path) >= 7, 15, "moves in bob's transcript")
        host.send_signal(signal.SIGKILL)
        host.wait()
        killed = time.monotonic()
        thread.join(10)  # drop_after (1 s) + grace (1 s), with room for a busy machine
        assert not thread.is_alive(), "the joiner was left waiting"
    finally:
        if host.poll() is None:
            host.kill()
    assert time.monotonic() - killed >= 0.5  # not at once: after the grace, counted from the host's last word
    assert read(path).result is None
    assert any(isinstance(e, Dropped) and e.seat == 0 for e in events)
    assert len(caught) == 1 and isinstance(caught[0], SessionError)
    said = str(caught[0])
    assert said.startswith("the host has been unreachable since ") and "(more than 1 s)" in said
    assert said.endswith(f": the host has closed the table or is offline; your transcript is {path}; "
                         f"`dicetable verify {path}` checks it; you can make a claim when it returns (resume the game then)")
    assert [e.said for e in events if isinstance(e, Failed)] == [said]  # the app hears the same words
    verdict = verify(path)  # what it says of the transcript holds: every frame checks, the game is unfinished
    assert verdict.fault_kind == "unfinished" and verdict.record == len(read(path).frames), verdict.line()
    # Resuming while the host is still gone says the same, with where it dialled.
    again = PeerSession(Profile.generate("bob"), resume=path, timing=Timing(connect_timeout=1.0))
    with pytest.raises(SessionError) as refused:
        again.connect()
    port = again.invite.port
    assert str(refused.value) == (f"no table answered at 127.0.0.1:{port}: the host has closed the table or is "
                                  f"offline; your transcript is {path}; `dicetable verify {path}` checks it; "
                                  "you can make a claim when it returns (resume the game then)")
