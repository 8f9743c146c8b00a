"""Dice Breaker over real sockets on 127.0.0.1 (issue 7, "Must show"): four `dicetable` processes
finish a battle game whose four transcripts verify, and the Latent Dice claim step over the network:
a seat that does not answer within the answer deadline declines, and stays in the game (the app at a
battle table: tests/tui/test_tui_net_games.py).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from dicetable.core import registry
from dicetable.net.log import wire
from dicetable.net.table.events import Claimable
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import bot_chooser
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from net_helpers import LATE, dicetable, in_thread, last_line, read_invite, spawn

GAME = registry.get("dicebreaker")


def moves_in(frames) -> list[tuple[int, list]]:
    """(seat, move data) of every move in a log, sealed answers as they are opened."""
    found = []
    for frame in frames:
        envelope = wire.decode(frame)
        if envelope.kind in ("move", "unseal"):
            found.append((envelope.seat, envelope.body["move"]))
    return found


def assert_sealed(frames) -> None:
    """Every Latent Dice answer went sealed: at each step, no answer was opened before every seat
    asked had sealed its own, and every answer opened was sealed first by the same seat."""
    envelopes = [wire.decode(frame) for frame in frames]
    sealed = [e for e in envelopes if e.kind in ("seal", "unseal")]
    assert sealed and not [e for e in envelopes if e.kind == "move" and e.body["move"][0] == "latent"]
    for step in {e.body["step"] for e in sealed}:
        kinds = [(e.kind, e.seat) for e in sealed if e.body["step"] == step]
        seals = [seat for kind, seat in kinds if kind == "seal"]
        opened = [seat for kind, seat in kinds if kind == "unseal"]
        assert kinds[:len(seals)] == [("seal", s) for s in seals] and set(opened) <= set(seals), kinds


@pytest.mark.slow
def test_four_processes_finish_a_battle_game_whose_transcripts_all_verify(tmp_path):
    names = ["ann", "bob", "cy", "dee"]
    host = spawn(tmp_path, "ann", "host", "dicebreaker", "--seats", "4", "--option", "mode=battle",
                 "--option", "target=15", "--port", "0", "--bind", "127.0.0.1", "--bot", "greedy",
                 "--seed", "1", "--name", "ann", "--transcript", str(tmp_path / "ann.dtt"))
    joiners = []
    try:
        invite = read_invite(host)
        for n, name in enumerate(names[1:], start=2):
            bot = "search" if name == "bob" else "random" if name == "cy" else "greedy"
            joiners.append(spawn(tmp_path, name, "join", invite, "--bot", bot, "--seed", str(n), "--name", name,
                                 "--transcript", str(tmp_path / f"{name}.dtt")))
        outputs = [process.communicate(timeout=90) for process in joiners]
        outputs.insert(0, host.communicate(timeout=30))
    finally:
        for process in [host, *joiners]:
            if process.poll() is None:
                process.kill()
    for process, (out, err) in zip([host, *joiners], outputs):
        assert process.returncode == 0, err
    results = {last_line(out, "result:") for out, _ in outputs}
    assert len(results) == 1, results
    # The dice are the table's fair dice, so the game ends either at the target or, rarely, at
    # once by a five of a kind (dicebreaker.md, "Start and end of the game").
    result = results.pop()
    assert "(15 points)" in result or "(five of a kind)" in result, result
    logs = []
    for name in names:
        path = tmp_path / f"{name}.dtt"
        verdict = verify(path)
        assert verdict.valid and verdict.line().startswith("valid: dicebreaker,"), verdict.line()
        logs.append(read(path).frames)
    assert all(log == logs[0] for log in logs)  # one log, four copies
    check = dicetable("verify", str(tmp_path / "dee.dtt"))
    assert check.returncode == 0 and check.stdout.strip() == verify(tmp_path / "dee.dtt").line()
    moves = moves_in(logs[0])
    assert {seat for seat, _ in moves} == {0, 1, 2, 3}
    assert ["throw", "T"] in [move for _, move in moves]  # battle: the Trump Die opens each round
    assert any(move[0] == "latent" for _, move in moves)  # the claim step happened over the network
    assert_sealed(logs[0])


class SilentSeat(Seat):
    """A seat that throws at once but never answers a Latent Dice claim (a person who looked away)."""

    def play(self, move) -> None:
        if move.kind != "latent":
            super().play(move)


class SilentOnTheClaim(PeerSession):
    seat_type = SilentSeat


@pytest.mark.slow
def test_a_seat_that_does_not_answer_the_latent_claim_in_time_declines_and_plays_on(tmp_path):
    timing = replace(LATE, reveal_deadline=30.0, answer_deadline=1.0)
    # Every landed die spins, so the claim step comes at once and often; 3 points end the game soon.
    options = {"mode": "battle", "spinning_num": 1, "spinning_den": 1, "target": 3}
    events = []
    host = HostSession(Profile.generate("host"), "dicebreaker", 3, options, timing=timing,
                       chooser=bot_chooser(GAME, "greedy", 1), on_event=events.append,
                       transcript=tmp_path / "host.dtt")
    invite = host.open()
    threads = [in_thread(host)]
    helper = PeerSession(Profile.generate("helper"), invite, timing=timing, chooser=bot_chooser(GAME, "greedy", 2),
                         transcript=tmp_path / "helper.dtt")
    helper.connect()
    threads.append(in_thread(helper))
    silent = SilentOnTheClaim(Profile.generate("silent"), invite, timing=timing,
                              chooser=bot_chooser(GAME, "greedy", 3), transcript=tmp_path / "silent.dtt")
    silent.connect()
    try:
        result = silent.run()
        for thread in threads:
            thread.join(15)
    finally:
        for session in (host, helper, silent):
            session.stop()
    # Fair dice: the game ends at the target or, now and then, by a five of a kind.
    assert result is not None and ("points" in result.reason or "five of a kind" in result.reason), result
    seat = silent.seat
    claimable = [e for e in events if isinstance(e, Claimable) and e.seat == seat]
    assert claimable and f"did not answer within {timing.answer_deadline:g} s: latent no" in claimable[0].why
    for path in ("host.dtt", "helper.dtt", "silent.dtt"):
        assert verify(tmp_path / path).valid, verify(tmp_path / path).line()
    log = read(tmp_path / "host.dtt").frames
    kinds = [wire.decode(frame) for frame in log]
    claims = [e for e in kinds if e.kind == "claim" and e.body["against"] == seat]
    assert claims, "nobody claimed the silent seat's answer"
    # Its answers were given for it: it never sent one, yet every claim step went on without a default.
    assert not [m for s, m in moves_in(log) if s == seat and m[0] == "latent"]
    assert host.replica.out == frozenset()
    first_claim = kinds.index(claims[0])
    later = [wire.decode(f) for f in log[first_claim + 1:]]
    assert any(e.kind == "move" and e.seat == seat and e.body["move"][0] == "throw" for e in later), \
        "the seat that declined late was put out of the game instead of playing on"
    # Three seats: each claim took effect on a second seat's witness (FAIRNESS.md §4), which says what it did.
    notes = [record.note for record in host.replica.log if record.kind == "witness"]
    assert any("did not answer in time" in note and "latent no" in note for note in notes)
    assert all(c.witnesses for c in host.replica.claims if c.state == "answered")
    assert_sealed(log)
