"""`dicetable verify`: honest transcripts pass; every kind of tampering is caught and named."""

from __future__ import annotations

import random
import re
from pathlib import Path

import msgpack
import pytest

from dicetable.core import registry
from dicetable.core.game import Move, Result
from dicetable.net.log import transcript as tr
from dicetable.net.log import wire
from dicetable.net.identity import Profile
from dicetable.net.table.local_seats import Table, play_table
from dicetable.net.log.verify import verify, verify_transcript
from net_helpers import dicetable

TRICE = registry.get("trice")


def trice_game(path: Path, seed: int = 3) -> Table:
    bots = [TRICE.bots["random"](TRICE, random.Random(seed * 10 + s)) for s in range(2)]
    return play_table(TRICE, TRICE.resolve_options({}), bots, ["alice", "bob"], random.Random(seed), transcript=path)


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    path = tmp_path_factory.mktemp("games") / "trice.transcript"
    table = trice_game(path)
    return path, table


def rebuild(header, frames, result) -> bytes:
    data = tr.MAGIC + tr._record("header", header) + b"".join(tr._record("frame", f) for f in frames)
    return data + (tr._record("result", result) if result is not None else b"")


def check(data: bytes):
    return verify_transcript(tr.parse(data))


def originals(game):
    got = tr.read(game[0])
    return got.header, list(got.frames), got.result


def first(table: Table, kind: str, seat: int | None = None, after: int = 0) -> int:
    return next(r.index for r in table.host.log
                if r.kind == kind and r.index >= after and (seat is None or r.seat == seat))


def test_an_honest_transcript_is_valid(game):
    path, table = game
    verdict = verify(path)
    assert verdict.valid, verdict.fault
    names = [seat.name for seat in table.host.seats]  # the verdict names people by their signed joins
    assert verdict.line() == (f"valid: trice, {table.host.moves} moves, result: {table.host.result.said().words(names)}"
                              "; confirmed by every seat")
    assert names == ["alice", "bob"] and table.host.result.said() != table.host.result.said().words(names)
    assert verdict.replica.events == table.host.events


def test_a_reveal_replaced(game):
    header, frames, result = originals(game)
    i = first(game[1], "reveal", seat=1)
    env = wire.decode(frames[i])
    frames[i] = wire.make_frame(None, env.table, 1, env.seq, "reveal", wire.reveal_body(env.body["k"], bytes(32)), env.prev, sign=False)
    verdict = check(rebuild(header, frames, result))
    assert verdict.fault_kind == "bad reveal" and verdict.seat == 1 and verdict.record == i + 1
    assert "seat 1 (bob)" in verdict.line()


def test_a_signature_replaced(game):
    header, frames, result = originals(game)
    i = first(game[1], "move", seat=0)
    signed, _ = msgpack.unpackb(frames[i])
    frames[i] = msgpack.packb([signed, Profile.generate("mallory").sign(signed)], use_bin_type=True)
    verdict = check(rebuild(header, frames, result))
    assert verdict.fault_kind == "bad signature" and verdict.seat == 0 and verdict.record == i + 1


def test_two_records_swapped(game):
    header, frames, result = originals(game)
    i = first(game[1], "move", after=first(game[1], "start") + 3)
    frames[i], frames[i + 1] = frames[i + 1], frames[i]  # two moves of different seats
    verdict = check(rebuild(header, frames, result))
    # the frame moved up builds on more entries than the log has before it: the link catches it first
    assert verdict.fault_kind == "forked log" and verdict.record == i + 1 and "withheld" in verdict.fault
    assert verdict.seat == wire.decode(frames[i]).seat
    # Two frames of the same seat swapped: its sequence numbers are out of order.
    header, frames, result = originals(game)
    j = first(game[1], "move", seat=0, after=i)
    k = first(game[1], "move", seat=0, after=j + 1)
    frames[j], frames[k] = frames[k], frames[j]
    verdict = check(rebuild(header, frames, result))
    assert verdict.fault_kind == "out of order" and verdict.seat == 0 and verdict.record == j + 1


def test_any_record_dropped(game):
    header, frames, result = originals(game)
    for i in range(len(frames)):
        verdict = check(rebuild(header, frames[:i] + frames[i + 1:], result))
        # (the last receipt dropped: the end is no longer confirmed by its seat, never a plain result)
        assert not verdict.valid or verdict.unconfirmed, f"dropping record {i + 1} went unnoticed"
    i = first(game[1], "move", after=first(game[1], "start") + 3)
    verdict = check(rebuild(header, frames[:i] + frames[i + 1:], result))
    assert verdict.fault_kind in ("not due", "out of order", "forked log") and verdict.seat is not None


def test_a_record_replayed_from_another_table(game, tmp_path):
    header, frames, result = originals(game)
    other = trice_game(tmp_path / "other.transcript", seed=3)  # same moves, another table id
    i = first(game[1], "move", seat=1)
    env = wire.decode(frames[i])
    frames[i] = next(r.frame for r in other.host.log if r.seat == env.seat and r.envelope.seq == env.seq)
    verdict = check(rebuild(header, frames, result))
    assert verdict.fault_kind == "wrong table" and verdict.seat == 1 and verdict.record == i + 1


def test_an_illegal_move(tmp_path):
    path = tmp_path / "cheat.transcript"
    table = Table(TRICE, TRICE.resolve_options({}), ["alice", "bob"], transcript=path)
    rng = random.Random(0)
    bots = [TRICE.bots["random"](TRICE, random.Random(s)) for s in range(2)]
    while not (table.host.waiting_for.action == "move" and table.host.state.phase == "place"
               and any(table.host.state.board)):
        table.step(bots, rng)
    seat = table.host.waiting_for.seats[0]
    occupied = next(i for i, die in enumerate(table.host.state.board) if die)
    cheat = Move("place", ("abcd"[occupied % 4] + str(occupied // 4 + 1),))  # onto a die already there
    table.writer.append_frame(table.seats[seat].move(cheat))  # the cheater writes it past the host
    table.writer.close()
    verdict = verify(path)
    assert verdict.fault_kind == "illegal move" and verdict.seat == seat
    assert f"illegal move by seat {seat}" in verdict.line()


@pytest.mark.slow
def test_any_single_byte_flipped(game):
    data = game[0].read_bytes()
    rng = random.Random(7)
    positions = sorted(set(range(0, len(data), max(1, len(data) // 150))) | {len(data) - 1, 0})
    for position in positions:
        flipped = bytearray(data)
        flipped[position] ^= 1 << rng.randrange(8)
        try:
            verdict = check(bytes(flipped))
        except (tr.NotATranscript, tr.DamagedTranscript):
            continue
        assert not verdict.valid or verdict.unconfirmed, f"a flip at byte {position} went unnoticed"


@pytest.mark.slow
def test_any_byte_of_a_frame_forged_with_a_fixed_checksum(game):
    """A forger recomputes the checksum: the signatures and chains still catch every change."""
    header, frames, result = originals(game)
    move = first(game[1], "move", seat=1)
    reveal = first(game[1], "reveal", seat=0)
    for i, expected in ((move, {"malformed frame", "bad signature", "wrong table", "not seated"}),
                        (reveal, {"malformed frame", "bad reveal", "wrong table", "not seated", "out of order",
                                  "forked log"})):  # an unsigned reveal's link is caught by the log's heads
        for position in range(len(frames[i])):
            forged = list(frames)
            changed = bytearray(frames[i])
            changed[position] ^= 0x10
            forged[i] = bytes(changed)
            verdict = check(rebuild(header, forged, result))
            assert verdict.fault_kind in expected and verdict.record == i + 1, (position, verdict.fault)
        # Flipping a signature byte is caught as exactly that, naming the author.
    signed, signature = msgpack.unpackb(frames[move])
    for position in range(64):
        bad = bytearray(signature)
        bad[position] ^= 0x01
        forged = list(frames)
        forged[move] = msgpack.packb([signed, bytes(bad)], use_bin_type=True)
        verdict = check(rebuild(header, forged, result))
        assert verdict.fault_kind == "bad signature" and verdict.seat == 1


def test_result_and_header_are_checked(game):
    header, frames, result = originals(game)
    replayed = Result.from_data(result)
    lie = Result(tuple(1 - w for w in replayed.winners), tuple(reversed(replayed.scores)), replayed.reason)
    assert check(rebuild(header, frames, lie.to_data())).fault_kind == "result"
    assert check(rebuild(header, frames, None)).fault_kind == "result"
    renamed = dict(header, seats=[dict(header["seats"][0], name="mallory"), header["seats"][1]])
    assert check(rebuild(renamed, frames, result)).fault_kind == "header"
    verdict = check(rebuild(header, frames[:-3], None))
    assert verdict.fault_kind == "unfinished" and "waiting for" in verdict.fault


@pytest.mark.slow
def test_the_command_line(tmp_path, capsys):
    from dicetable.tui.cli import main

    record = tmp_path / "games"
    run = dicetable("selfplay", "trice", "--games", "2", "--seed", "5", "--record", str(record))
    assert run.returncode == 0, run.stderr
    files = sorted(record.iterdir())
    assert len(files) == 2
    run = dicetable("verify", str(files[0]))
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.fullmatch(r"valid: trice, \d+ moves, result: (random [01] wins|draw) \(.+\); confirmed by every seat\n", run.stdout)  # names: the bots'
    # Tamper with one reveal (checksum fixed): exit 1 and the fault names the seat.
    got = tr.read(files[1])
    frames = list(got.frames)
    i = next(n for n, f in enumerate(frames) if wire.decode(f).kind == "reveal")
    env = wire.decode(frames[i])
    frames[i] = wire.make_frame(None, env.table, env.seat, env.seq, "reveal", wire.reveal_body(env.body["k"], bytes(32)), env.prev, sign=False)
    files[1].write_bytes(rebuild(got.header, frames, got.result))
    capsys.readouterr()
    assert main(["verify", str(files[1])]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"invalid: record {i + 1}: bad reveal by seat {env.seat} (") and out.count("\n") == 1
    # Recording over earlier transcripts is refused before any game is played.
    assert main(["selfplay", "trice", "--games", "2", "--seed", "5", "--record", str(record)]) == 2
    assert "already holds" in capsys.readouterr().err
    not_one = tmp_path / "notes.txt"
    not_one.write_text("just some notes\n")
    assert main(["verify", str(not_one)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "not a dicetable transcript" in captured.err


@pytest.mark.parametrize("name, seats, options", [
    ("triad", 2, {}),
    pytest.param("dicebreaker", 3, {"target": 10}, marks=pytest.mark.slow),
])
def test_other_games_record_and_verify(tmp_path, name, seats, options):
    """The Replica is game-agnostic: several seats and chance in every turn verify the same way."""
    game = registry.get(name)
    bots = [game.bots["random"](game, random.Random(s)) for s in range(seats)]
    path = tmp_path / f"{name}.transcript"
    table = play_table(game, game.resolve_options(options), bots, [f"p{s}" for s in range(seats)],
                       random.Random(1), transcript=path)
    verdict = verify(path)
    assert verdict.valid, verdict.fault
    assert verdict.moves == table.host.moves and verdict.replica.events == table.host.events
    assert verdict.line().startswith(f"valid: {name}, {table.host.moves} moves, result: ")


@pytest.mark.slow
def test_a_game_with_hidden_cards_verifies_with_every_deal_checked(tmp_path):
    """Tricolor Line recorded by in-process seats running the real card deal; a missing opening is named."""
    from dicetable.net.log.transcript import TranscriptWriter

    game = registry.get("tricolor")
    bots = [game.bots["greedy"](game, random.Random(s)) for s in range(2)]
    path = tmp_path / "tricolor.transcript"
    table = play_table(game, game.resolve_options({}), bots, ["a", "b"], random.Random(1), transcript=path)
    verdict = verify(path)
    decks = len(table.host.deal_handler.formed)
    assert decks >= 2 and verdict.valid and verdict.deals == decks, verdict.line()
    assert verdict.line().endswith(f"; {decks} card deals checked; confirmed by every seat")
    # Without the last seat's last opening, the deal is unchecked and that seat is named.
    transcript = tr.read(path)
    end = table.host.receipts.content_before(len(table.host.log))  # the receipts follow the last opening
    last = table.host.log[end - 1]
    assert last.kind == "deal" and last.envelope.body["step"] == "opening"
    cut = tmp_path / "cut.transcript"
    with TranscriptWriter.create(cut, transcript.header) as writer:
        for frame in transcript.frames[:end - 1]:
            writer.append_frame(frame)
        writer.append_result(table.host.result)
    verdict = verify(cut)
    assert not verdict.valid and verdict.fault_kind == "deal" and verdict.seat == last.seat, verdict.line()
    assert "was never opened by seat" in verdict.line()


@pytest.mark.slow
def test_verify_survives_any_mangled_file(game, tmp_path):
    """Cut, spliced or overwritten transcripts give a verdict or NotATranscript, never a traceback."""
    data = game[0].read_bytes()
    rng = random.Random(11)
    path = tmp_path / "mangled.transcript"
    for _ in range(150):
        mangled = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(mangled))
            op = rng.randrange(4)
            if op == 0:
                mangled[pos : pos + 8] = rng.randbytes(8)
            elif op == 1:
                del mangled[pos : pos + rng.randint(1, 40)]
            elif op == 2:
                mangled[pos:pos] = rng.randbytes(rng.randint(1, 40))
            else:
                del mangled[pos:]
        path.write_bytes(bytes(mangled))
        try:
            verdict = verify(path)
        except tr.NotATranscript:
            continue
        assert not verdict.valid or verdict.unconfirmed or bytes(mangled) == data
        assert verdict.valid or verdict.line().startswith("invalid: ")


@pytest.mark.parametrize("cheat", [False, True], ids=["honest", "substituted card"])
def test_card_deal_records_are_verified_and_a_cheat_named(tmp_path, cheat):
    """verify replays "deal" records with net/cards/deal.py's DealBook and names a cheating dealer."""
    from dicetable.net.cards.points import card_point, mul, random_scalar
    from dicetable.net.cards.deal_book import DealBook
    from dicetable.net.table.deal_table import SeatDealer
    from dicetable.net.refusals import DealFault

    room = registry.get("diceroom")
    path = tmp_path / "deal.transcript"
    table = Table(room, room.resolve_options({"rolls": 0}), ["a", "b", "c"], transcript=path)
    for replica in (table.host, *table.peers):
        replica.deal_handler = DealBook()
    dealers = [SeatDealer(s, 3, table.table) for s in range(3)]

    def tamper(seat, body):  # seat 1 swaps a card of its shuffle pass for a point of its own
        if cheat and seat == 1 and body["step"] == "shuffle":
            body["points"][0] = mul(card_point(body["deck"], "red#4"), random_scalar())
        return body

    try:
        progress = True
        while progress:
            progress = False
            for s, dealer in enumerate(dealers):
                for body in dealer.next_bodies(table.peers[s].deal_handler):
                    table.post(table.seats[s].frame("deal", tamper(s, body)))
                    progress = True
    except DealFault:  # a drawer may see the bad card live; the deal is opened all the same
        pass
    deal = table.host.deal_handler.deals[dealers[0].deck.id]
    for s, dealer in enumerate(dealers):
        if s not in deal.openings:
            table.post(table.seats[s].frame("deal", dealer.party.opening(deal)))
    (due,) = table.host.waiting_for.seats
    table.post(table.seats[due].move(Move("close")))
    table.writer.close()
    verdict = verify(path)
    if cheat:
        assert verdict.fault_kind == "deal" and verdict.seat == 1, verdict.fault
        assert verdict.line().startswith("invalid: card deal by seat 1 (b): ") and "substituted" in verdict.line()
    else:
        assert verdict.valid, verdict.fault
        assert sum(r.kind == "deal" for r in verdict.replica.log) > 6
