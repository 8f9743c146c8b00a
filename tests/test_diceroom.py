"""The fair dice room: the core game (core/diceroom.py) and `dicetable roll` among five processes."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from core import registry
from core.chance import LocalSource
from core.game import CHANCE, BadOption, IllegalMove, Move, Outcome
from core.match import play_out
from net.transcript import read
from net.verify import verify

ROOT = Path(__file__).resolve().parent.parent
COMMAND = Path(sys.executable).with_name("dicetable")
ROOM = registry.get("diceroom")


def test_a_roll_is_a_chance_with_one_range_per_die():
    state = ROOM.start(3, {"expr": "4d6kh3"})
    assert state.actor == 0
    state = state.apply(Move("roll", ("2d10+4",)))
    assert state.actor == CHANCE
    assert state.chance().ranges == (10, 10)
    state = state.resolve(Outcome((9, 0)))
    assert state.last.faces == (10, 1) and state.last.total == 15
    assert state.last.describe() == "15 [10 1]"
    assert state.actor == 1  # the turn passes on after a roll


def test_any_well_formed_expression_is_legal_and_a_bad_one_is_refused():
    state = ROOM.start(2, {})
    legal = state.legal_moves()
    assert Move("roll", ("4dF",)) in legal and Move("roll", ("d20",)) in legal
    assert Move("roll", ("3x6",)) not in legal and Move("dance") not in legal
    with pytest.raises(IllegalMove, match="no 'd'"):
        state.apply(Move("roll", ("3x6",)))
    with pytest.raises(IllegalMove, match="a roll is being decided"):
        state.apply(Move("roll", ("d6",))).apply(Move("pass"))


def test_pass_close_and_the_roll_limit_end_the_room():
    state = ROOM.start(2, {}).apply(Move("pass"))
    assert state.actor == 1
    closed = state.apply(Move("close"))
    assert closed.actor is None and "seat 1 closed the room" in closed.result.reason
    once = ROOM.start(2, {"expr": "3d6", "rolls": 1}).apply(Move("roll", ("3d6",))).resolve(Outcome((5, 5, 5)))
    assert once.result is not None and once.result.reason == "1 roll: 18 [6 6 6]"


def test_bots_roll_the_room_expression_and_states_round_trip():
    state = ROOM.start(3, {"expr": "4dF", "rolls": 6})
    bots = [ROOM.bots["random"](ROOM, random.Random(seat)) for seat in range(3)]
    final, steps = play_out(state, bots, LocalSource(random.Random(5)))
    assert len(final.rolls) == 6 and [r.seat for r in final.rolls] == [0, 1, 2, 0, 1, 2]
    assert all(r.expr == "4dF" and set(r.faces) <= {-1, 0, 1} for r in final.rolls)
    assert ROOM.load(final.to_data()) == final


def test_a_room_with_a_bad_expression_option_is_refused():
    with pytest.raises(BadOption, match="option expr: '2q6'"):
        ROOM.start(2, {"expr": "2q6"})


def test_roll_with_a_malformed_expression_is_one_line_and_exit_2(tmp_path):
    run = subprocess.run([str(COMMAND), "roll", "4d6kx3", "--host", "--port", "0"], capture_output=True, text=True,
                         env={**os.environ, "DICETABLE_HOME": str(tmp_path)})
    assert run.returncode == 2
    assert run.stderr == "dicetable: '4d6kx3': keep is written kh (highest) or kl (lowest), e.g. 4d6kh3\n"
    assert run.stdout == ""


@pytest.mark.slow
def test_five_peers_roll_together_and_every_transcript_verifies(tmp_path):
    def spawn(who, *args):
        env = {**os.environ, "DICETABLE_HOME": str(tmp_path / who)}
        return subprocess.Popen([str(COMMAND), "roll", *args, "--name", who], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)

    host = spawn("gm", "4d6kh3", "--host", "--seats", "5", "--port", "0")
    invite = next(line.split()[1] for line in host.stdout if line.startswith("invite: "))
    joiners = [spawn(f"p{i}", "--join", invite) for i in range(4)]
    outputs = []
    for process in (*joiners, host):
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        outputs.append((out if process is not host else "".join(["invite: x\n", out])))
    results = {next(l for l in out.splitlines() if l.startswith("result: ")) for out in outputs}
    assert len(results) == 1, results  # every seat saw the same dice
    total, dice = results.pop()[len("result: "):].split(" ", 1)
    faces = dice.strip("[]").split()
    assert len(faces) == 4 and sum(1 for f in faces if f.startswith("(")) == 1
    assert int(total) == sum(int(f) for f in faces if not f.startswith("("))
    paths = [next(l for l in out.splitlines() if l.startswith("transcript: "))[len("transcript: "):] for out in outputs]
    logs = []
    for path in paths:
        verdict = verify(path)
        assert verdict.valid, verdict.line()
        logs.append(read(path).frames)
    assert all(log == logs[0] for log in logs)
    event = verdict.replica.events[0]
    assert all(reveal is not None for reveal in event.reveals) and len(event.reveals) == 5  # all five took part
