"""The Tricolor Line table: the growing tile map with a cursor, the three pile tops, your hand and
ID card, every seat's card count, the discard pile, the phase and its legal actions, moves, fairness,
chat; the scoring screen with the reveal. Fits 80 × 24 with up to eight players.

Like the other tables (tui/screens/trice_screen.py) it draws only from `TableView` snapshots and sends
moves through its `TableController`. Hidden cards: a local table holds the full state, but the
screen draws only `state.view(seat)` for the seat at the keyboard, so it never shows another
seat's hand or ID before scoring. At a hot-seat table the keyboard's seat changes only through the
"pass the keyboard" screen (tui/screens/tricolor_dialogs.py); `i` hides your hand from onlookers.
Rules: ../shared/rules/tricolor-line.md.
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer

from dicetable.core.game import CHANCE, Move
from dicetable.core.tricolor import (
    ACT,
    DISCARD,
    DRAW,
    EMBARGO,
    EVENT,
    OVER,
    PLAN,
    SETUP,
    pos_text,
)
from dicetable.core.tricolor_routes import colour_counts, shortest_routes, winner_colours
from dicetable.core.tricolor_tiles import (
    CARDS,
    COLOUR_NAMES,
    COLOURS,
    DEAD,
    END,
    EVENT_TITLES,
    HAND_LIMIT,
    ID_CARDS,
    KINDS,
    PILES,
    START,
    TILES,
    UNKNOWN,
    card_from_token,
)
from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.tricolor_model import TricolorChoices, event_drawn
from dicetable.tui.tables.view import reason_words, result_words
from dicetable.tui.tables.messages import TableChanged
from dicetable.tui.screens.table_screen import CURSOR_KEYS, LEAVE_KEY, TableScreen, panel_keys
from dicetable.tui.screens.tricolor_dialogs import ChoiceDialog, PassKeyboardScreen, ScoreDialog
from dicetable.tui.widgets.arena import ActionLine
from dicetable.tui.widgets.text_line import TextLine, fitted
from dicetable.tui.widgets.tile_map import TileLook, TileMap

TRICOLOR_HELP = """\
[b]Playing Tricolor Line[/b]
Your ID card is your secret colour. A turn: [b]draw[/b] 2 cards and place a pile's
top tile, or draw 4 and go straight to discarding; then [b]construct[/b] (pay the
blueprint's colour), [b]modify[/b] (2 cards turn a blueprint), [b]attack[/b] (your whole
hand: a player skips a turn), as often as you like; keep at most 5 cards.
Two disjoint routes from S to two E tiles end the game: each route tile of
your colour scores 3, each unit of the winning colour in hand 1, a wild 1.

[b]Keys[/b]  arrows or h j k l: cursor · Enter or Space: act on the square
2 / 4 draw · 1 2 3 pile · r turn the tile · c construct · o modify
a attack · e end actions · d discard · Tab next square · i hide your hand
s scores · m moves · f fairness · t chat · Esc leaves · mouse: click
[b]Seats[/b]  cards in hand; thrown away R2 Y0 B1: units of each colour a player
discarded by choice (modify, discard, Embargo) — builders keep their colour
[b]Tiles[/b]  R Y B colour letter · S start · E end · ═ ║ ╬ constructed ✓
┄ ┆ ┼ blueprint with its cost · ■ □ dead end · + a tile may go here
Marks: ★ on a route to an End Tile · • last placed · × event target
       $ you can construct it · ┌▶◀┐ cursor"""

SHAPE_WORDS = {"straight": "straight", "curve": "curve", "tee": "tee", "cross": "cross"}
PHASE_WORDS = {
    SETUP: "setup", DRAW: "draw", PLAN: "route planning", ACT: "actions", EVENT: "event",
    EMBARGO: "Embargo", DISCARD: "discard", "scoring": "scoring", OVER: "game over", "dealing": "dealing",
}


def shed_words(state, seat: int) -> str:
    """`R2 Y0 B1`: the units of each colour `seat` has discarded by its own choice (public; the
    clue to its secret colour that the search bot reads too, so a person sees it as well)."""
    tally = state.shed[seat] if seat < len(state.shed) else (0,) * len(COLOURS)
    return " ".join(f"{colour}{units}" for colour, units in zip(COLOURS, tally))


def tile_label(tile: int) -> str:
    """A tile by colour letter and shape: `R curve`, `Y tee dead end`, `End Tile` (core/tricolor.py
    `tile_words` says it in full: "a red curve")."""
    t = TILES[tile]
    if t.kind == START:
        return "Start Tile"
    if t.kind == END:
        return "End Tile"
    return f"{t.colour} {SHAPE_WORDS[t.shape]}" + (" dead end" if t.kind == DEAD else "")


def tile_cost(tile: int) -> int:
    """What constructing the tile costs; Start and End Tiles are never paid for (they count as
    constructed, tricolor-line.md), though core's Tile.cost names a cross's price for them."""
    return 0 if TILES[tile].kind in (START, END) else TILES[tile].cost


def tile_code(tile: int) -> str:
    """A pile top in a few cells: `R cross`, `Y tee■` (■ a dead end), `End`."""
    t = TILES[tile]
    if t.kind in (START, END):
        return "End" if t.kind == END else "Start"
    return f"{t.colour} {t.shape}" + ("■" if t.kind == DEAD else "")


def hand_words(cards) -> str:
    """Cards grouped by kind in a fixed order: `R×2 R2 Y W`; unknown handles as `?`."""
    counts = Counter("?" if c == UNKNOWN else CARDS[c].kind for c in cards)
    parts = []
    for kind in (*KINDS, "?"):
        if counts[kind]:
            parts.append(kind if counts[kind] == 1 else f"{kind}×{counts[kind]}")
    return " ".join(parts) or "no cards"


def tokens_words(tokens) -> str:
    """Named cards (`R2:17`) as kinds: `R + R2`."""
    return " + ".join(CARDS[card_from_token(t)].kind for t in tokens) or "nothing"


def route_tiles(state) -> set[tuple[int, int]]:
    """The tiles to highlight: the scored routes once the game is decided, else every End Tile's
    current route (tricolor-line.md, Routes)."""
    if state.routes:
        return {p for route in state.routes for p in route}
    return {p for route in shortest_routes(state.grid).values() for p in route}


def score_rows(state, names: list[str]) -> tuple[str, str]:
    """The scoring screen's colour contest line and its table, from a state with every card shown."""
    grid = state.grid
    counts = colour_counts(grid, state.routes)
    winning = winner_colours(counts)
    tiles = len({p for route in state.routes for p in route})
    contest = " · ".join(f"{c} {COLOUR_NAMES[c]} {counts[c]}" for c in COLOURS)
    won = ", ".join(f"{c} {COLOUR_NAMES[c]}" for c in winning)
    detail = (f"{len(state.routes)} route{'s' if len(state.routes) != 1 else ''} scored, {tiles} tiles "
              f"({state.reason}). Tiles per colour: {contest}. Winner Colour: {won}.")
    lines = [f"{'':2}{'player':<13}{'ID':<9}{'route':>6}  {'hand (revealed)':<22}{'hand':>4}{'end':>4}{'total':>6}"]
    points = state.scores() if all(i != UNKNOWN for i in state.ids) else None
    for seat in range(state.seats):
        card = state.ids[seat]
        colour = ID_CARDS[card] if card != UNKNOWN else "?"
        own = counts.get(colour, 0)
        hand = state.hands[seat]
        hand_points = sum(CARDS[c].units if CARDS[c].colour in winning else 1 if not CARDS[c].colour else 0
                          for c in hand if c != UNKNOWN)
        end = 1 if seat == state.ender else 0
        total = points[seat] if points else "?"
        best = state.result is not None and seat in state.result.winners
        idw = f"{colour} {COLOUR_NAMES.get(colour, '?')}"
        lines.append(f"{'★ ' if best else '  '}{names[seat][:12]:<13}{idw:<9}{f'{own}×3':>6}  "
                     f"{hand_words(hand)[:21]:<22}{hand_points:>4}{f'+{end}' if end else '':>4}{total:>6}")
    return detail, "\n".join(lines)


class TricolorScreen(TableScreen):
    CSS_PATH = "tricolor.tcss"
    HELP_TEXT = TRICOLOR_HELP

    BINDINGS = [
        *CURSOR_KEYS,
        Binding("enter,space", "act", "act"),
        Binding("tab", "next", "next", show=False),
        Binding("1", "digit(1)", "pile 1", show=False),
        Binding("2", "digit(2)", "pile 2 / draw 2", show=False),
        Binding("3", "digit(3)", "pile 3", show=False),
        Binding("4", "digit(4)", "draw 4", show=False),
        Binding("r", "turn_or_rematch", "turn", show=False),
        Binding("c", "construct", "construct", show=False),
        Binding("o", "modify", "modify", show=False),
        Binding("a", "attack", "attack", show=False),
        Binding("e", "end", "end", show=False),
        Binding("d", "discard", "discard", show=False),
        Binding("i", "hide", "hide hand"),
        Binding("s", "scores", "scores", show=False),
        *panel_keys("moves", "fairness", show=False),
        LEAVE_KEY,
    ]

    def __init__(self, controller: TableController) -> None:
        super().__init__(controller)
        self.seen = None  # the state as the seat at the keyboard may see it
        self.cursor: tuple[int, int] = (0, 0)
        self.pile = 1  # the pile whose top tile is being placed
        self.turned = 0  # index into the tile's distinct rotations
        self.holder: int | None = None  # hot-seat: the seat the keyboard was last passed to
        self.hidden = False  # the hand and ID are covered (i)
        self._passing = False
        self._phase_seen = None
        self._logged = 0  # log entries already looked at for events

    # -- building ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine("", id="status")
        with Horizontal(id="tc-table"):
            with Vertical(id="tc-left"):
                yield TileMap(id="tc-map")
                yield TextLine("", id="tc-here")
            with Vertical(id="tc-right"):
                yield TextLine("", id="tc-piles")
                yield TextLine("", id="tc-hand")
                yield from self.compose_panels(
                    "seats-pane", "Fair", before=(("Seats", "seats-pane", TextLine("", id="tc-seats")),))
        yield ActionLine(id="tc-actions")
        yield Footer()

    # -- who is at the keyboard ----------------------------------------------------------------
    def hot_seat(self) -> bool:
        return self.view is not None and len(self.view.local_seats) > 1

    def viewer(self) -> int | None:
        """The seat whose hand this terminal shows: the one local seat, the hot-seat holder, or none."""
        view = self.view
        if view is None or not view.local_seats:
            return None
        if len(view.local_seats) == 1:
            return next(iter(view.local_seats))
        return self.holder

    def _acting(self) -> bool:
        view = self.view
        if view is None or self.seen is None or view.result is not None or self._passing:
            return False
        return view.my_turn() and view.actor == self.viewer()

    # -- messages from the table ---------------------------------------------------------------
    def on_table_changed(self, message: TableChanged) -> None:
        before = self.view.state if self.view is not None else None
        self.view = message.view
        state = self.view.state
        if state is None:
            self.query_one("#status", TextLine).update(self.view.note or "Waiting for the table…")
            return
        if state is not before:
            self._sent_in = None
        self._see()
        self._announce(before)
        if self._needs_pass():
            self._pass_keyboard()
        self._place_cursor()
        self.redraw()
        self.settle_result()

    def show_game_over(self) -> None:
        self.action_scores()

    def _see(self) -> None:
        seat = self.viewer()
        self.seen = self.view.state.view(seat if seat is not None else -1)  # -1: an onlooker's view

    def _needs_pass(self) -> bool:
        view = self.view
        if not self.hot_seat() or self._passing or view.result is not None:
            return False
        actor = view.actor
        return actor is not None and actor in view.local_seats and actor != self.holder

    def _pass_keyboard(self) -> None:
        names, actor = self.view.names, self.view.actor
        previous = names[self.holder] if self.holder is not None else ""
        self._passing = True
        self.holder = None  # nobody's hand is drawn while the keyboard changes hands
        self._see()

        def passed(_answer=None, seat=actor) -> None:
            self._passing = False
            self.holder = seat
            self.hidden = False
            if self.view is not None:
                self._see()
                if self._needs_pass():  # the turn moved on again meanwhile
                    self._pass_keyboard()
                self._place_cursor()
                self.redraw()

        self.app.push_screen(PassKeyboardScreen(names[actor], previous), passed)

    def _announce(self, before) -> None:
        """Events as they happen: a note when an event card was drawn since the last change."""
        log = self.view.log
        new, self._logged = log[self._logged:], len(log)
        if before is None or before is self.view.state or not self.seen.played:
            return
        if event_drawn(new):
            self.notify(self.event_words(), title="Event", timeout=4)

    # -- the legal moves, by what they do ------------------------------------------------------
    def choices(self) -> TricolorChoices:
        """The moves open at this keyboard now, by square, pile and rotation (tui/tables/tricolor_model.py)."""
        return TricolorChoices(self.seen, self._acting(), self.pile, self.turned)

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self, map_only: bool = False) -> None:
        if self.view is None or self.seen is None:
            return
        self.query_one(TileMap).show(self.cells(), self.cursor)
        self.query_one("#tc-here", TextLine).update(self.here_words())
        self.query_one(ActionLine).show(self.action_pieces())
        self.show_status()
        if map_only:
            return
        self.query_one("#tc-piles", TextLine).update(self.pile_text())
        self.query_one("#tc-hand", TextLine).update(self.hand_text())
        self.query_one("#tc-seats", TextLine).update(self.seats_text())
        self.show_panels()

    def cells(self) -> dict:
        s = self.seen
        grid = s.grid
        on_route = route_tiles(s)
        last = max(grid.values(), key=lambda p: p.order).order if len(grid) > 1 else -1
        choices = self.choices()
        targets = choices.targets()
        payable = s.phase == ACT and choices.acting
        cells = {}
        for pos, placed in grid.items():
            marks = []
            if pos in on_route:
                marks.append("route")
            if placed.order == last:
                marks.append("last")
            if pos in targets:
                marks.append("pay" if payable else "target")
            cells[pos] = TileLook(placed.tile, placed.rotation, placed.built, tuple(marks))
        if choices.placing():
            for pos in choices.free_cells():
                cells[pos] = TileLook(marks=("free",))
            tile = s.tops[self.pile - 1]
            if self.cursor in cells and cells[self.cursor].tile < 0 and "free" in cells[self.cursor].marks and tile != -1:
                cells[self.cursor] = TileLook(tile, choices.rotation(), False, ("free",), ghost=True)
        return cells

    def here_words(self) -> str:
        """What lies under the cursor, in words (the map tells it in glyphs)."""
        placed = self.seen.grid.get(self.cursor)
        where = f"{pos_text(self.cursor)}: "
        if placed is None:
            choices = self.choices()
            if choices.placing() and self.cursor in choices.free_cells():
                tile = self.seen.tops[self.pile - 1]
                return where + f"free · Enter places {tile_code(tile)} ↻{choices.rotation()}"
            return where + "empty"
        side = "built" if placed.constructed else f"blueprint, cost {tile_cost(placed.tile)}"
        name = tile_label(placed.tile) if TILES[placed.tile].kind in (START, END) else tile_code(placed.tile)
        return where + f"{name} · {side} · ↻{placed.rotation}"

    def pile_text(self) -> Text:
        s = self.seen
        text = Text("Piles", style="bold")
        text.append(" (top tile · tiles left)")
        choosing = self.choices().placing()
        for pile in range(1, PILES + 1):
            tile, size = s.tops[pile - 1], s.sizes[pile - 1]
            mark = "▸" if choosing and pile == self.pile else " "
            words = tile_code(tile) if tile != -1 else "empty"
            cost = f"cost {tile_cost(tile)}" if tile != -1 and tile_cost(tile) else ""
            text.append(f"\n{mark}{pile} {words:<14}{cost:<7}{size:>3}")
        return text

    def hand_text(self) -> Text:
        s, seat = self.seen, self.viewer()
        text = Text()
        width = self.query_one("#tc-hand").content_region.width or 29
        if seat is None:
            text.append("Watching: every hand is hidden.", "dim")
            return text
        name = self.view.names[seat]
        if self.hidden:
            text.append(fitted(f"{name}: hand and ID hidden", width) + "\n", "bold")
            text.append("press i to show them again", "dim")
            return text
        card = s.ids[seat] if seat < len(s.ids) else UNKNOWN
        colour = ID_CARDS[card] if card != UNKNOWN else "?"
        hand = s.hands[seat] if seat < len(s.hands) else ()
        card_id = f": ID {colour} {COLOUR_NAMES.get(colour, 'not dealt')}"
        text.append(fitted(name, width - len(card_id)) + card_id + "\n", "bold")
        count = f"{len(hand)} card{'s' if len(hand) != 1 else ''}"
        held = f"{hand_words(hand)} · {count}" if hand else "no cards"
        text.append(held if len(held) <= width else hand_words(hand))
        return text

    def seats_text(self) -> Text:
        s, view = self.seen, self.view
        names = view.names
        text = Text()
        text.append(f"{'  seat':<10}{'hand':>4}  thrown away\n", "dim")
        for seat in range(s.seats):
            due = view.actor == seat and view.result is None
            flags = []
            if s.skips and s.skips[seat]:
                flags.append("⊘ skips")  # attacked, and the turn not skipped yet
            elif seat == s.last_target:
                flags.append("attacked")
            info = view.seats[seat] if seat < len(view.seats) else None
            if info is not None and view.network and info.kind == "remote" and not info.connected:
                flags.append("away")
            count = len(s.hands[seat]) if seat < len(s.hands) else 0
            you = "*" if seat == self.viewer() else " "
            mark = "…" if view.thinking == seat else "▶" if due else " "  # a bot that thinks is due
            line = f"{mark}{you}{fitted(names[seat], 8):<8}{count:>4}  {shed_words(s, seat)}"
            text.append(line, "bold" if due else "")
            text.append(f" {' · '.join(flags)}\n" if flags else "\n", "dim")
        discards = s.discards
        top = f", top {CARDS[discards[-1]].kind}" if discards else ""
        text.append(f"Deck {s.deck_left} · discards {len(discards)}{top}", "bold")
        if discards:
            text.append(f"\n{fitted(hand_words(discards), 29)}", "dim")
        if s.played:
            text.append("\n" + self.event_words())
        return text

    def event_words(self) -> str:
        played, turn = self.seen.played, self.seen.turn
        kind, _, fallback = played.partition(":")
        title = EVENT_TITLES.get(kind, kind)
        who = f" ({self.view.names[turn]})" if 0 <= turn < len(self.view.names) else ""
        return f"Last event: {title}{who}" + (": no target, drew 2" if fallback else "")

    def status_line(self) -> str:
        view, s = self.view, self.seen
        names = view.names
        if view.result is not None:
            headline = result_words(view.result, names)
            return f"{headline} — s: scores · r: rematch · Esc: leave"
        if view.note:
            return view.note
        if self._passing:
            return f"Passing the keyboard to {names[view.actor]}…"
        actor = view.actor
        if actor is None or actor < 0:
            return "Shuffling and dealing…" if s.phase in ("dealing", SETUP) else "Drawing…"
        phase = PHASE_WORDS.get(s.phase, s.phase)
        turn = f"turn {s.turns + 1}"
        if not self._acting():
            doing = {
                SETUP: "places a tile", DRAW: "draws resource cards", PLAN: "plans a route",
                ACT: "constructs, modifies or attacks", EVENT: f"plays {EVENT_TITLES.get(s.event, s.event)}",
                EMBARGO: "discards a card (Embargo)", DISCARD: f"discards down to {HAND_LIMIT}",
            }.get(s.phase, "acts")
            return f"{turn} · {phase} · {names[actor]} {doing}…"
        who = "You" if len(view.local_seats) == 1 else names[actor]
        what = {
            SETUP: "place a tile from a pile (1-3, r turns, Enter on +)",
            DRAW: "draw 2 resource cards (2) or 4 (4, no planning)",
            PLAN: "place a pile's top tile (1-3, r turns, Enter on +)",
            ACT: "construct (c), modify (o), attack (a) or end (e)",
            EMBARGO: "Embargo: discard one card (d)",
            DISCARD: f"keep {HAND_LIMIT}: discard (d)",
        }.get(s.phase, "")
        if s.phase == EVENT:
            what = {
                "survey": "Survey: place a pile's top tile (Enter on +)",
                "demolition": "Demolition: flip a constructed tile (Enter on ×)",
                "earthquake": "Earthquake: turn any tile (Enter on ×)",
                "storm": "Storm: remove a blueprint (Enter on ×)",
            }.get(s.event, s.event)
        return f"{who} · {turn} · {what}"

    def action_pieces(self) -> tuple[tuple[str, str, str], ...]:
        """The line under the map: what the keys do now, each piece clickable."""
        view, s, choices = self.view, self.seen, self.choices()
        pieces: list[tuple[str, str, str]] = []
        key = "arena--key"
        if view.result is not None:
            pieces += [("The game is over: ", "", ""), ("[s] scores", "scores", key)]
            if self.controller.can_rematch():
                pieces += [(" · ", "", ""), ("[r] rematch", "rematch", key)]
        elif not self._acting():
            pieces.append(("Waiting for the others. ", "", "arena--muted"))
            pieces.append(("[i] hide hand" if not self.hidden else "[i] show hand", "hide", key))
        elif choices.placing():
            pieces.append(("Pile ", "", ""))  # the piles' tiles are listed beside the map
            for pile in range(1, PILES + 1):
                if pile in choices.piles():
                    chosen = pile == self.pile
                    pieces.append((f"{'▸' if chosen else ''}[{pile}]", f"pile:{pile}", "arena--chosen" if chosen else key))
                    pieces.append((" ", "", ""))
            pieces += [("· ", "", ""), (f"[r] turn ↻{choices.rotation()}", "turn", key), (" · ", "", ""),
                       ("[Enter] place on +", "act", key)]
        elif s.phase == DRAW:
            pieces += [("[2] draw 2 and plan", "draw:2", key), (" · ", "", ""),
                       ("[4] draw 4, no planning", "draw:4", key)]
        elif s.phase == ACT:
            kinds = {m.kind for m in choices.legal}
            for word, action, label in (("construct", "construct", "[c] construct $"),
                                        ("modify", "modify", "[o] modify"),
                                        ("attack", "attack", "[a] attack"),
                                        ("end", "end", "[e] end actions")):
                pieces.append((label, action, key if word in kinds else "arena--muted"))
                pieces.append((" · " if word != "end" else "", "", ""))
        elif s.phase == EVENT:
            pieces += [(f"{EVENT_TITLES.get(s.event, s.event)}: ", "", ""), ("[Enter] on a × tile", "act", key)]
        elif s.phase in (EMBARGO, DISCARD):
            excess = max(1, len(s.hands[s.seat]) - HAND_LIMIT) if s.phase == DISCARD else 1
            pieces.append((f"[d] discard {excess} card{'s' if excess != 1 else ''}", "discard", key))
        log = [e for e in view.log if e.seat != CHANCE]
        if log:
            width = self.query_one(ActionLine).content_region.width or 78
            pieces.append(("\n" + fitted(log[-1].words(view.names), width), "", "arena--muted"))
        return tuple(pieces)

    # -- the cursor ----------------------------------------------------------------------------
    def _place_cursor(self) -> None:
        """At a new phase, move the cursor to where the next action happens."""
        if self.seen is None:
            return
        s = self.seen
        key = (s.phase, s.turn, s.event, len(s.board), self._acting())
        if key == self._phase_seen:
            return
        self._phase_seen = key
        choices = self.choices()
        if choices.placing():
            piles = choices.piles()
            if piles and self.pile not in piles:
                self.pile, self.turned = piles[0], 0
        targets = self.choices().targets()  # the pile may have changed
        if targets and self.cursor not in targets:
            self.cursor = min(targets, key=lambda p: (abs(p[0] - self.cursor[0]) + abs(p[1] - self.cursor[1]), p))

    def action_cursor(self, dx: int, dy: int) -> None:
        if self.seen is None:
            return
        grid = self.seen.grid
        xs, ys = [p[0] for p in grid], [p[1] for p in grid]
        x = min(max(self.cursor[0] + dx, min(xs) - 2), max(xs) + 2)
        y = min(max(self.cursor[1] + dy, min(ys) - 2), max(ys) + 2)
        self.cursor = (x, y)
        self.redraw(map_only=True)

    def action_next(self) -> None:
        targets = sorted(self.choices().targets(), key=lambda p: (p[1], p[0]))
        if not targets:
            return
        later = [p for p in targets if (p[1], p[0]) > (self.cursor[1], self.cursor[0])]
        self.cursor = later[0] if later else targets[0]
        self.redraw(map_only=True)

    # -- acting --------------------------------------------------------------------------------
    def _ready(self, quiet: bool = False) -> bool:
        return self.seen is not None and super()._ready(quiet)

    def _choose(self, title: str, moves: list[Move], labels: list[str]) -> None:
        """Ask which of `moves` to make; the answer submits it (if the position still stands)."""
        asked = self.view.state

        def answered(index: int | None) -> None:
            if index is not None and self.view is not None and self.view.state is asked and self._ready():
                self._submit(moves[index])

        self.app.push_screen(ChoiceDialog(title, labels), answered)

    def action_act(self) -> None:
        if not self._ready():
            return
        s, choices = self.seen, self.choices()
        if choices.placing():
            move = choices.placement(self.cursor)
            if move is None:
                self.notify("Put the cursor on a free square marked +.", severity="warning", timeout=3)
                return
            self._submit(move)
        elif s.phase == DRAW:
            self.notify("Press 2 to draw 2 cards, or 4 to draw 4.", timeout=3)
        elif s.phase == ACT:
            if choices.moves_at(self.cursor, "construct"):
                self.action_construct()
            else:
                self.notify("Enter constructs a blueprint marked $; o modifies, a attacks, e ends.", timeout=4)
        elif s.phase == EVENT:
            found = choices.moves_at(self.cursor)
            if found:
                self._submit(found[0])
            else:
                self.notify(f"{EVENT_TITLES.get(s.event, s.event)} needs a tile marked ×.", severity="warning", timeout=3)
        elif s.phase in (EMBARGO, DISCARD):
            self.action_discard()

    def action_digit(self, digit: int) -> None:
        if not self._ready():
            return
        s, choices = self.seen, self.choices()
        if s.phase == DRAW and digit in (2, 4):
            self._submit(Move("draw", (digit,)))
        elif choices.placing() and digit in choices.piles():
            self.pile, self.turned = digit, 0
            free = self.choices().free_cells()
            if free and self.cursor not in free:
                self._phase_seen = None
                self._place_cursor()
            self.redraw()
        elif choices.placing():
            self.notify(f"Pile {digit} is empty.", severity="warning", timeout=2)

    def action_turn_or_rematch(self) -> None:
        if self.view is not None and self.view.result is not None:
            if self.controller.can_rematch():
                self.rematch_now()
            return
        choices = self.choices()
        if choices.placing():
            self.turned = (self.turned + 1) % len(choices.rotations())
            self.redraw(map_only=True)

    def action_construct(self) -> None:
        if not self._ready() or self.seen.phase != ACT:
            return
        moves = self.choices().moves_at(self.cursor, "construct")
        placed = self.seen.grid.get(self.cursor)
        if not moves:
            if placed is not None and not placed.constructed:
                tile = TILES[placed.tile]
                payable = any(m.kind == "construct" for m in self.choices().legal)
                where = " The blueprints marked $ you can pay for." if payable else " No blueprint of yours can be paid for now."
                self.notify(f"You cannot pay {tile.cost} {COLOUR_NAMES[tile.colour]} for this blueprint.{where}",
                            severity="warning", timeout=4)
            else:
                self.notify("Put the cursor on a blueprint marked $ to construct it.", severity="warning", timeout=3)
            return
        tile = TILES[placed.tile]
        labels = [f"pay {tokens_words(m.args[1:])}" for m in moves]
        self._choose(f"Construct the {tile_label(placed.tile)} at {pos_text(self.cursor)} (costs {tile.cost}):",
                     moves, labels)

    def action_modify(self) -> None:
        if not self._ready() or self.seen.phase != ACT:
            return
        moves = self.choices().moves_at(self.cursor, "modify")
        if not moves:
            self.notify("Modify turns a blueprint under the cursor, for any 2 cards.", severity="warning", timeout=3)
            return
        labels = [f"discard {tokens_words(m.args[1:])}" for m in moves]
        self._choose(f"Turn the blueprint at {pos_text(self.cursor)} 90° clockwise:", moves, labels)

    def action_attack(self) -> None:
        if not self._ready() or self.seen.phase != ACT:
            return
        moves = self.choices().moves_of("attack")
        if not moves:
            self.notify("Attacking needs at least one card and a player who may be targeted.",
                        severity="warning", timeout=3)
            return
        names = self.view.names
        labels = [f"{names[m.args[0]]} skips a turn (you discard {tokens_words(m.args[1:])})" for m in moves]
        self._choose("Attack whom? You discard your whole hand:", moves, labels)

    def action_end(self) -> None:
        if self._ready() and self.seen.phase == ACT:
            self._submit(Move("end"))

    def action_discard(self) -> None:
        if not self._ready():
            return
        s = self.seen
        if s.phase not in (EMBARGO, DISCARD):
            return
        moves = list(self.choices().legal)
        labels = [f"discard {tokens_words(m.args)}" for m in moves]
        if s.phase == EMBARGO:
            title = f"Embargo by {self.view.names[s.turn]}: you hold {hand_words(s.hands[s.seat])}; discard one:"
        else:
            title = f"You hold {hand_words(s.hands[s.seat])}: discard down to {HAND_LIMIT} cards:"
        self._choose(title, moves, labels)

    def on_tile_map_pressed(self, message: TileMap.Pressed) -> None:
        self.cursor = message.pos
        self.redraw(map_only=True)
        if self._ready(quiet=True) and message.pos in self.choices().targets():
            self.action_act()

    def on_action_line_clicked(self, message: ActionLine.Clicked) -> None:
        action = message.action
        if action.startswith("pile:"):
            self.action_digit(int(action[5:]))
        elif action.startswith("draw:"):
            self.action_digit(int(action[5:]))
        elif action == "turn":
            self.action_turn_or_rematch()
        elif action == "rematch":
            self.action_turn_or_rematch()
        elif action in ("act", "construct", "modify", "attack", "end", "discard", "scores", "hide"):
            getattr(self, f"action_{action}")()

    def action_hide(self) -> None:
        self.hidden = not self.hidden
        self.redraw()

    def action_scores(self) -> None:
        view = self.view
        if view is None or view.result is None:
            return
        names = view.names
        headline = result_words(view.result, names)
        state = view.state
        if state is None or state.result is None:
            detail, table = f"The game ended: {reason_words(view.result, names)}.", ""
        else:
            detail, table = score_rows(state.view(-1) if all(state.shown) else self.seen, names)
        self.app.push_screen(ScoreDialog(headline, detail, table, self.controller.can_rematch()), self._after_game)

    def rematch_now(self) -> None:
        self._dialog_shown_for = None
        self.controller.rematch()
