"""Watchers over real sockets on 127.0.0.1 (issue 35): a watcher joins a TRICE and a Tricolor table mid-game,
catches up, follows to the end and never receives a hidden card's secret before the log opens it; its
transcript verifies and `dicetable verify SEAT WATCHER` accepts it as a copy; seats hear who watches;
a watcher cannot act, the cap holds, and a watcher that stops reading is dropped.
"""

from __future__ import annotations

import time

import pytest

from dicetable.core import registry
from dicetable.net.identity import Profile
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from dicetable.net.reach.invite import Invite
from dicetable.net.reach.transport import PeerSocket, unpack
from dicetable.net.table import watching
from dicetable.net.table.events import Watching
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.table.watcher import WatchSession
from dicetable.net.table.watching import watch_bytes
from net_helpers import FAST, dicetable, finish, host_link, host_packet, in_thread, last_line, read_invite, spawn, stop_all, wait_until


def table(tmp_path, game: str, events: list, think: float = 0.0):
    """A two-seat table of `game` with random bots, playing in threads: (host, bob, invite)."""
    info = registry.get(game)
    host = HostSession(Profile.generate("ann"), game, 2, timing=FAST, chooser=bot_chooser(info, "random", 1),
                       transcript=tmp_path / "ann.dtt", on_event=events.append, think=think)
    invite = host.open()
    in_thread(host)
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, chooser=bot_chooser(info, "random", 2),
                      transcript=tmp_path / "bob.dtt", on_event=events.append, think=think)
    in_thread(bob)
    return host, bob, invite


def watch_to_the_end(tmp_path, game: str, mid: int, think: float = 0.0):
    events: list = []
    host, bob, invite = table(tmp_path, game, events, think)
    try:
        wait_until(lambda: len(host.replica.log) > mid and host.replica.phase == "playing", 30, "the game under way")
        watcher = WatchSession(Profile.generate("wendy"), invite, transcript=tmp_path / "wendy.dtt", timing=FAST)
        received = []
        handle = watcher.handle
        watcher.handle = lambda data, now: (received.append(data), handle(data, now))
        watcher.connect()
        joined_at = len(watcher.replica.log)
        assert joined_at > mid  # it caught up with a game under way
        assert watcher.run() is not None
        wait_until(lambda: host.finished and bob.finished, 60, "the seats to finish")
    finally:
        stop_all(host, bob)
    return host, bob, watcher, received, events


def check_copies(tmp_path, host, watcher) -> None:
    verdict = verify(tmp_path / "wendy.dtt")
    assert verdict.valid, verdict.line()
    assert verdict.line() == verify(tmp_path / "ann.dtt").line()
    assert read(tmp_path / "wendy.dtt").frames == [r.frame for r in host.replica.log][:len(watcher.replica.log)]
    both = dicetable("verify", str(tmp_path / "ann.dtt"), str(tmp_path / "wendy.dtt"))
    assert both.returncode == 0, both.stdout + both.stderr
    assert both.stdout.splitlines()[-1].startswith("copies agree: 2 copies")


def test_a_watcher_joins_a_trice_table_mid_game_and_its_copy_verifies(tmp_path):
    host, bob, watcher, received, events = watch_to_the_end(tmp_path, "trice", 10, think=0.01)
    check_copies(tmp_path, host, watcher)
    # All it was sent is the orderer's challenge and packets under its hello's tag (the welcome, the
    # log's entries, pongs): nothing the orderer tells seats alone.
    assert {unpack(data)[0] for data in received} <= {"who", "tagged"}
    assert not watcher.link.refused
    # The seats heard that someone watched them, by name.
    seen = [e for e in events if isinstance(e, Watching)]
    assert any(e.count == 1 and e.names[0].startswith("wendy (") for e in seen), seen


@pytest.mark.slow
def test_a_watcher_of_a_tricolor_table_never_receives_a_hidden_cards_secret_before_the_log_opens_it(tmp_path):
    host, bob, watcher, received, _ = watch_to_the_end(tmp_path, "tricolor", 40)
    check_copies(tmp_path, host, watcher)
    # The secrets of each deck, as the end-of-deal openings publish them: each seat's deck key, box seed,
    # its keys for positions never opened in public, the nonces of cards it held and never showed.
    secrets: dict[bytes, set[bytes]] = {}
    public: dict[bytes, set[int]] = {}
    shown: dict[bytes, set[int]] = {}
    openings: list[tuple[bytes, dict]] = []
    openings_frames: list[tuple[bytes, bytes]] = []
    for record in host.replica.log:
        if record.kind != "deal":
            continue
        body = record.envelope.body
        deck = body["deck"]
        if body["step"] == "open":
            public.setdefault(deck, set()).update(body["positions"])
        elif body["step"] == "show":
            shown.setdefault(deck, set()).add(body["position"])
        elif body["step"] == "opening":
            openings.append((deck, body))
            openings_frames.append((deck, record.frame))
    for deck, body in openings:
        hidden = secrets.setdefault(deck, set())
        hidden |= {body["deck_key"], body["box_seed"]}
        hidden |= {key for j, key in enumerate(body["keys"]) if j not in public.get(deck, ())}
        hidden |= {nonce for j, _, nonce in body["held"] if j not in shown.get(deck, ())}
    assert len(secrets) >= 2 and sum(len(s) for s in secrets.values()) > 40
    # None of them is in any packet the watcher received before the deck's opening, nor in the packet
    # that carries the opening but outside the opening frames themselves.
    opened: set[bytes] = set()
    hidden_packets = 0
    for data in received:
        for deck, frame in openings_frames:
            if frame in data:
                opened.add(deck)
                data = data.replace(frame, b"")
        for deck, hidden in secrets.items():
            if deck not in opened:
                hidden_packets += 1
            assert not any(secret in data for secret in hidden), "a hidden card's secret reached the watcher"
    assert hidden_packets > 100
    # And the watcher's own view: the ID cards' deck stayed closed until the game's end opened it.
    assert watcher.replica.result is not None and watcher.replica.settled


# -- what a watcher cannot do ---------------------------------------------------------------------
def raw_watcher(invite: str, profile: Profile, name: str = "raw"):
    """A watch hello made by hand on a real socket: (socket, link, welcome op)."""
    parsed = Invite.decode(invite)
    socket = PeerSocket(parsed, profile.curve_secret)
    socket.connect(3.0)
    socket.send("ping", {"next": 0})
    data = socket.recv(3.0)
    op, body = unpack(data)
    assert op == "who"
    link = host_link(parsed)
    box = link.box_for(body["nonce"], profile.public_key)
    proof = profile.sign(watch_bytes(parsed.table_id, parsed.host_key, body["nonce"], profile.public_key, box))
    socket.send("watch", {"key": profile.public_key, "nonce": body["nonce"], "proof": proof, "box": box,
                          "next": 0, "name": name})
    return socket, link, body["nonce"], box, proof


def next_packet(socket, link, wanted: str, timeout: float = 5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        data = socket.recv(0.1)
        if data is not None:
            op, body = host_packet(link, data)
            if op == wanted:
                return body
    raise AssertionError(f"no {wanted} within {timeout:g} s")


def test_a_watcher_cannot_submit_and_its_watch_proof_is_no_seats_hello(tmp_path):
    events: list = []
    room = registry.get("diceroom")
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"rolls": 0}, timing=FAST, on_event=events.append,
                       chooser=bot_chooser(room, "roller", 1))
    invite = host.open()
    in_thread(host)
    profile = Profile.generate("mallory")
    socket, link, nonce, box, proof = raw_watcher(invite, profile)
    try:
        assert next_packet(socket, link, "welcome")["watching"] is True
        # It sends a frame of the log again, as a seat's connection could (which would hear `refused`):
        # the orderer takes nothing from a watcher's connection, not even to refuse it.
        frame = host.replica.log[-1].frame
        length = len(host.replica.log)
        socket.send("submit", {"frame": frame})
        socket.send("ping", {"next": length})
        next_packet(socket, link, "pong")
        assert len(host.replica.log) == length and host.replica.seats[1] is None
        assert not host.refusals  # not even refused: a watcher's packets are no seat's
        # Its watch proof, sent as a seat's hello on the same connection, proves nothing.
        socket.send("hello", {"seat": -1, "key": profile.public_key, "next": 0, "nonce": nonce, "proof": proof, "box": box})
        assert "does not prove its key" in next_packet(socket, link, "full")["reason"]
        assert not host.door.reserved
    finally:
        socket.close()
        stop_all(host)


def test_watchers_are_capped_and_one_that_stops_reading_is_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(watching, "MAX_WATCHERS", 1)
    events: list = []
    host = HostSession(Profile.generate("ann"), "diceroom", 2, {"rolls": 0}, timing=FAST, on_event=events.append)
    invite = host.open()
    in_thread(host)
    try:
        first = WatchSession(Profile.generate("w1"), invite, timing=FAST)
        first.connect()
        wait_until(lambda: len(host.watchers) == 1, what="the first watcher")
        second = WatchSession(Profile.generate("w2"), invite, timing=FAST)
        with pytest.raises(SessionError, match="the table has 1 watchers already"):
            second.connect()
        # The first stops reading and pinging: dropped after drop_after, the seats told nobody watches.
        wait_until(lambda: len(host.watchers) == 0, 5, "the silent watcher dropped")
        wait_until(lambda: any(isinstance(e, Watching) and e.count == 0 for e in events), 5, "the count told")
        first.close()
    finally:
        stop_all(host)


@pytest.mark.slow
def test_dicetable_watch_follows_a_table_of_two_processes_and_its_copy_agrees(tmp_path):
    host = spawn(tmp_path, "alice", "host", "trice", "--port", "0", "--bind", "127.0.0.1", "--bot", "random",
                 "--think", "0.05", "--name", "alice", "--transcript", str(tmp_path / "alice.dtt"))
    invite = read_invite(host)
    joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "random", "--think", "0.05", "--name", "bob",
                   "--transcript", str(tmp_path / "bob.dtt"))
    watcher = spawn(tmp_path, "wendy", "watch", invite, "--name", "wendy", "--transcript", str(tmp_path / "wendy.dtt"))
    code_w, out_w, err_w = finish(watcher)
    code_j, out_j, err_j = finish(joiner)
    code_h, out_h, err_h = finish(host)
    assert (code_w, code_j, code_h) == (0, 0, 0), err_w + err_j + err_h
    assert out_w.startswith("watching: TRICE, ") and "move: seat " in out_w
    assert last_line(out_w, "result:") == last_line(out_h, "result:")
    assert last_line(out_w, "transcript:") == str(tmp_path / "wendy.dtt")
    assert "watching: 1 watcher: wendy (" in out_h  # the host's seat saw who watched
    both = dicetable("verify", str(tmp_path / "bob.dtt"), str(tmp_path / "wendy.dtt"))
    assert both.returncode == 0 and both.stdout.splitlines()[-1].startswith("copies agree: 2 copies"), both.stdout


def test_dicetable_watch_with_a_bad_invite_says_one_line(tmp_path):
    bad = dicetable("watch", "dt1-nonsense")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "invite" in bad.stderr and "Traceback" not in bad.stderr
