"""Game history (tui/tables/history.py, tui/screens/history_screen.py): a game played in the app is kept, listed
from the home screen with its result, and opened to its moves; network games are listed from their
transcripts and checked as `dicetable verify` checks them; a damaged history loses nothing else.
"""

from __future__ import annotations

import random

from dicetable.core import registry
from dicetable.net.log import wire
from dicetable.net.table.local_seats import play_table
from dicetable.net.log.transcript import read
from textual.widgets import OptionList
from dicetable.tui.app import DiceTableApp
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.screens.dialogs import GameOverDialog
from dicetable.tui.tables.history import FILE, history_path, local_games, past_games
from dicetable.tui.tables.local_save import kept_table
from dicetable.tui.screens.history_screen import GameRecordScreen, HistoryScreen
from dicetable.tui.screens.home_screen import HomeScreen
from dicetable.tui.widgets.move_log import MoveLog
from test_tui_app import by_keys, play_to_the_end
from tui_pilot import wait_until

SIZE = (80, 24)


def numbering(log):
    """The move numbers the log shows (chance lines keep the last one)."""
    n = 0
    for entry in log:
        n += entry.seat >= 0
        yield n
DICEBREAKER = registry.get("dicebreaker")


def listed(app) -> list[str]:
    menu = app.screen.query_one("#history-list", OptionList)
    return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]


def log_text(screen) -> str:
    """The move log as shown, its wrapped lines joined again."""
    return " ".join(" ".join(strip.text.split()) for strip in screen.query_one(MoveLog).lines)


async def test_a_game_played_in_the_app_is_in_its_history_with_its_moves(monkeypatch):
    monkeypatch.setenv("USER", "Ann")
    app = DiceTableApp(bot_delay=0, seed=4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b", "s")  # against the medium bot (greedy), TRICE: the defaults
        table_screen, _ = await play_to_the_end(pilot, app, by_keys)
        view = table_screen.view
        result = view.result.describe(view.names)
        await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        (line,) = listed(app)
        moves = [entry.words(view.names) for entry in view.log if entry.seat >= 0]
        assert "TRICE (local): Ann vs medium bot" in line and result in line and f"{len(moves)} moves" in line
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GameRecordScreen) and app.screen.verdict)
        # The whole log as the table showed it: every move numbered, every roll after "~".
        shown = [e.words(view.names) for e in view.log]
        expected = " ".join(f"~ {words}" if e.seat < 0 else f"{n}. {words}" for n, e, words in
                            zip(numbering(view.log), view.log, shown))
        assert log_text(app.screen) == " ".join(expected.split())
        assert "local game" in app.screen.verdict
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, HomeScreen)


def test_every_finished_local_game_and_rematch_is_kept_and_a_torn_line_loses_nothing_else(tmp_path):
    path = history_path()
    trice = registry.get("trice")
    table = kept_table(trice, [Player("Ann", "greedy"), Player("Bob", "random")], history=path, seed=3)
    table.attach(None)  # no screen: the bots play at once
    table.rematch()
    first, second = local_games(path)[0]
    assert first.result != "" and first.names == ("Ann", "Bob") and first.moves == sum(e.seat >= 0 for e in first.log)
    with open(path, "ab") as data:
        data.write(b'{"v": 1, "game": "trice", "na')  # a crash in the middle of a write
    assert [len(g) for g in local_games(path)] == [2, 1]
    assert "cut short" in local_games(path)[1][0]
    kept_table(trice, [Player("Ann", "random"), Player("Bob", "random")], history=path, seed=5).attach(None)
    games, unreadable = local_games(path)
    assert len(games) == 3 and unreadable == [f"{FILE} line 3: not a game record"]  # the next game kept whole
    assert (path.stat().st_mode & 0o777) == 0o600
    # A table given no history (tests, the dice room) writes nothing.
    LocalTable(trice, [Player("A", "random"), Player("B", "random")], seed=6).attach(None)
    assert len(local_games(path)[0]) == 3


async def test_network_games_are_listed_from_their_transcripts_and_checked_when_opened(home):
    transcripts = home / "transcripts"
    transcripts.mkdir(parents=True)
    bots = [DICEBREAKER.bots["greedy"](DICEBREAKER, random.Random(n)) for n in range(3)]
    good = transcripts / "20261122-a-seat0.dtt"
    play_table(DICEBREAKER, {"mode": "battle", "target": 5}, bots, ["ann", "bob", "cy"], random.Random(2), transcript=good)
    (transcripts / "junk.dtt").write_bytes(b"not a transcript at all")
    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        (line,) = listed(app)
        assert "Dice Breaker (network): ann vs bob vs cy" in line
        assert "junk.dtt" in str(app.screen.query_one("#history-unreadable").render())
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GameRecordScreen) and app.screen.verdict, timeout=30)
        assert app.screen.verdict.startswith("valid: dicebreaker,") and str(good) in app.screen.verdict
        shown = log_text(app.screen)
        moves = sum(wire.decode(frame).kind in ("move", "unseal") for frame in read(good).frames)
        assert shown.startswith("~ ann sits down") and f" {moves}. " in shown and f" {moves + 1}. " not in shown
        log = app.screen.query_one(MoveLog)
        await wait_until(pilot, lambda: log.max_scroll_y > 0)  # laid out: longer than its panel
        assert log.scroll_y == 0  # read from the first move on
        await pilot.press("pagedown")
        assert log.scroll_y > 0
    games, unreadable = past_games(home)
    assert [(g.path, g.moves) for g in games] == [(good, moves)] and unreadable[0].startswith("junk.dtt: ")


async def test_a_table_that_played_a_rematch_is_listed_with_each_result_and_opened_to_both_games(home):
    from dicetable.net.table.local_seats import Table

    triad = registry.get("triad")
    transcripts = home / "transcripts"
    transcripts.mkdir(parents=True)
    path = transcripts / "20261124-r-seat0.dtt"
    table = Table(triad, {}, ["ann", "bob"], transcript=path)
    bots = [triad.bots["greedy"](triad, random.Random(n)) for n in range(2)]
    table.play(bots, random.Random(1), close=False)
    table.rematch()
    table.play(bots, random.Random(2))
    first, second = (r.describe(["ann", "bob"]) for r in table.host.series)
    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        (game,) = past_games(home)[0]
        assert game.result == f"game 1: {first}; game 2: {second}"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GameRecordScreen) and app.screen.verdict, timeout=30)
        assert app.screen.verdict.startswith("valid: triad,") and "; game 2: " in app.screen.verdict
        shown = log_text(app.screen)
        assert "ann offers a rematch (game 2)" in shown and "bob agrees to a rematch: game 2 starts" in shown


async def test_a_tampered_transcript_is_listed_and_its_fault_shown_when_opened(home, tmp_path):
    import dicetable.net.log.transcript as tr

    transcripts = home / "transcripts"
    transcripts.mkdir(parents=True)
    bots = [DICEBREAKER.bots["random"](DICEBREAKER, random.Random(n)) for n in range(2)]
    honest = tmp_path / "honest.dtt"
    play_table(DICEBREAKER, {"mode": "quick", "target": 3}, bots, ["ann", "bob"], random.Random(4), transcript=honest)
    got = tr.read(honest)
    frames = list(got.frames)
    i = next(n for n, frame in enumerate(frames) if wire.decode(frame).kind == "reveal" and wire.decode(frame).seat == 1)
    env = wire.decode(frames[i])  # bob's reveal replaced by one that opens nothing he committed to
    frames[i] = wire.make_frame(None, env.table, 1, env.seq, "reveal", wire.reveal_body(env.body["k"], bytes(32)), env.prev, sign=False)
    data = tr.MAGIC + tr._record("header", got.header) + b"".join(tr._record("frame", f) for f in frames)
    (transcripts / "forged.dtt").write_bytes(data + tr._record("result", got.result))
    app = DiceTableApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded)
        assert "Dice Breaker (network): ann vs bob" in listed(app)[0]  # its header and result still read
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GameRecordScreen) and app.screen.verdict, timeout=30)
        verdict = app.screen.verdict
        assert verdict.startswith("invalid: ") and "bad reveal" in verdict and "seat 1 (bob)" in verdict


def _append_many(path, who: str, count: int) -> None:
    from dicetable.tui.tables.history import record_local
    from dicetable.core.phrase import Phrase
    from dicetable.tui.tables.view import Moved

    log = [Moved(0, Phrase((f"{who} makes move {n} " + "x" * 200,))) for n in range(100)]  # ~20 KB a record
    for n in range(count):
        record_local(path, "trice", [who, "bot"], f"{who} wins", log, n)


def test_two_apps_of_one_player_append_whole_records_side_by_side(tmp_path):
    import multiprocessing

    path = tmp_path / FILE
    workers = [multiprocessing.get_context("fork").Process(target=_append_many, args=(path, who, 40))
               for who in ("ann", "ann-too")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    games, unreadable = local_games(path)
    assert unreadable == [] and len(games) == 80
    assert sorted({g.names[0] for g in games}) == ["ann", "ann-too"] and all(len(g.log) == 100 for g in games)
