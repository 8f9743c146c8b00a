"""The networked rematch (issue 19): agreed through the signed log, with the next game's options
following from the last game's end as every replica and `dicetable verify` recompute them (TRIAD:
the colours stay, the other player starts, triad.md Setup 3) — in-process tables through the real
Replica, sessions on 127.0.0.1, `dicetable host/join --games N` processes, and the cheats: a host
that starts the rematch with itself first again, a next game no joiner consented to.
"""

from __future__ import annotations

import random

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.net import refusals
from dicetable.net.log import wire
from dicetable.net.table.events import Ended, Failed, RematchAnswered, RematchGone, Started
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import Table
from dicetable.net.table.joiner import PeerSession
from dicetable.net.log.records import Effect
from dicetable.net.log.rematch import Rematches
from dicetable.net.log.replica import Replica
from dicetable.net.table.seat import Seat
from dicetable.net.table.series import Series
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.log.transcript import TranscriptWriter, header_for, read
from dicetable.net.log.verify import compare, verify
from net_helpers import FAST, dicetable, host_and_join, in_thread, last_line

TRIAD = registry.get("triad")
TRICE = registry.get("trice")


def bots(game, seed: int):
    return [game.bots["greedy"](game, random.Random(seed + s)) for s in range(2)]


def finished_table(tmp_path=None, seed: int = 1, game=TRIAD) -> Table:
    """A two-seat table whose first game is over (its transcript kept open for what follows)."""
    table = Table(game, {}, ["ann", "bob"], transcript=tmp_path / "table.dtt" if tmp_path else None)
    table.play(bots(game, seed), random.Random(seed), close=False)
    return table


def snapshot(replica: Replica) -> tuple:
    return (len(replica.log), replica.phase, replica.game_number, replica.consents, replica.declined, replica.state)


def refused(table: Table, seat, frame: bytes, fault, match: str) -> None:
    """Every replica refuses `frame`, naming `seat.seat`, and none of them moves."""
    for replica in (table.host, *table.peers):
        before = snapshot(replica)
        with pytest.raises(fault, match=match) as caught:
            replica.accept(frame)
        assert caught.value.seat == seat.seat
        assert snapshot(replica) == before
    seat.seq -= 1  # the refused frame did not count


def test_a_rematch_is_agreed_in_the_log_and_the_other_player_starts_with_the_same_colours(tmp_path):
    table = finished_table(tmp_path)
    host, ann, bob = table.host, *table.seats
    first = host.state
    assert host.phase == "over" and host.waiting_for.action == "nothing"
    assert host.next_options == {**host.options, "black": f"seat{first.black}",
                                 "first": "white" if first.option["first"] == "black" else "black"}
    table.post(ann.rematch())  # an offer: nothing starts until every seat agrees
    assert host.phase == "over" and host.consents == (True, None)
    assert host.waiting_for.action == "rematch" and host.waiting_for.seats == (1,)
    record = table.post(bob.rematch())
    assert "game 2 starts" in record.note
    for replica in (host, *table.peers):  # every copy starts the same game at the same record
        assert replica.phase == "playing" and replica.game_number == 2 and replica.game_start == record.index
        assert replica.state.black == first.black and replica.state.first == 1 - first.first
        assert replica.results == (first.result,) and replica.result is None and replica.options == host.options
    table.play(bots(TRIAD, 5), random.Random(5), close=False)
    second = host.state
    table.rematch()  # game 3: the first player of game 1 starts again
    assert host.state.first == first.first and host.state.black == first.black and host.game_number == 3
    table.play(bots(TRIAD, 9), random.Random(9))
    verdict = verify(tmp_path / "table.dtt")  # one transcript holds the three games, each result recorded
    assert verdict.valid, verdict.line()
    assert len(read(tmp_path / "table.dtt").results) == 3 and host.series[:2] == (first.result, second.result)
    assert verdict.result.startswith("game 1: ") and "; game 3: " in verdict.result


def test_games_without_the_hook_rematch_with_the_tables_options():
    table = finished_table(game=TRICE, seed=3)
    assert table.host.next_options == table.host.options
    table.rematch()
    assert table.host.phase == "playing" and table.host.game_options == table.host.options


def test_a_table_with_a_card_deal_plays_one_game():
    table = finished_table(game=registry.get("tricolor"), seed=1)
    assert table.host.settled  # every deck opened: the deal's own rule, not a wait, refuses the rematch
    refused(table, table.seats[1], table.seats[1].rematch(), refusals.BadRematch, "a card deal plays one game")


def test_cheats_on_the_rematch_are_refused_by_every_replica_and_change_nothing():
    table = Table(TRIAD, {}, ["ann", "bob"])
    ann, bob = table.seats
    early = wire.rematch_body(2, table.host.game_options, True)
    refused(table, ann, ann.frame("rematch", early), refusals.NotDue, "once the game is over")
    table.play(bots(TRIAD, 2), random.Random(2), close=False)
    host = table.host
    same = {**host.next_options, "first": host.game_options["first"]}  # the colours kept, game 1's starter again
    refused(table, ann, ann.frame("rematch", wire.rematch_body(2, same, True)), refusals.BadRematch,
            r"follow from game 1's end: first='black' \(not 'white'\)$")
    refused(table, ann, ann.frame("start", {}), refusals.NotDue, "only once every seat has agreed")
    later = wire.rematch_body(3, host.next_options, True)
    refused(table, bob, bob.frame("rematch", later), refusals.BadRematch, "the next game at this table is game 2")
    # The host signing a consent in bob's name: bob's key did not sign it.
    forged = wire.make_frame(ann.profile, table.table, 1, bob.seq, "rematch",
                             wire.rematch_body(2, host.next_options, True), host.head)
    with pytest.raises(refusals.BadSignature, match="seat 1"):
        host.accept(forged)
    table.post(ann.rematch())
    refused(table, ann, ann.rematch(), refusals.NotDue, "has already agreed")
    table.post(bob.frame("rematch", wire.rematch_body(2, host.next_options, False)))  # bob declines
    assert host.declined == 1 and host.phase == "over" and host.waiting_for.action == "nothing"
    refused(table, bob, bob.frame("rematch", wire.rematch_body(2, host.next_options, True)), refusals.NotDue,
            "declined a rematch")


def test_verify_names_the_host_that_wrote_a_rematch_with_itself_first_again(tmp_path):
    table = finished_table(seed=4)
    ann = table.seats[0]
    cheat = ann.frame("rematch", wire.rematch_body(2, {**table.host.next_options, "first": "black"}, True))
    path = tmp_path / "cheat.dtt"
    with TranscriptWriter.create(path, header_for(table.host)) as writer:
        for record in table.host.log:
            writer.append_frame(record.frame)
        writer.append_result(table.host.result)
        writer.append_frame(cheat)
    verdict = verify(path)
    assert not verdict.valid and verdict.fault_kind == "bad rematch" and verdict.seat == 0
    assert f"record {len(table.host.log) + 1}: bad rematch by seat 0 (ann)" in verdict.line()


# -- sessions on 127.0.0.1 ----------------------------------------------------------------------------
def series_seats(tmp_path, host_games, peer_games, host_class=HostSession, **peer_kwargs):
    events = {"host": [], "peer": []}
    host = host_class(Profile.generate("ann"), "triad", 2, timing=FAST, chooser=bot_chooser(TRIAD, "greedy", 1),
                      games=host_games, transcript=tmp_path / "ann.dtt", on_event=events["host"].append)
    invite = host.open()
    thread = in_thread(host)
    peer = PeerSession(Profile.generate("bob"), invite, timing=FAST, games=peer_games,
                       transcript=tmp_path / "bob.dtt", on_event=events["peer"].append, **peer_kwargs)
    return host, thread, peer, events


def also(session, handler) -> None:
    """Call `handler(event)` in the session's thread before the session's own `on_event`."""
    told = session.on_event

    def both(event):
        handler(event)
        told(event)

    session.on_event = both


def each_game(session) -> list[tuple[int, int, int]]:
    """(game number, Black's seat, first seat) of every game the session saw end."""
    seen = []
    replica = lambda: session.replica
    also(session, lambda e: isinstance(e, Ended) and seen.append(
        (replica().game_number, replica().state.black, replica().state.first)))
    return seen


@pytest.mark.slow
def test_two_sessions_play_a_series_of_three_alternating_who_starts_and_both_copies_verify(tmp_path):
    host, thread, peer, events = series_seats(tmp_path, 3, 3, chooser=bot_chooser(TRIAD, "greedy", 2))
    games = each_game(peer)
    try:
        peer.run()
        thread.join(15)
        assert not thread.is_alive()
    finally:
        host.stop()
    assert [g[0] for g in games] == [1, 2, 3]
    blacks, firsts = {g[1] for g in games}, [g[2] for g in games]
    assert len(blacks) == 1 and firsts[1] == 1 - firsts[0] and firsts[2] == firsts[0]
    assert host.replica.series == peer.replica.series and len(peer.replica.series) == 3
    assert sum(isinstance(e, Started) for e in events["peer"]) == 3
    offers = [e.agree if isinstance(e, RematchAnswered) else None for e in events["peer"]
              if isinstance(e, (RematchAnswered, RematchGone))]
    assert offers[-1] is False and offers.count(True) == 4  # 2 per rematch, 1 decline
    for name in ("ann", "bob"):
        verdict = verify(tmp_path / f"{name}.dtt")
        assert verdict.valid and verdict.result.count("game ") == 3, verdict.line()
    assert compare([read(tmp_path / "ann.dtt"), read(tmp_path / "bob.dtt")]).fork is None
    # A host resumed from its transcript replays all three games and knows the series is over.
    again = HostSession(host.profile, resume=tmp_path / "ann.dtt", port=0, timing=FAST)
    assert again.replica.game_number == 3 and again.replica.series == host.replica.series and again.finished
    again.close()


@pytest.mark.slow
def test_a_person_declines_the_offer_and_both_seats_finish_after_one_game(tmp_path):
    host, thread, peer, events = series_seats(tmp_path, 2, None, chooser=bot_chooser(TRIAD, "greedy", 2))
    also(peer, lambda e: isinstance(e, RematchAnswered) and e.seat == 0 and peer.rematch(False))
    try:
        peer.run()  # a person's seat (games=None) stays at the table until it answers
        thread.join(15)
        assert not thread.is_alive()
    finally:
        host.stop()
    assert host.replica.declined == 1 and peer.replica.game_number == 1 and len(peer.replica.series) == 1
    assert [e.agree for e in events["host"] if isinstance(e, RematchAnswered)] == [True, False]
    assert not [e for e in events["host"] if isinstance(e, RematchGone)]
    for name in ("ann", "bob"):
        assert verify(tmp_path / f"{name}.dtt").valid


class SameFirstRematches(Rematches):
    """A cheating host's own gate: the rematch keeps the colours, and the last game's starter starts again."""

    @property
    def next_options(self):
        fair = Rematches.next_options.fget(self)
        return fair and {**fair, "first": self.game_options["first"]}


def same_first(replica: Replica) -> None:
    replica.rematches.__class__ = SameFirstRematches


def starts_alone(replica: Replica) -> None:
    """A cheating host's own gate: its "start" begins the next game without anyone's consent."""
    fair = replica.handlers["start"]

    def start(env):
        if replica.phase != "over":
            return fair(env)
        state = replica.game.new(replica.seat_count, replica.next_options)
        changes = {"phase": "playing", "game_number": replica.game_number + 1, **replica.play.after(state, replica.events)}
        return Effect(changes, "seat 0 starts game 2 alone")

    replica.handlers["start"] = start


class StartingAlone(Series):
    """A host seat's answers to the next game: none; it starts the next game on its own."""

    def play_on(self) -> None:
        if self.can_rematch() and not self.own.unordered:
            self.author("start", {})
        else:
            super().play_on()


class StartingAloneSeat(Seat):
    series_type = StartingAlone


class CheatingHost(HostSession):
    gate = staticmethod(lambda replica: None)

    def open(self) -> str:
        self.gate(self.replica)
        return super().open()


@pytest.mark.slow
@pytest.mark.parametrize("gate, fault", [(same_first, "bad rematch: seat 0: game 2's options follow from "
                                                       "game 1's end: first="),
                                         (starts_alone, "not due: seat 0: a next game starts only once every "
                                                         "seat has agreed")],
                         ids=["itself-first-again", "no-consent"])
def test_a_joiner_refuses_a_rematch_its_host_cheats_and_leaves_naming_it(tmp_path, gate, fault):
    seat_type = StartingAloneSeat if gate is starts_alone else Seat  # the cheat that goes with the gate
    host_class = type("Cheat", (CheatingHost,), {"gate": staticmethod(gate), "seat_type": seat_type})
    host, thread, peer, events = series_seats(tmp_path, 2, None, host_class=host_class)
    peer.chooser = bot_chooser(TRIAD, "greedy", 2)  # it never consents to anything (games=None, nobody answers)
    try:
        with pytest.raises(SessionError, match="relayed a message this seat refuses"):
            peer.run()
    finally:
        host.stop()
        thread.join(10)
    assert any(isinstance(e, Failed) and fault in e.said for e in events["peer"]), events["peer"]
    assert peer.replica.game_number == 1 and peer.replica.consents == (None, None)
    assert verify(tmp_path / "bob.dtt").valid  # the joiner's copy: game 1, whole
    verdict = verify(tmp_path / "ann.dtt")  # the host's own copy holds its cheat, and verify names it
    assert not verdict.valid and verdict.seat == 0, verdict.line()


# -- processes ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_host_and_join_processes_play_two_games_and_print_each_result(tmp_path):
    (host, out_h, err_h), (joiner, out_j, err_j) = host_and_join(
        tmp_path, ("triad", "--port", "0", "--bind", "127.0.0.1", "--bot", "greedy", "--seed", "1", "--name", "alice",
                   "--games", "2", "--heartbeat", "0.2", "--transcript", str(tmp_path / "alice.dtt")),
        ("--bot", "greedy", "--seed", "2", "--name", "bob", "--games", "2", "--transcript", str(tmp_path / "bob.dtt")),
        timeout=90)
    assert joiner.returncode == 0 and host.returncode == 0, err_j + err_h
    for out in (out_h, out_j):
        assert last_line(out, "game 1:") and last_line(out, "game 2:") == last_line(out, "result:")
        assert out.count("started") == 2 and "game 2 starts" in out and "declines a rematch" in out
    check = dicetable("verify", str(tmp_path / "alice.dtt"), str(tmp_path / "bob.dtt"))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "; game 2: " in check.stdout and "copies agree" in check.stdout
    bad = dicetable("host", "triad", "--port", "0", "--bot", "greedy", "--games", "0")
    assert bad.returncode == 2 and bad.stderr.strip().endswith("--games 0 is not between 1 and 1000")


def test_a_seat_put_out_by_a_default_reveals_again_after_the_rematch():
    """PROTOCOL.md §19.6 (fixed): a seat out of the game skips events (its reveals count as zeros), so
    its chain is behind when a rematch brings it back; its next reveal opens its chain across the
    events it missed, and the table goes on instead of stalling until it is claimed again."""
    room = registry.get("diceroom")
    table = Table(room, room.resolve_options({"rolls": 2}), ["ann", "bob", "cy"])
    ann, bob, cy = table.seats
    table.post(ann.move(Move("roll", ("d6",))))
    table.post(ann.reveal(1))
    table.post(bob.reveal(1))
    claim = table.post(ann.frame("claim", wire.claim_body(2, "seat 2 did not reveal within 30 s")))
    table.post(bob.frame("witness", wire.witness_body(claim.index)))
    assert table.host.out == frozenset({2})
    table.post(bob.move(Move("roll", ("d6",))))  # event 2, decided without cy
    table.post(ann.reveal(2))
    table.post(bob.reveal(2))
    assert table.host.result is not None and len(table.host.events) == 2
    for seat in table.seats:
        table.post(seat.rematch(True))
    assert table.host.out == frozenset() and table.host.result is None
    table.post(ann.move(Move("roll", ("d6",))))  # event 3: every seat reveals again, cy too
    # The gap opens only with cy's own value for event 3: another place of its chain is refused, the
    # value of an event it missed too (it is committed, so it cannot stand in for a later one).
    for wrong in (2, 4):
        frame = cy.frame("reveal", wire.reveal_body(3, cy.chains[0].reveal(wrong)))
        with pytest.raises(refusals.BadReveal, match="does not open seat 2's committed chain"):
            table.post(frame)
        cy.seq -= 1  # the refused frame took no place in the log
    for seat in table.seats:
        table.post(seat.reveal(3))
    assert len(table.host.events) == 3 and all(table.host.events[-1].reveals)
    assert all(peer.events == table.host.events for peer in table.peers)
