"""The fairness panel: every random event, each seat's reveal with a check mark (or the fault).

It takes the `FairEvent` list of a `TableView`: a local table lists its events as local and
unverified (the dice come from this computer); a network table lists each seat's reveal with
✓ (checked against its commitment), … (still due) or ✗ and the fault, plus the transcript path (served
over SSH: where it is in the player's folder and how to download it).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dicetable.core.phrase import seat_name
from dicetable.tui.tables.view import FAULT, OUT, LOCAL, VERIFIED, WAITING, FairEvent, TableView

SIGN = {VERIFIED: "✓", WAITING: "…", FAULT: "✗", LOCAL: "·", OUT: "–"}
STATUS_WORDS = {
    VERIFIED: "verified",
    WAITING: "waiting for reveals",
    FAULT: "FAULT",
    LOCAL: "local, unverified",
}


def event_text(event: FairEvent, names: list[str], style=lambda status: "") -> Text:
    """One event in words, seats by `names`; `style(status)` gives the Rich style of a status (from the .tcss)."""
    text = Text()
    text.append(f"#{event.number} {event.label.words(names)} ", "bold")
    text.append(f"{SIGN.get(event.status, '?')} {STATUS_WORDS.get(event.status, event.status)}\n",
                style(event.status))
    for reveal in event.reveals:
        text.append(f"   {SIGN.get(reveal.status, '?')} {seat_name(reveal.seat, names)}", style(reveal.status))
        text.append(f" {reveal.detail}\n" if reveal.detail else "\n", "dim")
    if event.outcome:
        text.append(f"   → {event.outcome.words(names)}\n")
    return text


class FairnessPanel(VerticalScroll):
    COMPONENT_CLASSES = {f"fair--{status}" for status in SIGN}

    def compose(self) -> ComposeResult:
        yield Static(id="fair-head")
        yield Static(id="fair-verify")  # under the head: seen at once, however many events follow
        yield Static(id="fair-events")

    def show(self, view: TableView) -> None:
        key = (view.network, view.transcript, view.events, tuple(view.names))
        if key == getattr(self, "_shown", None):
            return  # unchanged: spare the layout pass an update costs
        self._shown = key
        if view.network:
            from dicetable.tui.tables.lobby import shown_path  # served tables only: a local table's first frame waits for no lobby

            head = Text.assemble(
                Text.from_markup("[@click=screen.verify][u]verify now[/u][/] (v)"),
                f" · transcript: {shown_path(view.transcript) if view.transcript else '(none yet)'}",
            )
        else:
            head = "Local game: dice from this computer's random numbers, not verifiable."
        self.query_one("#fair-head", Static).update(head)
        body = Text()
        for event in view.events:
            body.append_text(event_text(event, view.names, self._status_style))
        if not view.events:
            body.append("no random events yet\n", "dim")
        self.query_one("#fair-events", Static).update(body)

    def _status_style(self, status: str):
        if status not in SIGN:
            return ""
        return self.get_component_rich_style(f"fair--{status}", partial=True)

    def show_verdict(self, line: str) -> None:
        self.query_one("#fair-verify", Static).update(Text.assemble(("verify: ", "bold"), line))
        self.scroll_home(animate=False)
