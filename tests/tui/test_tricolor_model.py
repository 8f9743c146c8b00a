"""What the Tricolor Line table offers the keyboard's seat (tui/tables/tricolor_model.py), without the
app: placements by pile and rotation, the squares that take an action, the moves on a tile, and
the event card drawn in the move log."""

from __future__ import annotations

import random
from dataclasses import replace

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE, Move
from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.core.tricolor import ACT, EVENT, SETUP, parse_pos
from dicetable.core.tricolor_tiles import distinct_rotations
from dicetable.tui.tables.tricolor_model import EVENT_DRAW, TricolorChoices, event_drawn
from dicetable.tui.tables.view import Decided, Moved

TRICOLOR = registry.get("tricolor")


def states(seed: int = 4, seats: int = 3):
    """Every state of a game of random bots (they construct, so event cards come up), chance from a
    seeded source."""
    state = TRICOLOR.new(seats, TRICOLOR.resolve_options({}))
    source = LocalSource(random.Random(seed))
    bots = [TRICOLOR.bots["random"](TRICOLOR, random.Random(seed + n)) for n in range(seats)]
    while state.actor is not None:
        yield state
        if state.actor == CHANCE:
            state = state.resolve(source.outcome(state.chance()))
        else:
            state = state.apply(bots[state.actor].choose(state.view(state.actor)))


def first(test) -> object:
    return next(state for state in states() if test(state))


def test_a_placement_follows_the_pile_and_the_turn():
    state = first(lambda s: s.actor is not None and s.actor >= 0 and s.phase == SETUP)
    seen = state.view(state.actor)
    legal = seen.legal_moves()
    choices = TricolorChoices(seen, acting=True)
    assert choices.placing() and choices.legal == legal
    assert choices.piles() == sorted({m.args[0] for m in legal})
    for pile in choices.piles():
        turns = distinct_rotations(seen.tops[pile - 1])
        on_pile = TricolorChoices(seen, True, pile)
        free = on_pile.free_cells()
        assert free == {parse_pos(m.args[1]) for m in legal if m.args[0] == pile} and free
        assert on_pile.targets() == free
        assert on_pile.rotations() == turns
        assert [TricolorChoices(seen, True, pile, n).rotation() for n in range(len(turns) + 1)] == [*turns, turns[0]]
        for n in range(len(turns)):
            for pos in free:
                move = TricolorChoices(seen, True, pile, n).placement(pos)
                assert move == Move("place", (pile, f"{pos[0]},{pos[1]}", turns[n])) and move in legal
    assert choices.placement((40, 40)) is None  # not next to any tile


def test_a_seat_that_is_not_acting_is_offered_nothing():
    state = first(lambda s: s.actor is not None and s.actor >= 0 and s.phase == SETUP)
    waiting = TricolorChoices(state.view(state.actor), acting=False)
    assert waiting.legal == () and not waiting.placing() and waiting.targets() == set()
    assert waiting.placement(next(iter(TricolorChoices(state.view(state.actor), True).free_cells()))) is None


def test_the_action_squares_are_the_blueprints_that_can_be_paid():
    state = first(lambda s: s.actor is not None and s.actor >= 0 and s.phase == ACT
                  and any(m.kind == "construct" for m in s.view(s.actor).legal_moves()))
    seen = state.view(state.actor)
    choices = TricolorChoices(seen, acting=True)
    builds = [m for m in seen.legal_moves() if m.kind == "construct"]
    assert not choices.placing()
    assert choices.targets() == {parse_pos(m.args[0]) for m in builds}
    for pos in choices.targets():
        here = choices.moves_at(pos, "construct")
        assert here and all(m.kind == "construct" and parse_pos(m.args[0]) == pos for m in here)
        assert set(here) <= set(choices.moves_at(pos))
    assert choices.moves_of("end") == [Move("end")]


def test_a_survey_places_like_a_plan_but_as_the_event():
    state = first(lambda s: s.actor is not None and s.actor >= 0 and s.phase == SETUP)
    survey = replace(state, phase=EVENT, event="survey")
    seen = survey.view(survey.actor)
    choices = TricolorChoices(seen, acting=True, pile=TricolorChoices(seen, True).piles()[0])
    pos = next(iter(choices.free_cells()))
    assert choices.placing() and choices.placement(pos).kind == "survey" and choices.placement(pos) in seen.legal_moves()


def test_an_event_card_drawn_is_found_in_the_log_by_its_chance():
    asked = first(lambda s: s.actor == CHANCE and s.pending and s.pending[0][0] == "event")
    assert asked.chance().label == EVENT_DRAW  # the engine's own label for the draw
    drawn = Decided(EVENT_DRAW, Phrase(("event: Storm",)))
    other = Decided(Phrase(("turn up the top tile of pile 1",)), Phrase(("pile 1 shows an End Tile",)))
    assert event_drawn([Moved(0, phrase(Seat(0), " ends its actions")), drawn])
    assert not event_drawn([other, Moved(1, phrase(Seat(1), " draws an event card"))])
