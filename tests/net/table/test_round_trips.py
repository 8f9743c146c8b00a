"""A chance step costs one round trip: the joiner answers the packet that opens an event with its
reveal, unasked, so on a slow link a roll waits one round trip and no more (issue 18; the game time
over a 160 ms link is in scripts/bench_delay.py) — a dice room roll in full notation too (issue 33).
Counted, not timed: the host notes every frame that reaches it from the joiner while an event is
open, over real sockets on 127.0.0.1."""

from __future__ import annotations

from dicetable.core import registry
from dicetable.core.dice_expr import parse
from dicetable.core.game import Move
from dicetable.net.chance import outcomes
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.following import Following
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import bot_chooser
from net_helpers import FAST, in_thread, stop_all, wait_until

GAME = registry.get("dicebreaker")


class CountingSeat(Seat):
    """The host's seat, noting which event is open as each record lands."""

    open_event: int | None = None

    def applied(self, record):
        super().applied(record)
        pending = self.replica.pending
        self.open_event = None if pending is None else pending.number
        if pending is not None:
            self.driver.arrivals.setdefault(pending.number, [])


class Counting(HostSession):
    """A host that counts, for each event, the joiner's frames that reached it while it was open."""

    seat_type = CountingSeat

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.arrivals: dict[int, list[str]] = {}  # event number -> kinds of the joiner's frames while open

    def order(self, frame, origin):
        if origin is not None and self.own.open_event is not None:
            from dicetable.net.log import wire

            self.arrivals[self.own.open_event].append(wire.decode(frame).kind)
        super().order(frame, origin)


class Prompt(PeerSession):
    """A joiner that notes, for each event a packet from the host opened, whether its reveal was out by
    the end of handling that very packet (no wait for a ping, a timer or a second packet); a reveal sent
    ahead, before the event opened in its copy (net/table/following.py `act_ahead`), counts."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.opened: set[int] = set()
        self.answered_at_once: set[int] = set()

    def handle(self, data, now):
        from dicetable.net.log import wire

        before = self.replica.pending.number if self.replica.pending is not None else None
        super().handle(data, now)
        pending = self.replica.pending
        if pending is not None and pending.number != before:
            self.opened.add(pending.number)
            for seq in self.own.unordered:  # sent while handling it, or ahead of it (Following.act_ahead)
                envelope = wire.decode(self.own.unordered[seq][1])
                if envelope.kind == "reveal" and envelope.body["k"] == pending.number:
                    self.answered_at_once.add(pending.number)
            if pending.reveals[self.seat] is not None:  # sent ahead, and ordered already
                self.answered_at_once.add(pending.number)


def test_each_chance_step_takes_one_frame_from_the_joiner_its_reveal(tmp_path):
    # Three games at one table: a game's length is the dice's (fair, so not seeded), and 1 of 200 local
    # greedy games ended within 20 throws (one here ended after 12); three games all that short, never.
    host = Counting(Profile.generate("host"), "dicebreaker", 2, {}, timing=FAST, transcript=tmp_path / "h.dtt",
                    games=3)
    host.chooser = bot_chooser(GAME, "greedy", 1)
    invite = host.open()
    thread = in_thread(host)
    peer = Prompt(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt", games=3)
    peer.connect()
    peer.chooser = bot_chooser(GAME, "greedy", 2)
    assert peer.run() is not None
    thread.join(10)
    assert host.replica.game_number == 3
    steps = host.arrivals
    assert len(steps) >= 20  # games of throws
    # One exchange per step: the joiner's only frame while an event is open is its reveal (a chain
    # refresh, `anchor`, may come first when its chain runs low; no step needed a second request).
    assert all(kinds and kinds[-1] == "reveal" and set(kinds) <= {"anchor", "reveal"} and kinds.count("reveal") == 1
               for kinds in steps.values()), {n: k for n, k in steps.items() if k.count("reveal") != 1}
    # ...and it went out while the joiner handled the packet that opened the event: one round trip.
    assert len(peer.opened) >= 20 and peer.opened == peer.answered_at_once, sorted(peer.opened - peer.answered_at_once)


# -- the dice room: a roll in full dice notation is one event, whatever its rerolls and explosions ----
NOTATION = ("2d6r1", "3d6!", "10d10>=8", "6#4d6kh3", "1d20+5 [attack], 2d6rr1!", "4dFr=-1", "(1d8+2)*2", "2d20kh")


def in_notation(view):
    """On its turn a seat rolls the next expression of NOTATION (counted from its rolls so far, so
    being asked twice rolls the same one)."""
    rolled = sum(1 for roll in view.rolls if roll.seat == view.turn)
    return Move("roll", (str(parse(NOTATION[rolled % len(NOTATION)])),))


def test_a_roll_in_full_dice_notation_takes_one_frame_from_the_joiner_its_reveal(tmp_path):
    rolls = 2 * len(NOTATION)
    host = Counting(Profile.generate("host"), "diceroom", 2, {"expr": "d20", "rolls": rolls}, timing=FAST,
                    transcript=tmp_path / "h.dtt")
    host.chooser = in_notation
    invite = host.open()
    thread = in_thread(host)
    peer = Prompt(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt")
    peer.connect()
    peer.chooser = in_notation
    assert peer.run() is not None
    thread.join(10)
    made = host.replica.state.rolls
    assert sorted(r.expr for r in made) == sorted(str(parse(text)) for text in NOTATION * 2)
    # one exchange per roll, rerolls and explosions included: the joiner's only frame while a roll
    # is open is its reveal, sent while handling the packet that opened it
    assert len(host.arrivals) == rolls
    assert all(kinds and kinds[-1] == "reveal" and set(kinds) <= {"anchor", "reveal"} and kinds.count("reveal") == 1
               for kinds in host.arrivals.values()), host.arrivals
    assert len(peer.opened) == rolls and peer.opened == peer.answered_at_once
    # each roll's chance is the draws its text reserves, its dice the event seed's
    for event, roll in zip(host.replica.events, made):
        expr = parse(roll.expr)
        assert event.chance.ranges == expr.ranges and event.outcome == outcomes.draw(event.chance, event.seed)
        assert roll.faces == expr.faces(event.outcome.values)
    assert peer.replica.state.rolls == made


# -- a sealed step costs no round trip of its own ------------------------------------------------------
class Packets(HostSession):
    """A host that notes the kinds of the frames each `submit` packet from the joiner carried."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.submits: list[list[str]] = []

    def handle_packet(self, peer, seat, op, body, now):
        from dicetable.net.log import wire
        from dicetable.net.table.orderer import submitted

        if op == "submit" and submitted(body) is not None:
            self.submits.append([wire.decode(frame).kind for frame in submitted(body)])
        super().handle_packet(peer, seat, op, body, now)


def test_a_sealed_step_rides_on_the_reveals_around_it(tmp_path):
    # The joiner reveals last for the throw that opens a Latent Dice claim: it knows the outcome, so its
    # bot's sealed answer follows its reveal in the same loop turn (built on the same copy of the log);
    # an opening of the default answer ("no") is then followed at once by its reveal for the draw the
    # claim opens, and an opening of "yes" never is: the host would read that reveal before choosing to
    # order the opening (PROTOCOL.md §19 point 15). Following.act_ahead.
    host = Packets(Profile.generate("host"), "dicebreaker", 2, {}, timing=FAST, transcript=tmp_path / "h.dtt", games=3)
    host.chooser = bot_chooser(GAME, "greedy", 1)
    invite = host.open()
    thread = in_thread(host)
    peer = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt", games=3)
    peer.connect()
    peer.chooser = bot_chooser(GAME, "greedy", 2)
    assert peer.run() is not None
    thread.join(10)
    log = host.replica.log
    joiner = {r.envelope.seq: r for r in log if r.seat == 1}

    def before(record):
        """The joiner's frame just before `record` in its own sequence."""
        return joiner[record.envelope.seq - 1]

    seals = [r for r in log if r.kind == "seal" and r.seat == 1]
    draws = [r for r in log if r.kind == "reveal" and r.seat == 1 and before(r).kind == "unseal"]
    assert len(seals) >= 3 and draws  # three games of claims, one at least taken by someone
    # each built on the log its seat held when it sent the frame before it: no entries came in between
    assert all(before(r).kind == "reveal" and r.envelope.prev == before(r).envelope.prev for r in seals)
    ahead = [r for r in draws if r.envelope.prev == before(r).envelope.prev]
    declined = Move("latent", ("no",)).to_data()  # Dice Breaker's default answer
    assert ahead and all(before(r).envelope.body["move"] == declined for r in ahead)
    assert all(r.envelope.prev.entries < r.index for r in seals + ahead)  # a place past the log it was built on
    sealing = [kinds for kinds in host.submits if "seal" in kinds or "unseal" in kinds]
    assert all(set(kinds) <= {"reveal", "seal", "unseal"} for kinds in sealing)
    assert peer.replica.log[-1].frame == host.replica.log[-1].frame


def test_a_loop_turn_of_many_frames_reaches_the_log_whole_in_packets_the_host_takes(tmp_path):
    # 40 chats queued before one loop turn: more frames than one `submit` carries (MAX_SUBMITTED).
    from dicetable.net.table.orderer import MAX_SUBMITTED

    host = Packets(Profile.generate("host"), "diceroom", 2, {"expr": "d6", "rolls": 0}, timing=FAST,
                   transcript=tmp_path / "h.dtt")
    invite = host.open()
    thread = in_thread(host)
    peer = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt")
    peer.connect()
    try:
        wait_until(lambda: peer.replica.phase == "playing" or (peer.step(0.01) and False), what="the room open")
        for n in range(40):
            peer.chat(f"message {n}")
        peer.step(0.01)
        wait_until(lambda: sum(r.kind == "chat" for r in host.replica.log) == 40 or (peer.step(0.01) and False),
                   what="every chat in the host's log")
    finally:
        stop_all(host, peer)
        thread.join(10)
    assert [r.envelope.body["text"] for r in host.replica.log if r.kind == "chat"] == [f"message {n}" for n in range(40)]
    chats = [kinds for kinds in host.submits if "chat" in kinds]
    assert len(chats) == 3 and all(len(kinds) <= MAX_SUBMITTED for kinds in chats)  # 16 + 16 + 8


# -- the joiner's own work off the round trip (issue 36) ----------------------------------------------
class Counted(Following):
    """A joiner's following that counts its own frames relayed back, and those its tentative copy had
    checked already (adopted, `Following._adopt`), not checked again."""

    def __init__(self, peer):
        super().__init__(peer)
        self.relayed_back: list[str] = []  # kinds of my reveals, moves and seals the orderer relayed to me
        self.adopted: list[str] = []

    def _adopt(self, start, frames):
        from dicetable.net.log import wire

        have = len(self.replica.log)
        for offset, frame in enumerate(frames):
            env = wire.decode(frame)
            if start + offset >= have and env.seat == self.seat and env.kind in ("reveal", "move", "seal"):
                self.relayed_back.append(env.kind)
        records = super()._adopt(start, frames)
        self.adopted += [record.kind for record in records]
        return records


def test_a_joiners_own_frames_are_checked_once_and_its_bot_thinks_while_they_travel(tmp_path):
    # Each frame the joiner sends is tried on a tentative copy of its replica right after the send
    # (Following.act_ahead); when the host relays it back first, on the log it was tried on, the copy
    # becomes the replica: the frame is not checked a second time on the round trip. When that copy
    # shows the joiner's own move next, its bot chooses then (Seat.foreseen), and the move goes only
    # once the log holds that very view (Seat.choose): each move in the log is the bot's for the view at
    # its place, never one chosen for another view.
    asked: list[tuple] = []
    bot = bot_chooser(GAME, "greedy", 2)

    def chooser(view):
        move = bot(view)
        asked.append((view, move))
        return move

    # three games at one table, as above: a game's length is the dice's
    host = HostSession(Profile.generate("host"), "dicebreaker", 2, {}, timing=FAST, transcript=tmp_path / "h.dtt", games=3)
    host.chooser = bot_chooser(GAME, "greedy", 1)
    invite = host.open()
    thread = in_thread(host)
    peer = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt", games=3)
    peer.following = following = Counted(peer)
    peer.connect()
    peer.chooser = chooser
    played = []
    choose = peer.own.choose
    peer.own.choose = lambda view: played.append((view, peer.own.foreseen is not None and peer.own.foreseen[0] == view)) \
        or choose(view)
    assert peer.run() is not None
    thread.join(10)
    assert [r.frame for r in peer.replica.log] == [r.frame for r in host.replica.log]  # the same log, checked
    assert peer.replica.state == host.replica.state and peer.replica.result == host.replica.result
    # nearly every own frame relayed back was checked ahead, once (a turn that sent a frame of an
    # earlier turn too, a join or the end's receipt, is checked as it comes)
    assert len(following.relayed_back) >= 30, following.relayed_back
    assert len(following.adopted) >= 0.9 * len(following.relayed_back), (len(following.adopted), len(following.relayed_back))
    # the bot's moves: most thought of while the joiner's reveal travelled; each played for its own view
    moves = [r for r in host.replica.log if r.kind == "move" and r.seat == 1]
    assert len(played) == len(moves) and sum(ahead for _, ahead in played) >= 0.8 * len(played)
    views = [view for view, _ in played]
    for record in moves:
        chosen = [move for view, move in asked if view == views[moves.index(record)]]
        assert record.move in chosen


class Misforeseeing(Seat):
    """A seat whose every move thought of ahead is swapped for a decoy thought of for another view."""

    def act_ahead(self):
        acted = super().act_ahead()
        if self.foreseen is not None:
            self.foreseen = (object(), DECOY)  # a view no state equals
        return acted


DECOY = Move("throw", ("B9",))  # no die of that name: not legal in any state


def test_a_move_thought_of_for_another_view_is_never_played(tmp_path):
    class Peer(PeerSession):
        seat_type = Misforeseeing

    host = HostSession(Profile.generate("host"), "dicebreaker", 2, {}, timing=FAST, transcript=tmp_path / "h.dtt")
    host.chooser = bot_chooser(GAME, "greedy", 1)
    invite = host.open()
    thread = in_thread(host)
    peer = Peer(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt")
    peer.connect()
    peer.chooser = bot_chooser(GAME, "greedy", 2)
    assert peer.run() is not None  # the bot chose each move for the view it was in
    thread.join(10)
    assert not peer.own.refusals and not host.own.refusals
    assert all(r.move != DECOY for r in host.replica.log if r.kind == "move")
    assert sum(r.kind == "move" and r.seat == 1 for r in host.replica.log) >= 3
