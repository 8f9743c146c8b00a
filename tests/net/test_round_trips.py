"""A chance step costs one round trip: the joiner answers the packet that opens an event with its
reveal, unasked, so on a slow link a roll waits one round trip and no more (issue 18; the game time
over a 160 ms link is in scripts/bench_delay.py). Counted, not timed: the host notes every frame
that reaches it from the joiner while an event is open, over real sockets on 127.0.0.1."""

from __future__ import annotations

from dicetable.core import registry
from dicetable.net.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.peer import PeerSession
from dicetable.net.session import bot_chooser
from net_helpers import FAST, in_thread

GAME = registry.get("dicebreaker")


class Counting(HostSession):
    """A host that counts, for each event, the joiner's frames that reached it while it was open."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.open_event: int | None = None
        self.arrivals: dict[int, list[str]] = {}  # event number -> kinds of the joiner's frames while open

    def order(self, frame, origin):
        if origin is not None and self.open_event is not None:
            from dicetable.net import wire

            self.arrivals[self.open_event].append(wire.decode(frame).kind)
        super().order(frame, origin)

    def applied(self, record):
        super().applied(record)
        pending = self.replica.pending
        self.open_event = None if pending is None else pending.number
        if pending is not None:
            self.arrivals.setdefault(pending.number, [])


class Prompt(PeerSession):
    """A joiner that notes, for each event a packet from the host opened, whether it sent its reveal
    while handling that very packet (no wait for a ping, a timer or a second packet)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.opened: set[int] = set()
        self.answered_at_once: set[int] = set()

    def _entries(self, start, frames):
        from dicetable.net import wire

        before = self.replica.pending.number if self.replica.pending is not None else None
        sent = set(self._sent)
        super()._entries(start, frames)
        pending = self.replica.pending
        if pending is not None and pending.number != before:
            self.opened.add(pending.number)
            for seq in set(self._sent) - sent:
                envelope = wire.decode(self._sent[seq][1])
                if envelope.kind == "reveal" and envelope.body["k"] == pending.number:
                    self.answered_at_once.add(pending.number)


def test_each_chance_step_takes_one_frame_from_the_joiner_its_reveal(tmp_path):
    host = Counting(Profile.generate("host"), "dicebreaker", 2, {}, timing=FAST, transcript=tmp_path / "h.dtt")
    host.chooser = bot_chooser(GAME, "greedy", 1)
    invite = host.open()
    thread = in_thread(host)
    peer = Prompt(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "p.dtt")
    peer.connect()
    peer.chooser = bot_chooser(GAME, "greedy", 2)
    assert peer.run() is not None
    thread.join(10)
    steps = host.arrivals
    assert len(steps) >= 20  # a whole game of throws
    # One exchange per step: the joiner's only frame while an event is open is its reveal (a chain
    # refresh, `anchor`, may come first when its chain runs low; no step needed a second request).
    assert all(kinds and kinds[-1] == "reveal" and set(kinds) <= {"anchor", "reveal"} and kinds.count("reveal") == 1
               for kinds in steps.values()), {n: k for n, k in steps.items() if k.count("reveal") != 1}
    # ...and it went out while the joiner handled the packet that opened the event: one round trip.
    assert len(peer.opened) >= 20 and peer.opened == peer.answered_at_once, sorted(peer.opened - peer.answered_at_once)
