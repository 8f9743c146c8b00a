"""Everything fits 80 × 24: every screen and dialog of the app, drawn at that size with names as
long as people choose (NAMES), shows each line whole — no text cut by an edge, no footer key
covered or pushed off, no screen that needs a scrollbar — and a toast never covers a status line,
a line of keys, a dialog's buttons, the TRICE board and pool, or the lobby's trust and invitation lines.

`cut_lines(screen)` is the check. A screen passes when, for every widget shown on it:
- it lies inside the terminal and inside the widget that holds it (unless that one scrolls);
- its text needs no more lines than it has and, where text is never wrapped (labels, radio buttons,
  the lines of keys), no more columns; its border's title and subtitle fit the border;
- a log never needs a sideways scrollbar; the screen itself never scrolls;
- the footer's keys lie side by side within the footer.
"""

import random
import subprocess
import sys

import pytest
from rich.cells import cell_len
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.widgets import Button, Footer, Input, RichLog
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

from dicetable.core import registry
from dicetable.core.game import CHANCE
from dicetable.net.identity import Profile
from dicetable.tui.app import DiceTableApp
from dicetable.tui.screens.dialogs import GameOverDialog, HelpDialog
from dicetable.tui.screens.tricolor_dialogs import ChoiceDialog, PassKeyboardScreen, ScoreDialog
from dicetable.tui.tables.controller import LocalTable, Player
from dicetable.tui.tables.history import record_local
from dicetable.tui.tables.view import SeatLine
from dicetable.tui.widgets.arena import ActionLine, ArenaView
from dicetable.tui.widgets.board import BoardGrid, PoolTray
from dicetable.tui.widgets.tile_map import TileMap
from dicetable.tui.widgets.triad_board import TriadBoard
from tui_pilot import wait_until

pytestmark = pytest.mark.usefixtures("quick_idle")  # Pilot's idle waits capped (conftest.py)

SIZE = (80, 24)
# Names as long as people choose them (the longest at 16; the profile allows 32, and such a name
# ends in … where a line has no room for it).
NAMES = ("Bartholomew Hale", "Maximiliana R.", "Christopherson", "Genevieve Stone", "Alexandra Bell",
         "Theodora Quinn", "Sebastian Moore", "Evangeline Fox")


# -- the check -----------------------------------------------------------------------------------
def _scrolls(widget) -> bool:
    return bool(getattr(widget, "allow_vertical_scroll", False) or getattr(widget, "allow_horizontal_scroll", False))


def _scrolled(widget, screen) -> bool:
    """Inside a container that scrolls: what is out of its view is reached by scrolling, not cut."""
    node = widget.parent
    while node is not None and node is not screen:
        if _scrolls(node):
            return True
        node = node.parent
    return False


def _name(widget) -> str:
    return f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__


def cut_lines(screen) -> list[str]:
    """What is cut on `screen` as drawn now, in words (empty: everything fits)."""
    found = []
    width, height = screen.app.size
    terminal = Region(0, 0, width, height)
    if screen.max_scroll_x or screen.max_scroll_y:
        found.append(f"{type(screen).__name__} is larger than the terminal: it scrolls")
    for widget in screen.walk_children(with_self=False):
        if not widget.display or not widget.visible or not widget.region.area:
            continue
        if any(not node.display for node in widget.ancestors if node is not screen and hasattr(node, "display")):
            continue
        name, inside = _name(widget), _scrolled(widget, screen)
        parent = widget.parent
        if not inside and not terminal.contains_region(widget.region):
            found.append(f"{name} at {widget.region} runs off the terminal")
        elif (not inside and parent is not screen and parent.region.area and widget.styles.dock == "none"
              and not isinstance(widget, Toast) and not parent.region.contains_region(widget.region)):
            found.append(f"{name} at {widget.region} runs out of {_name(parent)} at {parent.region}")
        for label in (widget.border_title, widget.border_subtitle):
            if label and cell_len(str(label)) > widget.region.width - 4:
                found.append(f"{name}: its border's label {str(label)!r} is cut")
        if isinstance(widget, RichLog) and widget.max_scroll_x:
            found.append(f"{name} has lines wider than its panel")
        if widget.is_container or isinstance(widget, (ScrollView, Input)) or inside:
            continue
        box = widget.content_region
        if not box.width or not box.height:
            continue
        container, viewport = parent.content_size, Size(width, height)
        lines = widget.get_content_height(container, viewport, box.width)
        if lines > box.height:
            found.append(f"{name}: {lines} lines of text in {box.height}")
        if widget.styles.text_wrap == "nowrap" and widget.get_content_width(container, viewport) > box.width:
            found.append(f"{name}: a line {widget.get_content_width(container, viewport)} wide in {box.width}")
    for footer in screen.query(Footer):
        keys = [key for key in footer.query(FooterKey) if key.display and key.region.area]
        if keys and (max(key.region.right for key in keys) > footer.region.right or footer.max_scroll_x):
            found.append("the footer's keys run past its end")
        for i, key in enumerate(keys):
            if any(key.region.overlaps(other.region) for other in keys[i + 1:]):
                found.append(f"the footer's key {key.key!r} is covered by another")
    return found


# What a player reads before they act: never under a toast, even for its few seconds.
KEPT_CLEAR = ("#status", Button, Footer, BoardGrid, PoolTray, TriadBoard, ArenaView, TileMap, "#lobby-trust",
              "#lobby-invitations")


def toasts_in_the_way(screen) -> list[str]:
    """Toasts drawn over KEPT_CLEAR (a status line, a dialog's buttons, the footer, the TRICE board and
    pool, the lobby's trust and invitation lines) or a line of keys."""
    keys = [line for line in screen.query(ActionLine) if any(action for _, action, _ in line.pieces)]
    kept_clear = [widget for kind in KEPT_CLEAR for widget in screen.query(kind)] + keys
    kept_clear = [w for w in kept_clear if w.display and w.region.area]
    shown = []  # what of each toast is drawn: the toast rack clips the toasts that do not fit it
    for toast in screen.query(Toast):
        place = screen.find_widget(toast)
        drawn = place.region.intersection(place.clip)
        if drawn.area:
            shown.append(drawn)
    return [f"a toast covers {_name(widget)}" for toast in shown for widget in kept_clear if toast.overlaps(widget.region)]


class Seen:
    """The cuts found on every screen shown, by what was shown (all reported at once at the end)."""

    def __init__(self) -> None:
        self.cuts: dict[str, list[str]] = {}

    async def look(self, pilot, what: str, toasts: bool = True) -> None:
        await pilot.pause()
        await pilot.pause()
        screen = pilot.app.screen
        found = cut_lines(screen)
        if toasts:  # three toasts at once, as a busy table sends them (the table's own cleared first)
            pilot.app.clear_notifications()
            await wait_until(pilot, lambda: not screen.query(Toast))
            for n in range(3):
                pilot.app.notify(f"Round over: {NAMES[0]} +3 (three of a kind); {NAMES[1]} two pairs · {n}",
                                 title="Round over", timeout=30)
            kept = min(3, getattr(screen, "TOASTS_KEPT", 3))  # a rack keeps what it holds whole, the newest
            await wait_until(pilot, lambda: len(screen.query(Toast)) == kept)
            await pilot.pause()
            found += toasts_in_the_way(screen)
            pilot.app.clear_notifications()
            await pilot.pause()
        if found:
            self.cuts[f"{what} ({type(screen).__name__})"] = found

    def assert_none(self) -> None:
        assert not self.cuts, "\n".join(f"{what}: {'; '.join(found)}" for what, found in self.cuts.items())


# -- tables in given states ------------------------------------------------------------------------
class LookingNetworked(LocalTable):
    """A local table drawn as a network table is (remote seats with fingerprints, a transcript, the
    chat tab), so its screens are measured without sockets."""

    network = True

    def view(self):
        from dataclasses import replace

        view = super().view()
        seats = tuple(SeatLine(seat.name, "human" if s == 0 else "remote", "this terminal" if s == 0 else "peer",
                               Profile.generate("x").fingerprint, connected=s != 1)
                      for s, seat in enumerate(view.seats))
        return replace(view, network=True, seats=seats, local_seats=frozenset({0}),
                       transcript="/home/someone/.local/share/dicetable/transcripts/20261123-193632-7fd9e009-seat0.dtt")


def played(game: str, seats: int, moves: int, people: int = 1, seed: int = 3, kind=LocalTable,
           options=None) -> LocalTable:
    """A table of `game` after `moves` moves of its people (chosen by a greedy bot on their view);
    seat 0 and the next `people - 1` seats are people, the others greedy bots."""
    info = registry.get(game)
    players = [Player(NAMES[s]) if s < people else Player(f"{NAMES[s].split()[0]} bot", "greedy") for s in range(seats)]
    table = kind(info, players, seed=seed, bot_delay=0, options=options)
    table.attach(None)  # no screen: the bots answer at once
    chooser = info.bots["greedy"](info, random.Random(seed))
    for _ in range(moves):
        actor = table.state.actor
        if table.state.result is not None or actor is None or actor == CHANCE:
            break
        table.submit(chooser.choose(table.state.view(actor)))
    return table


async def look_at_table(seen: Seen, table: LocalTable, what: str) -> None:
    """The table's screen, its help, its fairness panel after `v`, and the dialogs it opens."""
    app = DiceTableApp(table, bot_delay=0)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None or
                         isinstance(app.screen, (PassKeyboardScreen, GameOverDialog, ScoreDialog)))
        if isinstance(app.screen, PassKeyboardScreen):
            await seen.look(pilot, f"{what}: pass the keyboard")
            await pilot.press("enter")
            await wait_until(pilot, lambda: not isinstance(app.screen, PassKeyboardScreen))
        if isinstance(app.screen, (GameOverDialog, ScoreDialog)):
            await seen.look(pilot, f"{what}: the game's end")
            await pilot.press("escape")
        await seen.look(pilot, what)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpDialog))
        await seen.look(pilot, f"{what}: help", toasts=False)
        await pilot.press("x")
        await pilot.press("f", "v")
        await seen.look(pilot, f"{what}: fairness panel, verified")
        await pilot.press("m")
        await seen.look(pilot, f"{what}: moves")


# -- the tests -------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("game, seats", [("trice", 2), ("triad", 2), ("dicebreaker", 2), ("dicebreaker", 6),
                                         ("tricolor", 2), ("tricolor", 8)])
async def test_every_table_fits_from_start_to_end(game, seats):
    seen = Seen()
    for moves in (0, 5, 25, 400):  # the start, early, well on, the end
        await look_at_table(seen, played(game, seats, moves), f"{game} against bots after {moves} moves")
    await look_at_table(seen, played(game, seats, 12, people=seats), f"{game} hot-seat after 12 moves")
    await look_at_table(seen, played(game, seats, 12, kind=LookingNetworked), f"{game} at a network table")
    seen.assert_none()


@pytest.mark.parametrize("game", ["trice", "tricolor"])
async def test_a_busy_table_keeps_its_newest_toasts_whole(game):
    """More notices than the rack holds: the oldest give way, and the newest is drawn whole (a rack
    clips what does not fit it, and the newest toast is the one it would cut)."""
    app = DiceTableApp(played(game, 2, 0), bot_delay=0)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None)
        screen = app.screen
        app.clear_notifications()
        await wait_until(pilot, lambda: not screen.query(Toast))
        for n in range(6):
            app.notify(f"{NAMES[n % 2]} ends turn {n}", title="Turn over", timeout=30)
        shown = lambda: [str(toast._notification.message) for toast in screen.query(Toast)]  # noqa: E731
        await wait_until(pilot, lambda: any("turn 5" in text for text in shown()))
        await pilot.pause()
        assert 1 < len(shown()) < 6 and "turn 5" in shown()[-1], shown()
        for toast in screen.query(Toast):
            place = screen.find_widget(toast)
            assert place.region.intersection(place.clip) == place.region, f"{toast._notification.message!r} is cut"


@pytest.mark.slow
async def test_the_dice_breaker_score_board_fits_its_longest_hand():
    """The side panel names each seat's hand (all of them up to four seats): "three of a kind" is the
    longest it can show."""
    from dicetable.core import dicebreaker_hands as hands

    seen, info = Seen(), registry.get("dicebreaker")
    table = LocalTable(info, [Player(NAMES[s]) for s in range(4)], seed=8, bot_delay=0)
    chooser = info.bots["greedy"](info, random.Random(8))
    longest = lambda state: state.arena and any(hands.category(state.hand(s)) == "three of a kind" for s in range(4))
    while table.state.result is None and not longest(table.state):
        table.submit(chooser.choose(table.state.view(table.state.actor)))
    assert table.state.result is None
    await look_at_table(seen, table, "Dice Breaker with three of a kind on the board")
    seen.assert_none()


@pytest.mark.slow
async def test_tricolor_dialogs_fit():
    seen = Seen()
    info = registry.get("tricolor")
    for stop, what in ((lambda s: s.phase == "discard" and s.seat == 0, "discarding"),
                       (lambda s: s.phase == "act" and s.seat == 0 and len(s.hands[0]) >= 3, "acting")):
        table = LocalTable(info, [Player(NAMES[0])] + [Player(f"bot {n}", "greedy") for n in range(1, 4)],
                           seed=5, bot_delay=0)
        chooser = info.bots["greedy"](info, random.Random(5))
        table.attach(None)  # no screen: the bots answer at once
        while table.state.result is None and not stop(table.state):
            table.submit(chooser.choose(table.state.view(0)))
        app = DiceTableApp(table, bot_delay=0)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None)
            assert table.state.result is None, "the game ended before the dialog's moment"
            await pilot.press("d" if what == "discarding" else "a")
            await wait_until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
            await seen.look(pilot, f"Tricolor: the {what} dialog")
    seen.assert_none()


@pytest.mark.slow
async def test_the_dice_room_fits():
    seen = Seen()
    room = registry.get("diceroom")
    for kind in (LocalTable, LookingNetworked):  # (a local table has turns: the room takes rolls in turn)
        table = kind(room, [Player(NAMES[0])] + ([Player(NAMES[1], "roller")] if kind is LookingNetworked else []),
                     seed=1, bot_delay=0)
        app = DiceTableApp(table, bot_delay=0)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await wait_until(pilot, lambda: getattr(app.screen, "view", None) is not None)
            await seen.look(pilot, "the dice room, no roll yet")
            for expr in ("d20", "3d6", "4d6kh3+12", "10d10"):
                await pilot.press(*expr, "enter")
            await seen.look(pilot, f"the dice room after rolls ({kind.__name__})")
            await pilot.press("f4")
            await seen.look(pilot, "the dice room's dice at a glance")
            await pilot.press("escape", "f", "v")
            await seen.look(pilot, "the dice room's fairness panel")
    seen.assert_none()


@pytest.mark.slow
async def test_every_screen_from_home_fits(tmp_path, home):
    seen = Seen()
    Profile.generate(NAMES[0]).save(home)
    record_local(home / "history.jsonl", "trice", NAMES[:2], f"{NAMES[0]} wins (Trice)", (), 1)
    app = DiceTableApp(ask_name=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await seen.look(pilot, "home")
        for keys, what in ((("b",), "play a bot"), (("b", "down", "enter"), "play a bot: TRIAD"),
                           (("b", "down", "down", "enter"), "play a bot: Dice Breaker"),
                           (("s",), "hot-seat"), (("h",), "host a table"), (("j",), "join a table"),
                           (("d",), "dice room"), (("d", "h"), "host a dice room"), (("p",), "profile"),
                           (("c",), "resume"), (("g",), "history"), (("g", "enter"), "a game in the history"),
                           (("l",), "LAN tables"), (("r",), "rules: TRICE"), (("r", "right"), "rules: TRIAD"),
                           (("r", "right", "right"), "rules: Dice Breaker"),
                           (("r", "left"), "rules: Tricolor Line"), (("r", "c"), "rules without contents")):
            app.browse_lan = False
            await pilot.press(*keys)
            await pilot.pause(0.3)
            await seen.look(pilot, what)
            if what == "LAN tables":  # every key the list has, watch too, in the footer's 80 columns
                shown = [key.description for key in app.screen.query(FooterKey) if key.display and key.region.area]
                assert sorted(shown) == ["back", "game", "join", "play anyone", "watch"], shown
            while len(app.screen_stack) > 1:  # back home (the stack: home, the default screen)
                await pilot.press("escape")
                await pilot.pause()
    seen.assert_none()


class Waiting:
    """A hosted table that waits for its second player: the waiting room's table, without sockets."""

    role = "host"
    invite = "dt1-" + "ar7qaaabsi7skncxknpciowwjpa64vb2eztrvaam7srherawier3io44svsyqyjirntdpix6dum257zgqnpx5tuh"

    game = registry.get("tricolor")

    def view(self):
        from dicetable.tui.tables.view import TableView

        seats = (SeatLine(NAMES[0], "human", "this terminal", Profile.generate("x").fingerprint),
                 SeatLine("seat 1", "free", "free: waiting for a player", connected=False))
        return TableView(self.game, None, seats, frozenset({0}), network=True, note="Waiting for players: 1 of 2 seated")

    def attach(self, target) -> None:
        from dicetable.tui.tables.messages import TableChanged

        target.post_message(TableChanged(self.view()))

    def close(self) -> None:
        pass


async def test_the_waiting_room_fits(home):
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen

    seen = Seen()
    app = DiceTableApp()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.push_screen(WaitingRoomScreen(Waiting()))
        shown = lambda: app.screen.query("#room-invite-code") and "dt1-" in str(app.screen.query_one("#room-invite-code").render())
        await wait_until(pilot, shown)
        await seen.look(pilot, "the waiting room")
        await pilot.press("c")  # the copy's honest words, as a toast
        await seen.look(pilot, "the waiting room, the invite copied", toasts=False)
    seen.assert_none()


async def test_the_invite_is_one_line_at_80_columns_and_copies_whole(home):
    """Wrapped over two screen lines, a code copied from the terminal breaks: the room shows it on one
    line (cut with … where it is longer), c copies it whole, and its file holds it whole."""
    from dicetable.tui.screens.waiting_room_screen import INVITE_FILE, WaitingRoomScreen

    app = DiceTableApp()
    copied = []
    app.copy_to_clipboard = copied.append  # what the terminal is asked to copy (OSC 52)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.push_screen(WaitingRoomScreen(Waiting()))
        line = lambda: app.screen.query_one("#room-invite-code")
        await wait_until(pilot, lambda: app.screen.query("#room-invite-code") and line().text)
        await pilot.pause()
        shown = str(line().render())
        assert line().region.height == 1 and len(shown) == line().region.width <= SIZE[0]
        assert shown == Waiting.invite[:len(shown) - 1] + "…"  # one line, visibly cut, never wrapped
        where = str(app.screen.query_one("#room-invite-file").render())
        assert (home / INVITE_FILE).read_text() == Waiting.invite + "\n" and str(home / INVITE_FILE) in where
        await pilot.press("c")
        assert copied == [Waiting.invite]
    app = DiceTableApp()
    async with app.run_test(size=(120, 24)) as pilot:  # a wider terminal: the whole invite
        app.push_screen(WaitingRoomScreen(Waiting()))
        await wait_until(pilot, lambda: app.screen.query("#room-invite-code") and
                         str(app.screen.query_one("#room-invite-code").render()) == Waiting.invite)


async def test_the_lobby_fits_and_an_invitation_hides_none_of_its_trust_text(tmp_path, home, monkeypatch):
    """A served app's lobby (tui/screens/lobby_screen.py) as someone invites its player: the invitation's
    toast, and any other, leaves readable what the player accepts (whose host, whose key, which game)."""
    from dicetable.tui.screens.lobby_screen import LobbyScreen
    from dicetable.tui.tables.lobby import SERVED_ENV, Lobby

    monkeypatch.setenv(SERVED_ENV, str(tmp_path / "served-lobby"))
    Profile.generate(NAMES[0]).save(home)
    other_app = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # shown while it runs
    try:
        other = Lobby(tmp_path / "served-lobby", str(other_app.pid))
        other.announce(NAMES[1], Profile.generate(NAMES[1]).fingerprint, "waiting for players: Tricolor Line")
        seen, app = Seen(), DiceTableApp()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen) and app.screen.people)
            other.invite(app.served.lobby.me, NAMES[1], "trice", "TRICE", "dt1-xyz")
            invited = lambda: any(toast._notification.title == "Invitation" for toast in app.screen.query(Toast))
            await wait_until(pilot, invited)
            await pilot.pause()
            assert not toasts_in_the_way(app.screen), toasts_in_the_way(app.screen)
            await seen.look(pilot, "the lobby, invited")
            shown = [key.description for key in app.screen.query(FooterKey) if key.display and key.region.area]
            assert sorted(shown) == ["accept", "invite", "join", "menu", "play anyone", "resume", "watch"], shown
    finally:
        other_app.kill()
        other_app.wait()
    seen.assert_none()


async def test_a_served_home_heads_its_menu_with_the_lobby_and_keeps_its_key_in_the_footer(tmp_path, home, monkeypatch):
    """Served over SSH, the lobby is the home menu's first line, aligned with the others, and `o` is
    in the footer, which still fits 80 columns (hot-seat's key leaves it, and s still opens it); the
    lobby and the waiting room say how to download the files they name, and the lobby shows the key
    as every table shows it."""
    from dicetable.tui.screens.home_screen import HomeScreen
    from dicetable.tui.screens.lobby_screen import LobbyScreen
    from dicetable.tui.screens.new_game_screen import NewGameScreen
    from dicetable.tui.screens.waiting_room_screen import WaitingRoomScreen
    from dicetable.tui.tables.lobby import SERVED_ENV, SERVED_PORT_ENV, Lobby

    monkeypatch.setenv(SERVED_ENV, str(tmp_path / "served-lobby"))
    monkeypatch.setenv(SERVED_PORT_ENV, "2222")
    profile = Profile.generate(NAMES[0])
    profile.save(home)
    seen, app = Seen(), DiceTableApp()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        trust = str(app.screen.query_one("#lobby-trust").render())
        assert "scp -r -P 2222 HOST:transcripts ." in " ".join(trust.split()) and "pip install" not in trust
        assert "scripts/play" in trust
        await wait_until(pilot, lambda: Lobby(tmp_path / "served-lobby", "me").present())
        [me] = Lobby(tmp_path / "served-lobby", "someone else").present()
        assert me.key == profile.fingerprint  # as the seats at a table show it
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await seen.look(pilot, "served home")
        lines = [str(option.prompt) for option in app.screen.query_one("#home-menu").options]
        assert lines[0] == "› [b]o[/b]  Lobby: who is connected now, invitations", lines
        assert all(line[2:].startswith("[b]") for line in lines)  # every key in one column
        footer = [key.description for key in app.screen.query(FooterKey) if key.region.area]
        assert "lobby" in footer and "hot-seat" not in footer and "quit" in footer, footer
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("o")
        await wait_until(pilot, lambda: isinstance(app.screen, LobbyScreen))
        app.push_screen(WaitingRoomScreen(Waiting()))
        await wait_until(pilot, lambda: app.screen.query("#room-invite-file") and
                         "invite.txt" in str(app.screen.query_one("#room-invite-file").render()))
        where = " ".join(str(app.screen.query_one("#room-invite-file").render()).split())
        assert "invite.txt in your folder on this server (scp -P 2222 HOST:invite.txt . at home)" in where, where
        await seen.look(pilot, "served waiting room")
    seen.assert_none()


async def test_the_first_run_asks_a_name_and_fits():
    seen = Seen()
    app = DiceTableApp(ask_name=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await seen.look(pilot, "the first run's name")
    seen.assert_none()


async def test_the_check_sees_a_cut_line_and_a_crowded_footer():
    """The check itself: a status line longer than the screen, and a footer with more keys than fit."""
    from textual.app import App
    from textual.binding import Binding
    from textual.widgets import Static

    from dicetable.tui.widgets.text_line import TextLine

    class Crowded(App):
        CSS = "#status { height: 1; }"
        BINDINGS = [Binding(k, f"nothing_{k}", f"{k} does something long") for k in "abcdefgh"]

        def compose(self):
            yield TextLine("Your turn: " + "choose a die for somebody to place " * 3, id="status")
            yield Static("fits")
            yield Footer()

    app = Crowded()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        # The footer lays out its keys after its first frame (on a loaded machine, after one pause
        # it had none yet: the check then has nothing to see).
        await wait_until(pilot, lambda: sum(1 for key in app.screen.query(FooterKey) if key.region.area) >= 8)
        await pilot.pause()
        found = cut_lines(app.screen)
    assert any("TextLine#status" in line for line in found), found
    assert any("footer" in line for line in found), found
