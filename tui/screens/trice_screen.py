"""The TRICE table: board and pool as dice, one status line, seats, move log, fairness, chat.

The screen draws only from `TableView` snapshots and sends moves through its `TableController`
(tui/tables/controller.py), so the same screen serves a local game and a network table. Rules:
../shared/rules/trice.md.
"""

from __future__ import annotations

from collections import Counter

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer

from dicetable.core.game import Move
from dicetable.core.trice import (
    CHOOSE,
    COLS,
    INCREMENT,
    INDEX,
    INDICATE,
    NEIGHBOURS,
    ORDERED,
    OVER,
    PLACE,
    ROWS,
    SAME_COLOUR,
    SAME_VALUE,
    SQUARES,
    SWAP,
    line_conditions,
)
from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.view import TableView, reason_words, result_words
from dicetable.tui.tables.messages import TableChanged
from dicetable.tui.screens.table_screen import CURSOR_KEYS, LEAVE_KEY, TableScreen, panel_keys
from dicetable.tui.widgets.board import BoardGrid, PoolTray
from dicetable.tui.widgets.die import DieCell
from dicetable.tui.widgets.seats import SeatsPanel
from dicetable.tui.widgets.text_line import TextLine

CONDITION_CAPTION = {SAME_COLOUR: "★ colour", SAME_VALUE: "★ value", ORDERED: "★ ordered"}


def pool_slots(state) -> list[str]:
    """The pool in twelve fixed places: a die stays where it was rolled until it is placed."""
    rolled = [die for roll in state.rolls for die in roll] if state.phase != "setup" else []
    left = Counter(state.pool)
    slots = []
    for die in reversed(rolled):  # the engine removes the first copy; we empty the last place
        if left[die]:
            left[die] -= 1
            slots.append(die)
        else:
            slots.append("")
    return list(reversed(slots)) + [""] * (PoolTray.SLOTS - len(rolled))


def verdict_words(view: TableView) -> tuple[str, str]:
    """The headline and the deciding line of a finished game, in words."""
    state, names = view.state, view.names
    result = view.result
    headline = result_words(result, names)
    if state.result is None:  # a resignation or a default claim ended it
        return headline, f"The game ended: {reason_words(result, names)}."
    if not state.line:
        return headline, f"The game ends in a draw: {result.reason}."
    squares = " ".join(f"{SQUARES[i]} {state.board[i]}" for i in state.line)
    met = " + ".join(line_conditions(*(state.board[i] for i in state.line)))
    if result.reason == "Double Trice":
        loser = names[1 - result.winners[0]]
        return headline, f"Double Trice ({met}) on {squares}: {loser} made it and loses."
    return headline, f"Trice ({met}) on {squares}."


class TriceScreen(TableScreen):
    TOASTS_KEPT = 2  # the rack's nine rows over the panels (app.tcss)
    BINDINGS = [
        *CURSOR_KEYS,
        Binding("enter,space", "act", "act"),
        Binding("tab", "other_area", "board/pool", show=False),
        *panel_keys("fairness", "moves"),
        Binding("r", "rematch", "rematch"),
        LEAVE_KEY,
    ]

    def __init__(self, controller: TableController) -> None:
        super().__init__(controller)
        self.area = "pool"
        self.board_cursor = INDEX["b2"]
        self.pool_cursor = 0
        self._last_squares: tuple[int, ...] = ()

    # -- building ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine("", id="status")
        with Horizontal(id="table"):
            yield BoardGrid(id="board")
            yield PoolTray(id="pool")
        with Horizontal(id="lower"):
            yield SeatsPanel(id="seats")
            yield from self.compose_panels()
        yield Footer()

    # -- messages from the table ---------------------------------------------------------------
    def on_table_changed(self, message: TableChanged) -> None:
        self.view = message.view
        self._place_cursor()
        self.redraw()
        self.settle_result()

    def verdict(self) -> tuple[str, str]:
        return verdict_words(self.view)

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self) -> None:
        view = self.view
        if view is None:
            return
        state = view.state
        self.show_status()
        mine = view.my_turn()
        board = self.query_one(BoardGrid)
        marks = self._board_marks(state)
        for i in range(ROWS * COLS):
            mark, caption = marks.get(i, ("", ""))
            cursor = mine and self.area == "board" and i == self.board_cursor
            board.cell(i).show(state.board[i], cursor, mark, caption)
        pool = self.query_one(PoolTray)
        slots = pool_slots(state)
        chosen_slot = None
        if state.chosen:
            chosen_slot = max(i for i, die in enumerate(slots) if die == state.chosen)
        for i, die in enumerate(slots):
            cursor = mine and self.area == "pool" and i == self.pool_cursor
            chosen = i == chosen_slot
            pool.cell(i).show(die, cursor, "chosen" if chosen else "", "◆ chosen" if chosen else "")
        left = sum(1 for die in slots if die)
        if state.phase in (INDICATE, SWAP, INCREMENT) or (state.phase == OVER and not left):
            pool.set_title("Pool: empty · swap phase")
        else:
            pool.set_title(f"Pool: {left} dice")
        self.show_panels()

    def _board_marks(self, state) -> dict[int, tuple[str, str]]:
        # The last placement or swap stays marked while the next die is chosen or indicated.
        if state.last or not any(state.board):
            self._last_squares = state.last
        marks: dict[int, tuple[str, str]] = {i: ("last", "• last") for i in self._last_squares}
        if state.phase == SWAP and state.indicated >= 0:
            for n in NEIGHBOURS[state.indicated]:
                marks[n] = ("target", "↔ swap")
            marks[state.indicated] = ("indicated", "▲ indic.")
        if state.phase == INCREMENT:
            for i in state.swapped:
                marks[i] = ("swapped", "+1 ?")
        if state.phase == OVER and state.line:
            met = line_conditions(*(state.board[i] for i in state.line))
            caption = "✖ double" if len(met) > 1 else CONDITION_CAPTION.get(met[0], "★ line")
            for i in state.line:
                marks[i] = ("line", caption)
        return marks

    def status_line(self) -> str:
        view = self.view
        state, names = view.state, view.names
        if view.result is not None:
            headline, detail = verdict_words(view)
            return self.fit(f"{headline} — {detail}", headline)
        if view.note:
            return view.note
        seat = state.actor
        if seat is None or seat < 0:
            return "Rolling the dice…"
        other = names[1 - seat]
        if view.my_turn():
            who = "Your turn" if len(view.local_seats) == 1 else f"{names[seat]}'s turn"
            what, keys = {
                CHOOSE: (f"choose a die for {other} to place", "w/p/o 1-6 or arrows, Enter"),
                PLACE: (f"place {state.chosen} on a free square", "a-d 1-3 or arrows, Enter"),
                INDICATE: (f"indicate a die for {other} to swap", "Enter"),
                SWAP: (f"swap {SQUARES[max(state.indicated, 0)]} with a neighbour marked ↔", "Enter"),
                INCREMENT: ("add 1 to one of the two swapped dice, marked +1", "Enter"),
            }[state.phase]
            return self.fit(f"{who}: {what} ({keys})", f"{who}: {what}")
        if not view.seats[seat].connected:
            return f"{names[seat]} dropped: waiting for them to come back (or a default claim)"
        target = "you" if len(view.local_seats) == 1 else other
        doing = {
            CHOOSE: f"is choosing a die for {target}",
            PLACE: f"is placing {state.chosen}",
            INDICATE: f"is indicating a die for {target} to swap",
            SWAP: f"is swapping {SQUARES[max(state.indicated, 0)]}",
            INCREMENT: "is adding 1 to a swapped die",
        }[state.phase]
        return f"{names[seat]} {doing}…"

    # -- the cursor ----------------------------------------------------------------------------
    def _place_cursor(self) -> None:
        """Move the cursor to where the next action happens."""
        state = self.view.state
        if state.phase == CHOOSE:
            self.area = "pool"
            slots = pool_slots(state)
            if not slots[self.pool_cursor]:
                self.pool_cursor = next((i for i, d in enumerate(slots) if d), 0)
            return
        self.area = "board"
        if state.phase == PLACE and state.board[self.board_cursor]:
            free = [i for i, d in enumerate(state.board) if not d]
            self.board_cursor = min(free, key=lambda i: _distance(i, self.board_cursor))
        elif state.phase == SWAP and self.board_cursor not in NEIGHBOURS[state.indicated]:
            self.board_cursor = NEIGHBOURS[state.indicated][0]
        elif state.phase == INCREMENT and self.board_cursor not in state.swapped:
            self.board_cursor = state.swapped[0]

    def action_cursor(self, dx: int, dy: int) -> None:
        if self.area == "board":
            r, c = divmod(self.board_cursor, COLS)
            self.board_cursor = ((r + dy) % ROWS) * COLS + (c + dx) % COLS
        else:
            r, c = divmod(self.pool_cursor, 4)
            self.pool_cursor = ((r + dy) % 3) * 4 + (c + dx) % 4
        self.redraw()

    def action_other_area(self) -> None:
        self.area = "board" if self.area == "pool" else "pool"
        self.redraw()

    def on_key(self, event) -> None:
        """Names jump the cursor: a-d and 1-3 on the board (b2), w/p/o and 1-6 in the pool (w6)."""
        char = (event.character or "").lower()
        if not char or self.view is None:
            return
        if self.area == "board":
            if char in "abcd":
                r = self.board_cursor // COLS
                self.board_cursor = r * COLS + "abcd".index(char)
            elif char in "123":
                self.board_cursor = (int(char) - 1) * COLS + self.board_cursor % COLS
            else:
                return
        else:
            slots = pool_slots(self.view.state)
            current = slots[self.pool_cursor] or " 0"
            if char in "wpo":
                wanted = lambda die: die[0] == char.upper()
            elif char in "123456":
                colour = current[0]
                wanted = lambda die: die[1] == char and (die[0] == colour or not any(
                    d and d[0] == colour and d[1] == char for d in slots))
            else:
                return
            order = list(range(self.pool_cursor + 1, len(slots))) + list(range(self.pool_cursor + 1))
            found = next((i for i in order if slots[i] and wanted(slots[i])), None)
            if found is None:
                return
            self.pool_cursor = found
        event.stop()
        self.redraw()

    # -- acting --------------------------------------------------------------------------------
    def action_act(self) -> None:
        if not self._ready():  # one move per position: a network move may be on its way to the host
            return
        state = self.view.state
        if state.phase == CHOOSE:
            die = pool_slots(state)[self.pool_cursor]
            if not die:
                self.notify("Pick a die in the pool.", severity="warning", timeout=2)
                return
            self._submit(Move("choose", (die,)))
        else:
            self._submit(Move(state.phase, (SQUARES[self.board_cursor],)))

    def on_die_cell_pressed(self, message: DieCell.Pressed) -> None:
        cell_id = message.cell.id or ""
        if cell_id.startswith("sq-"):
            self.area, self.board_cursor = "board", INDEX[cell_id[3:]]
        else:
            self.area, self.pool_cursor = "pool", int(cell_id.split("-")[1])
        self.redraw()
        self.action_act()


def _distance(a: int, b: int) -> int:
    (ra, ca), (rb, cb) = divmod(a, COLS), divmod(b, COLS)
    return abs(ra - rb) + abs(ca - cb)
