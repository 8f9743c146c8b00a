"""Group commit of transcripts (issue 18): the host writes each loop turn's records together and
relays nothing before it is fsync'ed; a joiner's transcript is fsync'ed off its loop, so a crash of
its machine can lose its last records, and catch-up from the host gives them back unchanged.
Over real sockets on 127.0.0.1 and real transcript files (net/transcript.py, net/host.py)."""

from __future__ import annotations

import os
import signal

import pytest

from dicetable.core import registry
from dicetable.net import wire
from dicetable.net.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.peer import PeerSession
from dicetable.net.session import bot_chooser
from dicetable.net.transcript import TranscriptWriter, read
from net_helpers import FAST, assert_verifies, finish, frames_in, in_thread, last_line, read_invite, spawn, wait_until

ROOM = registry.get("diceroom")


class Watched(HostSession):
    """A host that notes every `entries` packet it sends beyond what its transcript had fsync'ed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.synced = 0  # frames in the transcript at its last fsync
        self.relayed = 0  # entries packets sent once the transcript existed
        self.early: list[tuple[int, int, int]] = []  # (start, end, synced) of a packet sent too soon

    def open(self):
        invite = super().open()
        send = self.socket.send

        def checked(peer, op, body=None):
            if op == "entries" and self.transcript is not None:
                self.relayed += 1
                end = body["start"] + len(body["frames"])
                if end > self.synced:
                    self.early.append((body["start"], end, self.synced))
            send(peer, op, body)

        self.socket.send = checked
        return invite


def test_the_host_relays_no_frame_before_its_transcript_has_it_on_disk(tmp_path, monkeypatch):
    host = Watched(Profile.generate("host"), "diceroom", 3, {"expr": "2d6", "rolls": 12}, timing=FAST,
                   transcript=tmp_path / "h.dtt")
    real_fsync = os.fsync

    def fsync(fd):
        real_fsync(fd)
        writer = host.transcript
        if writer is not None and not writer.file.closed and fd == writer.file.fileno():
            host.synced = len(read(writer.path).frames)

    monkeypatch.setattr(os, "fsync", fsync)
    host.chooser = bot_chooser(ROOM, "roller", 0)
    invite = host.open()
    thread = in_thread(host)
    peers = [PeerSession(Profile.generate(name), invite, timing=FAST, transcript=tmp_path / f"{name}.dtt")
             for name in ("bob", "cy")]
    threads = []
    for seed, peer in enumerate(peers, start=1):
        peer.chooser = bot_chooser(ROOM, "roller", seed)
        peer.connect()
        threads.append(in_thread(peer))
    for t in (thread, *threads):
        t.join(30)
    assert host.replica.result is not None and len(host.replica.events) == 12
    assert host.relayed > 12 and host.early == [], host.early
    assert_verifies(tmp_path / "h.dtt", tmp_path / "bob.dtt", tmp_path / "cy.dtt")


def _cut_back(path, keep: int) -> None:
    """What a crash of the machine can leave of a lazily synced transcript: its first `keep` frames
    (a record is written whole or is a torn tail, which reading drops)."""
    old = read(path)
    path.unlink()
    with TranscriptWriter.create(path, old.header) as writer:
        for frame in old.frames[:keep]:
            writer.append_frame(frame)


@pytest.mark.slow
def test_a_joiner_whose_machine_lost_its_last_records_resumes_with_nothing_lost(tmp_path):
    """The joiner is killed mid-game and its transcript cut back to before its own last frames (more
    than a crash of its machine can take: the writes of a loop turn or two): resumed, it catches up
    from the host, gets its own frames back byte for byte (so it never signs another frame in their
    place) and plays on to the same result, and every copy verifies and agrees."""
    alice = tmp_path / "alice.dtt"
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "random", "--think", "0.12",
                 "--heartbeat", "0.1", "--transcript", str(alice))
    invite = read_invite(host)
    bob = tmp_path / "bob.dtt"
    joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--think", "0.12", "--transcript", str(bob))
    wait_until(lambda: frames_in(bob) >= 12, 20, "moves in bob's transcript")
    joiner.send_signal(signal.SIGKILL)
    joiner.wait()
    before = read(bob)
    assert before.result is None, "the game ended before the crash: nothing to resume"
    own = [i for i, frame in enumerate(before.frames) if wire.decode(frame).seat == 1]
    keep = min(own[-1], len(before.frames) - 3)  # bob's own last frame and at least three more are lost
    _cut_back(bob, keep)
    assert len(read(bob).frames) == keep
    again = spawn(tmp_path, "bob", "join", "--resume", str(bob), "--bot", "random")
    code_j, out_j, err_j = finish(again)
    code_h, out_h, err_h = finish(host)
    assert code_j == 0, err_j
    assert code_h == 0, err_h
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    logs = assert_verifies(alice, bob)
    assert logs[1][:len(before.frames)] == before.frames  # the lost records came back as they were
    assert len(logs[1]) > len(before.frames)  # and the game went on after the crash
