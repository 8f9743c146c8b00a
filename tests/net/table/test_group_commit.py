"""Group commit of transcripts (issue 18): the host writes each loop turn's records together,
relays nothing before it is written and fsyncs each batch once, after the relay, over real sockets on
127.0.0.1 and real transcript files (net/log/transcript.py, net/table/host.py). What a host's machine crash can
lose and its resume: tests/net/table/test_reclaim.py. What a joiner's crash can lose, and its resume: tests/net/table/test_session.py."""

from __future__ import annotations

import os

from dicetable.core import registry
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import bot_chooser
from dicetable.net.log.transcript import read
from dicetable.net.reach.transport import unpack
from net_helpers import FAST, assert_verifies, in_thread

ROOM = registry.get("diceroom")


class Watched(HostSession):
    """A host that notes every `entries` packet it sends beyond what its transcript file holds."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.relayed = 0  # entries packets sent once the transcript existed
        self.early: list[tuple[int, int, int]] = []  # (start, end, written) of a packet sent too soon

    def open(self):
        invite = super().open()
        send = self.socket.send

        def checked(peer, op, body=None):
            inner_op, inner = unpack(body["packet"]) if op == "tagged" else (op, body)  # net/table/host_packets.py
            writer = self.own.transcript.writer
            if inner_op == "entries" and writer is not None:
                self.relayed += 1
                end, written = inner["start"] + len(inner["frames"]), len(read(writer.path).frames)
                if end > written:
                    self.early.append((inner["start"], end, written))
            send(peer, op, body)

        self.socket.send = checked
        return invite


def test_the_host_relays_no_frame_its_transcript_lacks_and_syncs_each_batch_once(tmp_path, monkeypatch):
    """Nothing leaves the host before the OS holds it in the transcript (a crash of the process loses
    nothing relayed), and the fsync that follows the relay, in the background, covers a whole batch."""
    host = Watched(Profile.generate("host"), "diceroom", 3, {"expr": "2d6", "rolls": 12}, timing=FAST,
                   transcript=tmp_path / "h.dtt")
    real_fsync, synced = os.fsync, []

    def fsync(fd):
        real_fsync(fd)
        writer = host.own.transcript.writer
        if writer is not None and not writer.file.closed and fd == writer.file.fileno():
            synced.append(len(read(writer.path).frames))

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
    frames = len(read(tmp_path / "h.dtt").frames)
    assert synced and synced[-1] == frames and len(synced) < frames  # all on disk, a batch per fsync
    assert_verifies(tmp_path / "h.dtt", tmp_path / "bob.dtt", tmp_path / "cy.dtt")
