"""No silent stall (issue 37, finding 5; net/table/stalls.py, PROTOCOL.md §10.6): a relay that carries a seat's
pings but drops its submissions, or carries the host's pongs but drops its entries to the seat, stops the
table; within 5 s of the stall the seat says so in one line, with what it can do, the host says it of the
seat, and both say when it clears. Real sessions and real sockets through a real relay (tests/misbehaving_relay.py);
the last test through real `dicetable host` / `join` processes."""

import re
import time

import pytest

from dicetable.net.identity import Profile
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.table.events import StallCleared, Stalled
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from misbehaving_relay import MisbehavingRelay, Misbehaviour
from net_helpers import Running, in_thread, line_of, spawn, stop_all, wait_until

WITHIN = 5.0 + 3.0  # the 5 s the issue allows, and slack for a busy machine
TALK = "are you still there? " * 6  # a chat line: a frame bigger than a ping, which the relay tells apart


@pytest.fixture
def relay():
    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0))
    yield running
    running.stop()


@pytest.fixture
def table(relay, tmp_path):
    """ann hosts a TRICE table through the relay and bob joins; neither moves (no bot), so only chat grows
    the log: (host, bob, {name: events heard})."""
    heard = {"ann": [], "bob": []}
    host = HostSession(Profile.generate("ann"), "trice", 2, relay=relay.line, on_event=heard["ann"].append,
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    bob = PeerSession(Profile.generate("bob"), invite, on_event=heard["bob"].append, transcript=tmp_path / "bob.dtt")
    bob.connect()
    in_thread(bob)
    wait_until(lambda: host.replica.phase == "playing" and len(bob.replica.log) == len(host.replica.log), 20,
               "the game under way")
    yield host, bob, heard
    stop_all(host, bob)


def told(events, kind, what: str) -> list:
    return [e for e in events if isinstance(e, kind) and e.what == what]


def test_a_seat_starved_of_entries_says_it_is_behind_and_the_host_says_it_of_the_seat(relay, table):
    host, bob, heard = table
    relay.server.behave(Misbehaviour(starve={1: "entries"}))
    began = time.monotonic()  # the stall begins with the next entry: the host's chat
    host.chat(TALK)
    wait_until(lambda: told(heard["bob"], Stalled, "behind") and told(heard["ann"], Stalled, "behind"),
               began + WITHIN - time.monotonic(), "both sides saying the stall")
    (mine,), (of_bob,) = told(heard["bob"], Stalled, "behind"), told(heard["ann"], Stalled, "behind")
    assert mine.seat == 1 and of_bob.seat == 1
    assert re.match(r"seat 0 \(ann\)'s log is \d log entr(y|ies) ahead of this seat's copy", mine.said)
    assert re.match(r"seat 1 \(bob\) is here \(its pings arrive\) but \d log entr(y|ies) behind the log", of_bob.said)
    for said in (mine.said, of_bob.said):
        assert "\n" not in said and "you can wait" in said and "or leave the table" in said and "dispute" in said
    relay.server.behave(Misbehaviour())  # the link carries again: the next ping fetches the entry
    wait_until(lambda: told(heard["bob"], StallCleared, "behind") and told(heard["ann"], StallCleared, "behind"),
               10, "both sides saying it cleared")
    assert bob.replica.log[-1].kind == "chat"
    assert len(told(heard["bob"], Stalled, "behind")) == 1 and len(told(heard["ann"], Stalled, "behind")) == 1
    assert not told(heard["bob"], Stalled, "unordered")  # its own frames were never the matter


def test_a_seat_whose_submissions_are_dropped_says_it_is_heard_but_not_ordered(relay, table):
    host, bob, heard = table
    relay.server.behave(Misbehaviour(starve={1: "submissions"}))
    began = time.monotonic()
    bob.chat(TALK)  # dropped on the way; its pings, and the host's pongs, still pass
    wait_until(lambda: told(heard["bob"], Stalled, "unordered"), began + WITHIN - time.monotonic(),
               "bob saying its move is not ordered")
    (said,) = [e.said for e in told(heard["bob"], Stalled, "unordered")]
    assert said.startswith("seat 0 (ann) answers this seat but has not taken what it sent ")
    assert "you can wait" in said and "or leave the table" in said
    relay.server.behave(Misbehaviour())
    wait_until(lambda: told(heard["bob"], StallCleared, "unordered"), 10, "bob saying it cleared")
    assert host.replica.log[-1].kind == "chat" and len(told(heard["bob"], Stalled, "unordered")) == 1


def test_the_command_line_says_the_stall_and_its_end(relay, tmp_path):
    """`dicetable host --relay` and `dicetable join` with bots: the relay starts dropping the host's entries to
    the joiner mid-game; both print a `stalled:` line within 5 s, and `unstalled:` once it carries them again."""
    host = spawn(tmp_path, "alice", "host", "dicebreaker", "--relay", relay.line, "--bind", "127.0.0.1",
                 "--bot", "greedy", "--seed", "1", "--think", "0.2", "--option", "target=9", "--name", "alice")
    joiner = None
    try:
        invite = line_of(host, "invite: ")
        joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "greedy", "--seed", "2", "--think", "0.2", "--name", "bob")
        line_of(joiner, "started", 30)
        relay.server.behave(Misbehaviour(starve={1: "entries"}))
        began = time.monotonic()  # the next move's entry, a fraction of a second away, is the stall's start
        said = line_of(joiner, "stalled: ", WITHIN)
        assert time.monotonic() - began < WITHIN and "ahead of this seat's copy" in said and "leave" in said
        assert "behind the log" in line_of(host, "stalled: ", began + WITHIN - time.monotonic())
        relay.server.behave(Misbehaviour())
        assert line_of(joiner, "unstalled: ", 10).startswith("this seat gets seat 0 (alice)'s log again")
    finally:
        for process in (host, joiner):
            if process is not None:
                process.kill()
                process.wait(10)


class Ahead(PeerSession):
    """A seat whose pings say its copy is longer than the host's (as after a host resumed from a cut
    transcript, its seats' longer copies not taken back yet): the host holds its submissions back."""

    ahead = False

    def to_orderer(self, op: str, body: dict) -> None:
        if op == "ping" and self.ahead:
            body = {**body, "next": body["next"] + 3}
        super().to_orderer(op, body)


def test_the_host_says_a_seat_whose_submissions_it_holds_back(relay, tmp_path):
    heard = []
    host = HostSession(Profile.generate("ann"), "trice", 2, relay=relay.line, on_event=heard.append,
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    bob = Ahead(Profile.generate("bob"), invite, transcript=tmp_path / "bob.dtt")
    bob.connect()
    in_thread(bob)
    try:
        wait_until(lambda: host.replica.phase == "playing" and host.acked.get(1) == len(host.replica.log), 20,
                   "the game under way")
        bob.ahead = True
        wait_until(lambda: host.acked.get(1, 0) > len(host.replica.log), 10, "bob's ping saying its copy is longer")
        bob.chat(TALK)
        began = time.monotonic()
        wait_until(lambda: told(heard, Stalled, "held"), began + WITHIN - time.monotonic(), "the host saying it")
        (said,) = [e.said for e in told(heard, Stalled, "held")]
        assert said.startswith("seat 1 (bob)'s moves cannot be ordered: they build on its copy of ") and "wait" in said
        bob.ahead = False
        wait_until(lambda: told(heard, StallCleared, "held"), 10, "the host saying it cleared")
        wait_until(lambda: host.replica.log[-1].kind == "chat", 10, "bob's chat line ordered")
    finally:
        stop_all(host, bob)
