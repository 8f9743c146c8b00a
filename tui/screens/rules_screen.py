"""The rules of each game: exactly the text `dicetable rules GAME` prints (tui/rules/*.md).

The file is shown as it is written, headings in bold: a Markdown renderer would change the text
(it drops the "." of numbered items, the marks of *(adaptation)*, the table rules), and the rules
documents say the screen shows the same text.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from dicetable.core import registry
from dicetable.tui.rules import rules_text


def rules_shown(text: str) -> Text:
    """The rules text unchanged, its heading lines in bold."""
    shown = Text(text)
    start = 0
    for line in text.splitlines(keepends=True):
        if line.startswith("#"):
            shown.stylize("bold", start, start + len(line.rstrip()))
        start += len(line)
    return shown


class RulesScreen(Screen):
    BINDINGS = [
        Binding("left", "other_game(-1)", "game", key_display="←→", priority=True),
        Binding("right", "other_game(1)", "next game", show=False, priority=True),
        Binding("escape,q", "back", "back"),
    ]

    def compose(self) -> ComposeResult:
        with TabbedContent(id="rules-tabs"):
            for name in registry.names():
                game = registry.get(name)
                if game.rules_file:
                    with TabPane(game.title, id=f"rules-{name}"):
                        yield VerticalScroll(classes="rules-scroll", name=name)
        yield Footer()

    def on_mount(self) -> None:
        self._show(self.query(".rules-scroll").first())

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._show(event.pane.query(".rules-scroll").first())

    def _show(self, scroll: VerticalScroll) -> None:
        """Render a game's rules when its tab is first opened (all at once costs seconds)."""
        if not scroll.children:
            scroll.mount(Static(rules_shown(rules_text(scroll.name)), classes="rules-text"))
        scroll.focus()

    def action_other_game(self, step: int) -> None:
        tabs = self.query_one(TabbedContent)
        panes = [pane.id for pane in self.query(TabPane)]
        tabs.active = panes[(panes.index(tabs.active) + step) % len(panes)]

    def action_back(self) -> None:
        self.app.pop_screen()
