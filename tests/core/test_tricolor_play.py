"""Tricolor Line turns through the real engine: setup, phases, construction, events, attacks,
discards, reshuffles and the stalemate end (tricolor-line.md, Setup to Special cases)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, IllegalMove, Move, Outcome
from dicetable.core import registry
from dicetable.core.tricolor import ACT, DRAW, EMBARGO, EVENT, OVER, PLAN, SETUP, DISCARD, TricolorState
from dicetable.core.tricolor_tiles import CARDS, END, END_TILES, EVENT_COUNTS, EVENT_NAMES, ROAD, TILES

GAME = registry.get("tricolor")


def tile_id(kind, shape="cross", colour="", skip=0):
    found = [t.id for t in TILES if t.kind == kind and (kind == END or (t.shape == shape and t.colour == colour))]
    return found[skip]


RS = tile_id(ROAD, "straight", "R")
RC = tile_id(ROAD, "cross", "R")
R, R2, Y, W = 0, 15, 20, 60  # a red basic, a red double, a yellow basic, a wild card


def table(entries=(), hands=None, seats=3, seat=0, phase=ACT, tops=(-1, -1, -1), **changes) -> TricolorState:
    """A state in the middle of a game: `entries` (x, y, tile, rotation, built) after the Start Tile."""
    board = ((0, 0, 0, 0, True, 0),) + tuple(
        (x, y, t, r, b, order) for order, (x, y, t, r, b) in enumerate(entries, start=1)
    )
    hands = hands if hands is not None else ((),) * seats
    used = {c for h in hands for c in h}
    order = tuple(c for c in range(len(CARDS)) if c not in used)[:20]
    base = TricolorState(
        options=(("turn_limit", 400),), seats=seats, phase=phase, turn=seat, seat=seat, board=board,
        placed=len(board), ids=tuple(3 * s % 9 for s in range(seats)), hands=hands, skips=(False,) * seats,
        shown=(False,) * seats, shed=((0, 0, 0),) * seats, tops=tops, sizes=tuple(0 if t == -1 else 5 for t in tops),
        unseen=tuple(t for t in range(1, 67) if t not in tops and t not in {e[2] for e in entries})[:30],
        deck=1, deck_left=len(order), order=order,
    )
    return replace(base, **changes)


def settle_chance(state, *values):
    """Resolve the due chance step with `values` (or an empty outcome for hidden steps)."""
    assert state.actor == CHANCE
    return state.resolve(Outcome(tuple(values)))


def road_index(state) -> int:
    """The outcome turning up the first unseen tile that is not an End Tile."""
    return next(i for i, t in enumerate(state.unseen) if TILES[t].kind != END)


def event_index(kind: str) -> int:
    """The index of the first card of `kind` in a full event deck."""
    k = EVENT_NAMES.index(kind)
    return sum(EVENT_COUNTS[:k])


# -- setup ---------------------------------------------------------------------------------------
def test_setup_deals_ids_hands_tops_and_first_seat():
    state = GAME.start(4)
    source = LocalSource(random.Random(3))
    labels = []
    while state.actor == CHANCE:
        labels.append(state.chance().label)
        state = state.resolve(source.outcome(state.chance()))
    assert state.phase == SETUP and state.seat == state.first
    assert all(t != -1 and TILES[t].kind != END for t in state.tops)
    assert sum(state.sizes) == 66 and all(len(h) == 4 for h in state.hands)
    assert len(set(state.ids)) == 4 and all(0 <= i < 9 for i in state.ids)
    assert "shuffle the ID cards" in labels and "draw the first seat" in labels


def test_end_tile_on_a_pile_top_at_setup_is_shuffled_back():
    state = GAME.start(2)
    end_index = state.unseen.index(END_TILES[0])
    state = settle_chance(state, end_index)
    # The End Tile went back into pile 1, which is turned up again.
    assert state.tops[0] == -1 and state.inside[0] == (END_TILES[0],)
    assert state.chance().label == "turn up the top tile of pile 1" and state.chance().ranges == (22, 65)
    again = settle_chance(state, 0, 0)  # the same End Tile on top again: shuffled again
    assert again.tops[0] == -1 and again.inside[0] == (END_TILES[0],)
    other = settle_chance(state, 5, state.unseen.index(RS))  # an unseen tile comes up this time
    assert other.tops[0] == RS and RS not in other.unseen
    assert other.inside[0] == (END_TILES[0],)


def test_first_setup_placement_is_next_to_the_start_tile_later_ones_anywhere():
    state = table(phase=SETUP, tops=(RS, RC, tile_id(ROAD, "tee", "Y")), setup_left=3, first=0)
    cells = {m.args[1] for m in state.legal_moves()}
    assert cells == {"0,-1", "1,0", "0,1", "-1,0"}
    with pytest.raises(IllegalMove):
        state.apply(Move("place", (1, "2,0", 0)))
    state = state.apply(Move("place", (1, "1,0", 1)))
    assert state.seat == 1 and state.tops[0] == -1
    state = settle_chance(state, road_index(state))  # pile 1's next top: a road tile
    assert "2,0" in {m.args[1] for m in state.legal_moves()}
    state = state.apply(Move("place", (2, "2,0", 0)))
    state = settle_chance(state, road_index(state))
    state = state.apply(Move("place", (3, "0,1", 0)))
    assert state.phase == DRAW and state.seat == 0


# -- the turn's phases ---------------------------------------------------------------------------
def test_draw_two_then_route_planning_then_actions():
    state = table(phase=DRAW, tops=(RS, -1, -1))
    assert set(state.legal_moves()) == {Move("draw", (2,)), Move("draw", (4,))}
    state = state.apply(Move("draw", (2,)))
    assert state.chance().private == 0 and state.chance().positions == (0, 1)
    state = settle_chance(state)
    assert state.phase == PLAN and len(state.hands[0]) == 2
    state = state.apply(Move("place", (1, "1,0", 1)))
    assert state.phase == ACT and (1, 0) in state.grid


def test_draw_four_goes_straight_to_discard():
    state = settle_chance(table(phase=DRAW, tops=(RS, -1, -1)).apply(Move("draw", (4,))))
    # 4 cards is within the limit, so the turn ends at once and seat 1 draws.
    assert state.phase == DRAW and state.seat == 1 and len(state.hands[0]) == 4
    assert len(state.grid) == 1


def test_no_route_planning_when_all_piles_are_empty():
    state = settle_chance(table(phase=DRAW).apply(Move("draw", (2,))))
    assert state.phase == ACT


def test_route_planning_places_next_to_any_tile_on_a_free_position():
    state = table(entries=[(1, 0, RS, 1, False)], phase=PLAN, tops=(RC, -1, -1))
    with pytest.raises(IllegalMove):
        state.apply(Move("place", (1, "1,0", 0)))  # taken
    with pytest.raises(IllegalMove):
        state.apply(Move("place", (1, "3,0", 0)))  # not next to a tile
    with pytest.raises(IllegalMove):
        state.apply(Move("place", (2, "2,0", 0)))  # empty pile
    state = state.apply(Move("place", (1, "2,0", 2)))
    assert state.grid[(2, 0)].rotation == 2 and not state.grid[(2, 0)].built


# -- construction --------------------------------------------------------------------------------
def test_construct_costs_with_basic_double_and_wild_cards():
    state = table(entries=[(1, 0, RS, 1, False)], hands=((R, R2, Y, W), (), ()))
    with pytest.raises(IllegalMove):
        state.apply(Move("construct", ("1,0", CARDS[R].token)))  # 1 unit for a cost of 2
    with pytest.raises(IllegalMove):
        state.apply(Move("construct", ("1,0", CARDS[R].token, CARDS[Y].token)))  # yellow pays nothing here
    for pay in ((R2,), (R, W)):
        after = state.apply(Move("construct", ("1,0", *(CARDS[c].token for c in pay))))
        assert after.grid[(1, 0)].built and after.discards == pay
        assert after.chance().label == "draw an event card"
    overpaid = state.apply(Move("construct", ("1,0", CARDS[R2].token, CARDS[W].token)))
    assert overpaid.grid[(1, 0)].built and overpaid.hands[0] == (R, Y)
    listed = {m.args[1:] for m in state.legal_moves() if m.kind == "construct"}
    assert listed == {("R2:15",), ("R:0", "W:60")}  # payments with no card to spare


def test_construct_needs_a_blueprint():
    state = table(entries=[(1, 0, RS, 1, True), (2, 0, END_TILES[0], 0, False)], hands=((R, R2), (), ()))
    for where in ("1,0", "2,0", "0,0", "5,5"):
        with pytest.raises(IllegalMove):
            state.apply(Move("construct", (where, "R2:15")))


def test_modify_turns_a_blueprint_for_two_cards():
    state = table(entries=[(1, 0, RS, 1, False), (2, 0, RC, 0, True)], hands=((R, Y, W), (), ()))
    after = state.apply(Move("modify", ("1,0", "R:0", "Y:20")))
    assert after.grid[(1, 0)].rotation == 2 and after.hands[0] == (W,) and after.discards == (R, Y)
    with pytest.raises(IllegalMove):
        state.apply(Move("modify", ("2,0", "R:0", "Y:20")))  # constructed: cannot be turned by hand
    with pytest.raises(IllegalMove):
        state.apply(Move("modify", ("1,0", "R:0")))
    assert not any(m.kind == "modify" for m in table(entries=[(1, 0, RS, 1, False)], hands=((R,), (), ())).legal_moves())


# -- events --------------------------------------------------------------------------------------
def constructed(kind: str, entries=(), hands=None, **changes) -> TricolorState:
    """Seat 0 constructs the red straight at 1,0 and draws an event of `kind`."""
    entries = [(1, 0, RS, 1, False), *entries]
    hands = hands or ((R2, R), (Y,), (W,))
    state = table(entries=entries, hands=hands, **changes).apply(Move("construct", ("1,0", "R2:15")))
    return settle_chance(state, event_index(kind))


def test_demolition_flips_a_constructed_tile_back():
    state = constructed("demolition")
    assert state.phase == EVENT and state.played == "demolition"
    assert [m.args for m in state.legal_moves()] == [("1,0",)]
    state = state.apply(Move("demolish", ("1,0",)))
    assert not state.grid[(1, 0)].built and state.phase == ACT
    assert state.events[0] == 2


def test_supply_drop_draws_two():
    state = constructed("supply")
    assert state.chance().private == 0 and len(state.chance().positions) == 2
    assert len(settle_chance(state).hands[0]) == 3


def test_earthquake_turns_any_tile_but_the_start_and_end_tiles():
    state = constructed("earthquake", entries=[(0, 1, RC, 0, True), (2, 0, END_TILES[0], 0, False)])
    targets = {m.args[0] for m in state.legal_moves()}
    assert targets == {"1,0", "0,1"}
    with pytest.raises(IllegalMove):
        state.apply(Move("quake", ("2,0",)))
    state = state.apply(Move("quake", ("1,0",)))
    assert state.grid[(1, 0)].rotation == 2 and state.grid[(1, 0)].built
    with pytest.raises(IllegalMove):
        constructed("earthquake").apply(Move("quake", ("0,0",)))


def test_survey_places_a_pile_top():
    state = constructed("survey", tops=(RC, -1, -1))
    assert state.phase == EVENT and all(m.args[0] == 1 for m in state.legal_moves())
    state = state.apply(Move("survey", (1, "0,1", 0)))
    assert state.grid[(0, 1)].tile == RC and state.phase == ACT


def test_embargo_makes_every_other_player_discard_one():
    state = constructed("embargo", hands=((R2, R), (Y, 21), (W,)))
    assert state.phase == EMBARGO and state.actor == 1
    assert {m.args for m in state.legal_moves()} == {("Y:20",)}  # one move per kind held
    state = state.apply(Move("discard", ("Y:21",)))
    assert state.actor == 2
    state = state.apply(Move("discard", ("W:60",)))
    assert state.phase == ACT and state.actor == 0 and state.hands == ((R,), (Y,), ())
    assert state.shed == ((0, 0, 0), (0, 1, 0), (0, 0, 0))


def test_storm_removes_a_blueprint_from_the_game():
    state = constructed("storm", entries=[(0, 1, RC, 0, False)])
    assert [m.args for m in state.legal_moves()] == [("0,1",)]
    state = state.apply(Move("storm", ("0,1",)))
    assert (0, 1) not in state.grid and state.phase == ACT


@pytest.mark.parametrize(
    "kind, changes",
    [
        ("storm", {}),  # no blueprint left
        ("survey", {}),  # every pile empty
        ("embargo", {"hands": ((R2, R), (), ())}),  # no other player holds a card
    ],
)
def test_an_event_that_cannot_be_carried_out_draws_two_instead(kind, changes):
    state = constructed(kind, **changes)
    assert state.played == f"{kind}: fallback" and state.chance().private == 0
    state = settle_chance(state)
    assert state.phase == ACT and len(state.hands[0]) == 3


def test_event_deck_is_reshuffled_when_it_runs_out():
    state = table(entries=[(1, 0, RS, 1, False)], hands=((R2,), (), ()), events=(0, 0, 0, 0, 0, 0))
    state = state.apply(Move("construct", ("1,0", "R2:15")))
    assert state.chance().ranges == (20,)


@pytest.mark.parametrize("kind, name", [("demolition", "demolish"), ("earthquake", "quake"), ("storm", "storm")])
def test_start_and_end_tiles_are_immune(kind, name):
    state = constructed(kind, entries=[(2, 0, END_TILES[0], 0, False), (0, 1, RC, 0, False)])
    for pos in ("0,0", "2,0"):
        assert pos not in {m.args[0] for m in state.legal_moves()}
        with pytest.raises(IllegalMove):
            state.apply(Move(name, (pos,)))


def test_an_end_tile_is_never_placed_next_to_the_start_tile():
    end = END_TILES[0]
    sides = {"0,-1", "1,0", "0,1", "-1,0"}
    # Route planning: the End Tile of pile 1 goes anywhere free but beside the Start Tile.
    state = table(entries=[(1, 0, RS, 1, False)], phase=PLAN, tops=(end, RS, -1))
    cells = {pile: {m.args[1] for m in state.legal_moves() if m.args[0] == pile} for pile in (1, 2)}
    assert cells[1] == {"2,0", "1,-1", "1,1"} and cells[2] == {"2,0", "1,-1", "1,1"} | sides - {"1,0"}
    with pytest.raises(IllegalMove, match="never placed next to the Start Tile"):
        state.apply(Move("place", (1, "0,1", 0)))
    assert (2, 0) in state.apply(Move("place", (1, "2,0", 0))).grid
    # Survey places as route planning does.
    survey = constructed("survey", tops=(end, -1, -1))
    assert {m.args[1] for m in survey.legal_moves()} == {"2,0", "1,-1", "1,1"}
    with pytest.raises(IllegalMove, match="never placed next to the Start Tile"):
        survey.apply(Move("survey", (1, "0,-1", 0)))
    # Setup: a later player's placement follows the same rule.
    setup = table(entries=[(1, 0, RS, 1, False)], phase=SETUP, tops=(end, -1, -1), setup_left=1, first=0)
    assert {m.args[1] for m in setup.legal_moves()} == {"2,0", "1,-1", "1,1"}


def test_route_planning_and_survey_skip_an_end_tile_with_nowhere_to_go():
    end = END_TILES[0]
    # Nothing on the table but the Start Tile (a Storm took the rest): the End Tile cannot go anywhere.
    state = settle_chance(table(phase=DRAW, tops=(end, -1, -1)).apply(Move("draw", (2,))))
    assert state.phase == ACT
    state = table(phase=DRAW, tops=(end, RS, -1))
    state = settle_chance(state.apply(Move("draw", (2,))))
    assert state.phase == PLAN and {m.args[0] for m in state.legal_moves()} == {2}
    survey = settle_chance(table(tops=(end, -1, -1), pending=(("event",),)), event_index("survey"))
    assert survey.played == "survey: fallback" and survey.chance().private == 0


def test_an_end_tile_turned_up_during_the_setup_round_is_shuffled_back():
    state = table(phase=SETUP, tops=(RS, RC, -1), setup_left=3, first=0)
    state = state.apply(Move("place", (1, "1,0", 1)))
    end = state.unseen.index(END_TILES[0])
    state = settle_chance(state, end)
    assert state.tops[0] == -1 and state.inside[0] == (END_TILES[0],) and state.actor == CHANCE
    state = settle_chance(state, 1, road_index(state))  # an unseen road tile comes up this time
    assert TILES[state.tops[0]].kind == ROAD and state.phase == SETUP and state.seat == 1
    # Once the setup round is over, an End Tile on a pile's top stays there.
    last = table(entries=[(1, 0, RS, 1, False)], phase=SETUP, tops=(RC, -1, -1), setup_left=1, first=0)
    last = last.apply(Move("place", (1, "2,0", 0)))
    assert last.phase == DRAW
    assert settle_chance(last, last.unseen.index(END_TILES[0])).tops[0] == -1  # the last setup placement too
    plan = table(entries=[(1, 0, RS, 1, False)], phase=PLAN, tops=(RC, -1, -1))
    plan = plan.apply(Move("place", (1, "2,0", 0)))
    assert settle_chance(plan, plan.unseen.index(END_TILES[0])).tops[0] == END_TILES[0]


# -- attack --------------------------------------------------------------------------------------
def test_attack_discards_the_whole_hand_and_skips_the_target():
    state = table(hands=((R, Y), (W,), (21,)))
    targets = {m.args[0] for m in state.legal_moves() if m.kind == "attack"}
    assert targets == {1, 2}
    with pytest.raises(IllegalMove):
        state.apply(Move("attack", (1, "R:0")))  # not the whole hand
    with pytest.raises(IllegalMove):
        state.apply(Move("attack", (0, "R:0", "Y:20")))  # not yourself
    state = state.apply(Move("attack", (1, "R:0", "Y:20")))
    assert state.hands[0] == () and state.skips[1] and state.discards == (R, Y)
    state = state.apply(Move("end"))
    assert state.turn == 2 and not state.skips[1]  # seat 1's turn was skipped
    # Seat 1 was the previous target: seat 2 may not attack it.
    assert {m.args[0] for m in state.apply(Move("draw", (4,))).legal_moves() if m.kind == "attack"} == set()
    state = settle_chance(state.apply(Move("draw", (2,))))
    assert {m.args[0] for m in state.legal_moves() if m.kind == "attack"} == {0}


def test_no_attack_with_an_empty_hand():
    assert not any(m.kind == "attack" for m in table().legal_moves())


# -- discard -------------------------------------------------------------------------------------
def test_discard_down_to_five():
    state = table(hands=((0, 1, 2, 3, 20, 21, 60), (), ()))
    state = state.apply(Move("end"))
    assert state.phase == DISCARD and state.actor == 0
    with pytest.raises(IllegalMove):
        state.apply(Move("discard", ("R:0",)))
    assert all(len(m.args) == 2 for m in state.legal_moves())
    state = state.apply(Move("discard", ("R:0", "W:60")))
    assert state.hands[0] == (1, 2, 3, 20, 21) and state.discards == (0, 60) and state.turn == 1


def test_cards_discarded_by_choice_are_tallied_per_seat_and_colour():
    # Modify, Discard and Embargo are the seat's own choice of cards (a clue to its colour); a
    # construction's payment and an attack's whole hand are not.
    state = table(entries=[(1, 0, RS, 1, False), (2, 0, RS, 1, False)], hands=((R, R2, Y, W, 1, 21, 2), (22,), ()))
    state = state.apply(Move("modify", ("2,0", "Y:20", "W:60")))
    assert state.shed == ((0, 1, 0), (0, 0, 0), (0, 0, 0))  # a wild card has no colour
    state = state.apply(Move("construct", ("1,0", "R2:15")))
    assert state.shed[0] == (0, 1, 0)
    state = table(hands=((R, 1, 2, 3, 4, 21, R2), (), ())).apply(Move("end"))
    state = state.apply(Move("discard", ("Y:21", "R2:15")))
    assert state.shed == ((2, 1, 0), (0, 0, 0), (0, 0, 0))  # a double counts its two units
    state = table(hands=((R, Y), (W,), ())).apply(Move("attack", (1, "R:0", "Y:20")))
    assert state.shed[0] == (0, 0, 0)


def test_cards_not_held_cannot_be_paid():
    state = table(entries=[(1, 0, RS, 1, False)], hands=((R,), (R2,), ()))
    with pytest.raises(IllegalMove):
        state.apply(Move("construct", ("1,0", "R2:15")))
    with pytest.raises(IllegalMove):
        state.apply(Move("construct", ("1,0", "R:0", "R:0")))


# -- reshuffles and the ends of piles ------------------------------------------------------------
def test_resource_deck_is_rebuilt_from_the_discard_pile():
    state = table(phase=DRAW, deck_left=1, order=(30,), discards=(1, 2, 3))
    state = state.apply(Move("draw", (2,)))
    assert state.chance().positions == (0,)
    state = settle_chance(state)
    chance = state.chance()
    assert chance.deck == "resource.2" and chance.cards == (1, 2, 3) and chance.shuffle == 3
    state = state.resolve(Outcome((), (2, 0, 1)))
    assert state.discards == () and state.deck == 2 and state.order == (3, 1, 2)
    assert state.chance().positions == (0,) and state.chance().deck == "resource.2"
    state = settle_chance(state)
    assert state.hands[0] == (30, 3) and state.deck_left == 2


def test_a_pile_that_runs_out_is_gone():
    state = table(phase=PLAN, tops=(RS, RC, -1), sizes=(1, 3, 0))
    state = state.apply(Move("place", (1, "1,0", 1)))
    assert state.actor == 0 and state.tops == (-1, RC, -1)  # no chance: pile 1 is empty
    state = settle_chance(state.apply(Move("end")).apply(Move("draw", (2,))))
    assert state.phase == PLAN and {m.args[0] for m in state.legal_moves()} == {2}


def test_stalemate_ends_the_game_after_a_round_without_construction():
    state = table(seats=2, hands=((R,), (Y,)))
    state = state.apply(Move("end"))
    assert state.idle == 1 and state.turn == 1
    state = settle_chance(state.apply(Move("draw", (2,))))
    state = state.apply(Move("end"))
    assert state.reason.startswith("stalemate")
    while state.actor == CHANCE:
        state = state.resolve(Outcome())
    assert state.phase == OVER and state.result is not None and state.ender == -1


def test_construction_resets_the_stalemate_count():
    state = table(seats=2, entries=[(1, 0, RS, 1, False)], hands=((R2,), (Y,)), idle=1)
    state = settle_chance(state.apply(Move("construct", ("1,0", "R2:15"))), event_index("earthquake"))
    state = state.apply(Move("quake", ("1,0",))).apply(Move("end"))
    assert state.idle == 0 and state.result is None


def test_stalemate_scores_the_one_route_that_exists():
    entries = [(1, 0, RS, 1, True), (2, 0, END_TILES[0], 0, False)]
    state = table(seats=2, entries=entries, hands=((R,), (Y,)), idle=1, ids=(0, 3))
    state = state.apply(Move("end"))
    while state.actor == CHANCE:
        state = state.resolve(Outcome())
    assert state.routes == (((0, 0), (1, 0), (2, 0)),)
    assert state.scores() == (3 + 1, 0)  # red route tile; red is the Winner Colour


@pytest.mark.parametrize("east_first", [True, False])
def test_two_valid_routes_end_the_game_whatever_the_placement_order(east_first):
    # End Tile A at 1,1 is reached via 1,0 or 0,1, End Tile B at 2,0 only via 1,0: the pair
    # (A via 0,1, B via 1,0) exists whichever cross was placed first.
    east, south = (1, 0, RC, 0, True), (0, 1, tile_id(ROAD, "cross", "Y"), 0, True)
    entries = [east, south] if east_first else [south, east]
    entries += [(1, 1, END_TILES[0], 0, False), (2, 0, END_TILES[1], 0, False)]
    state = table(seats=2, entries=entries, hands=((R,), (Y,))).apply(Move("end"))
    assert state.reason == "two valid routes" and state.ender == 0
    assert state.routes == (((0, 0), (0, 1), (1, 1)), ((0, 0), (1, 0), (2, 0)))


def test_turn_limit_ends_the_game():
    state = table(seats=2, turns=9, options=(("turn_limit", 10),))
    state = state.apply(Move("end"))
    assert state.reason.startswith("turn limit")
    assert GAME.resolve_options()["turn_limit"] == 400  # the safety end of the rules (Special cases)
    state = table(seats=2, turns=399).apply(Move("end"))
    assert state.reason == "turn limit of 400 turns" and state.ender == -1


def test_every_move_and_phase_has_plain_words():
    state = GAME.start(3)
    source = LocalSource(random.Random(12))
    bots = [GAME.bots["random"](GAME, random.Random(s)) for s in range(3)]
    kinds = set()
    while state.actor is not None:
        assert state.prompt()
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
            continue
        move = bots[state.actor].choose(state.view(state.actor))
        text = GAME.describe(state, move)
        assert text.startswith(f"seat {state.seat} ") and ":" not in text.split(" ", 2)[2][:1]
        kinds.add(move.kind)
        state = state.apply(move)
    assert {"place", "draw", "construct", "end"} <= kinds
    assert state.prompt() == "the game is over"


def test_paid_cards_names_what_a_move_reveals():
    state = table(hands=((R, W), (), ()))
    assert state.paid_cards(Move("construct", ("1,0", "R:0", "W:60"))) == (R, W)
    assert state.paid_cards(Move("modify", ("1,0", "R:0", "W:60"))) == (R, W)
    assert state.paid_cards(Move("attack", (1, "R:0", "W:60"))) == (R, W)
    assert state.paid_cards(Move("discard", ("R2:15",))) == (R2,)
    assert state.paid_cards(Move("end")) == () and state.paid_cards(Move("demolish", ("1,0",))) == ()
    with pytest.raises(IllegalMove):
        state.paid_cards(Move("discard", ("R:15",)))
