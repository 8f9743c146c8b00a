"""A host that comes back takes back what the seats hold beyond its copy (issue 16, net/table/host.py
`reclaim`), over real sockets on 127.0.0.1 and real transcripts: a direct host whose crash lost
entries it had relayed gets them back from a seat, byte for byte; a seat that offers a "longer copy"
of forged, reordered or foreign frames is refused and named, and none of them enters the log. The
double failure through a relay (host, then its successor): tests/net/table/test_succession.py."""

from __future__ import annotations

import signal
import time

import pytest

from dicetable.core import registry
from dicetable.net.table import succession
from dicetable.net.log import wire
from dicetable.net.table.events import Dropped, Refused
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import bot_chooser
from dicetable.net.reach.transport import PeerSocket
from dicetable.net.log.verify import compare, verify
from dicetable.net.log.transcript import read
from net_helpers import (FAST, assert_verifies, cut_back, finish, frames_in, in_thread, last_line, read_invite,
                         spawn, wait_until)

ROOM = registry.get("diceroom")
LOST = 3  # entries the host's crash takes from its transcript (more than its last batch: the worst case)


@pytest.mark.slow
def test_a_host_whose_crash_lost_entries_it_relayed_takes_them_back_from_its_seat(tmp_path):
    alice, bob = tmp_path / "alice.dtt", tmp_path / "bob.dtt"
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "random", "--think", "0.12",
                 "--heartbeat", "0.1", "--transcript", str(alice))
    processes = [host]
    try:
        invite = read_invite(host)
        joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--think", "0.12", "--heartbeat", "0.1",
                       "--transcript", str(bob))
        processes.append(joiner)
        wait_until(lambda: frames_in(alice) >= 10, 15, "moves in alice's transcript")
        host.send_signal(signal.SIGKILL)
        host.wait()
        before = read(alice).frames
        end = time.monotonic() + 3  # the seat's own transcript catches up with what it was relayed
        while frames_in(bob) < len(before) and time.monotonic() < end:
            time.sleep(0.02)
        held = min(len(before), frames_in(bob))  # entries the host relayed that the seat holds on disk
        assert read(alice).result is None, "the game ended before the crash: nothing to resume"
        cut_back(alice, held - LOST)  # the host's crash lost entries it had relayed
        again = spawn(tmp_path, "alice", "host", "--resume", str(alice), "--bot", "random", "--heartbeat", "0.1")
        processes.append(again)
        assert read_invite(again) == invite
        code_h, out_h, err_h = finish(again)
        code_j, out_j, err_j = finish(joiner)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert code_h == 0, err_h
    assert code_j == 0, err_j
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    logs = assert_verifies(alice, bob)
    assert logs[0][:held] == before[:held]  # the lost entries came back as the seat held them, nothing in their place


def lie(kind: str, offered: list):
    """A seat's answer to `ask` that offers its longer copy falsified (`kind`), in place of
    `succession.give`; what it offered goes to `offered`."""

    def give(peer, body):
        replica, start = peer.replica, body["next"]
        true = [record.frame for record in replica.log[start:]]
        head = wire.Link(start, replica.head_at(start))  # the place the lie must fit
        if kind == "forged":  # a chat "of the host seat's" signed by this seat's key
            frames = [wire.make_frame(peer.profile, replica.table, 0, replica.next_seq(0), "chat",
                                      wire.chat_body("the host said this"), head)]
        elif kind == "reordered":
            frames = [true[1], true[0], *true[2:]]
        else:  # a frame of this seat's, signed for another table
            frames = [wire.make_frame(peer.profile, bytes(16), peer.seat, replica.next_seq(peer.seat), "chat",
                                      wire.chat_body("from elsewhere"), head)]
        offered.extend(frames)
        peer.to_orderer("give", {"start": start, "frames": frames})

    return give


class CrashedRoom:
    """A dice room whose host stopped after a few rolls and whose transcript then lost its last LOST
    entries (what a machine crash can take), while seat 1 plays on in its thread holding them."""

    def __init__(self, tmp_path):
        self.path, self.profile = tmp_path / "h.dtt", Profile.generate("host")
        host = HostSession(self.profile, "diceroom", 2, {"expr": "2d6", "rolls": 400}, timing=FAST,
                           transcript=self.path, chooser=bot_chooser(ROOM, "roller", 0), think=0.02)
        invite = host.open()
        thread = in_thread(host)
        self.bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt",
                               chooser=bot_chooser(ROOM, "roller", 1), think=0.02)
        self.bob.connect()
        self.threads, self.back = [in_thread(self.bob)], None
        wait_until(lambda: len(host.replica.log) > 12, 20, "a few rolls")
        host.stop()
        thread.join(10)
        wait_until(lambda: len(self.bob.replica.log) >= len(read(self.path).frames), 10,
                   "the seat to hold all the host relayed")
        self.held = [record.frame for record in self.bob.replica.log[:len(read(self.path).frames)]]
        self.kept = len(self.held) - LOST
        cut_back(self.path, self.kept)
        self.events = []

    def resume(self) -> HostSession:
        self.back = HostSession(self.profile, resume=self.path, timing=FAST, on_event=self.events.append,
                                chooser=bot_chooser(ROOM, "roller", 2), think=0.02)
        self.back.open()
        self.threads.append(in_thread(self.back))
        return self.back

    def close(self) -> None:
        for session in (self.back, self.bob):
            if session is not None:
                session.stop()
        for thread in self.threads:
            thread.join(10)


@pytest.mark.slow
def test_a_seat_that_redials_after_the_drop_time_still_gives_back_what_the_host_lost(tmp_path, monkeypatch):
    """The resumed host counts the seat dropped before it is back, and still waits for its copy (up to
    the grace) before it orders anything: the lost entries come back as the seat holds them."""
    room = CrashedRoom(tmp_path)
    try:
        send, quiet_until = PeerSocket.send, time.monotonic() + 4 * FAST.drop_after

        def slow_redial(self, op, body=None):  # the seat's packets do not get through for a while
            if time.monotonic() >= quiet_until:
                send(self, op, body)

        monkeypatch.setattr(PeerSocket, "send", slow_redial)
        back = room.resume()
        back.chat("back at the table")  # a frame of the host's own, different from any the seat holds
        wait_until(lambda: len(back.replica.log) > len(room.held) + 4, 20, "the table to go on")
        assert [r.kind for r in back.replica.log[len(room.held):]].count("chat") == 1  # after what it took back
        assert [e.seat for e in room.events if isinstance(e, Dropped)] == [1]  # dropped, and waited for all the same
        assert [record.frame for record in back.replica.log[:len(room.held)]] == room.held
        assert room.bob.socket is not None  # no fork: the seat plays on
    finally:
        room.close()
    copies = [tmp_path / "h.dtt", tmp_path / "bob.dtt"]
    assert all(verify(path).fault_kind == "unfinished" for path in copies)  # stopped mid-game, nothing else wrong
    assert compare([read(path) for path in copies]).fork is None


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["forged", "reordered", "foreign"])
def test_a_seat_offering_a_falsified_longer_copy_is_refused_and_named(tmp_path, monkeypatch, kind):
    offered = []
    monkeypatch.setattr(succession, "give", lie(kind, offered))  # the joiner's answer to the resumed host's `ask`
    room = CrashedRoom(tmp_path)
    try:
        back, path, kept = room.resume(), room.path, room.kept
        blamed = "seat 1 (bob)'s copy of the log does not fit this one"
        wait_until(lambda: any(isinstance(e, Refused) and e.said.startswith(blamed) for e in room.events), 10,
                   "the falsified copy to be refused")
        time.sleep(10 * FAST.heartbeat)  # the asks that would follow, were the seat asked again
        refused = [e for e in room.events if isinstance(e, Refused) and e.said.startswith(blamed)]
        assert len(refused) == 1 and refused[0].seat == 1, refused  # named once, and not asked again
        wait_until(lambda: any(reason.startswith(blamed) for _, reason in read(path).refused), 10,
                   "the refusal in the host's transcript")
        evidence = [frame for frame, reason in read(path).refused if reason.startswith(blamed)]
        assert evidence == [offered[0]]  # the first frame that did not fit, kept as evidence
        log = [record.frame for record in back.replica.log]
        assert log == room.held[:kept]  # nothing of the lie, nothing of its own in the places the seat claims
    finally:
        room.close()
