"""The fair dice room: the core game (core/diceroom.py) and `dicetable roll` among five processes."""

from __future__ import annotations

import random
import subprocess

import pytest

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, BadOption, Chance, IllegalMove, Move, Outcome
from dicetable.core.match import play_out
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from net_helpers import dicetable, read_invite, spawn, wait_until

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


def test_a_roll_in_full_notation_is_one_chance_with_every_draw_reserved():
    state = ROOM.start(2, {"expr": "6#4d6kh3"}).apply(Move("roll", ("1d20 + 5 [attack], 2d6r1",)))
    chance = state.chance()
    assert chance.label == "seat 0 rolls 1d20+5 [attack], 2d6r1" and chance.ranges == (20, 6, 6, 6, 6)
    outcome = Outcome((16, 0, 2, 3, 0))  # d20: 17; first d6: 1, rerolled to 3; second d6: 4 (its reroll unread)
    assert ROOM.describe_outcome(state, chance, outcome) == "attack: 22 [17], 7 [~1~ 3 4]"
    state = state.resolve(outcome)
    assert state.last.describe() == "attack: 22 [17], 7 [~1~ 3 4]"
    assert [(t.label, t.total) for t in state.last.tallies] == [("attack", 22), ("", 7)] and state.last.total == 29
    assert ROOM.load(state.to_data()) == state
    state = state.apply(Move("roll", ("6#4d6kh3",)))
    assert len(state.chance().ranges) == 24  # six rolls of four dice, one event
    said = Chance("seat 1 rolls 1d6 [she rolls high]", (6,))  # a label may say "rolls" too
    assert ROOM.describe_outcome(state, said, Outcome((5,))) == "she rolls high: 6 [6]"


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


def test_roll_with_a_malformed_expression_is_one_line_and_exit_2():
    run = dicetable("roll", "4d6kx3", "--host", "--port", "0")
    assert run.returncode == 2
    assert run.stderr == "dicetable: '4d6kx3': keep is written kh (highest) or kl (lowest), e.g. 4d6kh3\n"
    assert run.stdout == ""


def test_roll_says_where_an_expression_in_full_notation_goes_wrong():
    run = dicetable("roll", "1d20+5 [attack", "--host", "--port", "0")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == "dicetable: '1d20+5 [attack' at character 8: '[' is never closed: a label is written [like this]\n"


@pytest.mark.slow
def test_five_peers_roll_together_and_every_transcript_verifies(tmp_path):
    def roll(who: str, *args: str) -> subprocess.Popen:
        return spawn(tmp_path, who, "roll", *args, "--name", who)

    host = roll("gm", "4d6kh3", "--host", "--seats", "5", "--port", "0")
    invite = read_invite(host)
    joiners = [roll(f"p{i}", "--join", invite) for i in range(4)]
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


# -- a free room: anyone rolls at any moment (option turns false) -------------------------------------
FREE = {"expr": "d6", "turns": False}


def test_a_free_room_lets_any_seat_roll_and_queues_rolls_behind_the_one_being_decided():
    from dicetable.core.diceroom import MAX_QUEUED
    from dicetable.core.game import ANYONE

    state = ROOM.start(3, FREE)
    assert state.actor == ANYONE and all(state.may_act(s) for s in range(3)) and not state.may_act(3)
    state = state.apply_as(2, Move("roll", ("3d6",)))  # seat 2 first: there is no turn
    assert state.actor == CHANCE and state.chance().label == "seat 2 rolls 3d6"
    chance = state.chance()
    state = state.apply_as(0, Move("roll", ("d20",))).apply_as(1, Move("roll", ("2d4",)))
    assert state.chance() == chance and state.queue == ((0, "1d20", ""), (1, "2d4", ""))  # decided in log order
    assert ROOM.load(state.to_data()) == state
    state = state.resolve(Outcome((0, 1, 2)))
    assert state.last.seat == 2 and state.last.faces == (1, 2, 3) and state.chance().label == "seat 0 rolls 1d20"
    with pytest.raises(IllegalMove, match="only the host"):
        state.apply_as(1, Move("close"))
    with pytest.raises(IllegalMove, match="no turns to pass"):
        state.apply_as(1, Move("pass"))
    with pytest.raises(IllegalMove, match="no 'd'"):
        state.apply_as(1, Move("roll", ("3x6",)))
    with pytest.raises(IllegalMove, match="which seat"):
        state.apply(Move("roll", ("d6",)))
    for _ in range(MAX_QUEUED - 1):
        state = state.apply_as(1, Move("roll", ("d6",)))
    with pytest.raises(IllegalMove, match=f"already has {MAX_QUEUED} rolls"):
        state.apply_as(1, Move("roll", ("d6",)))
    # The host's close while rolls are queued: they are decided, nothing more is taken.
    state = state.apply_as(0, Move("close"))
    assert state.closing and state.result is None and not state.may_act(1)
    with pytest.raises(IllegalMove, match="closing"):
        state.apply_as(1, Move("roll", ("d6",)))
    while state.actor == CHANCE:
        state = state.resolve(LocalSource(random.Random(1)).outcome(state.chance()))
    assert state.result is not None and len(state.rolls) == 1 + 1 + MAX_QUEUED
    assert [r.seat for r in state.rolls] == [2, 0] + [1] * MAX_QUEUED


def test_the_replica_takes_a_roll_from_any_seat_and_keeps_the_open_event_as_it_is():
    from dicetable.net.log import wire
    from dicetable.net.table.local_seats import Table
    from dicetable.net.refusals import BadClaim, IllegalMoveRefused, NotDue
    from dicetable.net.log.replica import Waiting

    table = Table(ROOM, ROOM.resolve_options({**FREE, "rolls": 3}), ["ann", "bob", "cy"])
    assert table.host.waiting_for == Waiting("any", ())  # nobody is due: no clock, no default
    with pytest.raises(BadClaim):
        table.host.accept(table.seats[1].frame("claim", wire.claim_body(0, "slow")))
    table.seats[1].seq -= 1
    table.post(table.seats[2].move(Move("roll", ("2d6",))))
    event = table.host.pending
    assert event.label == "seat 2 rolls 2d6" and table.host.waiting_for == Waiting("reveal", (0, 1, 2))
    table.post(table.seats[0].reveal(1))
    record = table.post(table.seats[1].move(Move("roll", ("d20",))))  # queued: the event stays open
    assert record.note == "seat 1 (bob) rolls d20"
    pending = table.host.pending
    assert pending.number == 1 and pending.chance == event.chance and pending.missing == (1, 2)
    table.post(table.seats[0].move(Move("roll", ("d4",))))  # the third roll, queued too
    with pytest.raises(IllegalMoveRefused, match="closes after 3 rolls"):
        table.host.accept(table.seats[2].move(Move("roll", ("d6",))))
    table.seats[2].seq -= 1
    for seat in (1, 2):
        table.post(table.seats[seat].reveal(1))
    assert table.host.pending.number == 2 and table.host.pending.label == "seat 1 rolls 1d20"
    for seat in range(3):
        table.post(table.seats[seat].reveal(2))
    for seat in range(3):
        table.post(table.seats[seat].reveal(3))
    rolls = table.host.state.rolls
    assert [(r.seat, r.expr) for r in rolls] == [(2, "2d6"), (1, "1d20"), (0, "1d4")] and table.host.result is not None
    assert all(peer.state == table.host.state for peer in table.peers)
    with pytest.raises(NotDue):
        table.host.accept(table.seats[1].move(Move("roll", ("d6",))))


class _Rolls:
    """A seat that rolls `count` times as fast as the log takes them, never waiting for a roll to be
    decided; the host's seat closes the room once `total` rolls are decided."""

    def __init__(self, expr: str, count: int, total: int | None = None) -> None:
        self.expr, self.left, self.total = expr, count, total

    def __call__(self, view):
        if self.left:
            self.left -= 1
            return Move("roll", (self.expr,))
        if self.total is not None and len(view.rolls) == self.total and not view.pending:
            return Move("close")
        return None


@pytest.mark.slow
def test_three_peers_roll_at_once_over_sockets_and_every_transcript_holds_the_same_log(tmp_path):
    import threading

    from dicetable.net.table.host import HostSession
    from dicetable.net.identity import Profile
    from dicetable.net.table.joiner import PeerSession
    from dicetable.net.table.deadlines import Timing

    fast = Timing(heartbeat=0.1, drop_after=2.0, grace=30.0, reveal_deadline=30.0, connect_timeout=3.0)
    per_seat = 4
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"turns": False}, timing=fast,
                       chooser=_Rolls("3d6", per_seat, total=3 * per_seat), transcript=tmp_path / "ann.dtt")
    invite = host.open()
    peers = [PeerSession(Profile.generate(name), invite, timing=fast, chooser=_Rolls(expr, per_seat),
                         transcript=tmp_path / f"{name}.dtt") for name, expr in (("bob", "d20"), ("cy", "4dF"))]
    threads = [threading.Thread(target=s.run, daemon=True) for s in (host, *peers)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: all(s.replica is not None and s.replica.result is not None and s.finished for s in (host, *peers)),
              30, "every seat to see the room closed")
    finally:
        for session in (host, *peers):
            session.stop()
        for thread in threads:
            thread.join(5)
    rolls = host.replica.state.rolls
    assert sorted(r.seat for r in rolls) == [0] * per_seat + [1] * per_seat + [2] * per_seat
    # Nobody waited for a turn: each seat rolled again before its previous roll was decided.
    from dicetable.net.log.replica import Replica

    replay, queued = Replica(), 0
    for record in host.replica.log:
        if record.kind == "move" and record.move.kind == "roll" and replay.pending is not None:
            queued += 1
        replay.accept(record.frame)
    assert queued >= 3 * (per_seat - 1)
    logs = []
    for name in ("ann", "bob", "cy"):
        verdict = verify(tmp_path / f"{name}.dtt")
        assert verdict.valid, verdict.line()
        logs.append(read(tmp_path / f"{name}.dtt").frames)
        assert verdict.replica.state.rolls == rolls
        assert all(all(r is not None for r in event.reveals) for event in verdict.replica.events)
    assert logs[0] == logs[1] == logs[2]
    assert len({s.describe_result() for s in (host, *peers)}) == 1


@pytest.mark.slow
def test_dicetable_roll_host_and_joiners_who_roll_too_print_the_same_result(tmp_path):
    def roll(who: str, *args: str) -> subprocess.Popen:
        return spawn(tmp_path, who, "roll", *args, "--name", who)

    host = roll("gm", "3d6", "--host", "--seats", "3", "--port", "0", "--bind", "127.0.0.1")
    invite = read_invite(host)
    joiners = [roll("bob", "2d20kh1", "--join", invite), roll("cy", "--join", invite)]
    outputs = []
    for process in (*joiners, host):
        out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        outputs.append(out)
    results = {next(l for l in out.splitlines() if l.startswith("result: ")) for out in outputs}
    assert len(results) == 1, results
    line = results.pop()
    assert line.count(";") == 1 and "gm: " in line and "bob: " in line and "cy: " not in line
    paths = [next(l for l in out.splitlines() if l.startswith("transcript: "))[len("transcript: "):] for out in outputs]
    logs = [read(path).frames for path in paths]
    assert all(verify(path).valid for path in paths) and logs[0] == logs[1] == logs[2]


def test_roll_json_for_scripts_gives_each_roll_its_dice_and_its_checkable_line(tmp_path):
    """issue 33: `roll --join ... EXPR --json`: stdout is one JSON object (the usual lines on stderr)
    whose rolls carry who, what, each roll of the line with its dice, and the line verify confirms."""
    import json

    host = spawn(tmp_path, "gm", "roll", "d20", "--host", "--seats", "2", "--port", "0", "--name", "gm", "--json")
    invite = next(line[len("invite: "):].strip() for line in host.stderr if line.startswith("invite: "))  # on stderr
    player = spawn(tmp_path, "pc", "roll", "--join", invite, "2#1d20+5 [attack]", "--name", "pc", "--json")
    out, err = player.communicate(timeout=60)
    hosted, _ = host.communicate(timeout=30)
    assert player.returncode == 0 and host.returncode == 0, err
    assert json.loads(hosted)["rolls"] == json.loads(out)["rolls"]  # the host's object: the same rolls
    assert "result: " in err and "result: " not in out  # lines for people on stderr
    room = json.loads(out)  # stdout holds the object and nothing else
    by = {r["name"]: r for r in room["rolls"]}
    assert set(by) == {"gm", "pc"} and by["pc"]["expr"] == "2#1d20+5 [attack]"
    attacks = by["pc"]["rolls"]
    assert [a["label"] for a in attacks] == ["attack", "attack"]
    assert all(a["total"] == a["dice"][0] + 5 and 1 <= a["dice"][0] <= 20 for a in attacks)
    assert by["pc"]["total"] == sum(a["total"] for a in attacks)
    for roll in room["rolls"]:
        checked = dicetable("verify", room["transcript"], "--roll", roll["line"])
        assert checked.returncode == 0 and checked.stdout.startswith("roll confirmed: "), checked.stdout + checked.stderr


def test_roll_secret_among_three_processes_is_sealed_in_the_log_opened_at_the_close_and_checked_by_all(tmp_path):
    """issue 33: `dicetable roll EXPR --secret`: the joiner's roll goes in sealed (its expression and
    commitment signed before the reveals), the host's close waits for its opening, and every seat's
    copy holds the same opening that its replica checked; verify counts it as secret."""
    import json

    from dicetable.net.chance import secret_roll
    from dicetable.net.log import wire

    def roll(who: str, *args: str) -> subprocess.Popen:
        return spawn(tmp_path, who, "roll", *args, "--name", who)

    host = roll("gm", "d6", "--host", "--seats", "3", "--port", "0", "--bind", "127.0.0.1")
    invite = read_invite(host)
    joiners = [roll("bob", "1d20+5 [stealth]", "--join", invite, "--secret", "--json"), roll("cy", "--join", invite)]
    outputs = []
    for process in (*joiners, host):
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        outputs.append((out, err))
    rolls = json.loads(outputs[0][0])["rolls"]
    bobs = next(r for r in rolls if r["name"] == "bob")
    assert bobs["secret"] and not bobs["sealed"] and bobs["expr"] == "1d20+5 [stealth]"
    assert "bob rolls 1d20+5 [stealth] secretly: stealth: " in bobs["line"]
    path = next(l for l in outputs[2][0].splitlines() if l.startswith("transcript: "))[len("transcript: "):]
    frames = [wire.decode(f) for f in read(path).frames]
    move = next(i for i, e in enumerate(frames) if e.kind == "move" and e.body["move"][0] == "secret")
    opening = next(i for i, e in enumerate(frames) if e.kind == "unveil")
    first_reveal = next(i for i, e in enumerate(frames) if e.kind == "reveal" and i > move)
    close = next(i for i, e in enumerate(frames) if e.kind == "move" and e.body["move"][0] == "close")
    assert move < first_reveal < close < opening  # sealed before the reveals, opened as the room closed
    commit = frames[move].body["move"][2]
    assert secret_roll.commitment(frames[0].table, frames[move].seat, frames[opening].body["secret"]).hex() == commit
    verdicts = [verify(next(l for l in out.splitlines() if l.startswith("transcript: "))[len("transcript: "):])
                for out, _ in outputs[1:]]
    assert all(v.valid and ", 1 secret" in v.line() and "never opened" not in v.line() for v in verdicts), verdicts


def test_roll_secret_to_the_game_master_prints_the_dice_to_it_alone(tmp_path):
    """issue 33, PROTOCOL.md §16.6 step 7: `dicetable roll EXPR --join ... --secret --to gm`: the host
    (gm) prints `shown: only you and bob see it: ...` with the dice before the opening, the third process
    prints no such line, and the opening at the close gives every seat the dice gm was shown."""
    import json

    def roll(who: str, *args: str) -> subprocess.Popen:
        return spawn(tmp_path, who, "roll", *args, "--name", who)

    wrong = dicetable("roll", "d20", "--join", "x", "--to", "gm")
    assert wrong.returncode != 0 and "give --secret too" in wrong.stderr and "Traceback" not in wrong.stderr
    host = roll("gm", "d6", "--host", "--seats", "3", "--port", "0", "--bind", "127.0.0.1")
    invite = read_invite(host)
    joiners = [roll("bob", "1d20+5 [stealth]", "--join", invite, "--secret", "--to", "GM", "--json"), roll("cy", "--join", invite)]
    outputs = []
    for process in (*joiners, host):
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        outputs.append((out, err))
    bobs = next(r for r in json.loads(outputs[0][0])["rolls"] if r["name"] == "bob")
    shown = [line for line in outputs[2][0].splitlines() if line.startswith("shown: ")]
    assert shown == [f"shown: only you and bob see it: bob rolled 1d20+5 [stealth]: {bobs['line'].split('secretly: ')[1].split(' — table')[0]}"], (shown, bobs["line"])
    assert "shown: " not in outputs[1][0] and "shown: " not in outputs[0][1]
