"""The Tricolor Line table through Pilot at 80 × 24: a whole game against bots by keys and mouse,
the hot-seat "pass the keyboard" screen, hidden hands, the home screen's way in, and snapshots of
the map, the hand and the scoring screen.

Update the snapshots after a deliberate change of the look:
`pytest tests/test_tui_tricolor.py --snapshot-update`.
"""

import random

import pytest

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Move
from dicetable.core.tricolor import parse_pos
from dicetable.core.tricolor_tiles import CARDS, ID_CARDS, TILES, UNKNOWN
from dicetable.tui.app import DiceTableApp
from dicetable.tui.cli import main
from dicetable.tui.tables.controller import LocalTable, Player, outcome_words
from dicetable.tui.tables.view import Moved
from dicetable.tui.screens.home_screen import HomeScreen
from dicetable.tui.screens.new_game_screen import NewGameScreen
from dicetable.tui.screens.tricolor_dialogs import ChoiceDialog, PassKeyboardScreen, ScoreDialog
from dicetable.tui.screens.tricolor_screen import TricolorScreen, hand_words, tile_code
from dicetable.tui.widgets.arena import ActionLine
from dicetable.tui.widgets.tile_map import TileLook, TileMap, tile_rows
from tui_pilot import wait_until

TRICOLOR = registry.get("tricolor")
SIZE = (80, 24)


def text_of(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def bot_table(seed: int, bots: int = 2, bot: str = "greedy") -> LocalTable:
    players = [Player("Ann")] + [Player(f"{bot} {n}", bot) for n in range(2, bots + 2)]
    return LocalTable(TRICOLOR, players, seed=seed, bot_delay=0)


def advance(table: LocalTable, stop) -> LocalTable:
    """Play a table with no screen: Ann's moves by a seeded greedy bot on Ann's view, until `stop`."""
    me = TRICOLOR.bots["greedy"](TRICOLOR, random.Random(7))
    table.attach(None)  # no screen: the bots answer at once
    while table.state.result is None and not stop(table.state):
        table.submit(me.choose(table.state.view(0)))
    return table


async def cursor_to(pilot, screen, pos, vim: bool) -> None:
    dx, dy = pos[0] - screen.cursor[0], pos[1] - screen.cursor[1]
    across = ("l" if vim else "right") if dx > 0 else ("h" if vim else "left")
    along = ("j" if vim else "down") if dy > 0 else ("k" if vim else "up")
    await pilot.press(*[across] * abs(dx), *[along] * abs(dy))
    assert screen.cursor == pos


async def pick(pilot, app, options: list[Move], move: Move) -> None:
    """Answer the open ChoiceDialog with `move`: a digit, or arrows and Enter past the ninth."""
    await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
    index = options.index(move)
    assert len(app.screen.labels) == len(options)
    if index < 9:
        await pilot.press(str(index + 1))
    else:
        await pilot.press(*["down"] * index, "enter")


async def make_move(pilot, app, screen, move: Move, turn: int) -> None:
    """Make `move` the way a person would: keys, and the mouse on every third move."""
    vim, mouse = turn % 2 == 1, turn % 3 == 0
    kind = move.kind
    if kind == "draw" and mouse:  # click the words in the actions line
        line = screen.query_one(ActionLine)
        x = next(x for x in range(80) if line.action_at(x, 0) == f"draw:{move.args[0]}")
        assert await pilot.click(ActionLine, offset=(x, 0))
    elif kind == "draw":
        await pilot.press(str(move.args[0]))
    elif kind in ("place", "survey"):
        pile, pos, rotation = move.args[0], parse_pos(move.args[1]), move.args[2]
        if pile != screen.pile:
            await pilot.press(str(pile))
        while screen.choices().rotation() != rotation:
            await pilot.press("r")
        tile_map = screen.query_one(TileMap)
        if mouse and tile_map.pos_at(*tile_map.offset_of(pos)) == pos:
            assert await pilot.click(TileMap, offset=tile_map.offset_of(pos))
        else:
            await cursor_to(pilot, screen, pos, vim)
            await pilot.press("enter")
    elif kind in ("construct", "modify"):
        await cursor_to(pilot, screen, parse_pos(move.args[0]), vim)
        options = screen.choices().moves_at(screen.cursor, kind)
        await pilot.press("c" if kind == "construct" else "o")
        await pick(pilot, app, options, move)
    elif kind == "attack":
        options = screen.choices().moves_of("attack")
        await pilot.press("a")
        await pick(pilot, app, options, move)
    elif kind == "end":
        await pilot.press("e")
    elif kind == "discard":
        options = list(screen.choices().legal)
        await pilot.press("d")
        await pick(pilot, app, options, move)
    else:  # an event's target: demolish, quake, storm
        pos = parse_pos(move.args[0])
        await cursor_to(pilot, screen, pos, vim)
        await pilot.press("enter")


def hidden_from(screen, seat: int) -> bool:
    """What the screen draws for `seat` holds no other seat's card or ID (before the reveal)."""
    seen = screen.seen
    return all(
        all(c == UNKNOWN for c in seen.hands[other]) and seen.ids[other] == UNKNOWN
        for other in range(seen.seats) if other != seat and not seen.shown[other]
    )


@pytest.mark.slow
async def test_a_whole_game_against_two_greedy_bots_by_keys_and_mouse():
    app = DiceTableApp(bot_table(seed=56))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, TricolorScreen)
        me = TRICOLOR.bots["greedy"](TRICOLOR, random.Random(3))
        moves, kinds = 0, set()
        while True:
            await wait_until(pilot, lambda: screen.view is not None and (
                screen.view.result is not None or screen._acting()))
            if screen.view.result is not None:
                break
            assert hidden_from(screen, 0)
            assert screen.seen.hands[0] == screen.view.state.hands[0]  # Ann sees her own hand
            state, logged, names = screen.view.state, len(screen.view.log), screen.view.names
            move = me.choose(state.view(0))
            await make_move(pilot, app, screen, move, moves)
            await wait_until(pilot, lambda: screen.view.state is not state)
            # The engine got exactly this move, in Ann's name.
            assert screen.view.log[logged] == Moved(0, TRICOLOR.describe(state, move))
            assert screen.view.log[logged].words(names).startswith(f"{names[0]} ")
            if move.kind == "construct":  # an event card is played at once, and said
                assert "Last event: " in text_of(screen, "#tc-seats")
            moves, kinds = moves + 1, kinds | {move.kind}
            assert moves < 400
        # Seed 56: Ann places, draws, constructs, modifies, plays an Earthquake, discards.
        assert moves >= 10 and {"place", "draw", "construct", "modify", "quake", "end", "discard"} <= kinds
        # The scoring screen: every ID and hand revealed, the points as the engine scored them.
        await wait_until(pilot, lambda: isinstance(app.screen, ScoreDialog))
        state, result = screen.view.state, screen.view.result
        dialog = app.screen
        assert dialog.headline == result.describe(screen.view.names)
        rows = dialog.table.splitlines()[1:]
        for seat, row in enumerate(rows):
            colour = ID_CARDS[state.ids[seat]]
            assert screen.view.names[seat][:12] in row and f" {colour} " in row
            assert row.split()[-1] == str(int(result.scores[seat]))
            assert hand_words(state.hands[seat])[:21] in row
            assert row.startswith("★") == (seat in result.winners)
        assert "Winner Colour" in dialog.detail
        # Back to the board: the scored routes are marked ★, then a rematch from the keys.
        await pilot.press("escape")
        assert app.screen is screen
        looks = screen.query_one(TileMap).cells
        assert {p for p, look in looks.items() if "route" in look.marks} == {p for r in state.routes for p in r}
        assert result.describe(screen.view.names) in text_of(screen, "#status")
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.view.result is None and len(screen.view.state.board) <= 4)


@pytest.mark.slow
async def test_hot_seat_passes_the_keyboard_and_hides_the_previous_hand():
    table = LocalTable(TRICOLOR, [Player("Ann"), Player("Bob"), Player("Cid")], seed=11, bot_delay=0)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PassKeyboardScreen))
        screen = app.screen_stack[-2]
        assert isinstance(screen, TricolorScreen)
        first = table.state.actor
        names = table.names
        assert app.screen.next_name == names[first]
        assert "Watching" in text_of(screen, "#tc-hand")  # nobody's hand behind the cover
        await pilot.press("x")
        assert app.screen is screen and screen.holder == first
        for turn in range(4):  # four placements and draws: each change of seat goes through the cover
            seat = table.state.actor
            assert screen.holder == seat and hidden_from(screen, seat)
            hand = text_of(screen, "#tc-hand")
            assert names[seat] in hand and hand_words(table.state.hands[seat]) in hand
            # i covers the hand and ID from onlookers, and shows them again.
            await pilot.press("i")
            assert "hidden" in text_of(screen, "#tc-hand")
            assert hand_words(table.state.hands[seat]) not in text_of(screen, "#tc-hand")
            await pilot.press("i")
            state = table.state
            move = next(m for m in state.legal_moves() if m.kind in ("place", "draw"))
            await make_move(pilot, app, screen, move, turn)
            await wait_until(pilot, lambda: table.state is not state)
            if table.state.actor != seat:
                await wait_until(pilot, lambda: isinstance(app.screen, PassKeyboardScreen))
                cover = app.screen
                assert cover.next_name == names[table.state.actor] and cover.previous == names[seat]
                assert screen.holder is None and "Watching" in text_of(screen, "#tc-hand")
                await pilot.click("#pass-box") if turn % 2 else await pilot.press("space")
                await wait_until(pilot, lambda: app.screen is screen)


async def test_the_map_draws_roads_sides_and_marks_without_colour():
    # A constructed tee turned once: roads N, E, S, double glyphs, ✓; a blueprint dead-end curve: □, cost 1.
    tee = next(t.id for t in TILES if t.shape == "tee" and t.kind == "road")
    rows = tile_rows(TileLook(tee, 1, True, ("route",)))
    assert rows == [f"{TILES[tee].colour} ║ ✓", "  ╠══", "★ ║  "]
    dead = next(t.id for t in TILES if t.shape == "curve" and t.kind == "dead")
    rows = tile_rows(TileLook(dead, 0, False, ("last",)))
    assert rows == [f"{TILES[dead].colour} ┆ 1", "  □┄┄", "•    "]
    assert tile_rows(TileLook(0, 0, True)) == ["S ║  ", "══╬══", "  ║  "]
    assert tile_rows(TileLook(marks=("free",)))[1] == "  +  "
    # On the table: a bot game's map as text, the Start Tile in the middle.
    table = advance(bot_table(seed=4), lambda s: s.turns >= 6 and s.actor == 0 and s.phase == "act")
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None)
        tile_map = screen.query_one(TileMap)
        text = tile_map.plain()
        assert "╬" in text and "S ║" in text
        for pos, placed in table.state.grid.items():
            look = tile_map.cells[pos]
            assert (look.tile, look.rotation, look.built) == (placed.tile, placed.rotation, placed.built)
        # The cursor scrolls the map: far to the east, the Start Tile leaves the view.
        start = tile_map.offset_of((0, 0))
        await pilot.press(*["right"] * 8)
        assert tile_map.offset_of((0, 0))[0] < start[0] and screen.cursor[0] > 0
        assert text_of(screen, "#tc-here").startswith(f"{screen.cursor[0]},{screen.cursor[1]}: ")
        # Tab visits the squares where Enter acts (a blueprint to pay for, here).
        await pilot.press("tab")
        assert screen.cursor in screen.choices().targets() and "pay" in tile_map.cells[screen.cursor].marks
        assert screen.choices().moves_at(screen.cursor, "construct")


async def test_an_attack_names_its_target_and_the_whole_hand():
    table = advance(bot_table(seed=4), lambda s: s.actor == 0 and s.phase == "act" and len(s.hands[0]) >= 2)
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None and screen._acting())
        state = table.state
        # The log and the fairness panel never print a hidden deal, though the local table knows it.
        chance = [e.words(screen.view.names) for e in screen.view.log if e.seat == CHANCE]
        assert "shuffle the resource cards: shuffled face down" in chance
        assert "Ann draws 4 resource cards: dealt face down" in chance
        assert not any("order" in text or "values" in text for text in chance if "resource" in text or "ID" in text)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        labels = app.screen.labels
        assert [label.split(" skips")[0] for label in labels] == [table.names[s] for s in (1, 2) if s != state.last_target]
        hand = sorted(CARDS[c].kind for c in state.hands[0])
        assert all(sorted(label.split("you discard ")[1].rstrip(")").split(" + ")) == hand for label in labels)
        await pilot.press("escape")  # Esc cancels: nothing is sent
        assert app.screen is screen and table.state is state
        await pilot.press("a", "1")
        await wait_until(pilot, lambda: table.state is not state)
        target = next(s for s in (1, 2) if s != state.last_target)
        assert table.state.skips[target] and table.state.hands[0] == ()
        assert "⊘ skips" in [line for line in text_of(screen, "#tc-seats").splitlines() if table.names[target] in line][0]


async def test_the_seats_show_what_each_player_threw_away_by_choice():
    # Eight seats (the most the panel must hold at 80 x 24), played until colours have been shed.
    table = advance(bot_table(seed=6, bots=7), lambda s: s.turns >= 6 and s.actor == 0 and s.played and s.phase == "act")
    state = table.state
    assert sum(map(sum, state.shed)) > 0 and len(set(state.shed)) > 1
    app = DiceTableApp(table)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.view is not None and screen.seen is not None)
        lines = text_of(screen, "#tc-seats").splitlines()
        assert lines[0].split() == ["seat", "hand", "thrown", "away"]
        for seat, tally in enumerate(state.shed):
            row = next(line for line in lines if table.names[seat] in line)
            assert row.split()[-3:] == [f"{c}{n}" for c, n in zip("RYB", tally)], row
        assert lines[-1].startswith("Last event")  # the last line of the panel...
        panel, pane = screen.query_one("#tc-seats").region, screen.query_one("#seats-pane").region
        assert max(map(len, lines)) <= panel.width  # no line wraps...
        assert panel.y + len(lines) <= pane.bottom, "\n".join(lines)  # ...and the last is on screen


def seats_choice(app, seats: int):
    return next(c for c in app.screen.query("#setup-seats Choice") if c.name == str(seats))


@pytest.mark.slow
async def test_tricolor_from_the_home_screen_for_bots_and_for_hot_seat():
    app = DiceTableApp(bot_delay=0, seed=6)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        assert isinstance(app.screen, NewGameScreen)
        await pilot.press("down", "down", "down", "enter")
        assert app.screen.query_one("#setup-game").pressed_button.name == "tricolor"
        await pilot.click(seats_choice(app, 4))
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, TricolorScreen) and app.screen.view is not None)
        assert [seat.kind for seat in app.screen.view.seats].count("bot") == 3
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("s")  # hot-seat: eight people at one terminal
        await pilot.press("down", "down", "down", "enter")
        await pilot.click(seats_choice(app, 8))
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, PassKeyboardScreen))
        screen = app.screen_stack[-2]
        assert isinstance(screen, TricolorScreen) and len(screen.view.local_seats) == 8


def test_play_refuses_a_table_too_large_for_tricolor(capsys):
    assert main(["play", "tricolor", "--vs", "greedy", "--seats", "9"]) == 2
    assert "Tricolor Line is played by 2 to 8 players, not 9" in capsys.readouterr().err


def test_pile_tops_and_hands_in_words():
    assert hand_words([]) == "no cards"
    red = [c.id for c in CARDS if c.kind == "R"][:2]
    wild = [c.id for c in CARDS if c.kind == "W"][:1]
    assert hand_words(red + wild + [UNKNOWN]) == "R×2 W ?"
    assert tile_code(1) == "End"


def test_who_goes_first_is_told_with_the_players_name():
    state, source = TRICOLOR.new(4, TRICOLOR.resolve_options({})), LocalSource(random.Random(3))
    while state.pending[0][0] != "first":  # the setup is random steps alone
        state = state.resolve(source.outcome(state.chance()))
    chance = state.chance()
    outcome = source.outcome(chance)
    names = ["Ann", "Bob", "Cy", "Di"]
    assert outcome_words(TRICOLOR, chance, outcome, state).words(names) == f"{names[state.resolve(outcome).first]} goes first"


def test_snapshot_the_map_and_the_hand_mid_game(snap_compare):
    table = advance(bot_table(seed=4), lambda s: s.turns >= 6 and s.actor == 0 and s.phase == "act")
    assert snap_compare(DiceTableApp(table), terminal_size=SIZE)


def test_snapshot_discarding_from_the_hand(snap_compare):
    table = advance(bot_table(seed=4), lambda s: s.actor == 0 and s.phase == "discard")
    assert snap_compare(DiceTableApp(table), press=["d"], terminal_size=SIZE)


def test_snapshot_the_scoring_screen_with_the_reveal(snap_compare):
    table = advance(bot_table(seed=3), lambda s: False)  # a red and a blue tile on the routes
    assert table.state.result is not None and all(table.state.shown)
    assert snap_compare(DiceTableApp(table), terminal_size=SIZE)
