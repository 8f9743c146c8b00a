"""Networked tables over real sockets on 127.0.0.1: whole games between processes, a crash and
`--resume`, wrong keys and full tables, refused cheating, and default claims (issue 4, "Must show").
"""

from __future__ import annotations

import secrets
import signal
import time

import pytest

from dicetable.core.game import Move
from dicetable.net.log import wire
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import Chat, ClaimDisputed, Claimable, Dropped, Ended, Refused, YourTurn
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.reach.invite import Invite
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.defaults import Defaults
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from net_helpers import FAST, LATE, RawSeat, assert_verifies, before_receipts, cut_back, dicetable, finish, frames_in, hello_body, host_link, host_packet, in_thread, last_line, read_invite, spawn, wait_until


# -- helpers ----------------------------------------------------------------------------------------
# -- whole games between processes ------------------------------------------------------------------
@pytest.mark.slow
def test_trice_between_two_processes_with_bots(tmp_path):
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "greedy", "--name", "alice",
                 "--transcript", str(tmp_path / "alice.dtt"))
    invite = read_invite(host)
    joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--name", "bob",
                   "--transcript", str(tmp_path / "bob.dtt"))
    code_j, out_j, err_j = finish(joiner)
    code_h, out_h, err_h = finish(host)
    assert code_j == 0, err_j
    assert code_h == 0, err_h
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    assert last_line(out_h, "transcript:") == str(tmp_path / "alice.dtt")
    assert "joined: seat 1 bob" in out_h and "started" in out_j
    assert_verifies(tmp_path / "alice.dtt", tmp_path / "bob.dtt")
    # The CLI verdict agrees (a person re-checks the game from either transcript).
    check = dicetable("verify", str(tmp_path / "bob.dtt"))
    assert check.returncode == 0 and check.stdout.startswith("valid: trice,")


@pytest.mark.slow
@pytest.mark.parametrize("crash", ["process", "machine"])
def test_a_peer_killed_mid_game_resumes_from_its_transcript(tmp_path, crash):
    """A joiner killed mid-game resumes and plays on to the same result. "machine": its transcript
    also loses its own last frame and at least three records (more than a crash can take: a joiner
    syncs a loop turn's records after that turn's sends, net/log/transcript.py); catch-up from the host
    gives them back byte for byte, so it never signs another frame in their place."""
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "random", "--think", "0.12",
                 "--heartbeat", "0.1", "--transcript", str(tmp_path / "alice.dtt"))
    invite = read_invite(host)
    bob = tmp_path / "bob.dtt"
    joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--think", "0.12", "--transcript", str(bob))
    wait_until(lambda: frames_in(bob) >= 8, 15, "moves in bob's transcript")
    joiner.send_signal(signal.SIGKILL)
    joiner.wait()
    before = read(bob)
    assert before.result is None, "the game ended before the crash: nothing to resume"
    if crash == "machine":
        own = [i for i, frame in enumerate(before.frames) if wire.decode(frame).seat == 1]
        cut_back(bob, min(own[-1], len(before.frames) - 3))
    again = spawn(tmp_path, "bob", "join", "--resume", str(bob), "--bot", "random")
    code_j, out_j, err_j = finish(again)
    code_h, out_h, err_h = finish(host)
    assert code_j == 0, err_j
    assert code_h == 0, err_h
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    logs = assert_verifies(tmp_path / "alice.dtt", bob)
    assert logs[1][:len(before.frames)] == before.frames  # what the crash cut came back as it was
    assert len(logs[0]) > len(before.frames)  # the game went on after the crash


@pytest.mark.slow
def test_a_host_killed_mid_game_resumes_on_the_same_invite(tmp_path):
    alice = tmp_path / "alice.dtt"
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bot", "random", "--think", "0.12",
                 "--heartbeat", "0.1", "--transcript", str(alice))
    invite = read_invite(host)
    joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--think", "0.12", "--heartbeat", "0.1",
                   "--transcript", str(tmp_path / "bob.dtt"))
    wait_until(lambda: frames_in(alice) >= 7, 15, "moves in alice's transcript")
    host.send_signal(signal.SIGKILL)
    host.wait()
    assert read(alice).result is None, "the game ended before the crash: nothing to resume"
    again = spawn(tmp_path, "alice", "host", "--resume", str(alice), "--bot", "random", "--heartbeat", "0.1")
    assert read_invite(again) == invite  # same key, table and port: the joiner just redials
    code_h, out_h, err_h = finish(again)
    code_j, out_j, err_j = finish(joiner)
    assert code_h == 0, err_h
    assert code_j == 0, err_j
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    assert_verifies(alice, tmp_path / "bob.dtt")


@pytest.mark.slow
def test_cli_refuses_wrong_key_unreachable_host_and_full_table(tmp_path):
    profile = Profile.generate("host")
    host = HostSession(profile, "diceroom", 2, {"rolls": 0}, timing=FAST)
    invite = Invite.decode(host.open())
    in_thread(host)
    seated = PeerSession(Profile.generate("bob"), invite, timing=FAST)
    in_thread(seated)
    try:
        wait_until(lambda: host.replica.phase == "playing", what="the table to start")
        wrong_key = Invite(invite.address, invite.port, secrets.token_bytes(32), invite.table_id).encode()
        full = spawn(tmp_path, "carol", "join", invite.encode(), "--bot", "random")
        wrong = spawn(tmp_path, "dave", "join", wrong_key, "--bot", "random", "--timeout", "2")
        nobody = spawn(tmp_path, "erin", "join", Invite("127.0.0.1", _free_port(), invite.host_key, invite.table_id).encode(),
                       "--bot", "random", "--timeout", "0.5")
        for process, says in (
            (full, "the game has already started and every seat is taken"),
            (wrong, "failed the secure handshake: it does not hold the key in the invite"),
            (nobody, "no table answered at 127.0.0.1:"),
        ):
            code, out, err = finish(process)
            assert code == 2, (out, err)
            assert len(err.strip().splitlines()) == 1 and says in err, err
        bad = dicetable("join", "dt1-nonsense", "--bot", "random")
        assert bad.returncode == 2 and bad.stderr.startswith("dicetable: bad invite:")
    finally:
        seated.stop()
        host.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- refusals: cheating never changes an honest state -------------------------------------------------
class Unwatched(Defaults):
    """Clocks that claim and witness nothing."""

    def watch_deadlines(self, now: float) -> None:
        pass


class ScriptedSeat(RawSeat):
    """A seat that does only what the test tells it: raw frames through its command queue; no reveal,
    no claim of its own."""

    defaults_type = Unwatched

    def reveal_if_due(self) -> bool:
        return False


class Scripted(PeerSession):
    """A joiner whose seat does only what the test tells it."""

    seat_type = ScriptedSeat


def _snapshot(session):
    replica = session.replica
    return len(replica.log), replica.state, replica.pending


@pytest.mark.slow
def test_cheating_is_refused_and_honest_states_stay_unchanged():
    host_events, honest_events, cheat_events = [], [], []
    host = HostSession(Profile.generate("host"), "diceroom", 3, {"rolls": 0}, timing=FAST,
                       on_event=host_events.append)
    invite = host.open()
    in_thread(host)
    honest = PeerSession(Profile.generate("honest"), invite, timing=FAST, on_event=honest_events.append)
    in_thread(honest)
    wait_until(lambda: honest.seat == 1 and honest.replica.seats and honest.replica.seats[1], what="seat 1")
    cheater_profile = Profile.generate("cheater")
    cheater = Scripted(cheater_profile, invite, timing=FAST, on_event=cheat_events.append)
    in_thread(cheater)
    table = Invite.decode(invite).table_id
    try:
        wait_until(lambda: all(s.replica.phase == "playing" for s in (host, honest, cheater)), what="start")

        def attempt(frame: bytes, fault: str, seat: int) -> None:
            wait_until(lambda: _snapshot(honest)[0] == len(host.replica.log), what="honest caught up")
            before_host, before_honest = _snapshot(host), _snapshot(honest)
            copies = [r.frame for r in host.replica.log].count(frame)
            seen = len(cheat_events)
            cheater.own.commands.put(("raw", frame))
            wait_until(lambda: any(isinstance(e, Refused) for e in cheat_events[seen:]), what=f"refusal ({fault})")
            refusal = next(e for e in cheat_events[seen:] if isinstance(e, Refused))
            assert refusal.said.startswith(fault) and f"seat {seat}" in refusal.said, refusal.said
            time.sleep(0.15)  # anything wrongly relayed would have reached the honest peer by now
            assert _snapshot(host) == before_host
            assert _snapshot(honest) == before_honest
            assert [r.frame for r in host.replica.log].count(frame) == copies  # never appended (again)

        def seal(profile, seat, kind, body, seq=None, sign=True):
            seq = cheater.replica.next_seq(seat) if seq is None else seq
            return wire.make_frame(profile, table, seat, seq, kind, body, cheater.replica.head, sign=sign)

        # Not its turn (seat 0 is due), then a claim against the host that the host's own view refutes.
        attempt(seal(cheater_profile, 2, "move", wire.move_body(Move("roll", ("3d6",)))), "not due", 2)
        attempt(seal(cheater_profile, 2, "claim", wire.claim_body(0, "impatient")), "disputed", 2)
        disputed = next(e for e in host_events if isinstance(e, ClaimDisputed))  # the host's player is told, naming seat 2
        assert disputed.claimant == 2 and "seat 0 (host) disputes seat 2 (cheater)'s claim" in disputed.said
        host.move(Move("pass"))
        wait_until(lambda: honest.replica.state is not None and honest.replica.state.turn == 1, what="seat 1's turn")
        honest.move(Move("pass"))
        wait_until(lambda: cheater.replica.state.turn == 2 and host.replica.state.turn == 2, what="seat 2's turn")
        # An illegal move, and a message forged in the honest seat's name.
        attempt(seal(cheater_profile, 2, "move", wire.move_body(Move("roll", ("3x6",)))), "illegal move", 2)
        attempt(seal(cheater_profile, 1, "chat", wire.chat_body("I resign, says seat 1")), "bad signature", 1)
        # A legal roll: the honest seats reveal; the cheater's reveal does not open its chain.
        roll = seal(cheater_profile, 2, "move", wire.move_body(Move("roll", ("2d6",))))
        cheater.own.commands.put(("raw", roll))
        wait_until(lambda: host.replica.pending is not None and host.replica.pending.missing == (2,), what="reveals")
        # the cheater's frames below number from its own copy: it must hold its roll (the honest reveal may be quicker)
        wait_until(lambda: cheater.replica.pending is not None, what="the roll in the cheater's copy")
        attempt(seal(cheater_profile, 2, "reveal", wire.reveal_body(1, secrets.token_bytes(32)), sign=False), "bad reveal", 2)
        # Replays: its own accepted roll again, and the honest seat's "pass" from the log: copies of
        # frames the log holds, ignored (PROTOCOL.md §10.6: never refused nor recorded against anyone).
        honest_pass = next(r.frame for r in host.replica.log if r.kind == "move" and r.seat == 1)
        seen = len(cheat_events)
        cheater.own.commands.put(("raw", roll))
        cheater.own.commands.put(("raw", honest_pass))
        # Into another table: refused as such (after the replays on the same connection: they are behind it).
        other = wire.make_frame(cheater_profile, secrets.token_bytes(16), 2, cheater.replica.next_seq(2), "chat", wire.chat_body("hi"), cheater.replica.head)
        attempt(other, "wrong table", 2)
        assert sum(isinstance(e, Refused) for e in cheat_events[seen:]) == 1  # the wrong table's alone
        assert [r.frame for r in host.replica.log].count(roll) == 1 and [r.frame for r in host.replica.log].count(honest_pass) == 1
        # The honest reveal completes the roll; every copy of the log agrees.
        chain = cheater.chains[0]
        cheater.own.commands.put(("raw", seal(cheater_profile, 2, "reveal", wire.reveal_body(1, chain.reveal(1)), sign=False)))
        wait_until(lambda: len(honest.replica.events) == 1 and len(cheater.replica.events) == 1, what="the roll")
        assert host.replica.state.last.expr == "2d6"
        assert [r.frame for r in honest.replica.log] == [r.frame for r in host.replica.log]
        # The host's transcript records every refusal with its frame (for people, not replayed).
        refused = read(host.transcript_path).refused
        assert len(refused) == 6 and roll not in {frame for frame, _ in refused}
        assert any(isinstance(e, Refused) for e in host_events) and not any(isinstance(e, Refused) for e in honest_events)
        # A seat without a bot hears that it is its turn; chat reaches every seat.
        assert any(isinstance(e, YourTurn) and e.seat == 0 for e in host_events)
        honest.chat("good roll")
        wait_until(lambda: any(isinstance(e, Chat) and e.text == "good roll" for e in host_events), what="chat")
        assert next(e for e in host_events if isinstance(e, Chat)).seat == 1
    finally:
        for session in (cheater, honest, host):
            session.stop()


class WithholdingSeat(Seat):
    """A seat that never reveals: it waits to see the others' values first (the last-revealer problem)."""

    def reveal_if_due(self) -> bool:
        return False


class Withholder(PeerSession):
    seat_type = WithholdingSeat


@pytest.mark.slow
def test_a_withheld_reveal_puts_the_seat_in_default_and_the_claim_verifies(tmp_path):
    timing = LATE
    events = []
    info = __import__("dicetable.core.registry", fromlist=["get"]).get("trice")
    host = HostSession(Profile.generate("host"), "trice", 2, timing=timing, chooser=bot_chooser(info, "random", 1),
                       on_event=events.append, transcript=tmp_path / "host.dtt")
    invite = host.open()
    thread = in_thread(host)
    withholder = Withholder(Profile.generate("staller"), invite, timing=timing, transcript=tmp_path / "staller.dtt",
                            chooser=bot_chooser(info, "random", 2))
    start = time.monotonic()
    result = withholder.run()
    thread.join(10)
    assert result is not None and result.winners == (0,) and "seat 1 in default" in result.reason
    assert time.monotonic() - start >= timing.reveal_deadline  # not before the deadline
    claimable = [e for e in events if isinstance(e, Claimable)]
    assert claimable and claimable[0].seat == 1 and f"did not reveal within {timing.reveal_deadline:g} s" in claimable[0].why
    logs = assert_verifies(tmp_path / "host.dtt", tmp_path / "staller.dtt")
    claim = wire.decode(before_receipts(logs[0])[-1])
    assert claim.kind == "claim" and claim.seat == 0 and claim.body["against"] == 1
    # Two seats: nobody else could witness it, and the verdict says so (FAIRNESS.md §5).
    assert verify(tmp_path / "host.dtt").result == "seat 0 wins (seat 1 in default — unwitnessed claim by seat 0)"


@pytest.mark.slow
def test_a_seat_that_drops_past_the_grace_period_is_in_default():
    timing = Timing(heartbeat=0.1, drop_after=0.4, grace=0.8, reveal_deadline=30.0, connect_timeout=3.0)
    events = []
    host = HostSession(Profile.generate("host"), "diceroom", 2, {"rolls": 0}, timing=timing, on_event=events.append)
    invite = host.open()
    in_thread(host)
    joiner = PeerSession(Profile.generate("gone"), invite, timing=timing)
    thread = in_thread(joiner)
    try:
        wait_until(lambda: host.replica.phase == "playing", what="start")
        host.move(Move("pass"))  # seat 1's turn; then seat 1 vanishes
        wait_until(lambda: joiner.replica.state is not None and joiner.replica.state.turn == 1, what="seat 1's turn")
        joiner.stop()
        thread.join(5)
        wait_until(lambda: any(isinstance(e, Ended) for e in events), 10, "the default claim")
        kinds = [type(e) for e in events]
        assert kinds.index(Dropped) < kinds.index(Claimable) < kinds.index(Ended)
        assert "did not return within 0.8 s" in next(e.why for e in events if isinstance(e, Claimable))
        assert host.replica.result.winners == (0,)
    finally:
        joiner.stop()
        host.stop()


def test_a_joiner_without_invite_or_transcript_is_told_what_to_give():
    with pytest.raises(SessionError, match="needs an invite"):
        PeerSession(Profile.generate("x"))
    with pytest.raises(SessionError, match="bad invite"):
        PeerSession(Profile.generate("x"), "dt1-zzzz")


@pytest.mark.slow
def test_seats_whose_chains_run_low_commit_fresh_anchors_and_play_on():
    room = __import__("dicetable.core.registry", fromlist=["get"]).get("diceroom")
    host = HostSession(Profile.generate("host"), "diceroom", 2, {"expr": "d6", "rolls": 40}, timing=FAST,
                       chooser=bot_chooser(room, "roller"))
    host.own.chain_length = 20  # 40 rolls need a third chain per seat (a fresh one 16 events ahead)
    invite = host.open()
    thread = in_thread(host)
    joiner = PeerSession(Profile.generate("bob"), invite, timing=FAST, chooser=bot_chooser(room, "roller"))
    joiner.own.chain_length = 20
    result = joiner.run()
    thread.join(10)
    assert result is not None and len(joiner.replica.state.rolls) == 40
    anchors = [r for r in host.replica.log if r.kind == "anchor"]
    assert sorted(r.seat for r in anchors) == [0, 0, 1, 1]
    assert len(joiner.chains) == 3
    assert_verifies(host.transcript_path, joiner.transcript_path)


@pytest.mark.slow
def test_a_seat_past_its_turn_deadline_is_claimed_against_by_the_joiner():
    timing = Timing(heartbeat=0.1, drop_after=2.0, grace=30.0, turn_deadline=0.4, connect_timeout=3.0)
    host = HostSession(Profile.generate("slow host"), "diceroom", 2, {"rolls": 0}, timing=timing, auto_claim=False)
    invite = host.open()
    thread = in_thread(host)  # the host's seat has no bot and never moves: seat 0 is due forever
    events = []
    joiner = PeerSession(Profile.generate("bob"), invite, on_event=events.append)
    assert joiner.timing.turn_deadline == 0.0  # the host's deadlines arrive with its welcome
    start = time.monotonic()
    result = joiner.run()
    thread.join(10)
    assert joiner.timing.turn_deadline == 0.4
    assert result.winners == (1,) and result.reason == "seat 0 in default"
    assert time.monotonic() - start >= 0.4
    claim = wire.decode(before_receipts([r.frame for r in joiner.replica.log])[-1])
    assert claim.kind == "claim" and claim.seat == 1 and "did not move within 0.4 s" in claim.body["reason"]
    assert_verifies(host.transcript_path, joiner.transcript_path)


@pytest.mark.slow
def test_garbage_from_a_connection_changes_nothing_and_the_table_plays_on():
    from dicetable.net.reach.transport import PeerSocket, unpack

    room = __import__("dicetable.core.registry", fromlist=["get"]).get("diceroom")
    host = HostSession(Profile.generate("host"), "diceroom", 2, {"expr": "3d6", "rolls": 1}, timing=FAST,
                       chooser=bot_chooser(room, "roller"))
    invite = Invite.decode(host.open())
    thread = in_thread(host)
    raw = PeerSocket(invite)
    try:
        raw.connect(3.0)
        raw.socket.send(b"\xc1 not msgpack")
        raw.socket.send_multipart([b"two", b"frames"])
        raw.send("submit", {"frame": b"before hello"})
        op, body = unpack(raw.recv(3.0))  # no seat yet: prove a key in a hello first
        assert op == "who" and len(body["nonce"]) == 32
        nonce = body["nonce"]
        raw.send("hello", {"seat": "zero", "key": 5})
        op, body = unpack(raw.recv(3.0))
        assert op == "full" and "malformed hello" in body["reason"]
        garbage = Profile.generate("garbage")  # the hello proves its key (tests/test_hello_auth.py)
        link = host_link(invite)
        raw.send("hello", hello_body(garbage, invite, link, nonce))
        assert host_packet(link, raw.recv(3.0))[0] == "welcome"
        raw.send(*link.seal("submit", {"frame": b"\x92\xc4\x01x\xc4\x00"}))  # tagged, as a seat sends it
        while True:
            op, body = host_packet(link, raw.recv(3.0))
            if op == "refused":
                break
        assert body["reason"].startswith("malformed frame")
        assert len(host.replica.log) == 2 and host.refusals  # open and the host's join, nothing else
    finally:
        raw.close()
    # The garbage seat never joined: it is freed for a real joiner once its reservation lapses.
    time.sleep(2 * FAST.drop_after + 0.1)
    joiner = PeerSession(Profile.generate("bob"), invite, timing=FAST, chooser=bot_chooser(room, "roller"))
    result = joiner.run()
    thread.join(10)
    assert result is not None and joiner.seat == 1
    assert_verifies(host.transcript_path, joiner.transcript_path)
