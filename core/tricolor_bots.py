"""Bots for Tricolor Line: random, greedy and search. Each sees only its seat's view.

`greedy` scores every candidate move by `value(after, seat)`: an estimate built on the *plan*, the
cheapest way (in construction cost) from the Start Tile to two End Tiles through tiles already on the
table whose roads meet, ignoring which side is up; a blueprint of another colour than the bot's
counts `OTHER_COLOUR` times its cost, for the bot keeps cards of its own colour and seldom can pay
for it (without that, since End Tiles never lie next to the Start Tile, it waited for others to
build). It builds toward two disjoint routes rich in its own colour, keeps cards of its colour,
blocks nothing of its own, and ends the game only when its own points (exact: it knows its ID and
hand) beat what the others can be expected to hold. It still constructs other colours' tiles that
lie on its plan, which keeps its colour harder to read. Attacks cost the whole hand, so it
attacks only when its hand is worth little.

`search` is a determinized Monte-Carlo search: for greedy's best few candidates (those within
`margin` of the best) it samples `samples` worlds, filling in what its view does not show (others'
hands and IDs, the deck order) with `determinize`, which reads each seat's colour from the cards it
chose to throw away (`shed`: builders keep what scores for them). It plays each world on with
greedy policies for every seat until its own next turn begins, and scores the leaf by `win_share`
(exact when the game ended, else a soft comparison of every seat's `value`, which a sampled world
can compute). The same worlds and chance seeds serve every candidate, so their differences are the
candidates' own. It weighs draws, placements, actions and the end-of-turn discard this way; the
setup placement and an Embargo's card are greedy's. Board-only facts (planned pair, cheapest plan)
are cached by board: every candidate move and rollout asks about the same boards again and again.
"""

from __future__ import annotations

import heapq
import math
import random
import threading
from dataclasses import replace
from functools import lru_cache
from typing import Any

from dicetable.core.bots import RandomBot
from dicetable.core.game import CHANCE, Bot, GameInfo, Move
from dicetable.core.tricolor_routes import best_pair, best_single, board_grid, colour_counts, neighbour, winner_colours
from dicetable.core.tricolor_tiles import (
    CARDS,
    COLOURS,
    DEAD,
    END,
    HAND_LIMIT,
    ID_CARDS,
    TILES,
    UNKNOWN,
    edges,
)

W_COST = 1.6  # a unit of construction still due on the plan, against a unit of own colour in hand
W_OWN = 1.5  # an own-colour tile on the plan
W_OTHER = 0.4  # another colour's tile on the plan
W_FRONT = 0.25  # an open road end of the planned network (room to grow)
MISSING = 5.0  # the cost assumed for a route whose End Tile is not on the plan yet
OTHER_COLOUR = 3.0  # a blueprint of another colour on the plan, against one of the bot's own
OTHER_CARD = 0.35  # a card of another colour: it still pays for modifications and attacks
WIN = 100.0


def card_value(card: int, colour: str, winners: tuple[str, ...] = ()) -> float:
    c = CARDS[card]
    if not c.colour:
        return 1.0
    if winners:
        return float(c.units) if c.colour in winners else c.units * 0.1
    return float(c.units) if c.colour == colour else c.units * OTHER_CARD


def hand_value(hand, colour: str, winners: tuple[str, ...] = ()) -> float:
    values = sorted((card_value(c, colour, winners) for c in hand if c != UNKNOWN), reverse=True)
    # Cards beyond the hand limit are worth little: they will be discarded at the end of the turn.
    return sum(values[:HAND_LIMIT]) + 0.3 * sum(values[HAND_LIMIT:])


_STEPS = ((0, -1), (1, 0), (0, 1), (-1, 0))
_DEAD = frozenset(t.id for t in TILES if t.kind == DEAD)
_END = frozenset(t.id for t in TILES if t.kind == END)
_COST = tuple(t.cost for t in TILES)
_COLOUR = tuple(t.colour for t in TILES)


def plan_routes(board: tuple, blocked=frozenset(), colour: str = ""):
    """Cheapest planned route to each End Tile (cost still to construct, path) and the open ends;
    for a bot of `colour`, a blueprint of another colour costs OTHER_COLOUR times as much."""
    grid = board_grid(board)
    best = {(0, 0): 0.0}
    back = {}
    heap = [(0.0, (0, 0))]
    ends = {}
    frontier = 0
    done = set()
    while heap:
        cost, here = heapq.heappop(heap)
        if here in done:
            continue
        done.add(here)
        placed = grid[here]
        if placed.tile in _END:
            path = [here]
            while path[-1] != (0, 0):
                path.append(back[path[-1]])
            ends[here] = (cost, tuple(reversed(path)))
            continue
        x, y = here
        # Roads meeting a neighbour's road, whichever side is up (a dead end carries no route), and
        # roads ending at a free square (open ends), in one pass: the bots' hottest loop.
        for e in edges(placed.tile, placed.rotation):
            dx, dy = _STEPS[e]
            there = (x + dx, y + dy)
            other = grid.get(there)
            if other is None:
                frontier += 1
                continue
            if other.tile in _DEAD or (e + 2) % 4 not in edges(other.tile, other.rotation):
                continue
            if there in blocked or there in done:
                continue
            due = 0 if other.built or other.tile in _END else _COST[other.tile]
            if due and colour and _COLOUR[other.tile] != colour:
                due *= OTHER_COLOUR
            step = cost + 0.1 + due
            if step < best.get(there, 1e9):
                best[there] = step
                back[there] = here
                heapq.heappush(heap, (step, there))
    return ends, frontier


@lru_cache(maxsize=8192)
def plan(board: tuple, colour: str = ""):
    """The planned pair for a bot of `colour`: (total cost, tiles on it, open ends, number of End
    Tiles reached)."""
    ends, frontier = plan_routes(board, colour=colour)
    if not ends:
        return 2 * MISSING, (), frontier, 0
    first = min(ends, key=lambda e: ends[e][0])
    cost1, path1 = ends[first]
    others, _ = plan_routes(board, blocked=frozenset(path1[1:]), colour=colour)
    others.pop(first, None)
    if not others:
        return cost1 + MISSING, path1[1:], frontier, 1
    second = min(others, key=lambda e: others[e][0])
    cost2, path2 = others[second]
    return cost1 + cost2, path1[1:] + path2[1:], frontier, 2


@lru_cache(maxsize=8192)
def _board_pair(board: tuple):
    return best_pair(board_grid(board))


@lru_cache(maxsize=2048)
def _board_single(board: tuple):
    return best_single(board_grid(board))


def _expected_points(state, seat: int, me: int, counts, winners, ender: int) -> float:
    """What another seat may score: its colour unknown (not mine for one of the 3 copies)."""
    mine = ID_CARDS[state.ids[me]]
    tiles = sum((3 - (c == mine)) / 8 * 3 * counts[c] for c in COLOURS)
    per_card = len(winners) * 25 / 66 + 6 / 66
    cards = min(len(state.hands[seat]), HAND_LIMIT) * per_card
    return tiles + cards + (1 if seat == ender else 0)


def final_points(state, me: int, pair, grid, ender: int) -> float:
    """My points if the game ends with `pair` scored at the end of this turn."""
    colour = ID_CARDS[state.ids[me]]
    counts = colour_counts(grid, pair)
    winners = winner_colours(counts)
    hand = sorted(state.hands[me], key=lambda c: -card_value(c, colour))
    if me == state.turn:
        hand = hand[:HAND_LIMIT]
    units = sum(CARDS[c].units if CARDS[c].colour in winners else (1 if not CARDS[c].colour else 0) for c in hand)
    return 3 * counts[colour] + units + (1 if me == ender else 0)


def value(state, me: int) -> float:
    """How good `state` looks to `me`, in rough points (terminal outlooks near ±WIN)."""
    if state.result is not None:
        if me in state.result.winners:
            return WIN * (2 if len(state.result.winners) == 1 else 1)
        return -WIN
    grid = board_grid(state.board)
    colour = ID_CARDS[state.ids[me]]
    scoring = state.phase == "scoring"
    pair = state.routes if scoring else _board_pair(state.board)
    if pair or scoring:
        ender = state.ender if scoring else state.turn
        counts = colour_counts(grid, pair)
        winners = winner_colours(counts)
        mine = final_points(state, me, pair, grid, ender)
        rivals = max(_expected_points(state, s, me, counts, winners, ender) for s in range(state.seats) if s != me)
        margin = mine - rivals - 1.5
        return (WIN + margin) if margin > 0 else (-WIN / 2 + margin)
    cost, tiles, frontier, reached = plan(state.board, colour)
    own = sum(TILES[grid[p].tile].colour == colour for p in tiles)
    other = sum(TILES[grid[p].tile].colour not in ("", colour) for p in tiles)
    open_ends = min(frontier, 6)
    if reached < 2 and frontier == 0:
        cost += 2 * MISSING  # the plan cannot grow: nothing more can join it
    hand = state.hands[me]
    if all(t == -1 for t in state.tops):
        # No tiles left: a stalemate may score the one route there is (Special cases); its colours decide.
        counts = colour_counts(grid, _board_single(state.board))
        held = hand_value(hand, colour, winner_colours(counts)) + 1.5 * counts[colour]
    else:
        held = hand_value(hand, colour)
    return -W_COST * cost + W_OWN * own - W_OTHER * other + W_FRONT * open_ends + held


def win_share(world, me: int, temperature: float = 3.0) -> float:
    """`me`'s expected share of the win in a full state: exact when over, else a soft comparison of
    every seat's `value` (the full state knows every seat's colour and hand)."""
    if world.result is not None:
        return 1 / len(world.result.winners) if me in world.result.winners else 0.0
    values = [value(world, s) for s in range(world.seats)]
    top = max(values)
    weights = [math.exp(max(-50.0, (v - top) / temperature)) for v in values]
    return weights[me] / sum(weights)


def estimate(state, seat: int) -> float:
    """The game's heuristic in [-1, 1] (GameInfo.heuristic), from `value`."""
    if state.ids and state.ids[seat] == UNKNOWN:
        return 0.0
    return max(-1.0, min(1.0, value(state, seat) / WIN))


class TricolorGreedy(Bot):
    """The `greedy` bot (module docstring)."""

    name = "greedy"

    def __init__(self, game: GameInfo, rng: random.Random, far: int = 3, **settings: Any) -> None:
        self.game = game
        self.rng = rng
        self.far = far  # placements tried away from the network's open road ends

    def choose(self, view: Any) -> Move:
        return self.ranked(view)[0][1]

    def ranked(self, view: Any, limit: int | None = None) -> list[tuple[float, Move]]:
        """Candidate moves with their values, best first (ties in seeded random order)."""
        me = view.actor
        if view.phase == "draw":
            return [(0.0, self._draw(view, me))]
        moves = self.candidates(view, me)
        scored = []
        for move in moves:
            after = view.apply(move)
            score = value(after, me)
            if move.kind == "attack":
                score += 1.0  # an opponent's lost turn
            scored.append((score, self.rng.random(), move))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [(s, m) for s, _, m in scored[:limit]]

    def candidates(self, view: Any, me: int) -> list[Move]:
        moves = list(view.legal_moves())
        if view.phase in ("setup", "plan") or (view.phase == "event" and view.event == "survey"):
            return self._prune_placements(view, moves)
        if view.phase == "act":
            colour = ID_CARDS[view.ids[me]]
            near = self._plan_cells(view)
            keep = []
            for move in moves:
                if move.kind == "modify" and move.args[0] not in near:
                    continue
                if move.kind == "attack" and hand_value(view.hands[me], colour) > 1.5:
                    continue
                keep.append(move)
            return keep
        return moves

    def _plan_cells(self, view) -> set[str]:
        """Blueprint positions next to the planned network: the ones worth turning."""
        grid = board_grid(view.board)
        ends, _ = plan_routes(view.board)
        reach = {(0, 0)}
        for _, path in ends.values():
            reach.update(path)
        cells = set()
        for pos in list(grid):
            if any(neighbour(pos, e) in reach or pos in reach for e in range(4)):
                cells.add(f"{pos[0]},{pos[1]}")
        return cells

    def _prune_placements(self, view, moves: list[Move]) -> list[Move]:
        """Placements on open road ends of the network, and a few elsewhere."""
        grid = board_grid(view.board)
        open_cells = set()
        for pos, placed in grid.items():
            if TILES[placed.tile].kind == DEAD:
                continue
            for e in edges(placed.tile, placed.rotation):
                there = neighbour(pos, e)
                if there not in grid:
                    open_cells.add(f"{there[0]},{there[1]}")
        kind_index = 1 if moves and moves[0].kind in ("place", "survey") else 0
        near = [m for m in moves if m.args[kind_index] in open_cells]
        far_cells = sorted({m.args[kind_index] for m in moves} - open_cells)
        self.rng.shuffle(far_cells)
        far = set(far_cells[: self.far])
        return near + [m for m in moves if m.args[kind_index] in far]

    def _draw(self, view, me: int) -> Move:
        colour = ID_CARDS[view.ids[me]]
        hand = view.hands[me]
        tops = [t for t in view.tops if t != -1]
        useful = any(TILES[t].kind == END or TILES[t].colour == colour and TILES[t].kind != DEAD for t in tops)
        cost, tiles, frontier, reached = plan(view.board, colour)
        grid = board_grid(view.board)
        due = [TILES[grid[p].tile] for p in tiles if not grid[p].constructed]
        payable = any(
            sum(max(CARDS[c].units if CARDS[c].colour == t.colour else 0, 1 if not CARDS[c].colour else 0) for c in hand)
            + 1 >= t.cost
            for t in due
        )
        # Drawing 4 skips route planning and actions: only worth it with a thin hand and nothing to do.
        if (tops and useful) or payable or (not tops and due) or (tops and len(hand) >= 3):
            return Move("draw", (2,))
        return Move("draw", (4,))


class TricolorSearch(Bot):
    """The `search` bot (module docstring): determinized rollouts over greedy's best candidates."""

    name = "search"

    def __init__(
        self,
        game: GameInfo,
        rng: random.Random,
        samples: int = 10,
        width: int = 3,
        steps: int = 120,
        margin: float = 3.0,
        rollout_far: int = 3,
        **settings: Any,
    ) -> None:
        self.game = game
        self.margin = margin
        self.rng = rng
        self.samples = samples
        self.width = width
        self.steps = steps
        self.rollout_far = rollout_far
        self.greedy = TricolorGreedy(game, rng)
        self.hurry = threading.Event()  # set: the best candidate weighed so far is played

    def choose(self, view: Any) -> Move:
        # Setup and an Embargo's one card are left to greedy; the end-of-turn discard is searched, for
        # the cards kept decide the next turn's construction and, at the end, the points in hand.
        if view.phase in ("setup", "embargo"):
            return self.greedy.choose(view)
        if view.phase == "draw":
            # Drawing 4 gives up planning and actions for cards: the rollouts weigh both.
            ranked = [(0.0, move) for move in view.legal_moves()]
        else:
            ranked = self.greedy.ranked(view, self.width)
            # Only moves close to greedy's best are worth the rollouts; a clear best is taken at once.
            ranked = [(score, move) for score, move in ranked if score >= ranked[0][0] - self.margin]
        if len(ranked) == 1:
            return ranked[0][1]
        me = view.actor
        worlds = [determinize(view, me, self.rng) for _ in range(self.samples)]
        best, best_score = ranked[0][1], None
        for prior, move in ranked:
            # The same sampled worlds and chance seeds for every candidate: differences are the move's.
            total = 0.0
            for k, world in enumerate(worlds):
                if self.hurry.is_set():
                    return best  # the best candidate fully weighed, else greedy's best
                total += self._rollout(world.apply(move), me, random.Random(k))
            score = total / len(worlds)
            if best_score is None or score > best_score:
                best, best_score = move, score
        return best

    def _rollout(self, state, me: int, rng: random.Random) -> float:
        """Play on with greedy for every seat until my next turn begins (or the game ends)."""
        from dicetable.core.chance import LocalSource

        source = LocalSource(rng)
        # rollout_far=0 is about twice as quick, but measured weaker (21.5% against 3 greedy, 100 games).
        policy = TricolorGreedy(self.game, rng, far=self.rollout_far)
        left_turn = False
        for _ in range(self.steps):
            if state.result is not None:
                break
            if state.actor == CHANCE:
                state = state.resolve(source.outcome(state.chance()))
                continue
            if state.turn != me:
                left_turn = True
            elif left_turn and state.phase == "draw":
                break
            state = state.apply(policy.choose(state.view(state.actor)))
        return win_share(state, me)


SHED_CLUE = 1.4  # log-odds against a colour per unit of it a seat discarded by choice
# How much likelier an unseen card is to lie in a hand than in the deck, by what it is to the
# holder: a card of its colour (1 or 2 units), of another colour, or wild. Builders keep what scores
# for them. Measured on greedy games by scripts/tricolor_hand_clues.py (a kind's share of the hands
# over its share of the cards their holder's rivals cannot see); it replaced a flat 2 for the
# holder's colour, which put several times too many other-colour cards into sampled hands.
KEEP_CLUE = {"own1": 1.881, "own2": 2.462, "other1": 0.233, "other2": 0.616, "wild": 1.372}


def card_kind(card: int, colour: str) -> str:
    """What `card` is to a holder of `colour`: a key of KEEP_CLUE."""
    c = CARDS[card]
    if not c.colour:
        return "wild"
    return f"{'own' if c.colour == colour else 'other'}{c.units}"


_KEEP = {colour: tuple(KEEP_CLUE[card_kind(card, colour)] for card in range(len(CARDS))) for colour in COLOURS}


def colour_weights(view, seat: int) -> list[float]:
    """How likely each colour (COLOURS order) is to be `seat`'s ID, from what it chose to discard:
    a builder keeps the cards that score for it, so a colour it throws away is probably not its own."""
    return [math.exp(-SHED_CLUE * units) for units in view.shed[seat]]


def _sample_ids(view, rng: random.Random) -> tuple[int, ...]:
    """The unknown ID cards, drawn seat by seat (in random order) by the copies left and the clues."""
    ids = list(view.ids)
    left = [i for i in range(len(ID_CARDS)) if i not in view.ids]
    unknown = [s for s, i in enumerate(ids) if i == UNKNOWN]
    rng.shuffle(unknown)
    for seat in unknown:
        weights = colour_weights(view, seat)
        chances = [weights[COLOURS.index(ID_CARDS[i])] for i in left]
        ids[seat] = left.pop(_pick(chances, rng))
    return tuple(ids)


def _pick(weights: list[float], rng: random.Random) -> int:
    target = rng.random() * sum(weights)
    for index, weight in enumerate(weights):
        target -= weight
        if target < 0:
            return index
    return len(weights) - 1


def determinize(view, me: int, rng: random.Random):
    """A full state consistent with `me`'s view: hidden IDs, hands and deck order sampled, the IDs
    leaning the way each seat's discards point (`colour_weights`), the hands toward what a builder of
    the sampled colour keeps (`KEEP_CLUE`)."""
    ids = _sample_ids(view, rng)
    known = set(view.discards)
    for hand in view.hands:
        known.update(c for c in hand if c != UNKNOWN)
    # Cards that formed the current deck but are not seen: in others' hands or still in the deck.
    pool = [c for c in range(len(CARDS)) if c not in known]
    rng.shuffle(pool)
    hands = []
    for seat, hand in enumerate(view.hands):
        keep = _KEEP[ID_CARDS[ids[seat]]]
        filled = []
        for card in hand:
            if card == UNKNOWN:
                card = pool.pop(_pick([keep[c] for c in pool], rng))
            filled.append(card)
        hands.append(tuple(filled))
    # The full state reads the deck order from position `drawn` on; earlier positions are spent.
    order = (UNKNOWN,) * view.drawn + tuple(pool[: view.deck_left])
    return replace(view, hands=tuple(hands), ids=ids, order=order, id_order=())


BOTS = {"random": RandomBot, "greedy": TricolorGreedy, "search": TricolorSearch}
HEURISTIC = estimate  # bound to GameInfo.heuristic by core/registry.py
