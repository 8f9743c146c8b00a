"""The Tricolor Line map: the growing grid of road tiles, drawn as one widget that scrolls with its
cursor (tricolor-line.md, Components and Routes).

Each grid square is 7 × 3 cells: a margin column each side (the cursor's ┌▶└ ┐◀┘, else the road
running on to the neighbour) around a 5 × 3 body. The body draws the tile's roads from its middle to
the edges it has, in its turned direction; top-left the colour letter (R, Y, B; S the Start Tile, E an
End Tile), top-right the cost of a blueprint or ✓ on a constructed tile. The side up is told by the
glyphs, not by colour: constructed roads are double (═ ║ ╬), blueprints dashed (┄ ┆) with thin
crossings (┼); a dead end has a barrier ■ (□ on a blueprint) in its middle. Marks sit in the bottom
corners: ★ a tile of a valid route, • the last tile placed, × a tile the current event may hit,
$ a blueprint you can pay for now; a free square where a tile may go shows +, the tile being
placed is previewed at the cursor as a dotted ghost. Colours live in tui/screens/tricolor.tcss.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from textual import events
from textual.message import Message
from textual.reactive import reactive

from dicetable.core.tricolor_tiles import DEAD, END, START, TILES, E, N, S, W, edges
from dicetable.tui.widgets.drawn import DrawnWidget

CELL_WIDTH, CELL_HEIGHT = 7, 3
Pos = tuple[int, int]

# The middle glyph for each set of road edges: constructed (double) and blueprint (thin).
_BUILT = {
    frozenset({N, S}): "║", frozenset({E, W}): "═", frozenset({N, E}): "╚", frozenset({E, S}): "╔",
    frozenset({S, W}): "╗", frozenset({N, W}): "╝", frozenset({N, E, W}): "╩", frozenset({E, S, W}): "╦",
    frozenset({N, E, S}): "╠", frozenset({N, S, W}): "╣", frozenset({N, E, S, W}): "╬",
}
_PLAN = {
    frozenset({N, S}): "│", frozenset({E, W}): "─", frozenset({N, E}): "└", frozenset({E, S}): "┌",
    frozenset({S, W}): "┐", frozenset({N, W}): "┘", frozenset({N, E, W}): "┴", frozenset({E, S, W}): "┬",
    frozenset({N, E, S}): "├", frozenset({N, S, W}): "┤", frozenset({N, E, S, W}): "┼",
}
ROAD_GLYPHS = {True: ("║", "═"), False: ("┆", "┄")}  # (vertical, horizontal) by constructed side
GHOST_GLYPHS = ("╎", "╌")
MARKS = {"route": "★", "last": "•", "target": "×", "pay": "$"}


@dataclass(frozen=True)
class TileLook:
    """One grid square as the map shows it."""

    tile: int = -1  # the tile's identity, -1 for a free square
    rotation: int = 0
    built: bool = False  # constructed side up (Start and End tiles always are)
    marks: tuple[str, ...] = ()  # keys of MARKS, strongest first; "free" on a square a tile may go
    ghost: bool = False  # the tile being placed, previewed here


def tile_rows(look: TileLook) -> list[str]:
    """The square's 5-cell body as three strings (the margins are drawn by the map)."""
    if look.tile < 0:
        middle = "+" if "free" in look.marks else " "
        return ["     ", f"  {middle}  ", "     "]
    tile = TILES[look.tile]
    roads = edges(look.tile, look.rotation)
    constructed = look.built or tile.kind in (START, END)
    vertical, horizontal = GHOST_GLYPHS if look.ghost else ROAD_GLYPHS[constructed]
    if tile.kind == DEAD:
        centre = "■" if constructed else "□"
    else:
        centre = (_BUILT if constructed and not look.ghost else _PLAN)[frozenset(roads)]
    letter = {START: "S", END: "E"}.get(tile.kind, tile.colour)
    corner = "✓" if constructed and tile.kind not in (START, END) else str(tile.cost) if tile.cost and not constructed else " "
    if look.ghost:
        corner = "?"
    top = letter + " " + (vertical if N in roads else " ") + " " + corner
    middle = (horizontal * 2 if W in roads else "  ") + centre + (horizontal * 2 if E in roads else "  ")
    signs = [MARKS[m] for m in look.marks if m in MARKS]
    left = signs[0] if signs else " "
    right = signs[1] if len(signs) > 1 else " "
    bottom = left + " " + (vertical if S in roads else " ") + " " + right
    return [top, middle, bottom]


class TileMap(DrawnWidget):
    """The whole visible part of the map in one render. `cells` maps a grid position (x, y) to its
    look (y grows southward); the view scrolls so the cursor stays inside. `Pressed` names the
    square clicked."""

    COMPONENT_CLASSES = {
        "map--R",
        "map--Y",
        "map--B",
        "map--plain",
        "map--blueprint",
        "map--ghost",
        "map--free",
        "map--empty",
        "map--cursor",
        "map--mark",
        "map--hover",
        "map--edge",
    }

    cells: reactive[dict] = reactive(dict, always_update=True)
    cursor: reactive[Pos | None] = reactive(None)
    hover: reactive[Pos | None] = reactive(None)

    class Pressed(Message):
        """A square was clicked."""

        def __init__(self, tile_map: "TileMap", pos: Pos) -> None:
            super().__init__()
            self.tile_map = tile_map
            self.pos = pos

        @property
        def control(self) -> "TileMap":
            return self.tile_map

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.origin: Pos = (-3, -3)  # the grid position drawn top-left
        self._lines = None
        self._centred = False

    def show(self, cells: dict[Pos, TileLook], cursor: Pos | None) -> None:
        self.cursor = cursor
        self.cells = cells
        self.follow()

    # -- the viewport --------------------------------------------------------------------------
    def span(self) -> tuple[int, int]:
        """How many squares fit across and down."""
        return max(1, self.size.width // CELL_WIDTH), max(1, self.size.height // CELL_HEIGHT)

    def follow(self) -> None:
        """Scroll so the cursor (else the Start Tile) is inside the view, with a square to spare."""
        if not self.size.width or not self.size.height:
            return  # not laid out yet: the first resize centres the view
        across, down = self.span()
        x, y = self.cursor if self.cursor is not None else (0, 0)
        ox, oy = self.origin
        spare_x, spare_y = (1 if across > 2 else 0), (1 if down > 2 else 0)
        if x < ox + spare_x:
            ox = x - spare_x
        elif x > ox + across - 1 - spare_x:
            ox = x - across + 1 + spare_x
        if y < oy + spare_y:
            oy = y - spare_y
        elif y > oy + down - 1 - spare_y:
            oy = y - down + 1 + spare_y
        if (ox, oy) != self.origin:
            self.origin = (ox, oy)
            self._lines = None
            self.refresh()

    def centre(self, pos: Pos = (0, 0)) -> None:
        across, down = self.span()
        self.origin = (pos[0] - across // 2, pos[1] - down // 2)
        self._lines = None
        self.refresh()

    def pan(self, dx: int, dy: int) -> None:
        self.origin = (self.origin[0] + dx, self.origin[1] + dy)
        self._lines = None
        self.refresh()

    def pos_at(self, x: int, y: int) -> Pos | None:
        across, down = self.span()
        col, row = x // CELL_WIDTH, y // CELL_HEIGHT
        if not (0 <= col < across and 0 <= row < down):
            return None
        return self.origin[0] + col, self.origin[1] + row

    def offset_of(self, pos: Pos) -> tuple[int, int]:
        """The widget offset of the middle of square `pos` (for clicks in tests and tools)."""
        return (pos[0] - self.origin[0]) * CELL_WIDTH + CELL_WIDTH // 2, (pos[1] - self.origin[1]) * CELL_HEIGHT + 1

    # -- drawing -------------------------------------------------------------------------------
    def watch_cells(self) -> None:
        self._lines = None

    def watch_cursor(self) -> None:
        self._lines = None

    def watch_hover(self) -> None:
        self._lines = None

    def on_resize(self) -> None:
        self._lines = None
        if not self._centred:
            self._centred = True
            self.centre((0, 0))  # the Start Tile in the middle, where the map grows from
        self.follow()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines = None

    def lines(self) -> list[list[tuple[str, Style]]]:
        if self._lines is not None:
            return self._lines
        base, styles = self.rich_style, {}

        def style(name: str) -> Style:
            if name not in styles:
                styles[name] = base + self.get_component_rich_style(name, partial=True)
            return styles[name]

        across, down = self.span()
        rows: list[list[tuple[str, Style]]] = []
        for r in range(down):
            band: list[list[tuple[str, Style]]] = [[], [], []]
            for c in range(across):
                pos = (self.origin[0] + c, self.origin[1] + r)
                for line, parts in enumerate(self._square(pos, style)):
                    band[line] += parts
            rows += band
        self._lines = rows
        return rows

    def _square(self, pos: Pos, style) -> list[list[tuple[str, Style]]]:
        look = self.cells.get(pos, TileLook())
        body_rows = tile_rows(look)
        if look.tile < 0:
            body = style("map--free" if "free" in look.marks else "map--empty")
        else:
            tile = TILES[look.tile]
            body = style(f"map--{tile.colour}" if tile.colour else "map--plain")
            constructed = look.built or tile.kind in (START, END)
            if look.ghost:
                body = body + style("map--ghost")
            elif not constructed:
                body = body + style("map--blueprint")
        if self.hover == pos:
            body = body + style("map--hover")
        cursor = pos == self.cursor
        if cursor:
            margins = (("┌", "┐"), ("▶", "◀"), ("└", "┘"))
            edge = style("map--cursor")
        else:
            roads = edges(look.tile, look.rotation) if look.tile >= 0 else frozenset()
            constructed = look.tile >= 0 and (look.built or TILES[look.tile].kind in (START, END))
            run = ROAD_GLYPHS[constructed][1]
            margins = ((" ", " "), (run if W in roads else " ", run if E in roads else " "), (" ", " "))
            edge = style("map--edge")
        drawn = []
        for line in range(CELL_HEIGHT):
            left, right = margins[line]
            text = body_rows[line]
            if line == 2 and look.tile >= 0 and any(m in MARKS for m in look.marks):
                mark = style("map--mark")
                drawn.append([(left, edge), (text[0], body + mark), (text[1:4], body), (text[4], body + mark), (right, edge)])
            else:
                drawn.append([(left, edge), (text, body), (right, edge)])
        return drawn

    # -- the mouse -----------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        pos = self.pos_at(event.x, event.y)
        if pos is not None:
            self.post_message(self.Pressed(self, pos))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hover = self.pos_at(event.x, event.y)

    def on_leave(self, event: events.Leave) -> None:
        self.hover = None

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.pan(0, -1)
        event.stop()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.pan(0, 1)
        event.stop()
