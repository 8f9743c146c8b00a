"""A relay or a bad link can stop a game, never decide it (issue 37, FAIRNESS.md §5b): 2 and 3 seats
through the real relay misbehaving on what it carries (tests/misbehaving_relay.py), every mode.

The outcome rule: the game finishes with every copy agreeing; or, where the relay starves or cuts a
seat, it stops with a clear line on every starved seat and every copy labels what happened —
never a clean default against an honest seat that is present, never a record of an honest seat
forking the log, never a seat stuck without a word for more than 5 s."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from dicetable.net.log.transcript import read
from dicetable.net.log.verify import compare, verify
from dicetable.net.reach.transport import curve_keypair
from misbehaving_relay import MODES, MisbehavingRelay, misbehaviour, relay_table
from net_helpers import FAST, Running, stop_all, wait_until

# Short clocks: a present seat answers well inside them, a starved one runs out of them soon.
CLOCKS = replace(FAST, grace=8.0, reveal_deadline=2.0, answer_deadline=2.0, connect_timeout=10.0)
BENIGN = ("delay", "jitter", "drop", "duplicate", "reorder", "replay")  # the game must finish, unharmed
SAYING = ("Stalled", "ClaimDisputed", "Claimable", "Cut", "Unwitnessed", "Dropped")  # a seat saying why the game does not go on
SAY_WITHIN = 5.0
# How long a starved table is watched for a false default: past the deadline, within the grace (past
# the grace a seat that never acknowledges what it is sent is claimable as an absent one is: a relay
# could as well cut it, PROTOCOL.md §7.5).
WATCH = CLOCKS.reveal_deadline + 1.0


def said(events) -> list:
    return [e for e in events if type(e).__name__ in SAYING]


@pytest.mark.slow
@pytest.mark.parametrize("seats", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_a_relay_can_stop_a_game_never_decide_it(tmp_path, mode, seats):
    # A late, doubled or crossed path runs from the first packet, joins included; a lossy one (a seat
    # hold is short on these clocks) and one aimed at seat 1 (its join is a submission too) begin once
    # the game is under way, in a room long enough not to end before.
    behaviour = misbehaviour(mode, size=0.5)  # a short game still meets every packet late
    early = mode in BENIGN and mode != "drop"
    running = Running(MisbehavingRelay(curve_keypair()[1], "127.0.0.1", 0, seed=seats, behaviour=behaviour if early else None))
    sessions, heard = [], []  # heard: (when, seat, event)
    try:
        sessions, events = relay_table(running, tmp_path, seats, CLOCKS, game="diceroom",
                                       options={"rolls": 6 if early else 20},
                                       on_event=lambda seat, e: heard.append((time.monotonic(), seat, e)))
        wait_until(lambda: all(s.replica is not None and s.replica.phase in ("playing", "over") for s in sessions),
                   timeout=20, what="the game to start")
        running.server.behave(behaviour)
        started = time.monotonic()
        if mode in BENIGN:
            wait_until(lambda: all(s.finished for s in sessions), timeout=60, what=f"the game to finish through a relay that does {mode}")
        else:  # the starved or cut seat says why within SAY_WITHIN s of when the relay began
            wait_until(lambda: sessions[1].finished or said(events[1]), timeout=SAY_WITHIN + 10,
                       what=lambda: f"seat 1 to say why the game stops ({mode}): {[type(e).__name__ for e in events[1]][-8:]}")
            if not sessions[1].finished:
                first = min(when for when, seat, e in heard if seat == 1 and said([e]))
                assert first - started <= SAY_WITHIN + 3, (mode, first - started)  # 3 s: a busy machine's slack
            # The others wait for seat 1 (a move has no deadline here, a reveal 2 s): what their clocks
            # then do — claims, witnesses — must not make a clean default of an honest seat.
            wait_until(lambda: all(s.finished for s in sessions) or time.monotonic() > started + WATCH, timeout=WATCH + 5)
    finally:
        stop_all(*sessions)
        running.stop()
    did = {"delay": "held", "jitter": "held", "reorder": "held", "drop": "dropped", "duplicate": "doubled",
           "replay": "replayed"}.get(mode, "starved")
    assert running.server.counts[did] > 0, (mode, running.server.counts)  # the relay did misbehave
    paths = sorted(tmp_path.glob("*.dtt"))
    verdicts = {p.stem: verify(p) for p in paths}
    for name, verdict in verdicts.items():
        line = verdict.line()
        refused = read(tmp_path / f"{name}.dtt").refused
        assert not [r for _, r in refused if "equivocation" in r or "forked" in r], (name, refused)
        if mode in BENIGN:
            assert verdict.valid and "in default" not in line and not refused, (mode, name, line, refused)
        elif "in default" in line and mode != "cut":
            assert "disputed" in line or "unwitnessed" in line, (mode, name, line)
    if mode in BENIGN:
        assert compare([read(p) for p in paths]).fork is None, [v.line() for v in verdicts.values()]
