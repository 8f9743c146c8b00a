"""The Dice Breaker table: the arena with every die, the dice still to throw, the score board to the
target, round summaries, moves, fairness, chat. Fits 80 × 24 with up to six players.

Like the other tables (tui/screens/trice_screen.py) it draws only from `TableView` snapshots and sends
moves through its `TableController`, so the same screen serves bots, hot-seat (2-6 people at one
terminal) and a network table. A throw is one key: `r` rolls the next die, Enter (or a click)
throws it at the die under the cursor to break it; `y`/`n` answer the Latent Dice claim.
Rules: ../shared/rules/dicebreaker.md.
"""

from __future__ import annotations

import textwrap
import time
from dataclasses import replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Static

from dicetable.core import dicebreaker_hands as hands
from dicetable.core.dicebreaker import (
    EVERY_HAND,
    LATENT,
    LETTERS,
    THROW,
    THROWOFF,
    TRUMP,
    TRUMP_THROW,
)
from dicetable.core.game import Move
from dicetable.tui.tables.controller import TableController
from dicetable.tui.tables.view import TableView, reason_words, result_words
from dicetable.tui.tables.messages import TableChanged
from dicetable.tui.screens.table_screen import CURSOR_KEYS, LEAVE_KEY, TableScreen, panel_keys
from dicetable.tui.widgets.arena import SEAT_CLASSES, ActionLine, ArenaView, DieLook
from dicetable.tui.widgets.seats import SeatsPanel
from dicetable.tui.widgets.text_line import TextLine, fitted

DICEBREAKER_HELP = """\
[b]Playing Dice Breaker[/b]
Each turn throw one of your dice: a [b]roll[/b] lands with a fair face, a [b]break[/b]
hits a die in the arena (yours only in quick play, any in battle) and gives
it a new face. A thrown die may fly out (and be caught by another player);
in battle a landed die may spin: everyone may throw a [b]Latent Die[/b] at it.
When nobody has dice left, the best hand (best five dice) scores:
pair 1 · two pairs 2 · three 3 · straight 4 · full house 5 · four 6 ·
five of a kind wins. First to the target (33) wins.

[b]Keys[/b]  r roll · arrows or h j k l move ▶◀ · Enter or Space breaks that die
Tab picks another die to throw (+B5: a die you caught) · y / n answer the
Latent Dice claim
mouse: click a die to break it; click \\[r] roll, \\[y] or \\[n] on the line below
o rounds · m moves · f fairness · t chat · Esc leaves the table
Dice show the owner's letter (A-F, T Trump) [b]and[/b] colour; value as pips
and digit. Marks: × may break · ◎ spinning · • last landed · ✱ just broken
✚ Latent Die"""


HAND_WIDTH = 49  # the line under the arena at 80 columns (before the screen is laid out)


def points_text(points: float) -> str:
    """Points as people write them: 12, 12.5, 1.67 (a three-way split)."""
    return f"{round(points, 2):g}"


def seat_tag(seat: int, names: list[str]) -> str:
    return f"{LETTERS[seat]} {names[seat]}"


def arena_order(state) -> list[tuple[str, int, int]]:
    """The arena grouped as hands: the Trump Die first, then each seat's dice in landing order."""
    trump = [d for d in state.arena if d[1] == EVERY_HAND]
    return trump + sorted((d for d in state.arena if d[1] != EVERY_HAND), key=lambda d: d[1])


def last_words(state, names: list[str]) -> str:
    """What the last chance step did, in words (state.last, core/dicebreaker.py)."""
    last = state.last
    if not last:
        return ""
    if last[0] == "trump":
        return f"The Trump Die lands on {last[2]}: it counts in every hand."
    if last[0] == "throw":
        _, die, target, fate, catcher, face, broken, spinning = last
        words = f"{die}"
        if target:
            words += f" broke {target} (now {broken})"
        if fate == "landed":
            words += f" and landed on {face}" if target else f" landed on {face}"
            if spinning:
                words += ", spinning ◎"
        elif fate == "caught":
            words += f" flew out: {names[catcher]} caught it"
        else:
            words += " flew out of the arena"
        return words + "."
    if last[0] == "latent":
        _, name, claimant, spin_face, stays, face = last
        if not name:
            return "Nobody threw a Latent Die."
        words = f"{names[claimant]}'s Latent Die broke it to {spin_face}"  # it: the spinning die
        return words + (f"; {name} stays on {face} ✚." if stays else "; it is lost.")
    return ""


def round_lines(state, names: list[str]) -> list[str]:
    """Every finished round in a line, the newest first."""
    lines = []
    for number, starter, categories, won in reversed(state.rounds):
        winners = [s for s, w in enumerate(won) if w]
        if winners:
            gain = points_text(won[winners[0]] / 60)
            who = ", ".join(names[s] for s in winners)
            what = f"{who} +{gain} ({categories[winners[0]]})"
        elif "five of a kind" in categories:
            what = ", ".join(names[s] for s, c in enumerate(categories) if c == "five of a kind") + ": five of a kind!"
        else:
            what = "no hand reached one pair"
        others = " · ".join(f"{LETTERS[s]} {c}" for s, c in enumerate(categories) if s not in winners)
        lines.append(f"R{number} {what}" + (f"; {others}" if others else ""))
    return lines


def verdict_words(view: TableView) -> tuple[str, str]:
    state, names = view.state, view.names
    result = view.result
    headline = result_words(result, names)
    if state is None or state.result is None:
        return headline, f"The game ended: {reason_words(result, names)}."
    scores = ", ".join(f"{names[s]} {points_text(state.points(s))}" for s in range(state.seats))
    return headline, f"Final scores: {scores}."


class DiceBreakerScreen(TableScreen):
    CSS_PATH = "dicebreaker.tcss"
    HELP_TEXT = DICEBREAKER_HELP

    BINDINGS = [
        Binding("r", "roll", "roll"),
        Binding("enter,space", "act", "break"),
        *(replace(key, show=False) for key in CURSOR_KEYS),  # told by the status line (▶◀): the footer is full
        Binding("tab", "next_die", "die", show=False),
        Binding("y", "latent('yes')", "latent yes", show=False),
        Binding("n", "latent('no')", "latent no", show=False),
        *panel_keys(Binding("o", "panel('rounds')", "rounds"), "moves", "fairness"),
        LEAVE_KEY,
    ]

    def __init__(self, controller: TableController) -> None:
        super().__init__(controller)
        self.cursor = ""  # the name of the die under the cursor
        self.die_index = 0  # which of the dice in hand the next throw uses
        self._rounds_seen = 0
        self._rounds_text = ""

    # -- building ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TextLine("", id="status")
        with Horizontal(id="db-table"):
            with Vertical(id="db-left"):
                yield ArenaView(id="db-arena")
                yield ActionLine(id="db-hand")
            with Vertical(id="db-right"):
                yield ActionLine(id="db-scores")
                yield from self.compose_panels(
                    "rounds", "Fair", before=(("Rounds", "rounds", Static("", id="db-rounds", markup=False)),),
                    after=(("Seats", "seats-pane", SeatsPanel(id="seats")),))
        yield Footer()

    def started(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        """A seat's clock (network tables with deadlines, e.g. the Latent Dice answer) counts down."""
        if self.view is not None and self.view.state is not None and any(s.deadline for s in self.view.seats):
            self.query_one("#db-scores", ActionLine).show(self.score_pieces())

    # -- messages from the table ---------------------------------------------------------------
    def on_table_changed(self, message: TableChanged) -> None:
        before = self.view.state if self.view is not None else None
        self.view = message.view
        state = self.view.state
        if state is None:
            return
        if state is not before:
            self._sent_in = None
            self._place_cursor()
            if len(state.rounds) > self._rounds_seen:
                if self._rounds_seen or before is not None:
                    self.notify(round_lines(state, self.view.names)[0], title="Round over", timeout=6)
                self._rounds_seen = len(state.rounds)
        self.redraw()
        self.settle_result()

    def verdict(self) -> tuple[str, str]:
        return verdict_words(self.view)

    # -- what this terminal may do now ---------------------------------------------------------
    def _phase(self) -> str:
        return self.view.state.phase if self.view is not None and self.view.state is not None else ""

    def throwable(self) -> tuple[str, ...]:
        state = self.view.state
        return state.throwable(state.seat) if self._acting() and state.phase == THROW else ()

    def next_die(self) -> str:
        dice = self.throwable()
        return dice[self.die_index % len(dice)] if dice else ""

    def targets(self) -> tuple[str, ...]:
        state = self.view.state
        return state.targets(state.seat) if self._acting() and state.phase == THROW else ()

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self, arena_only: bool = False) -> None:
        view = self.view
        if view is None or view.state is None:
            return
        self.show_status()
        self.query_one(ArenaView).show(self.looks())
        self.query_one("#db-hand", ActionLine).show(self.hand_pieces())
        if arena_only:
            return
        self.query_one("#db-scores", ActionLine).show(self.score_pieces())
        rounds = self.query_one("#db-rounds", Static)
        width = max(rounds.size.width, 20)  # the pane is narrow: each round wraps under its number
        lines = [textwrap.fill(line, width, subsequent_indent="   ") for line in round_lines(view.state, view.names)]
        text = "\n".join(lines) or "No round finished yet."
        if text != self._rounds_text:  # a Static update re-lays the screen out: only when it changed
            self._rounds_text = text
            rounds.update(text)
        self.show_panels()

    def looks(self) -> tuple[DieLook, ...]:
        state = self.view.state
        targets = set(self.targets())
        last = state.last
        landed = broken = ""
        if last and last[0] == "throw":
            landed = last[1] if last[3] == "landed" else ""
            broken = last[2]
        elif last and last[0] == "latent" and last[1]:
            landed = last[1] if last[4] else ""
        looks = []
        for name, owner, face in arena_order(state):
            marks = []
            if name in targets:
                marks.append("target")
            if name == state.spinning:
                marks.append("spin")
            if name == broken:
                marks.append("broken")
            if name == landed:
                marks.append("landed")
            if name.startswith("L"):
                marks.append("latent")
            letter = "T" if owner == EVERY_HAND else LETTERS[owner]
            looks.append(DieLook(name, letter, owner, face, tuple(marks), bool(targets) and name == self.cursor))
        return tuple(looks)

    def hand_pieces(self) -> tuple[tuple[str, str, str], ...]:
        """The line under the arena: the dice still to throw, and what the keys do now."""
        view, state = self.view, self.view.state
        names = view.names
        pieces: list[tuple[str, str, str]] = []
        width = self.query_one("#db-hand").content_region.width or HAND_WIDTH
        words = last_words(state, names)
        pieces.append(((fitted(words, width) or " ") + "\n", "", "arena--muted"))
        if view.result is not None:
            pieces.append(("The game is over: ", "", ""))
            if self.controller.can_rematch():
                pieces.append(("[r] rematch", "rematch", "arena--key"))
            return tuple(pieces)
        phase = state.phase
        if self._acting() and phase == THROW:
            keys = [("· ", "", ""), ("[r] roll", "roll", "arena--key")]
            if self.targets():
                keys += [(" · ", "", ""), ("[⏎] break ▶◀", "act", "arena--key")]
            dice = []
            for die in self.throwable():  # +B5: a die this seat caught (it keeps its thrower's letter)
                chosen = die == self.next_die()
                shown = f"{'▸' if chosen else ''}{'' if die in state.held[state.seat] else '+'}{die}"
                dice += [(shown, f"die:{die}", "arena--chosen" if chosen else "arena--muted"), (" ", "", "")]
            line = [("Throw ", "", ""), *dice, *keys]
            if sum(len(text) for text, _, _ in line) > width:  # many dice in hand: the one to throw, Tab for the next
                held = len(self.throwable())
                line = [("Throw ", "", ""), dice[2 * (self.die_index % held)], (f" of {held} (Tab) ", "", ""), *keys]
            pieces += line
        elif self._acting() and phase == TRUMP_THROW:
            pieces.append(("You start the round: ", "", ""))
            pieces.append(("[r] throw the Trump Die", "roll", "arena--key"))
        elif self._acting() and phase == LATENT:
            pieces.append((f"Latent Die at {state.spinning} ◎? ", "", ""))
            pieces.append(("[y] yes", "yes", "arena--key"))
            pieces.append((" · ", "", ""))
            pieces.append(("[n] no", "no", "arena--key"))
            pieces.append((f" · {state.latent_left} left", "", "arena--muted"))
        else:
            left = [f"{LETTERS[s]}{len(state.held[s]) + len(state.extra[s])}" for s in range(state.seats)] if state.held else []
            pieces.append(("Dice to throw: " + " ".join(left) if left else "Deciding who starts…", "", "arena--muted"))
        return tuple(pieces)

    def score_pieces(self) -> tuple[tuple[str, str, str], ...]:
        """The score board: per seat its letter, name, points to the target, hand and dice left."""
        view, state = self.view, self.view.state
        names, target = view.names, state.option["target"]
        pieces: list[tuple[str, str, str]] = [(f"To {target}", "", "arena--muted")]
        if state.battle:
            pieces.append((f" · battle · Latent {state.latent_left}", "", "arena--muted"))
        else:
            pieces.append((" · quick play", "", "arena--muted"))
        pieces.append(("\n", "", ""))
        compact = state.seats > 4
        for seat in range(state.seats):
            due = (seat in view.acting if view.acting is not None else view.actor == seat) and view.result is None
            info = view.seats[seat] if seat < len(view.seats) else None
            mark = "▶" if due else " "
            pieces.append((mark, "", ""))
            pieces.append((f" {LETTERS[seat]} ", "", SEAT_CLASSES[seat]))
            pieces.append((f" {names[seat][:13]:<13} {points_text(state.points(seat)):>5}\n", "", ""))
            category = hands.category(state.hand(seat)) if state.arena else ""
            left = len(state.held[seat]) + len(state.extra[seat]) if state.held else 0
            flags = []  # a line of their own: the hand's line is full with "three of a kind"
            if info is not None and view.network and info.kind == "remote" and not info.connected:
                flags.append("AWAY")
            if info is not None and info.deadline is not None and due:
                flags.append(f"⏱{max(0, int(info.deadline - time.monotonic()))}s")
            if not compact or due or flags:
                pieces.append((f"   {category or 'nothing'} · {left} left\n", "", "arena--muted"))
            if flags:
                pieces.append(("   " + " · ".join(flags) + "\n", "", "arena--muted"))
        return tuple(pieces)

    def status_line(self) -> str:
        view = self.view
        state, names = view.state, view.names
        if view.result is not None:
            headline, detail = verdict_words(view)
            said = f"{headline} — {detail}"
            return self.fit(said, headline)
        if view.note:
            return view.note
        if state.phase == THROWOFF:
            return "The starting die: " + ", ".join(names[s] for s in state.contenders) + " break it…"
        seat = state.actor
        if seat is None or seat < 0:
            return "The dice fly…"
        who = "Your turn" if len(view.local_seats) == 1 else f"{names[seat]} ({LETTERS[seat]})"
        rnd = f"Round {state.round}"
        if not view.my_turn():
            if view.seats[seat].kind == "remote" and not view.seats[seat].connected:
                return f"{rnd}: {names[seat]} dropped: waiting for them to come back"
            doing = {
                TRUMP_THROW: "throws the Trump Die",
                THROW: "is throwing",
                LATENT: f"decides on a Latent Die at {state.spinning}",
            }.get(state.phase, "acts")
            return f"{rnd}: {names[seat]} ({LETTERS[seat]}) {doing}…"
        if state.phase == TRUMP_THROW:
            return f"{rnd} · {who}: throw the Trump Die (r)"
        if state.phase == LATENT:
            return f"{rnd} · {who}: a Latent Die at the spinning {state.spinning}? (y/n)"
        scope = "any die ×" if state.battle else "your own dice ×"
        die = self.next_die()
        die = die if die in state.held[state.seat] else f"{die} (caught)"  # a caught die keeps its thrower's letter
        if self.targets():
            return self.fit(f"{rnd} · {who}: r rolls {die}, Enter breaks ▶◀ ({scope})", f"{rnd} · {who}: r rolls {die}, Enter breaks ▶◀")
        return f"{rnd} · {who}: r rolls {die}"

    # -- the cursor ----------------------------------------------------------------------------
    def _place_cursor(self) -> None:
        targets = self.targets()
        if targets and self.cursor not in targets:
            self.cursor = targets[0]
        if self.die_index >= len(self.throwable()):
            self.die_index = 0

    def action_cursor(self, dx: int, dy: int) -> None:
        if not self.targets():
            return
        order = [look.name for look in self.looks()]
        arena = self.query_one(ArenaView)
        index = order.index(self.cursor) if self.cursor in order else 0
        index = (index + dx + dy * arena.per_line()) % len(order)
        self.cursor = order[index]
        self.redraw(arena_only=True)

    def action_next_die(self) -> None:
        dice = self.throwable()
        if dice:
            self.die_index = (self.die_index + 1) % len(dice)
            self.redraw(arena_only=True)

    # -- acting --------------------------------------------------------------------------------
    def action_roll(self) -> None:
        if self.view is not None and self.view.result is not None:
            self.action_rematch()
            return
        if not self._ready():
            return
        phase = self._phase()
        if phase == TRUMP_THROW:
            self._submit(Move("throw", (TRUMP,)))
        elif phase == THROW:
            self._submit(Move("throw", (self.next_die(),)))
        elif phase == LATENT:
            self.notify("Answer the Latent Dice claim: y or n.", severity="warning", timeout=3)

    def action_act(self) -> None:
        if not self._ready():
            return
        phase = self._phase()
        if phase == TRUMP_THROW:
            self._submit(Move("throw", (TRUMP,)))
        elif phase == THROW:
            self.break_die(self.cursor)
        elif phase == LATENT:
            self.notify("Answer the Latent Dice claim: y or n.", severity="warning", timeout=3)

    def break_die(self, die: str) -> None:
        state = self.view.state
        if die not in self.targets():
            why = "you may break only your own dice in quick play" if not state.battle else "it is not in the arena"
            self.notify(f"{die or 'That'} cannot be broken: {why}; r rolls instead.", severity="warning", timeout=3)
            return
        self.cursor = die
        self._submit(Move("throw", (self.next_die(), die)))

    def action_latent(self, answer: str) -> None:
        if self._phase() != LATENT:
            return
        if self._ready():
            self._submit(Move("latent", (answer,)))

    def on_arena_view_pressed(self, message: ArenaView.Pressed) -> None:
        if self._ready() and self._phase() == THROW:
            self.break_die(message.die)

    def on_action_line_clicked(self, message: ActionLine.Clicked) -> None:
        action = message.action
        if action.startswith("die:"):
            dice = self.throwable()
            if action[4:] in dice:
                self.die_index = dice.index(action[4:])
                self.redraw(arena_only=True)
        elif action == "roll":
            self.action_roll()
        elif action == "act":
            self.action_act()
        elif action in ("yes", "no"):
            self.action_latent(action)
        elif action == "rematch":
            self.action_rematch()

    def rematch_now(self) -> None:
        self._rounds_seen = 0
        self.controller.rematch()
