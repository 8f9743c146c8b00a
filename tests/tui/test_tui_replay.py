"""`dicetable replay` and the history's p (tui/tables/replay.py, tui/screens/replay_screen.py): a transcript
replayed in its game's own screen, step by step, each step the state a fresh replica holds after the
same frames; a tampered transcript stops at the frame refused with verify's words; Tricolor's hidden
cards stay hidden until the transcript opens them; a file that cannot be replayed is one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dicetable.core.tricolor import UNKNOWN
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.log import transcript as tr
from dicetable.net.log import wire
from dicetable.net.log.replica import Replica
from dicetable.net.log.verify import verify
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.by_game import screen_for
from dicetable.tui.screens.history_screen import HistoryScreen
from dicetable.tui.screens.replay_screen import ReplayBar
from dicetable.tui.tables.replay import Replay, ReplayError
from net_helpers import dicetable
from tui_pilot import wait_until

pytestmark = pytest.mark.usefixtures("quick_idle")

SIZE = (80, 24)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "old_transcripts"
GAMES = {
    "trice": "trice.transcript",
    "triad": "triad.transcript",
    "dicebreaker": "dicebreaker.transcript",
    "tricolor": "tricolor.transcript",
    "diceroom": "dice-room-host.transcript",
}


def states_after(frames) -> list:
    """The reference: a fresh replica fed `frames`; the game's state after each step, from the start."""
    replica, states = Replica(deal_handler=TableDeals()), []
    for frame in frames:
        replica.accept(frame)
        if replica.state is not None and (not states or replica.state is not states[-1]):
            states.append(replica.state)
    return states


def bar(app) -> str:
    return str(app.screen.query_one(ReplayBar).render())


def status(app) -> str:
    return str(app.screen.query_one("#status").render())


async def shown_at(pilot, app, step: int) -> None:
    await wait_until(pilot, lambda: app.screen.view is app.screen.controller.steps[step].view
                     and f"step {step} of " in bar(app))


@pytest.mark.parametrize("game", GAMES)
async def test_each_game_replays_step_by_step_in_its_own_screen(game):
    path = FIXTURES / GAMES[game]
    states = states_after(tr.read(path).frames)
    replay = Replay.open(path)
    last = len(states) - 1
    assert replay.last == last and replay.verdict.line() == verify(path).line()
    app = DiceTableApp(replay)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for(game)))
        await shown_at(pilot, app, 0)
        assert app.screen.view.state == states[0] and bar(app).startswith(f" ◀ step 0 of {last} ▶ ")
        for step in (1, 2, 3):
            await pilot.press("right")
            await shown_at(pilot, app, step)
            assert app.screen.view.state == states[step]
        await pilot.press("left")
        await shown_at(pilot, app, 2)
        assert app.screen.view.state == states[2]
        await pilot.press("end")
        await shown_at(pilot, app, last)
        assert app.screen.view.state == states[-1] and app.screen.view.result is not None
        await pilot.press("right")  # past the end: stays there
        await pilot.pause()
        assert replay.at == last
        await pilot.press("home")
        await shown_at(pilot, app, 0)
        assert app.screen.view.state == states[0]
        await pilot.press("left")  # before the start: stays there
        await pilot.pause()
        assert replay.at == 0


async def test_the_keys_that_would_act_do_nothing_and_a_move_is_refused():
    replay = Replay.open(FIXTURES / "trice.transcript")
    app = DiceTableApp(replay)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for("trice")))
        await pilot.press("right", "right")
        await shown_at(pilot, app, 2)
        shown = app.screen.view
        await pilot.press("enter", "space", "tab", "h", "l", "up", "r", "g")
        await pilot.pause()
        assert app.screen.view is shown and replay.at == 2
        assert not [b for b in app.screen.active_bindings.values() if b.binding.action in ("act", "rematch", "hurry")]
        replay.submit(shown.state.legal_moves()[0])  # a click on the board would come here
        await wait_until(pilot, lambda: any("nothing can be played" in str(n.message) for n in app._notifications))
        assert app.screen.view is shown
        await pilot.press("f")
        assert app.screen.query_one("#panels").active == "fairness"
        await pilot.click(ReplayBar, offset=(len(" ◀ step 2 of 17 "), 0))  # ▶, for the mouse
        await shown_at(pilot, app, 3)
        await pilot.click(ReplayBar, offset=(1, 0))  # ◀
        await shown_at(pilot, app, 2)


async def test_a_tampered_transcript_stops_at_the_refused_frame_with_verifys_words():
    path = FIXTURES / "trice-tampered.transcript"
    verdict = verify(path)
    assert verdict.record == 20 and not verdict.valid
    states = states_after(tr.read(path).frames[: verdict.record - 1])  # record 0 is the header
    replay = Replay.open(path)
    assert replay.last == len(states) - 1
    app = DiceTableApp(replay)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for("trice")))
        await shown_at(pilot, app, 0)
        assert "refused" not in bar(app) and not status(app).startswith("invalid")
        await pilot.press("end")
        await shown_at(pilot, app, replay.last)
        assert app.screen.view.state == states[-1]
        assert "✗ the transcript is refused here" in bar(app)
        assert status(app).startswith("invalid: record 20: bad signature by seat 0")
        assert any(str(n.message) == verdict.line() for n in app._notifications)
        await pilot.press("right")
        await pilot.pause()
        assert replay.at == replay.last
        await pilot.press("v")
        assert verdict.line() in str(app.screen.query_one("#fair-verify").render())


def test_a_frame_changed_in_another_game_stops_the_replay_there(tmp_path):
    got = tr.read(FIXTURES / "dicebreaker.transcript")
    frames = list(got.frames)
    at = next(i for i, f in enumerate(frames) if wire.decode(f).kind == "move" and i > 40)
    frames[at] = frames[at][:-1] + bytes([frames[at][-1] ^ 1])  # a bit of the signature
    forged = tmp_path / "forged.transcript"
    forged.write_bytes(tr.MAGIC + tr._record("header", got.header) + b"".join(tr._record("frame", f) for f in frames)
                       + tr._record("result", got.result))
    verdict = verify(forged)
    assert verdict.record == at + 1
    replay = Replay.open(forged)
    assert [s.view.state for s in replay.steps] == states_after(frames[:at])
    assert replay.stopped and replay.steps[-1].view.note == verdict.line()


async def test_tricolor_hands_and_ids_stay_hidden_until_the_transcript_opens_them():
    replay = Replay.open(FIXTURES / "tricolor.transcript")
    ids = [step.view.state.ids for step in replay.steps]
    opened = next(k for k, known in enumerate(ids) if UNKNOWN not in known)
    assert opened > replay.last - 5 and all(set(known) == {UNKNOWN} for known in ids[:opened - 1])
    assert all(card == UNKNOWN for step in replay.steps[:opened] for hand in step.view.state.hands for card in hand)
    app = DiceTableApp(replay)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for("tricolor")))
        for _ in range(30):
            await pilot.press("right")
        await shown_at(pilot, app, 30)
        assert "Watching: every hand is hidden." in str(app.screen.query_one("#tc-hand").render())
        await pilot.press("end")
        await shown_at(pilot, app, replay.last)
        assert UNKNOWN not in app.screen.view.state.ids


async def test_the_history_replays_a_network_game_with_p(home):
    transcripts = home / "transcripts"
    transcripts.mkdir(parents=True)
    (transcripts / "20261122-a-seat0.dtt").write_bytes((FIXTURES / "triad.transcript").read_bytes())
    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for("triad")) and app.screen.view is not None)
        assert bar(app).startswith(" ◀ step 0 of 64 ▶ ")
        await pilot.press("end")
        await wait_until(pilot, lambda: bar(app).startswith(" ◀ step 64 of 64 ▶ "))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen))


def test_a_file_that_cannot_be_replayed_is_one_line(tmp_path):
    junk = tmp_path / "junk.transcript"
    junk.write_bytes(b"not a transcript at all")
    damaged = tmp_path / "damaged.transcript"
    data = (FIXTURES / "trice.transcript").read_bytes()
    damaged.write_bytes(data[:200] + bytes([data[200] ^ 0xFF]) + data[201:])
    for path, words in ((tmp_path / "missing.transcript", "does not exist"), (junk, ""), (damaged, ""),
                        (tmp_path, "is a directory")):
        run = dicetable("replay", str(path))
        assert run.returncode == 1, (path, run.stderr)
        assert run.stdout == "" and len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr
        assert run.stderr.startswith("dicetable: cannot replay: ") and words in run.stderr
    usage = dicetable("replay")
    assert usage.returncode == 2 and len(usage.stderr.splitlines()) == 1


def test_a_transcript_whose_game_never_started_has_nothing_to_replay(tmp_path):
    got = tr.read(FIXTURES / "trice.transcript")
    early = tmp_path / "early.transcript"
    early.write_bytes(tr.MAGIC + tr._record("header", got.header) + tr._record("frame", got.frames[0]))
    with pytest.raises(ReplayError, match="no game to replay"):
        Replay.open(early)


# Cut at a live table too, at the end of this long Tricolor game: the screen's end line (status_line:
# result, then its keys) is not fitted to a result as long as this stalemate's, and a seat's line in
# its seats pane ("random 1   5  R68 Y75 B63 attacked") wraps; its screen's to fix, not the replay's.
LIVE_TOO = {"tricolor": ("TextLine#status: a line 80 wide", "TextLine#tc-seats: ")}


@pytest.mark.parametrize("game", GAMES)
async def test_a_replay_fits_80_by_24_from_start_to_end(game):
    from test_fit_80x24 import cut_lines

    def cut() -> list[str]:
        return [line for line in cut_lines(app.screen)
                if replay.at < replay.last or not line.startswith(LIVE_TOO.get(game, ()))]

    replay = Replay.open(FIXTURES / GAMES[game])
    app = DiceTableApp(replay)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for(game)))
        for step in (0, replay.last // 2, replay.last):
            replay.go(step)
            await shown_at(pilot, app, step)
            try:  # once laid out for the new step
                await wait_until(pilot, lambda: cut() == [], timeout=3)
            except AssertionError:
                assert cut() == [], (game, step)


async def test_a_table_that_played_a_rematch_replays_both_games(tmp_path):
    import random

    from dicetable.core import registry
    from dicetable.net.table.local_seats import Table

    triad = registry.get("triad")
    path = tmp_path / "rematch.transcript"
    table = Table(triad, {}, ["ann", "bob"], transcript=path)
    bots = [triad.bots["greedy"](triad, random.Random(n)) for n in range(2)]
    table.play(bots, random.Random(1), close=False)
    table.rematch()
    table.play(bots, random.Random(2))
    replay = Replay.open(path)
    shown = [step.view.state for step in replay.steps]
    assert [s for n, s in enumerate(shown) if n == 0 or s is not shown[n - 1]] == states_after(tr.read(path).frames)
    said = [replay.steps[n].what.words(replay.steps[n].view.names) for n in range(1, len(shown))
            if not isinstance(replay.steps[n].what, str)]
    assert any(words.startswith("ann offers a rematch (game 2)") for words in said)
    assert "bob agrees to a rematch: game 2 starts" in said
    first_over = next(n for n, step in enumerate(replay.steps) if step.view.result is not None)
    app = DiceTableApp(replay)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for("triad")))
        replay.go(first_over)
        await shown_at(pilot, app, first_over)
        assert app.screen.view.result == table.host.series[0]
        await pilot.press("end")
        await shown_at(pilot, app, replay.last)
        assert app.screen.view.result == table.host.series[1] and replay.verdict.valid


async def test_a_game_record_replays_with_p_and_a_local_game_says_it_has_no_transcript(home):
    from dicetable.tui.screens.history_screen import GameRecordScreen
    from dicetable.tui.tables.history import history_path, record_local
    from dicetable.tui.tables.view import Written

    record_local(history_path(), "trice", ["Ann", "greedy bot"], "Ann wins (Trice)", [Written(0, "Ann places W6 on b2")], 7)
    transcripts = home / "transcripts"
    transcripts.mkdir(parents=True)
    (transcripts / "20261122-a-seat0.dtt").write_bytes((FIXTURES / "dicebreaker.transcript").read_bytes())
    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        local = next(n for n, game in enumerate(app.screen.games) if not game.network)
        app.screen.query_one("#history-list").highlighted = local
        await pilot.press("p")
        await wait_until(pilot, lambda: any("no transcript" in str(n.message) for n in app._notifications))
        assert isinstance(app.screen, HistoryScreen)
        app.screen.query_one("#history-list").highlighted = 1 - local
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GameRecordScreen) and app.screen.verdict, timeout=30)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, screen_for("dicebreaker")) and app.screen.view is not None,
                         timeout=30)
        assert bar(app).startswith(" ◀ step 0 of 339 ▶ ")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, GameRecordScreen))
