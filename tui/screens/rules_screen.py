"""The rules of each game: the text `dicetable rules GAME` prints (tui/rules/*.md), rendered as
Markdown with its table of contents. The tabs follow the games' order on the setup screens; a
table's help (`?`, then `r`) opens the screen at the game being played. Tab goes between the
sections and the text; `c` hides the sections.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Markdown, MarkdownViewer, TabbedContent, TabPane, Tabs, Tree
from textual.widgets.markdown import MarkdownTableOfContents

from dicetable.core import registry
from dicetable.tui.rules import rules_text


TOC_WIDTH = 24  # columns of section names beside the text at 80 columns


class Sections(MarkdownTableOfContents):
    """The table of contents of a rules text: its sections (`##` headings), each name cut to fit."""

    def rebuild_table_of_contents(self, table_of_contents) -> None:
        tree = self.query_one(Tree)
        tree.clear()
        for level, name, block_id in table_of_contents:
            if level == 2:
                shown = name if len(name) <= TOC_WIDTH else name[: TOC_WIDTH - 1] + "…"
                tree.root.add_leaf(shown, {"block_id": block_id})


class RulesView(MarkdownViewer):
    """A rules text with its sections beside it (Enter or a click on one scrolls to it)."""

    def compose(self) -> ComposeResult:
        document = Markdown()
        document.can_focus = True
        yield document
        yield Sections(document)


def rules_games() -> list[str]:
    """The games with rules, in the order the setup screens list them."""
    return [name for name in registry.board_games() if registry.get(name).rules_file]


class RulesScreen(Screen):
    BINDINGS = [
        Binding("left", "other_game(-1)", "game", key_display="←→", priority=True),
        Binding("right", "other_game(1)", "next game", show=False, priority=True),
        Binding("c", "contents", "contents"),
        Binding("escape,q", "back", "back"),
    ]

    def __init__(self, game: str | None = None) -> None:
        super().__init__()
        self.game = game if game in rules_games() else rules_games()[0]
        self.contents = True  # the table of contents beside the text (c hides it)

    def compose(self) -> ComposeResult:
        with TabbedContent(id="rules-tabs", initial=f"rules-{self.game}"):
            for name in rules_games():
                yield TabPane(registry.get(name).title, id=f"rules-{name}", name=name)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Tabs).can_focus = False  # ←→ change the game; Tab goes between sections and text
        self._show(self.query_one(f"#rules-{self.game}", TabPane))

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._show(event.pane)

    def _show(self, pane: TabPane) -> None:
        """Render a game's rules when its tab is first opened (all four at once would hold the screen)."""
        if not pane.children:
            pane.mount(RulesView(rules_text(pane.name), show_table_of_contents=self.contents, classes="rules-view"))
        self.call_after_refresh(self._focus_text, pane)

    def _focus_text(self, pane: TabPane) -> None:
        """The arrows and PgUp/PgDn scroll the text (the document takes the focus once composed)."""
        documents = pane.query(Markdown)
        if documents:
            documents.first().focus()

    def action_other_game(self, step: int) -> None:
        tabs = self.query_one(TabbedContent)
        panes = [pane.id for pane in self.query(TabPane)]
        tabs.active = panes[(panes.index(tabs.active) + step) % len(panes)]

    def action_contents(self) -> None:
        """The table of contents comes and goes (the text gets the whole width without it)."""
        self.contents = not self.contents
        for viewer in self.query(MarkdownViewer):
            viewer.show_table_of_contents = self.contents

    def action_back(self) -> None:
        self.app.pop_screen()
