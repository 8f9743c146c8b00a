"""The TRIAD table through Pilot at 80 × 24: whole games against a bot by keys and by mouse, the
chosen die's landing squares per value, the scoring choice, the fallbacks, snapshots of the board.

Update the snapshots after a deliberate change of the look:
`pytest tests/test_tui_triad.py --snapshot-update`.
"""

import random
from dataclasses import replace

import pytest

from dicetable.core import registry
from dicetable.core.game import Move
from dicetable.core.triad import INDEX, SQUARES, act, parse_board
from dicetable.tui.app import DiceTableApp
from dicetable.tui.cli import main
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.tables.view import Moved
from dicetable.tui.screens.dialogs import GameOverDialog, HelpDialog
from dicetable.tui.screens.home_screen import HomeScreen
from dicetable.tui.screens.new_game_screen import NewGameScreen
from dicetable.tui.screens.triad_screen import TriadScreen
from dicetable.tui.widgets.triad_board import TriadBoard, square_offset
from tui_pilot import until_shown, wait_until

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

TRIAD = registry.get("triad")
SIZE = (80, 24)
# Seed 27, hot-seat: greedy bots' first eleven moves; the eleventh makes two Triads at once
# (a3-a4-a5 and a4-b5-c6), so Black may take off a3 or a4.
SEED = 27
MOVES = (
    "move c1 2 nw", "move a6 2 s", "move f1 3 n", "move b6 1 s", "move b1 2 ne", "move e6 2 sw",
    "move f4 2 s", "move c4 3 s", "move d3 1 nw", "move a4 1 n", "move d1 3 nw",
)


def hot_seat(count: int) -> LocalTable:
    table = LocalTable(TRIAD, [Player("Ann"), Player("Bob")], seed=SEED, bot_delay=0)
    for move in MOVES[:count]:
        table.submit(Move.parse(move))
    assert len(table.view().log) == count + 2  # the colour draw, the setup roll, every move
    return table


def board_text(screen) -> str:
    return screen.query_one(TriadBoard).plain()


async def cursor_to(pilot, screen, square: int, vim: bool) -> None:
    (r0, c0), (r1, c1) = divmod(screen.cursor, 6), divmod(square, 6)
    across = ("l" if vim else "right") if c1 > c0 else ("h" if vim else "left")
    along = ("k" if vim else "up") if r1 > r0 else ("j" if vim else "down")
    await pilot.press(*[across] * abs(c1 - c0), *[along] * abs(r1 - r0))
    assert screen.cursor == square


async def by_keys(pilot, screen, move: Move, turn: int) -> None:
    state, vim = screen.view.state, turn % 2 == 1  # arrows and h j k l take turns
    if move.kind == "pass":
        await pilot.press("enter")
        return
    await cursor_to(pilot, screen, INDEX[move.args[0]], vim)
    if move.kind == "remove":
        await pilot.press("enter")
        return
    await pilot.press("enter")
    assert screen.chosen == INDEX[move.args[0]]
    if move.kind in ("move", "turn"):
        await pilot.press(str(move.args[1]))
        assert screen.value == move.args[1]
    await cursor_to(pilot, screen, act(state.board, move)[1], vim)
    await pilot.press("enter")


async def by_mouse(pilot, screen, move: Move, turn: int) -> None:
    state = screen.view.state
    if move.kind == "pass":
        await pilot.press("enter")
        return
    square = INDEX[move.args[0]]
    assert await pilot.click(TriadBoard, offset=square_offset(square))
    if move.kind == "remove":
        return
    assert screen.chosen == square
    if move.kind == "turn":
        await pilot.press(str(move.args[1]))  # the one choice a click cannot make: the value
    assert await pilot.click(TriadBoard, offset=square_offset(act(state.board, move)[1]))


async def play_to_the_end(pilot, app, make_move):
    """Play the person's seat with the seeded greedy bot's choices, made through `make_move`."""
    screen = app.screen
    assert isinstance(screen, TriadScreen)
    me = TRIAD.bots["greedy"](TRIAD, random.Random(99))
    moves = 0
    while True:
        await wait_until(pilot, lambda: screen.view is not None and (screen.view.result is not None or screen.view.my_turn()))
        if screen.view.result is not None:
            return screen, moves
        state, logged, names = screen.view.state, len(screen.view.log), screen.view.names
        move = me.choose(state)
        await make_move(pilot, screen, move, moves)
        await wait_until(pilot, lambda: screen.view.state is not state)
        # The engine got exactly this move, in the person's name.
        assert screen.view.log[logged] == Moved(state.actor, TRIAD.describe(state, move))
        assert names[state.actor] in screen.view.log[logged].words(names)
        moves += 1
        assert moves < 300


async def check_the_end(pilot, app, screen) -> None:
    result = screen.view.result
    await wait_until(pilot, lambda: isinstance(app.screen, GameOverDialog))
    assert app.screen.headline == result.describe(screen.view.names)
    assert result.describe(screen.view.names) in str(screen.query_one("#status").render())
    score = str(screen.query_one("#triad-score").render())
    state = screen.view.state
    for seat in (0, 1):
        assert f"off {state.removed[seat]}/3" in score
    if result.winners:
        assert "off 3/3 ✖✖✖" in score
    me = min(screen.view.local_seats)
    assert state.removed[me] >= 1  # the person scored: the removal was made through the screen too


@pytest.mark.slow
async def test_a_whole_game_against_the_greedy_bot_by_key_presses():
    table = LocalTable(TRIAD, [Player("Ann"), Player("greedy bot", "greedy")], seed=2, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen, moves = await play_to_the_end(pilot, app, by_keys)
        assert moves >= 3
        await check_the_end(pilot, app, screen)
        # Rematch from the dialog: a new game at the same table.
        await pilot.press("r")
        await wait_until(pilot, lambda: app.screen is screen and screen.view.result is None)
        assert screen.view.state.removed == (0, 0) and screen.view.state.turns <= 1


@pytest.mark.slow
async def test_a_whole_game_against_the_random_bot_by_mouse_clicks():
    table = LocalTable(TRIAD, [Player("Ann"), Player("random bot", "random")], seed=1, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen, moves = await play_to_the_end(pilot, app, by_mouse)
        assert moves >= 3
        await check_the_end(pilot, app, screen)
        await until_shown(pilot, "#home")
        assert await pilot.click("#home")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_the_chosen_die_marks_every_landing_square_with_its_value():
    app = DiceTableApp(hot_seat(4))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        state = screen.view.state
        square = screen.cursor
        await pilot.press("enter")
        assert screen.chosen == square
        expected = {act(state.board, m)[1]: m.args[1] for m in state.legal_moves() if m.args[0] == SQUARES[square]}
        looks = screen.query_one(TriadBoard).looks
        assert {i: look.reach for i, look in enumerate(looks) if look.reach} == expected
        assert looks[square].mark == "chosen" and "◆" in board_text(screen)
        for target, value in expected.items():
            assert f"→{'I' * value}" in board_text(screen).splitlines()[1 + 3 * (5 - target // 6) + 1]
        # A digit keeps only the squares that value reaches; the shown value is refused.
        shown = int(state.board[square][1])
        other = next(v for v in (1, 2, 3) if v != shown and v in expected.values())
        await pilot.press(str(other))
        looks = screen.query_one(TriadBoard).looks
        assert {i: look.reach for i, look in enumerate(looks) if look.reach} == {
            i: v for i, v in expected.items() if v == other}
        assert looks[screen.cursor].reach == other
        await pilot.press(str(shown))
        await wait_until(pilot, lambda: any("shows that value already" in n.message for n in app._notifications))
        assert screen.value == other and screen.view.state is state
        # Esc un-chooses; a second Esc leaves the table.
        await pilot.press("escape")
        assert screen.chosen is None and not any(look.reach for look in screen.query_one(TriadBoard).looks)
        assert "choose a die" in str(screen.query_one("#status").render())


async def test_a_scoring_move_asks_which_own_die_to_take_off():
    app = DiceTableApp(hot_seat(len(MOVES)))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        state = screen.view.state
        assert state.phase == "remove" and [SQUARES[i] for i in state.candidates] == ["a3", "a4"]
        looks = screen.query_one(TriadBoard).looks
        assert [SQUARES[i] for i, look in enumerate(looks) if look.mark == "take"] == ["a3", "a4"]
        assert {SQUARES[i] for i, look in enumerate(looks) if look.mark == "triad"} == {"a5", "b5", "c6"}
        assert "✖" in board_text(screen) and "★" in board_text(screen)
        assert "Take one of your dice marked ✖" in str(screen.query_one("#status").render())
        assert screen.cursor == INDEX["a3"]  # the cursor waits on the first choice
        # A die that is not a candidate is refused, and nothing changes.
        await pilot.click(TriadBoard, offset=square_offset(INDEX["a5"]))
        await wait_until(pilot, lambda: any("marked ✖" in n.message for n in app._notifications))
        assert screen.view.state is state
        await pilot.press("down", "enter")  # from a5 (clicked) to a4
        await wait_until(pilot, lambda: screen.view.state is not state)
        assert screen.view.state.board[INDEX["a4"]] == ""
        score = str(screen.query_one("#triad-score").render()).splitlines()
        assert score[0].startswith("B Black") and "off 1/3 ✖··" in score[0] and "off 0/3" in score[1]


async def test_with_no_normal_move_the_fallbacks_are_offered():
    table = hot_seat(0)
    start = table.state
    black = start.colour(start.actor)
    white = "W" if black == "B" else "B"
    # The mover's only die on a1 is walled in: no move, no shift by its 1; it may only turn.
    board = parse_board(f"-- -- -- -- -- -- / -- -- -- -- -- -- / -- -- -- -- -- -- / -- -- -- -- -- -- / "
                        f"{white}1 {white}2 -- -- -- -- / {black}1 {white}3 -- -- -- --")
    table.state = replace(start, board=board, seen=((board, start.actor),))
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        assert screen.cursor == INDEX["a1"]
        assert "no normal move" in str(screen.query_one("#status").render())
        await pilot.press("enter")
        assert screen.chosen == INDEX["a1"]
        await pilot.press("enter")  # two turns land on a1: the value must be named
        await wait_until(pilot, lambda: any("Press 2/3" in n.message for n in app._notifications))
        assert screen.view.state is table.state
        await pilot.press("3", "enter")
        await wait_until(pilot, lambda: screen.view.state.board[INDEX["a1"]] == f"{black}3")
        assert "turns a1 from 1 to 3 without moving it" in screen.view.log[-1].words(screen.view.names)


def owner_and_value_are_told_without_colour(screen) -> None:
    """Each die says its owner (B/W, heavy or round frame) and value (I-III) in letters."""
    rows = board_text(screen).splitlines()
    assert len(rows) == 19 and all(len(row) == 44 for row in rows)
    assert rows[0].split() == list("abcdef")
    assert [row[0] for row in rows[2::3]] == list("654321")
    state = screen.view.state
    for square, die in enumerate(state.board):
        r, c = divmod(square, 6)
        top, middle = rows[1 + 3 * (5 - r)], rows[2 + 3 * (5 - r)]
        cell, frame = middle[2 + 7 * c: 9 + 7 * c], top[2 + 7 * c: 9 + 7 * c]
        if die:
            assert f"{die[0]} {'I' * int(die[1])}" in cell
            assert frame[1] == ("━" if die[0] == "B" else "─")
        else:
            assert SQUARES[square] in cell + frame


@pytest.mark.slow
async def test_owner_and_value_without_colour_help_panels_and_leaving_by_keys():
    app = DiceTableApp(hot_seat(2))  # one app run for both checks: starting an app costs more than they do
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        owner_and_value_are_told_without_colour(screen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpDialog) and "Playing TRIAD" in app.screen.text
        await pilot.press("x")
        assert app.screen is screen
        await pilot.press("f")
        assert screen.query_one("#panels").active == "fairness"
        events = screen.view.events
        names = screen.view.names
        assert [e.label.words(names) for e in events] == ["draw for Black", "setup roll"]
        assert events[0].outcome.words(names) in ("Ann plays Black", "Bob plays Black")
        rolled = events[1].outcome.words(names)
        assert rolled.startswith("Black rolled ") and "; White rolled " in rolled
        await pilot.press("m", "escape")
        assert isinstance(app.screen, HomeScreen)


@pytest.mark.slow
async def test_triad_is_offered_on_the_home_screen():
    app = DiceTableApp(bot_delay=0, seed=6)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        assert isinstance(app.screen, NewGameScreen)
        await pilot.press("down", "enter")  # the second game in the list
        assert app.screen.query_one("#setup-game").pressed_button.name == "triad"
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, TriadScreen) and app.screen.view is not None)
        assert [seat.kind for seat in app.screen.view.seats].count("bot") == 1


@pytest.mark.parametrize("first", ["me", "bot"])
def test_who_moves_first_against_a_bot_is_the_persons_choice(first):
    for seed in range(4):
        table = LocalTable(TRIAD, [Player("Ann"), Player("greedy bot", "greedy")], seed=seed, first=first)
        view = table.view()
        assert view.state.phase == "turn"
        assert (view.state.actor in view.local_seats) == (first == "me")
        assert view.names[view.state.seat_of("B")] == ("Ann" if first == "me" else "greedy bot")


def test_play_refuses_an_unknown_bot_for_triad(capsys):
    assert main(["play", "triad", "--vs", "nobody"]) == 2
    assert "unknown bot 'nobody' for TRIAD" in capsys.readouterr().err


def test_snapshot_a_chosen_die_and_its_landing_squares(snap_compare):
    # Black's turn after four moves; Enter chooses the die under the cursor.
    assert snap_compare(DiceTableApp(hot_seat(4)), press=["enter"], terminal_size=SIZE)


def test_snapshot_the_scoring_choice(snap_compare):
    # Two new Triads: a3 and a4 marked ✖, the Triads' other dice ★.
    assert snap_compare(DiceTableApp(hot_seat(len(MOVES))), terminal_size=SIZE)
