"""Cheats on the log itself, performed through the real classes (real sockets on 127.0.0.1 where a
network is involved) and shown caught: a host that shows seats different logs (equivocation), a
player who rewrites its own past or regrinds its chain in its own transcript, a copied chain — and
`dicetable verify A B` telling agreeing copies from a fork, naming who signed it (FAIRNESS.md §3, §5).
"""

from __future__ import annotations

import random
import threading

import msgpack

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net.log import links
from dicetable.net import refusals
from dicetable.net.log import wire
from dicetable.net.log import transcript as tr
from dicetable.net.chance.reveal_chain import Chain
from dicetable.net.table.events import Refused
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import Table, play_table
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.log.verify import compare, verify
from dicetable.tui.cli import main
from net_helpers import FAST, in_thread, wait_until

ROOM = registry.get("diceroom")
TRICE = registry.get("trice")


class Equivocating(HostSession):
    """A host that shows seat 2 another roll than everyone else: a second frame signed with the same
    sequence number, and every unsigned reveal re-linked so that each branch looks whole on its own.
    Only the joiners' signed frames are beyond its reach."""

    victim = 2

    def open(self) -> str:
        self.branch: list[bytes] = []  # the log as the victim is shown it
        self.forked_at: int | None = None
        return super().open()

    def tell(self, peer, op, body):  # the host's own packets: tagged as genuinely its word
        if op == "entries" and self.routes.get(peer) == self.victim:
            body = {"start": body["start"],
                    "frames": [self._shown(body["start"] + i) for i in range(len(body["frames"]))]}
        super().tell(peer, op, body)

    def _relinked(self, env: wire.Envelope, heads: list[bytes]) -> bytes:
        return wire.make_frame(None, env.table, env.seat, env.seq, env.kind, env.body,
                               wire.Link(env.prev.entries, heads[env.prev.entries]), sign=False)

    def _heads(self, frames: list[bytes]) -> list[bytes]:
        heads = [links.genesis(self.replica.table)]
        for frame in frames:
            heads.append(links.extend(heads[-1], frame))
        return heads

    def _shown(self, index: int) -> bytes:
        while len(self.branch) <= index:
            i = len(self.branch)
            frame = self.replica.log[i].frame
            env = wire.decode(frame)
            if self.forked_at is None and env.seat == 0 and env.kind == "move" and env.body["move"][0] == "roll":
                self.forked_at = i  # the victim sees a d20 where everyone else sees a d6
                frame = wire.make_frame(self.profile, env.table, 0, env.seq, "move",
                                        wire.move_body(Move("roll", ("d20",))), env.prev)
            elif not env.signature:
                frame = self._relinked(env, self._heads(self.branch))
            self.branch.append(frame)
        return self.branch[index]

    def order(self, frame: bytes, origin: bytes | None) -> None:
        if origin is not None and self.routes.get(origin) == self.victim and self.forked_at is not None:
            env = wire.decode(frame)
            if not env.signature:  # the victim's reveal, re-linked into the branch everyone else has
                frame = self._relinked(env, [self.replica.head_at(n) for n in range(len(self.replica.log) + 1)])
        super().order(frame, origin)


@pytest.mark.slow
def test_a_host_that_shows_two_joiners_different_rolls_is_caught_and_verify_names_it(tmp_path):
    host = Equivocating(Profile.generate("host"), "diceroom", 3, {"rolls": 0}, timing=FAST,
                        transcript=tmp_path / "host.dtt")
    invite = host.open()
    in_thread(host)
    joiners = [PeerSession(Profile.generate(f"p{n}"), invite, timing=FAST, transcript=tmp_path / f"p{n}.dtt")
               for n in (1, 2)]
    heard = {id(p): [] for p in joiners}
    errors = {id(p): [] for p in joiners}
    for joiner in joiners:
        joiner.on_event = heard[id(joiner)].append

    def run(joiner):
        try:
            joiner.run()
        except SessionError as error:  # what `dicetable join` prints as its one line
            errors[id(joiner)].append(str(error))

    running = {id(p): threading.Thread(target=run, args=(p,), daemon=True) for p in joiners}
    for thread in running.values():
        thread.start()
    try:
        wait_until(lambda: all(p.replica is not None and p.replica.phase == "playing" for p in joiners),
                   what="the room to start")
        peers = {p.seat: p for p in joiners}  # seats go by arrival: name each joiner by the seat it got
        events = {seat: heard[id(p)] for seat, p in peers.items()}
        threads = {seat: running[id(p)] for seat, p in peers.items()}
        stopped = errors[id(peers[2])]
        host.move(Move("roll", ("d6",)))
        wait_until(lambda: all(len(p.replica.events) == 1 and p.replica.events[0].outcome is not None
                               for p in peers.values()), what="the roll to be decided at both joiners")
        one, two = (peers[s].replica.state.last for s in (1, 2))
        assert (one.expr, two.expr) == ("1d6", "1d20")  # each branch looks whole: the reveals were re-linked
        before = (len(peers[2].replica.log), peers[2].replica.state)
        # Seat 1's next signed frame builds on the log it was shown: seat 2 has another, and stops.
        wait_until(lambda: peers[1].replica.state.actor == 1, what="seat 1's turn")
        peers[1].move(Move("roll", ("d6",)))
        threads[2].join(10)
        assert not threads[2].is_alive() and "leaving a table whose log cannot be trusted" in stopped[0]
        refused = [e for e in events[2] if isinstance(e, Refused)]
        assert refused and refused[0].seat == 1 and "forked log" in refused[0].said
        assert "showed seats different logs" in refused[0].said
        assert (len(peers[2].replica.log), peers[2].replica.state) == before  # nothing of the fork taken in
    finally:
        for session in (host, *joiners):
            session.stop()
    # The two joiners' copies: each verifies up to where it is, and together they name the host.
    copies = [tr.read(tmp_path / f"p{s}.dtt") for s in (1, 2)]
    agreement = compare(copies)
    assert agreement.forker == 0 and "seat 0 (host) signed two different frames" in agreement.line()


class ResigningOwnMoves(HostSession):
    """A host that relays seat 1's own moves back to it with their signature altered (the seat skips
    verifying only a frame byte for byte its own, net/table/joiner.py: any change is checked in full)."""

    def tell(self, peer, op, body):
        if op == "entries":
            body = {**body, "frames": [self._altered(frame) for frame in body["frames"]]}
        super().tell(peer, op, body)

    def _altered(self, frame: bytes) -> bytes:
        envelope = wire.decode(frame)
        if envelope.seat != 1 or envelope.kind != "move":
            return frame
        signature = bytes([envelope.signature[0] ^ 1]) + envelope.signature[1:]
        return msgpack.packb([envelope.signed, signature], use_bin_type=True)


def test_a_seats_own_move_relayed_back_with_another_signature_is_refused_by_that_seat(tmp_path):
    host = ResigningOwnMoves(Profile.generate("host"), "diceroom", 2, {"expr": "2d6", "rolls": 20}, timing=FAST,
                             transcript=tmp_path / "h.dtt", chooser=bot_chooser(ROOM, "roller", 0))
    invite = host.open()
    thread = in_thread(host)
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt",
                      chooser=bot_chooser(ROOM, "roller", 1))
    bob.connect()
    with pytest.raises(SessionError, match="the move is not signed by seat 1 \\(bob\\)'s key"):
        bob.run()
    assert all(wire.decode(record.frame).seat != 1 or record.kind != "move" for record in bob.replica.log)
    host.stop()
    thread.join(10)


def _recorded_trice(tmp_path, seed=3):
    """A finished TRICE game by the protocol; the table keeps each seat's key, as each player has its own."""
    bots = [TRICE.bots["random"](TRICE, random.Random(seed + s)) for s in range(2)]
    path = tmp_path / "game.dtt"
    table = play_table(TRICE, {}, bots, ["ann", "bob"], random.Random(seed), transcript=path)
    return table, tr.read(path)


def _write(path, header, frames, result):
    data = tr.MAGIC + tr._record("header", header) + b"".join(tr._record("frame", f) for f in frames)
    path.write_bytes(data + (tr._record("result", result) if result is not None else b""))


def _relinked(frames: list[bytes], seat: int, profile: Profile, table: bytes) -> list[bytes]:
    """The log as a cheater at `seat` rebuilds it after changing its own frames: every frame it can
    make again — its own, signed with its key, and every unsigned reveal — re-linked to the new heads.
    Only the other seats' signed frames keep the links they were signed with."""
    heads, out = [links.genesis(table)], []
    for frame in frames:
        env = wire.decode(frame)
        link = wire.Link(env.prev.entries, heads[env.prev.entries])
        if not env.signature:
            frame = wire.make_frame(None, env.table, env.seat, env.seq, env.kind, env.body, link, sign=False)
        elif env.seat == seat:
            frame = wire.make_frame(profile, env.table, seat, env.seq, env.kind, env.body, link)
        out.append(frame)
        heads.append(links.extend(heads[-1], frame))
    return out


def test_a_player_who_rewrites_its_own_move_and_re_signs_it_is_caught(tmp_path):
    """Bob, with only his own key, replaces one of his placements in his copy by another legal one and
    signs it: his signature is fine, but ann's next frame builds on the log with his real move."""
    table, got = _recorded_trice(tmp_path)
    bob = table.seats[1].profile
    frames, envs = list(got.frames), [wire.decode(f) for f in got.frames]
    replica = type(table.host)()
    for i, env in enumerate(envs):
        if env.kind == "move" and env.seat == 1:
            others = [m for m in replica.state.legal_moves() if m.to_data() != env.body["move"]]
            if others:
                break
        replica.accept(frames[i])
    else:
        pytest.fail("bob never had a choice")
    frames[i] = wire.make_frame(bob, env.table, 1, env.seq, "move", wire.move_body(others[0]), env.prev)
    frames = _relinked(frames, 1, bob, env.table)
    _write(tmp_path / "rewritten.dtt", got.header, frames, got.result)
    verdict = verify(tmp_path / "rewritten.dtt")
    # The first frame that catches him is ann's next signed one built on the entry he changed (unless
    # his new move already makes a later step of the game illegal).
    later = next(n for n in range(i + 1, len(envs)) if envs[n].signature and envs[n].seat == 0
                 and envs[n].prev.entries > i)
    assert not verdict.valid and verdict.record <= later + 1
    assert (verdict.fault_kind, verdict.seat, verdict.record) == ("forked log", 0, later + 1) or \
        verdict.fault_kind in ("illegal move", "bad reveal")
    if verdict.fault_kind == "forked log":
        assert "differs from this one" in verdict.fault


def test_chain_regrind_in_the_dice_room_is_caught(tmp_path):
    """A player re-picks its chain in its own copy to get another roll: its join (and so every head
    after it) changes, and the other seats' signed links name the log they saw."""
    bots = [ROOM.bots["random"](ROOM, random.Random(s)) for s in range(2)]
    path = tmp_path / "room.dtt"
    table = play_table(ROOM, {"rolls": 3}, bots, ["ann", "bob"], random.Random(5), transcript=path)
    got = tr.read(path)
    bob = table.seats[1]
    frames, envs = list(got.frames), [wire.decode(f) for f in got.frames]
    regrind = Chain(got.header["table"], 1, length=envs[2].body["length"])  # bob's new secret
    for i, env in enumerate(envs):
        if env.seat == 1 and env.kind == "join":
            body = dict(env.body, anchor=regrind.anchor)
            frames[i] = wire.make_frame(bob.profile, env.table, 1, env.seq, "join", body, env.prev)
        elif env.seat == 1 and env.kind == "reveal":
            frames[i] = wire.make_frame(None, env.table, 1, env.seq, "reveal",
                                        wire.reveal_body(env.body["k"], regrind.reveal(env.body["k"])), env.prev, sign=False)
    frames = _relinked(frames, 1, bob.profile, got.header["table"])
    _write(tmp_path / "regrind.dtt", got.header, frames, got.result)
    verdict = verify(tmp_path / "regrind.dtt")
    assert not verdict.valid and verdict.fault_kind == "forked log" and verdict.seat == 0
    assert "differs from this one" in verdict.fault


def test_a_copied_chain_is_refused_at_join_and_cannot_be_opened_elsewhere():
    table = Table(ROOM, {"rolls": 2}, ["ann", "bob"])
    ann, bob = table.seats
    # bob's chain is bound to seat 1 of this table: its values open nothing at seat 0 or another table
    other = Table(ROOM, {"rolls": 2}, ["x", "y"])
    fresh = type(table.host)(other.table)
    fresh.accept(other.host.log[0].frame)
    fresh.accept(other.host.log[1].frame)  # seat 0 joined
    copy = wire.make_frame(bob.profile, other.table, 1, 0, "join",
                           wire.join_body("bob", bob.profile.public_key, other.seats[0].chains[0].anchor, 1024), fresh.head)
    before = (len(fresh.log), fresh.seats)
    with pytest.raises(refusals.BadJoin, match="copied chain") as caught:
        fresh.accept(copy)
    assert caught.value.seat == 1 and (len(fresh.log), fresh.seats) == before
    # a reveal of another seat's value is refused as not opening the revealer's chain
    room = Table(ROOM, {"rolls": 2}, ["ann", "bob"])
    room.post(room.seats[0].move(Move("roll", ("d6",))))
    value = room.seats[0].chains[0].reveal(1)
    stolen = room.seats[1].frame("reveal", wire.reveal_body(1, value), sign=False)
    with pytest.raises(refusals.BadReveal) as caught:
        room.host.accept(stolen)
    assert caught.value.seat == 1


def test_verify_two_honest_copies_agree_and_a_fork_names_its_signer(tmp_path, capsys):
    table, got = _recorded_trice(tmp_path)
    path = tmp_path / "game.dtt"
    _write(tmp_path / "short.dtt", got.header, got.frames[:-3], None)  # a copy that stopped early: a prefix
    assert main(["verify", str(path), str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("copies agree: 2 copies")
    main(["verify", str(path), str(tmp_path / "short.dtt")])
    assert capsys.readouterr().out.splitlines()[-1].startswith("copies agree")
    # Bob signs a second, different frame where his own frame stands; each copy holds one of them.
    table = Table(TRICE, {}, ["ann", "bob"])
    bob = table.seats[1]
    said = bob.frame("chat", wire.chat_body("gg"))
    table.post(said)
    bob.seq -= 1
    denied = bob.frame("chat", wire.chat_body("I never said that"))
    header = tr.header_for(table.host)
    log = [r.frame for r in table.host.log]
    _write(tmp_path / "a.dtt", header, log, None)
    _write(tmp_path / "b.dtt", header, log[:-1] + [denied], None)
    assert main(["verify", str(tmp_path / "a.dtt"), str(tmp_path / "b.dtt")]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    seq = wire.decode(said).seq
    assert last == f"copies fork: seat 1 (bob) signed two different frames with sequence number {seq}: it forked the log"
    # copies of two different tables are not compared
    (tmp_path / "other").mkdir()
    _recorded_trice(tmp_path / "other", seed=4)
    assert main(["verify", str(path), str(tmp_path / "other" / "game.dtt")]) == 2
    assert "different tables" in capsys.readouterr().err
