"""A secret roll shown to the game master (issue 33, PROTOCOL.md §16.6 step 7) over real sockets on
127.0.0.1: Cy rolls secretly for Bob; Bob's client opens the box, checks it against the commitment and
sees Cy's dice before any opening, while Ann — who holds every frame of the log — never gets the
secret and cannot draw them; the later opening is checked as any. A box that does not open, or holds
another secret, is told to Bob as Cy's fault, and the opening is still checked."""

from __future__ import annotations

import pytest

from dicetable.core.dice_expr import parse
from dicetable.core.game import Move
from dicetable.net.chance import secret_roll
from dicetable.net.identity import Profile
from dicetable.net.log.verify import verify
from dicetable.net.table import room_part
from dicetable.net.table.answer_path import open_box, seal
from dicetable.net.table.events import Fault, SecretShown
from dicetable.net.table.host import HostSession
from dicetable.net.table.joiner import PeerSession
from net_helpers import in_thread, wait_until
from test_room_stays import FAST, decided


def three(tmp_path):
    """Ann hosts a free dice room; Bob and Cy join; each session's events are kept."""
    events = {"ann": [], "bob": [], "cy": []}
    host = HostSession(Profile.generate("ann"), "diceroom", 3, {"turns": False}, timing=FAST,
                       transcript=tmp_path / "ann.dtt", on_event=events["ann"].append)
    invite = host.open()
    bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt",
                      on_event=events["bob"].append)
    cy = PeerSession(Profile.generate("cy"), invite, timing=FAST, transcript=tmp_path / "cy.dtt",
                     on_event=events["cy"].append)
    sessions = [host, bob, cy]
    for session in sessions:
        in_thread(session)
    wait_until(lambda: all(s.replica is not None and s.replica.phase == "playing" for s in sessions), 20, "the room to open")
    return sessions, events


def told(events) -> list[str]:
    return [e.said for e in events if isinstance(e, SecretShown)]


def faults(events) -> list[str]:
    return [str(e.said) for e in events if isinstance(e, Fault)]


@pytest.mark.slow
def test_the_game_master_sees_the_dice_now_and_the_third_seat_cannot(tmp_path):
    (ann, bob, cy), events = three(tmp_path)
    try:
        cy.roll_secretly("1d20+3 [stealth]", to=bob.seat)
        wait_until(lambda: all(decided(s, 1) for s in (ann, bob, cy)), 20, "cy's secret roll")
        k = len(ann.replica.events)
        (commit, (roller, to, box)), = ann.replica.shown.items()  # every replica records who it was shown to
        assert (roller, to) == (cy.seat, bob.seat) and ann.replica.state.rolls[0].secret == commit
        mine = cy.own.room.peek(k)
        wait_until(lambda: bob.own.room.peek(k) is not None, 10, "bob to open the box")
        assert bob.own.room.peek(k) == mine  # the game master sees what the roller saw, before any opening
        assert ann.own.room.peek(k) is None and bob.replica.state.rolls[0].sealed
        wait_until(lambda: told(events["bob"]), 10, "bob to be told the dice")
        dice = parse("1d20+3 [stealth]").describe(parse("1d20+3 [stealth]").faces(mine))
        assert told(events["bob"]) == [f"only you and cy see it: cy rolled 1d20+3 [stealth]: {dice}"]
        assert not told(events["ann"]) and not told(events["cy"])
        # Ann holds every frame of the log and its own keys: the box does not open for her, and the
        # secret appears in nothing she received or wrote.
        secret = cy.own.room.secrets[commit]
        for key in (cy.own.profile.public_key, bob.own.profile.public_key):
            assert open_box(ann.own.held.box(key), ann.replica.table, roller, to, box) is None
        assert all(secret not in record.envelope.frame for record in ann.replica.log)
        assert secret not in (tmp_path / "ann.dtt").read_bytes()
        assert not faults(events["bob"])
        cy.unveil()  # the opening shows everybody the same dice, checked by every replica
        wait_until(lambda: all(not s.replica.state.rolls[0].sealed for s in (ann, bob, cy)), 20, "the opening")
        assert ann.replica.state.rolls[0].faces == tuple(v + 1 for v in mine)
        ann.move(Move("close"))
        wait_until(lambda: all(s.replica.result is not None for s in (ann, bob, cy)), 20, "the room to close")
    finally:
        for session in (ann, bob, cy):
            session.stop()
    for name in ("ann", "bob", "cy"):
        verdict = verify(tmp_path / f"{name}.dtt")
        assert verdict.valid and ", 1 secret" in verdict.line(), verdict.line()


@pytest.mark.slow
@pytest.mark.parametrize("cheat, said", [
    ("another secret", "a secret that is not the roll's commitment"),
    ("no box", "a box that does not open"),
])
def test_a_wrong_box_to_the_game_master_is_told_and_the_opening_still_checked(tmp_path, monkeypatch, cheat, said):
    def forged(box, table, sender, receiver, secret):
        if cheat == "another secret":
            return seal(box, table, sender, receiver, secret_roll.fresh_secret())
        return bytes(552)  # the size of a real box, opening under no key

    monkeypatch.setattr(room_part, "seal", forged)
    (ann, bob, cy), events = three(tmp_path)
    try:
        cy.roll_secretly("1d20", to=bob.seat)
        wait_until(lambda: all(decided(s, 1) for s in (ann, bob, cy)), 20, "cy's secret roll")
        wait_until(lambda: faults(events["bob"]), 10, "bob to be told")
        (line,) = faults(events["bob"])
        assert said in line and "cy" in line, line
        k = len(bob.replica.events)
        assert bob.own.room.peek(k) is None and not told(events["bob"]) and not faults(events["ann"])  # no dice from a bad box
        mine = cy.own.room.peek(k)
        cy.unveil()
        wait_until(lambda: all(not s.replica.state.rolls[0].sealed for s in (ann, bob, cy)), 20, "the opening")
        assert bob.replica.state.rolls[0].faces == (mine[0] + 1,)
    finally:
        for session in (ann, bob, cy):
            session.stop()
