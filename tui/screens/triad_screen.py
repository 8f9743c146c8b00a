"""The TRIAD table: the 6 × 6 board, removed-dice counters, one status line, seats, move log,
fairness, chat.

Like the TRICE table (tui/screens/trice_screen.py) it draws only from `TableView` snapshots and sends moves
through its `TableController`, so the same screen serves a local game and a network table. A turn
is made in two steps: choose one of your dice (Enter or click), then a square marked with the value
that reaches it (→II); digits 1–3 pick the value first. Rules: ../shared/rules/triad.md.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, TabbedContent

from dicetable.core.game import Move
from dicetable.core.triad import (
    COLOUR_NAMES,
    DRAW,
    INDEX,
    REMOVALS_TO_WIN,
    REMOVE,
    SETUP,
    SIZE,
    SQUARES,
    TURN,
    act,
)
from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.view import TableView, reason_words
from dicetable.tui.tables.messages import TableChanged
from dicetable.tui.screens.table_screen import LEAVE_KEY, TableScreen, panel_keys
from dicetable.tui.widgets.seats import SeatsPanel
from dicetable.tui.widgets.text_line import TextLine
from dicetable.tui.widgets.triad_board import ROMAN, SquareLook, TriadBoard

TRIAD_HELP = """\
[b]Playing TRIAD[/b]
Choose one of your dice, [b]turn[/b] it to another value and [b]move[/b] it exactly
that many cells in a straight line (8 directions), not over a die, onto an
empty cell. Three dice in a line, both players in it, all equal or 1-2-3:
a [b]Triad[/b]. If your die made a new one, take one of [b]your own[/b] dice in it off.
The first to take off a third die wins.

[b]Keys[/b]  arrows or h j k l: cursor · Enter or Space: choose a die, land
a-f then 1-6 jump to a square (b6) · 1 2 3: the value to turn to
Tab: next die or square · Esc: back, leave · r rematch, n decline (game over)
f fairness · m moves · mouse: click a die, a square
Dice: B Black, heavy frame ┏━┓ · W White, round frame ╭─╮ · value I, II, III
Marks: ▶◀ cursor · ◆ chosen · →II lands here as II · ✖ take off · ★ Triad
       • last move"""


def reach(state, square: int) -> dict[int, list[Move]]:
    """Where the die on `square` can land this turn: target square -> the legal moves landing there."""
    targets: dict[int, list[Move]] = {}
    for move in state.legal_moves():
        if move.kind in ("move", "turn", "shift") and INDEX[move.args[0]] == square:
            _, target = act(state.board, move)
            targets.setdefault(target, []).append(move)
    return targets


def landing_value(state, move: Move) -> int:
    """The value the die shows after `move` (a shift keeps the value it shows)."""
    if move.kind == "shift":
        return int(state.board[INDEX[move.args[0]]][1])
    return int(move.args[1])


def movable(state) -> list[int]:
    """The squares of the dice the seat to act can turn or move now, in board order."""
    return sorted({INDEX[m.args[0]] for m in state.legal_moves() if m.kind in ("move", "turn", "shift")})


def verdict_words(view: TableView) -> tuple[str, str]:
    """The headline and the deciding line of a finished game, in words."""
    state, names = view.state, view.names
    result = view.result
    headline = result.describe(names)
    if state is None or state.result is None:  # a resignation or a default claim ended it
        return headline, f"The game ended: {reason_words(result, names)}."
    if not result.winners:
        return headline, f"The game is drawn: {result.reason}."
    winner = result.winners[0]
    taken = f"{state.removed[winner]} dice to {state.removed[1 - winner]}"
    triads = ", ".join("-".join(SQUARES[i] for i in line) for line in state.triads)
    made = f" with the Triad {triads}" if triads else ""
    colour = COLOUR_NAMES[state.colour(winner)]
    return headline, f"{names[winner]} ({colour}) took a third die off the board{made}: {taken}."


class TriadScreen(TableScreen):
    CSS_PATH = "triad.tcss"
    HELP_TEXT = TRIAD_HELP

    BINDINGS = [
        Binding("left,h", "cursor(-1, 0)", "move", key_display="←↓↑→"),
        Binding("right,l", "cursor(1, 0)", "right", show=False),
        Binding("up,k", "cursor(0, 1)", "up", show=False),
        Binding("down,j", "cursor(0, -1)", "down", show=False),
        Binding("enter,space", "act", "act"),
        Binding("1", "value(1)", "value", key_display="1-3"),
        Binding("2", "value(2)", "value 2", show=False),
        Binding("3", "value(3)", "value 3", show=False),
        Binding("tab", "next", "next", show=False),
        *panel_keys("fairness", "moves"),
        Binding("r", "rematch", "rematch"),
        Binding("n", "decline_rematch", "decline", show=False),  # said on the status line: the footer is full
        LEAVE_KEY,
    ]

    def __init__(self, controller: TableController) -> None:
        super().__init__(controller)
        self.cursor = INDEX["c1"]
        self.chosen: int | None = None  # the die chosen to move this turn
        self.value = 0  # the value picked with a digit (0: any)
        self.typing: str = ""  # a square's column letter just typed: the next digit is its row
        self._panel_before = ""  # `f` both names column f and shows the fairness panel: put back by the row

    # -- building ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine("", id="status")
        with Horizontal(id="triad-table"):
            with Vertical(id="triad-left"):
                yield TriadBoard(id="triad-board")
                yield TextLine("", id="triad-score")
                yield TextLine("", id="triad-legend")
            with Vertical(id="triad-right"):
                yield SeatsPanel(id="seats")
                yield from self.compose_panels()
        yield Footer()

    # -- messages from the table ---------------------------------------------------------------
    def on_table_changed(self, message: TableChanged) -> None:
        before = self.view.state if self.view is not None else None
        self.view = message.view
        if self.view.state is not before:
            self.chosen, self.value = None, 0
            self._place_cursor()
        self.redraw()
        self.settle_result()

    def verdict(self) -> tuple[str, str]:
        return verdict_words(self.view)

    # -- what this terminal may do now ---------------------------------------------------------
    def _targets(self) -> dict[int, list[Move]]:
        """The chosen die's landing squares, narrowed to the picked value."""
        if self.chosen is None or not self._acting():
            return {}
        state = self.view.state
        found = {}
        for target, moves in reach(state, self.chosen).items():
            kept = [m for m in moves if not self.value or landing_value(state, m) == self.value]
            if kept:
                found[target] = kept
        return found

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self, board_only: bool = False) -> None:
        """Draw the table; `board_only` after a cursor or choice change, which moves nothing else."""
        view = self.view
        if view is None or view.state is None:
            return
        self.show_status()
        self.query_one(TriadBoard).show(self.looks())
        if board_only:
            return
        self.query_one("#triad-score", TextLine).update(self.score_lines())
        self.query_one("#triad-legend", TextLine).update(
            "◆ chosen →II lands as II ✖ take off ★ Triad"  # • last: in the help (44 columns)
        )
        self.show_panels()

    def looks(self) -> tuple[SquareLook, ...]:
        state = self.view.state
        acting = self._acting()
        marks = {i: "last" for i in state.last}
        won = state.result is not None and bool(state.result.winners)
        if state.phase == REMOVE or won:  # the new Triads, while scoring and when they won the game
            for line in state.triads:
                for i in line:
                    marks[i] = "triad"
        if state.phase == REMOVE and self.view.result is None:
            for i in state.candidates:
                marks[i] = "take"
        if self.chosen is not None:
            marks[self.chosen] = "chosen"
        reaches = {}
        for target, moves in self._targets().items():
            if target != self.chosen:
                reaches[target] = landing_value(state, moves[0])
        return tuple(
            SquareLook(state.board[i], marks.get(i, ""), reaches.get(i, 0), acting and i == self.cursor)
            for i in range(SIZE * SIZE)
        )

    def score_lines(self) -> str:
        """Per player: colour, name and how many dice it has taken off (the removed-dice counters)."""
        state, names = self.view.state, self.view.names
        if state.black < 0:
            return "Colours are being drawn: Black moves first.\n"
        lines = []
        for colour in ("B", "W"):
            seat = state.seat_of(colour)
            off = state.removed[seat]
            counter = "✖" * off + "·" * (REMOVALS_TO_WIN - off)
            lines.append(f"{colour} {COLOUR_NAMES[colour]:<5} {names[seat][:17]:<17} off {off}/{REMOVALS_TO_WIN} {counter}")
        return "\n".join(lines)

    def status_line(self) -> str:
        view = self.view
        state, names = view.state, view.names
        if view.result is not None:
            headline, detail = verdict_words(view)
            said = f"{headline} — {detail}"
            keys = "r: rematch · Esc: leave" if self.controller.can_rematch() else "Esc: leave"
            if view.rematch and view.note:  # a network rematch offered, declined or gone: said before the rest
                return self.fit(f"{headline} — {view.note}", view.note)
            return self.fit(said, f"{headline} — {keys}", headline)
        if view.note:
            return view.note
        seat = state.actor
        if seat is None or seat < 0 or state.phase in (DRAW, SETUP):
            return "Drawing colours and rolling the dice…"
        colour = COLOUR_NAMES[state.colour(seat)]
        if not view.my_turn():
            doing = "is taking a die off" if state.phase == REMOVE else "is turning and moving a die"
            return f"{names[seat]} ({colour}) {doing}…"
        who = f"Your turn ({colour})" if len(view.local_seats) == 1 else f"{names[seat]} ({colour})"
        if state.phase == REMOVE:
            return self.fit(f"{who}: Triad! Take one of your dice marked ✖ off the board (Enter)",
                            f"{who}: Triad! Take one of your dice marked ✖ off")
        legal = state.legal_moves()
        if legal == (Move("pass"),):
            return f"{who}: no die can turn or move — press Enter to pass"
        fallback = legal[0].kind != "move"
        if self.chosen is None:
            if fallback:
                return self.fit(f"{who}: no normal move — choose a die to turn in place or move as it shows",
                                f"{who}: no normal move — choose a die to turn or move")
            return self.fit(f"{who}: choose a die to turn and move (arrows, Enter)", f"{who}: choose a die to turn and move")
        die = state.board[self.chosen]
        square = SQUARES[self.chosen]
        values = sorted({landing_value(state, m) for ms in reach(state, self.chosen).values() for m in ms})
        digits = "/".join(str(v) for v in values)
        if self.value:
            return self.fit(f"{who}: {square} turned to {ROMAN[self.value]}: Enter on a →{ROMAN[self.value]} square (Esc: back)",
                            f"{who}: {square} turned to {ROMAN[self.value]}: Enter on a →{ROMAN[self.value]} square")
        if fallback:
            return self.fit(f"{who}: {digits} then Enter turns {square} in place, or Enter on a → square",
                            f"{who}: {digits} then Enter turns {square} in place")
        return self.fit(f"{who}: {square} shows {ROMAN[int(die[1])]}: Enter on a → square, or {digits} picks the value",
                        f"{who}: {square} shows {ROMAN[int(die[1])]}: Enter on a → square")

    # -- the cursor ----------------------------------------------------------------------------
    def _place_cursor(self) -> None:
        """Move the cursor to where the next action happens."""
        if not self._acting():
            return
        state = self.view.state
        if state.phase == REMOVE:
            if self.cursor not in state.candidates:
                self.cursor = state.candidates[0]
            return
        dice = movable(state)
        if dice and self.cursor not in dice:
            self.cursor = min(dice, key=lambda i: (_distance(i, self.cursor), i))

    def action_cursor(self, dx: int, dy: int) -> None:
        r, c = divmod(self.cursor, SIZE)
        self.cursor = ((r + dy) % SIZE) * SIZE + (c + dx) % SIZE
        self.redraw(board_only=True)

    def action_next(self) -> None:
        """Tab: the next landing square of the chosen die, else the next die that can act."""
        if not self._acting():
            return
        state = self.view.state
        if state.phase == REMOVE:
            stops = list(state.candidates)
        elif self.chosen is not None:
            stops = sorted(self._targets())
        else:
            stops = movable(state)
        if stops:
            later = [i for i in stops if i > self.cursor]
            self.cursor = later[0] if later else stops[0]
        self.redraw(board_only=True)

    def on_key(self, event) -> None:
        """A square by name moves the cursor (README: type a square): a letter a-f takes the cursor to
        that column, and a digit 1-6 right after it to that row (b6). Other digits pick a value."""
        char = (event.character or "").lower()
        typed, self.typing = self.typing, ""
        if self.view is None or not char:
            return
        if char in "abcdef":
            self.typing = char
            self.cursor = INDEX[char + SQUARES[self.cursor][1:]]
            self.redraw(board_only=True)
            if char == "f":  # also the fairness panel's key: the panel shows, until a row follows
                self._panel_before = self.query_one(TabbedContent).active
                return
        elif typed and char in "123456":
            self.cursor = INDEX[typed + char]
            if typed == "f" and self._panel_before:
                self.query_one(TabbedContent).active = self._panel_before
            self.redraw(board_only=True)
        else:
            return
        event.stop()

    def action_value(self, value: int) -> None:
        """A digit picks the value to turn the chosen die (or the die under the cursor) to."""
        if not self._acting() or self.view.state.phase != TURN:
            return
        state = self.view.state
        if self.chosen is None:
            if self.cursor not in movable(state):
                self.notify("First choose one of your dice that can move.", severity="warning", timeout=3)
                return
            self.chosen = self.cursor
        values = {landing_value(state, m) for ms in reach(state, self.chosen).values() for m in ms}
        if value not in values:
            die = state.board[self.chosen]
            why = ("it shows that value already" if value == int(die[1])
                   else "no move with that value is open")
            self.notify(f"{SQUARES[self.chosen]} cannot be turned to {ROMAN[value]}: {why}.",
                        severity="warning", timeout=3)
            self.redraw(board_only=True)
            return
        self.value = value
        targets = self._targets()
        if self.cursor not in targets:
            self.cursor = min(targets, key=lambda i: (_distance(i, self.cursor), i))
        self.redraw(board_only=True)

    # -- acting --------------------------------------------------------------------------------
    def check_action(self, action: str, parameters) -> bool | None:
        if action in ("act", "value") and self.view is not None and self.view.result is not None:
            return False  # a finished game: the footer makes room for rematch (and chat at a network table)
        return super().check_action(action, parameters)

    def action_act(self) -> None:
        if not self._ready():  # over, or a move is on its way and the table has not answered yet
            return
        state = self.view.state
        if state.phase == REMOVE:
            if self.cursor in state.candidates:
                self._submit(Move("remove", (SQUARES[self.cursor],)))
            else:
                self.notify("Take off one of your own dice marked ✖.", severity="warning", timeout=3)
            return
        legal = state.legal_moves()
        if legal == (Move("pass",),):
            self._submit(Move("pass"))
            return
        targets = self._targets()
        if self.cursor in targets:
            moves = targets[self.cursor]
            if len(moves) == 1:
                self._submit(moves[0])
            else:
                values = "/".join(str(landing_value(state, m)) for m in moves)
                self.notify(f"Press {values} for the value to turn it to.", timeout=3)
            return
        if self.cursor in movable(state):
            self.chosen, self.value = self.cursor, 0
        elif self.chosen is not None:
            self.notify("The chosen die cannot land there: pick a square marked →.",
                        severity="warning", timeout=3)
        else:
            die = state.board[self.cursor]
            mine = die and die[0] == state.colour(state.actor)
            self.notify("That die cannot move this turn." if mine else "Choose one of your own dice.",
                        severity="warning", timeout=3)
        self.redraw(board_only=True)

    def on_triad_board_pressed(self, message: TriadBoard.Pressed) -> None:
        if not self._acting():
            return
        self.cursor = message.square
        self.action_act()

    def step_back(self) -> bool:
        if self.chosen is None:
            return False
        self.chosen, self.value = None, 0  # Esc first un-chooses the die
        self.redraw(board_only=True)
        return True


def _distance(a: int, b: int) -> int:
    (ra, ca), (rb, cb) = divmod(a, SIZE), divmod(b, SIZE)
    return max(abs(ra - rb), abs(ca - cb))
