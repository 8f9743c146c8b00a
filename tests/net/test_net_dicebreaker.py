"""Dice Breaker over real sockets on 127.0.0.1 (issue 7, "Must show"): four `dicetable` processes
finish a battle game whose four transcripts verify, and the Latent Dice claim step over the network:
a seat that does not answer within the answer deadline declines, and stays in the game.
"""

from __future__ import annotations

import functools
import subprocess
import threading
from pathlib import Path

import pytest

from dicetable.core import registry
from dicetable.net import wire
from dicetable.net.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.peer import PeerSession
from dicetable.net.session import Timing, bot_chooser
from dicetable.net.transcript import read
from dicetable.net.verify import verify
from net_helpers import COMMAND, last_line, read_invite, spawn
from tui_pilot import paste_invite
from tui_pilot import wait_until as wait_a_while

wait_for = functools.partial(wait_a_while, timeout=30.0, step=0.05)  # a network table

GAME = registry.get("dicebreaker")


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "home"))


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
    check = subprocess.run([str(COMMAND), "verify", str(tmp_path / "dee.dtt")], capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.strip() == verify(tmp_path / "dee.dtt").line()
    moves = moves_in(logs[0])
    assert {seat for seat, _ in moves} == {0, 1, 2, 3}
    assert ["throw", "T"] in [move for _, move in moves]  # battle: the Trump Die opens each round
    assert any(move[0] == "latent" for _, move in moves)  # the claim step happened over the network
    assert_sealed(logs[0])


class SilentOnTheClaim(PeerSession):
    """A seat that throws at once but never answers a Latent Dice claim (a person who looked away)."""

    def play(self, move) -> None:
        if move.kind != "latent":
            super().play(move)


def in_thread(session) -> threading.Thread:
    thread = threading.Thread(target=session.run, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_a_seat_that_does_not_answer_the_latent_claim_in_time_declines_and_plays_on(tmp_path):
    timing = Timing(heartbeat=0.1, drop_after=2.0, grace=30.0, reveal_deadline=30.0, connect_timeout=3.0,
                    answer_deadline=0.3)
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
    claimable = [e for e in events if e.kind == "claimable" and e.seat == seat]
    assert claimable and "did not answer within 0.3 s: latent no" in claimable[0].text
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
    notes = [record.note for record in host.replica.log if record.kind == "claim"]
    assert any("did not answer in time" in note and "latent no" in note for note in notes)
    assert_sealed(log)


@pytest.mark.slow
async def test_the_app_joins_a_three_seat_battle_and_plays_it_by_keys(tmp_path, monkeypatch):
    from dicetable.core.dicebreaker import LATENT, THROW, TRUMP_THROW
    from dicetable.tui.app import DiceTableApp
    from dicetable.tui.screens.dialogs import GameOverDialog
    from dicetable.tui.screens.dicebreaker_screen import DiceBreakerScreen

    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path / "data"))
    host = spawn(tmp_path, "ann", "host", "dicebreaker", "--seats", "3", "--option", "mode=battle",
                 "--option", "target=4", "--option", "spinning_num=1", "--option", "spinning_den=3",
                 "--port", "0", "--bot", "greedy", "--seed", "3", "--name", "ann",
                 "--transcript", str(tmp_path / "ann.dtt"))
    joiner = None
    try:
        invite = read_invite(host)
        joiner = spawn(tmp_path, "bob", "join", invite, "--bot", "greedy", "--seed", "4", "--name", "bob",
                       "--transcript", str(tmp_path / "bob.dtt"))
        app = DiceTableApp(profile_dir=tmp_path / "cy")
        async with app.run_test(size=(80, 24)) as pilot:
            await paste_invite(pilot, app, invite)
            await wait_for(pilot, lambda: isinstance(app.screen, DiceBreakerScreen))
            screen = app.screen
            answered = thrown = 0
            while True:
                await wait_for(pilot, lambda: screen.view.result is not None or screen.view.my_turn())
                if screen.view.result is not None:
                    break
                state = screen.view.state
                if state.phase == LATENT:
                    # Asked with every other seat's answer still sealed: none is opened yet.
                    sealing = screen.controller.session.replica.sealing
                    assert sealing is not None and not any(sealing.answers), sealing
                    await pilot.press("y" if answered % 2 else "n")
                    answered += 1
                else:
                    assert state.phase in (THROW, TRUMP_THROW)
                    await pilot.press("enter" if thrown % 2 and screen.targets() else "r")
                    thrown += 1
                await wait_for(pilot, lambda: screen.view.state is not state or screen.view.result is not None)
                assert thrown + answered < 200
            assert thrown
            await wait_for(pilot, lambda: isinstance(app.screen, GameOverDialog))
            await pilot.press("escape")
            # The fairness panel lists every throw with each of the three seats' reveals checked.
            events = screen.view.events
            assert events and all(e.status == "verified" and len(e.reveals) == 3 for e in events)
            assert any(" shows " in e.outcome for e in events)
            await pilot.press("v")
            verdict = str(screen.query_one("#fair-verify").render())
            assert "valid: dicebreaker" in verdict, verdict
            transcript = Path(screen.view.transcript)
        out_h, err_h = host.communicate(timeout=30)
        out_j, err_j = joiner.communicate(timeout=30)
    finally:
        for process in (host, joiner):
            if process is not None and process.poll() is None:
                process.kill()
    assert host.returncode == 0, err_h
    assert joiner.returncode == 0, err_j
    assert last_line(out_h, "result:") == last_line(out_j, "result:")
    assert read(transcript).frames == read(tmp_path / "ann.dtt").frames
    assert verify(tmp_path / "bob.dtt").valid
