"""Transcripts on disk: header first, frames in order, durable appends, torn tails dropped."""

from __future__ import annotations

import os
import random
import stat
import threading

import pytest

from dicetable.core.game import Result
from dicetable.net.log import transcript as tr
from dicetable.net.log.transcript import DamagedTranscript, NotATranscript, TranscriptWriter

HEADER = {"game": "trice", "options": {"swap_limit": 60}, "table": bytes(16),
          "seats": [{"name": "a", "key": bytes(32)}, {"name": "b", "key": bytes([1]) * 32}]}
FRAMES = [bytes([i]) * (10 + i) for i in range(6)]


def write(path, frames=FRAMES, result=True):
    with TranscriptWriter.create(path, HEADER) as writer:
        for frame in frames:
            writer.append_frame(frame)
        writer.append_refused(b"bad", "out of order: seat 1: sequence number 9, expected 3")
        if result:
            writer.append_result(Result((0,), (1.0, 0.0), "Trice"))
    return path


def test_round_trip(tmp_path):
    path = write(tmp_path / "t.transcript")
    got = tr.read(path)
    assert got.header == HEADER and got.frames == FRAMES and not got.torn
    assert got.refused == [(b"bad", "out of order: seat 1: sequence number 9, expected 3")]
    assert Result.from_data(got.result) == Result((0,), (1.0, 0.0), "Trice")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_create_never_overwrites(tmp_path):
    path = write(tmp_path / "t.transcript")
    with pytest.raises(FileExistsError):
        TranscriptWriter.create(path, HEADER)


def test_every_torn_tail_is_dropped_and_nothing_before_it_lost(tmp_path):
    path = write(tmp_path / "t.transcript", result=False)
    data = path.read_bytes()
    whole = tr.parse(data)
    last_record = len(tr._record("refused", {"frame": b"bad", "reason": whole.refused[0][1]}))
    for cut in range(1, last_record):
        got = tr.parse(data[:-cut])
        assert got.torn and got.frames == FRAMES and got.refused == []


def test_bad_checksum_at_the_end_is_torn_in_the_middle_is_damage(tmp_path):
    path = write(tmp_path / "t.transcript", result=False)
    data = bytearray(path.read_bytes())
    tail = bytearray(data)
    tail[-1] ^= 0xFF
    assert tr.parse(bytes(tail)).torn
    middle = bytearray(data)
    middle[len(tr.MAGIC) + 100] ^= 0xFF  # inside the header record's payload
    with pytest.raises(DamagedTranscript):
        tr.parse(bytes(middle))


def test_reopen_truncates_the_torn_tail_then_appends(tmp_path):
    path = write(tmp_path / "t.transcript", frames=FRAMES[:3], result=False)
    with open(path, "ab") as f:
        f.write(tr._record("frame", b"half written")[:9])  # a crash in the middle of a record
    writer, got = TranscriptWriter.reopen(path)
    assert got.frames == FRAMES[:3] and not got.torn
    with writer:
        writer.append_frame(FRAMES[3])
        writer.append_result(Result((), (0.5, 0.5), "draw"))
    again = tr.read(path)
    assert again.frames == FRAMES[:4] and not again.torn and again.result["reason"] == "draw"


NOISE = random.Random(80).randbytes(200)  # fixed, so that every test worker collects the same tests


@pytest.mark.parametrize("content", [b"", b"hello world\n", b"dicetable transcript v9\n", NOISE],
                         ids=["empty", "text", "another-version", "noise"])
def test_other_files_are_not_transcripts(tmp_path, content):
    path = tmp_path / "f"
    path.write_bytes(content)
    with pytest.raises(NotATranscript):
        tr.read(path)


def test_a_transcript_from_before_the_hash_linked_log_is_named_as_such(tmp_path, capsys):
    from dicetable.tui.cli import main

    path = tmp_path / "old.dtt"
    path.write_bytes(b"dicetable transcript v1\n" + os.urandom(100))
    with pytest.raises(tr.OldTranscript, match="older dicetable \\(protocol 1"):
        tr.read(path)
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "written by an older dicetable" in err


def test_missing_file_and_directory_are_not_transcripts(tmp_path):
    with pytest.raises(NotATranscript, match="does not exist"):
        tr.read(tmp_path / "nope")
    with pytest.raises(NotATranscript, match="directory"):
        tr.read(tmp_path)


def test_header_must_come_first_and_be_complete(tmp_path):
    with pytest.raises(DamagedTranscript, match="header"):
        tr.parse(tr.MAGIC)
    with pytest.raises(DamagedTranscript, match="header"):
        tr.parse(tr.MAGIC + tr._record("frame", b"x"))
    with pytest.raises(DamagedTranscript, match="header"):
        tr.parse(tr.MAGIC + tr._record("header", {"game": "trice"}))


def test_a_batch_is_written_with_one_fsync_in_order(tmp_path, monkeypatch):
    path = tmp_path / "t.transcript"
    writer = TranscriptWriter.create(path, HEADER)
    synced = []
    monkeypatch.setattr(tr.os, "fsync", lambda fd: synced.append(fd))
    with writer.batch():
        for frame in FRAMES[:4]:
            writer.append_frame(frame)
        with writer.batch():  # nested: still the outer batch
            writer.append_result(Result((0,), (1.0, 0.0), "Trice"))
        assert synced == [] and tr.read(path).frames == []  # nothing on disk before the batch ends
    assert len(synced) == 1
    writer.append_frame(FRAMES[4])  # outside a batch: one fsync per record again
    writer.close()
    assert len(synced) == 2
    got = tr.read(path)
    assert got.frames == FRAMES[:5] and got.result is not None and not got.torn


def test_a_batch_left_unsynced_is_written_at_once_and_synced_by_sync(tmp_path, monkeypatch):
    path = tmp_path / "t.transcript"
    writer = TranscriptWriter.create(path, HEADER)
    synced = []
    monkeypatch.setattr(tr.os, "fsync", lambda fd: synced.append(fd))
    with writer.batch(sync=False):  # written now, fsync'ed after the sends
        writer.append_frame(FRAMES[0])
        writer.append_frame(FRAMES[1])
    assert tr.read(path).frames == FRAMES[:2] and synced == []  # on file (a killed process keeps it), not synced
    writer.sync()
    writer.sync()  # nothing new: no second fsync
    assert synced == [writer.file.fileno()]
    writer.close()
    assert len(synced) == 1



def test_sync_soon_fsyncs_in_the_background_and_close_waits_for_it(tmp_path, monkeypatch):
    """The caller goes on (its sends) while the fsync runs in another thread; close returns only once
    it is done, and one fsync covers what was written before it."""
    path = tmp_path / "t.transcript"
    writer = TranscriptWriter.create(path, HEADER)
    started, release, synced = threading.Event(), threading.Event(), []

    def slow_fsync(fd):
        synced.append(threading.current_thread().name)
        started.set()
        assert release.wait(10)

    monkeypatch.setattr(tr.os, "fsync", slow_fsync)
    with writer.batch(sync=False):
        writer.append_frame(FRAMES[0])
    writer.sync_soon()  # returns while the disk works
    assert started.wait(10) and synced == ["fsync t.transcript"]
    with writer.batch(sync=False):  # the next loop turn writes meanwhile
        writer.append_frame(FRAMES[1])
    closing = threading.Thread(target=writer.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # close waits for the fsync under way
    release.set()
    closing.join(10)
    assert not closing.is_alive() and len(synced) == 2  # then syncs the later write itself
    assert tr.read(path).frames == FRAMES[:2]
    assert not [t for t in threading.enumerate() if t.name == "fsync t.transcript"]  # its thread ended


def test_a_cut_keeps_the_cut_frames_as_refused_records_and_appending_goes_on(tmp_path):
    path = write(tmp_path / "t.transcript")  # frames, a refusal, the result
    writer, _ = TranscriptWriter.reopen(path)
    assert writer.cut(4, "cut on rejoining") == FRAMES[4:]
    writer.append_frame(b"the table's entry 5")
    writer.close()
    got = tr.read(path)
    assert got.frames == [*FRAMES[:4], b"the table's entry 5"]
    assert got.refused == [(b"bad", "out of order: seat 1: sequence number 9, expected 3"),
                           *((frame, "cut on rejoining") for frame in FRAMES[4:])]
    assert got.result is None and not got.torn  # the result came after the cut: it was the cut branch's
    assert [p.name for p in tmp_path.iterdir()] == ["t.transcript"]


def test_a_crash_during_a_cut_leaves_the_transcript_as_it_was(tmp_path, monkeypatch):
    path = write(tmp_path / "t.transcript")
    before = path.read_bytes()
    writer, _ = TranscriptWriter.reopen(path)

    def crash(*args):
        raise OSError("killed before the rename")

    monkeypatch.setattr(tr.os, "replace", crash)
    with pytest.raises(OSError):
        writer.cut(2, "cut on rejoining")
    assert path.read_bytes() == before and tr.read(path).frames == FRAMES
    monkeypatch.undo()
    writer, _ = TranscriptWriter.reopen(path)  # resumed again: the cut is made whole, over the stale temporary file
    assert writer.cut(2, "cut on rejoining") == FRAMES[2:]
    writer.close()
    assert tr.read(path).frames == FRAMES[:2] and [p.name for p in tmp_path.iterdir()] == ["t.transcript"]
