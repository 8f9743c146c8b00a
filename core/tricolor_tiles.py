"""Tricolor Line's pieces (tricolor-line.md, Components): 67 road tiles, 66 resource cards,
9 ID cards and 20 event cards, each piece named by a fixed identity number.

Edges are numbered clockwise N=0, E=1, S=2, W=3; a tile turned `rotation` times 90° clockwise has
its base edges moved by `rotation`. Grid y grows southward (screen rows).
"""

from __future__ import annotations

from dataclasses import dataclass

N, E, S, W = 0, 1, 2, 3
STEP = ((0, -1), (1, 0), (0, 1), (-1, 0))  # grid offset of the neighbour across each edge
COLOURS = ("R", "Y", "B")
COLOUR_NAMES = {"R": "red", "Y": "yellow", "B": "blue"}

# Base roads of each shape before turning (tricolor-line.md, Components, adaptation).
SHAPES = {"straight": (N, S), "curve": (N, E), "tee": (N, E, W), "cross": (N, E, S, W)}
SHAPE_ORDER = ("straight", "curve", "tee", "cross")
COST = {"straight": 2, "curve": 2, "tee": 3, "cross": 4}  # a dead end costs 1 (Construct)
DEAD_END_COST = 1

START, END, ROAD, DEAD = "start", "end", "road", "dead"


@dataclass(frozen=True, slots=True)
class Tile:
    id: int
    kind: str  # START, END, ROAD or DEAD
    shape: str  # "cross" for Start and End tiles
    colour: str  # "" for Start and End tiles

    @property
    def cost(self) -> int:
        return DEAD_END_COST if self.kind == DEAD else COST.get(self.shape, 0)

    @property
    def letter(self) -> str:
        """A short name for boards and logs: S, E, or colour + shape letter (+ '!' for a dead end)."""
        if self.kind == START:
            return "S"
        if self.kind == END:
            return "E"
        return self.colour + self.shape[0] + ("!" if self.kind == DEAD else "")


def _tiles() -> tuple[Tile, ...]:
    tiles = [Tile(0, START, "cross", "")]
    tiles += [Tile(len(tiles) + i, END, "cross", "") for i in range(6)]
    for kind, copies in ((ROAD, 3), (DEAD, 2)):
        for shape in SHAPE_ORDER:
            for colour in COLOURS:
                for _ in range(copies):
                    tiles.append(Tile(len(tiles), kind, shape, colour))
    return tuple(tiles)


TILES = _tiles()
START_TILE = 0
END_TILES = tuple(t.id for t in TILES if t.kind == END)
PILE_TILES = tuple(range(1, len(TILES)))  # the 66 tiles shuffled into the three piles
PILES = 3


def _edges(tile: int, rotation: int) -> frozenset[int]:
    return frozenset((e + rotation) % 4 for e in SHAPES[TILES[tile].shape])


_EDGES = tuple(tuple(_edges(t.id, r) for r in range(4)) for t in TILES)


def edges(tile: int, rotation: int) -> frozenset[int]:
    """The edges carrying a road for `tile` turned `rotation` times clockwise."""
    return _EDGES[tile][rotation % 4]


def _distinct(tile: int) -> tuple[int, ...]:
    seen, out = set(), []
    for r in range(4):
        layout = edges(tile, r)
        if layout not in seen:
            seen.add(layout)
            out.append(r)
    return tuple(out)


_DISTINCT = tuple(_distinct(t.id) for t in TILES)


def distinct_rotations(tile: int) -> tuple[int, ...]:
    """Rotations giving different road layouts (a cross has one, a straight two)."""
    return _DISTINCT[tile]


# Resource cards: 15 basic + 5 double per colour, then 6 wild (tricolor-line.md, Components).
@dataclass(frozen=True, slots=True)
class Card:
    id: int
    colour: str  # "" for a wild card
    units: int

    @property
    def kind(self) -> str:
        """R, R2 (double), ..., W (wild): cards of one kind are interchangeable."""
        if not self.colour:
            return "W"
        return self.colour + ("2" if self.units == 2 else "")

    @property
    def token(self) -> str:
        """The card as named in moves: kind and identity, e.g. `R2:17`."""
        return f"{self.kind}:{self.id}"


def _cards() -> tuple[Card, ...]:
    cards = []
    for colour in COLOURS:
        cards += [Card(len(cards) + i, colour, 1) for i in range(15)]
        cards += [Card(len(cards) + i, colour, 2) for i in range(5)]
    cards += [Card(len(cards) + i, "", 1) for i in range(6)]
    return tuple(cards)


CARDS = _cards()
KINDS = ("R", "R2", "Y", "Y2", "B", "B2", "W")
UNKNOWN = -1  # a card (or ID) the state does not know: an unknown handle


def card_from_token(token: object) -> int:
    """The identity of a card named `R2:17`; raises ValueError with a clear sentence."""
    if not isinstance(token, str) or ":" not in token:
        raise ValueError(f"{token!r} is not a card (write kind:number, e.g. R2:17)")
    kind, _, number = token.partition(":")
    if not number.isdigit() or not 0 <= int(number) < len(CARDS):
        raise ValueError(f"{token!r} is not a card: no card number {number}")
    card = CARDS[int(number)]
    if card.kind != kind.upper():
        raise ValueError(f"{token!r} is not a card: card {number} is {card.kind}")
    return card.id


def units_for(card: int, colour: str) -> int:
    """What `card` pays towards a tile of `colour` (Construct): 0 when it cannot pay."""
    c = CARDS[card]
    if not c.colour:
        return 1
    return c.units if c.colour == colour else 0


# ID cards: 3 per colour.
ID_CARDS = tuple(COLOURS[i // 3] for i in range(9))

# Events (tricolor-line.md, Events): kind, copies.
EVENTS = (
    ("demolition", 3),
    ("supply", 4),
    ("earthquake", 4),
    ("survey", 4),
    ("embargo", 2),
    ("storm", 3),
)
EVENT_NAMES = tuple(name for name, _ in EVENTS)
EVENT_COUNTS = tuple(count for _, count in EVENTS)
EVENT_TITLES = {
    "demolition": "Demolition",
    "supply": "Supply Drop",
    "earthquake": "Earthquake",
    "survey": "Survey",
    "embargo": "Embargo",
    "storm": "Storm",
}
HAND_LIMIT = 5
