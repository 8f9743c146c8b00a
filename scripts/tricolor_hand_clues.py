#!/usr/bin/env python3
"""How Tricolor Line builders' hands differ from the cards their rivals cannot see: the source of
`KEEP_CLUE` in core/tricolor_bots.py, which the search bot's sampled worlds use to fill hidden hands.

Plays four-seat games of `greedy` against itself; at the start of every turn, for every other seat,
counts the kinds of card in that seat's hand (its own colour with 1 or 2 units, another colour with 1
or 2, wild) and the same kinds among every card the turn's player cannot see (the deck and the other
hands). Prints each kind's share of the hands divided by its share of the unseen cards: above 1, a
hidden card of that kind is likelier in a hand than in the deck.

    .venv/bin/python scripts/tricolor_hand_clues.py [--games 150] [--seed 7777]
"""

from __future__ import annotations

import argparse
import random
from collections import Counter

from dicetable.core import registry
from dicetable.core.chance import LocalSource
from dicetable.core.game import CHANCE
from dicetable.core.match import advance
from dicetable.core.tricolor_bots import KEEP_CLUE, card_kind
from dicetable.core.tricolor_tiles import CARDS, ID_CARDS


def measure(games: int, seed: int) -> dict[str, float]:
    game = registry.get("tricolor")
    held, unseen = Counter(), Counter()
    for number in range(games):
        base = seed * 1_000_003 + number * 7919
        bots = [game.bots["greedy"](game, random.Random(base + 1 + s)) for s in range(4)]
        source = LocalSource(random.Random(base))
        state = game.new(4, game.resolve_options(None))
        while state.actor is not None:
            if state.phase == "draw" and state.actor != CHANCE:
                seen = set(state.discards) | set(state.hands[state.turn])
                hidden = [c for c in range(len(CARDS)) if c not in seen]
                for seat in range(state.seats):
                    if seat != state.turn:
                        colour = ID_CARDS[state.ids[seat]]
                        held.update(card_kind(c, colour) for c in state.hands[seat])
                        unseen.update(card_kind(c, colour) for c in hidden)
            state, _ = advance(state, bots, source)
    held_total, unseen_total = sum(held.values()), sum(unseen.values())
    return {kind: (held[kind] / held_total) / (unseen[kind] / unseen_total) for kind in KEEP_CLUE}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7777)
    args = parser.parse_args()
    ratios = measure(args.games, args.seed)
    print(f"{'kind':8} {'measured':>9} {'KEEP_CLUE':>10}")
    for kind, ratio in ratios.items():
        print(f"{kind:8} {ratio:9.3f} {KEEP_CLUE[kind]:10.3f}")


if __name__ == "__main__":
    main()
