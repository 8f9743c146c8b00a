"""The orderer: the driver that gives a table's log its order and relays it, around one Seat.

The host is an orderer that opened the table (net/table/host.py); a seat that takes over through the
relay becomes one around its own Seat (net/table/succession.py), so a hand-over swaps the driver and
copies nothing. The orderer's parts, each with one owner: the door (hellos, seat holds:
net/table/door.py), the outbox (batches relayed after the transcript: net/table/outbox.py) and the
reclaim of the seats' longer copies (net/table/reclaim.py).

The orderer's Seat's replica is the gate of the log: a frame from a joiner is appended only when the
replica accepts it, otherwise the author hears `refused` with the reason (and the refusal goes to
the transcript). Every accepted frame goes to every joiner with its log index; each joiner checks it
again with its own replica, so a lying orderer is caught, not trusted.

Default claims (FAIRNESS.md §4; net/table/deadlines.py): the orderer orders a claim that passes the log's
rules; with 3 or more seats it takes effect only once the other seats' witnesses are in, the orderer's
own among them only when its clock agrees. Presence is not lateness (FAIRNESS.md §5b, PROTOCOL.md
§7.5): the orderer's `receipts` say what each seat provably received (its pings' `next`) and its round
trip, so a seat is due for a claim only after the deadline plus its link's time from its
acknowledgement (`wait_start`); each `pong` names the seats due, and a claim or witness against
another seat that is not due by this view, or about a wait that has moved on, is not ordered: a race,
not a fault — its author hears `refused` (so it drops the frame), nothing is recorded and nobody is
blamed (`premature`). A claim against the orderer's own seat that its own view refutes is kept out of
the log (`orders_log`): the claimant hears `refused` ("disputed: ..."), and the orderer's player hears
`disputed`.

Every packet to a seated connection is tagged for its hello (`tell`, net/table/host_packets.py), so
nothing on the path, a relay included, can speak for the orderer; and every packet from it but a hello
carries the seat's tag (`handle`), so nothing on the path can keep a gone seat present or submit for it.

A joiner's frame travels again when it is late (the seat resends what it has not seen ordered) and
may arrive ahead of an earlier one (PROTOCOL.md §10.6): a byte-identical copy of a frame the log holds
is ignored, and a copy of one refused is told the same refusal again, never recorded twice; a frame
ahead of its seat's next sequence number is held (`ahead`) until the gap fills, never refused. Only a
different frame signed at a used sequence number is the seat's equivocation. A `refused` carries the
log's length when it was refused: the seat decides again only once its copy is that long.

A frame of another seat refused as a fault (FAULTS: a broken seal, a deal message or payment the
card deal refuses; the seat signed it) is told at once to every other joiner as `fault {seat,
reason, frame}`, each distinct (seat, reason) once: each joiner checks the seat's signature on the
frame and shows the fault; the reason is the orderer's word, the frame the seat's.
"""

from __future__ import annotations

import time
from typing import Any

from dicetable.net.table import deadlines, host_packets
from dicetable.net.identity import fingerprint
from dicetable.net.reach.relay_link import RelayHostSocket
from dicetable.net.reach.transport import pack
from dicetable.net.refusals import BadSeal, DealRefused, Disputed, Refusal
from dicetable.net.table.door import Door
from dicetable.net.log import wire
from dicetable.net.table.direct_links import pass_offer
from dicetable.net.table.outbox import Outbox, entry_chunks
from dicetable.net.table.reclaim import Reclaim
from dicetable.net.table.session import SessionError, TableSession
from dicetable.net.table.resends import AGAIN, Resends
from dicetable.net.table.stalls import OrdererStalls
from dicetable.net.table.watching import Watchers
from dicetable.core.phrase import listing, phrase
from dicetable.net.table.events import ClaimDisputed, Dropped, Failed, Fault, Lingering, Ordering, Refused, Returned

FAULTS = (DealRefused, BadSeal)  # refusals of a frame its author signed that show it cheating, not a race
MAX_SUBMITTED = 16  # frames in one `submit` (a seat's loop turn makes a few; the packet cap bounds the bytes)
MAX_OWN_STEPS = 4  # rounds of my own acting in one loop turn (each ordered at once, relayed in one batch)
MAX_FAULT_NOTICES = 32  # distinct faults told to the joiners per table (a flood is told once)


def submitted(body: dict) -> list[bytes] | None:
    """The frames of a `submit`: `{frame}`, or `{frames}` for the several one loop turn made (at most
    MAX_SUBMITTED); None when it is neither."""
    if type(body.get("frame")) is bytes:
        return [body["frame"]]
    frames = body.get("frames")
    if type(frames) is list and 0 < len(frames) <= MAX_SUBMITTED and all(type(f) is bytes for f in frames):
        return frames
    return None


class Orderer(TableSession):
    """A seat ordering its table's log: the host, or a seat that took over through the relay."""

    orders_log = True  # the orderer keeps a claim it disputes out of everyone's log

    def __init__(self, seat, socket=None, relay=None) -> None:
        super().__init__(seat)
        self.socket = socket
        self.relay = relay  # through a relay: its address (no port of our own)
        self.box = None  # the key the joiners' invite names for tagging (net/table/host_packets.py)
        self.listing: dict | None = None  # through a relay: the owner's signed deputies (net/table/deputies.py)
        self.start_with: int | None = None  # an open room starts once this many seats joined (None: every seat)
        self.handed: int | None = None  # a successor's log at the hand-over, with the seats' longer copies (None: the host)
        self.routes: dict[bytes, int] = {}  # connection -> seat
        self.links: dict[bytes, host_packets.Tagger] = {}  # routed connection -> the tags of its hello
        self.last_seen: dict[int, float] = {}
        self.acked: dict[int, int] = {}  # seat -> log length it reported
        self.receipts = deadlines.Receipts()  # when each seat acknowledged what, and its round trip (§7.5)
        self.races: list[tuple[bytes, dict]] = []  # premature claims' `refused`, told once the entries before them are out
        self._told: set[tuple[int, str]] = set()  # faults told to the joiners
        self._shared: tuple[str, dict, bytes] | None = None  # (op, body, packed) while `tell_all` tells every joiner
        self.door = Door(self)
        self.outbox = Outbox(self)
        self.reclaim = Reclaim(self)
        self.watchers = Watchers(self)  # connections that follow the log without a seat (net/table/watching.py)
        self.offers: dict[int, dict] = {}  # seat -> its signed endpoint for direct links, passed on unread (§10.10)
        self.stalls = OrdererStalls(self)  # seats heard but behind or held back: said (net/table/stalls.py)
        self.resends = Resends(self)  # copies and frames ahead decided once (net/table/resends.py, §10.6)

    def took_over(self) -> None:
        """This seat orders in the host seat's place now (net/table/succession.py): until the seats are back,
        nothing of its own (frames it sent the host may be ordered already)."""
        replica = self.replica
        if self.own.refused_at is not None:  # a refusal by the orderer gone: my log is the log now (§10.6)
            self.own.refused_at = 0
        self.reclaim.start(time.monotonic())
        self.handed = len(replica.log)  # this copy at the hand-over, with the seats' longer copies: the host relayed it
        self.emit(Ordering(self.seat, phrase(replica.who(self.seat), " orders the log now, through the relay, "
                                                                     "in the host seat's place")))

    def refuse(self, key: bytes) -> None:
        """Thread-safe: take back the seat `key` holds (a squatter's, say) and refuse that key any seat."""
        self.own.commands.put(("refuse", bytes(key)))

    def handle_command(self, name: str, arg: Any) -> None:
        if name == "refuse":
            self.door.refuse(arg)

    def seat_data(self) -> dict:
        if self.relay is not None:
            return {"relay": self.relay.encode()}  # a resumed host serves its table at the same relay
        return {}

    # -- the log ---------------------------------------------------------------------------------
    def submit(self, frame: bytes) -> None:
        self.order(frame, None)

    def order(self, frame: bytes, origin: bytes | None) -> None:
        """Append `frame` to the log if the replica accepts it, and relay it; else refuse it. A joiner's
        copy of a frame already decided, or a frame ahead of its seat's turn, is not decided again (net/table/resends.py)."""
        own = self.own
        if origin is not None and self.resends.again(frame, origin):
            return
        try:
            if origin is not None:
                self.door.check_join(frame, origin)
            record = self.replica.accept(frame, signed_here=origin is None)  # origin None: a frame of mine
        except Refusal as refusal:
            reason = str(refusal)
            told = self._tell_fault(refusal, reason, frame, origin)
            if isinstance(refusal, Disputed):  # a claim against my seat that my own view refutes
                self.emit(ClaimDisputed(refusal.seat, refusal.said))
            else:
                self.emit((Fault if told else Refused)(refusal.seat, refusal.said))
            own.record_refusal(frame, reason)
            if origin is None:
                own.own_frame_refused(reason)
            else:
                seat = -1 if refusal.seat is None else refusal.seat
                told = {"seat": seat, "reason": reason, "length": len(self.replica.log)}
                self.resends.refused(frame, origin, None if isinstance(refusal, AGAIN) else told)
                self.tell(origin, "refused", told)
            return
        self.door.joined(record)
        own.applied(record)
        self.outbox.pass_on(record)
        self.receipts.relayed(len(self.replica.log), time.monotonic())
        self.resends.release(record.seat, record.envelope.seq)

    def premature(self, frame: bytes) -> str:
        """Why a joiner's claim or witness against another seat is not ordered now: that seat is not due
        by this orderer's view (it has not provably received the wait, or its link's time has not
        passed), or the wait it is about has moved on; "" for any other frame (the log's rules judge it)."""
        replica, defaults = self.replica, self.own.defaults
        if replica is None or replica.phase != "playing" or (b"claim" not in frame and b"witness" not in frame):
            return ""  # every claim or witness frame holds its kind's name: most frames are not decoded twice
        try:
            env = wire.decode(frame)
        except wire.WireError:
            return ""
        if env.kind == "claim" and type(env.body.get("against")) is int:
            against = env.body["against"]
        elif env.kind == "witness" and type(env.body.get("claim")) is int:
            claim = next((c for c in replica.claims if c.index == env.body["claim"]), None)
            if claim is None or claim.state != "pending":
                return f"the claim at entry {env.body['claim'] + 1} is no longer pending: the wait has moved on"
            against = claim.against
        else:
            return ""
        now = time.monotonic()
        defaults.track(now)
        if against not in replica.waiting_for.seats or env.kind == "claim" and env.prev.entries < defaults.waiting_len:
            return f"the claim against seat {against} is about a wait that has moved on"
        if against == self.seat:
            return ""  # my own view of a claim against my seat judges it (Defaults.check_claim)
        if not defaults.default_reason(against, now):
            return f"seat {against} is not due for a claim yet: it is present and its link's time has not passed"
        return ""

    def _tell_fault(self, refusal: Refusal, reason: str, frame: bytes, origin: bytes | None) -> bool:
        """Tell every other joiner of another seat's fault, the first time; True if told."""
        seat = refusal.seat
        if not isinstance(refusal, FAULTS) or seat is None or seat == self.seat:
            return False
        if (seat, reason) in self._told or len(self._told) >= MAX_FAULT_NOTICES:
            return False
        self._told.add((seat, reason))
        for peer, routed in self.routes.items():
            if peer != origin and routed != seat:
                self.tell(peer, "fault", {"seat": seat, "reason": reason, "frame": frame})
        return True

    def forward_boxes(self, seat: int, boxes: list) -> None:
        """A joiner's answer boxed to other seats (net/table/answer_path.py, PROTOCOL.md §10.10): each box
        goes to its seat as it came, unread (one for my own seat, I open)."""
        routes = {routed: peer for peer, routed in self.routes.items()}
        for item in boxes[:16]:
            if type(item) is not list or len(item) != 2 or type(item[0]) is not int or type(item[1]) is not bytes:
                continue
            to, box = item
            if to == self.seat:
                self.own.held.take(seat, box)
            elif to != seat and to in routes:
                self.tell(routes[to], "forwarded", {"from": seat, "box": box})

    def send_entries(self, peer: bytes, start: int) -> None:
        """Log frames from `start` on, up to the batch under way (it goes out once it is on disk)."""
        for first, frames in entry_chunks(self.replica.log, start, self.outbox.durable()):
            self.tell(peer, "entries", {"start": first, "frames": frames})

    # -- presence --------------------------------------------------------------------------------
    def present(self, seat: int, now: float) -> None:
        if seat in self.own.defaults.away_since:
            del self.own.defaults.away_since[seat]
            self.emit(Returned(seat))
            self._tell_presence(seat, True)

    def _tell_presence(self, seat: int, here: bool) -> None:
        self.tell_all(self.routes, "presence", {"seat": seat, "here": here})

    def watch_presence(self, now: float) -> None:
        away = self.own.defaults.away_since
        for seat, seen in self.last_seen.items():
            if seat not in away and now - seen > self.timing.drop_after:
                away[seat] = seen  # the grace period runs from when it was last heard
                self.emit(Dropped(seat))
                self._tell_presence(seat, False)

    # -- packets ---------------------------------------------------------------------------------
    def handle_packet(self, peer: bytes, seat: int | None, op: str, body: dict, now: float) -> None:
        """One packet as its seat sent it (opened from its tag), or a hello, or an unseated connection's."""
        if op == "hello":
            self.watchers.seated(peer)
            self.door.hello(peer, body, now)
        elif op == "watch" and seat is None:
            self.watchers.hello(peer, body, now)
        elif peer in self.watchers:
            self.watchers.handle(peer, op, body, now)
        elif seat is None:
            self.door.who(peer)  # e.g. after the host restarted: the joiner proves its key again
        elif op == "submit" and (frames := submitted(body)) is not None:
            if self.acked.get(seat, 0) <= len(self.replica.log):  # else it sits on entries I lack: resent once they are in
                for frame in frames:
                    early = self.premature(frame)
                    if early:  # a race with the clocks or the log, not a fault: told, never recorded; the frames
                        told = {"seat": seat, "reason": early, "length": len(self.replica.log)}  # after it wait too
                        self.resends.refused(frame, peer, told)  # a copy of it is told the same, never ordered later (§10.6)
                        self.races.append((peer, told))
                        break
                    self.order(frame, peer)
            else:
                self.stalls.held_back(seat, now)
        elif op == "ping" and type(body.get("next")) is int:
            self.acked[seat] = body["next"]
            self.receipts.acked(seat, body["next"], now)
            if 0 <= body["next"] < len(self.replica.log):
                self.send_entries(peer, body["next"])
            self.reclaim.ask_if_longer(peer, now)
            pong: dict = {"length": len(self.replica.log)}
            if type(body.get("echo")) is int:  # the joiner times its round trip by it (§10.6)
                pong["echo"] = body["echo"]
            due = self.due(now)
            if due:
                pong["due"] = due
            self.tell(peer, "pong", pong)
        elif op == "forward" and type(body.get("boxes")) is list:  # relayed unread to their seats (§10.10)
            self.forward_boxes(seat, body["boxes"])
        elif op == "offer":  # a seat's signed endpoint for the others' direct links (net/table/direct_links.py)
            pass_offer(self, seat, body)
        elif op == "give" and peer in self.reclaim.asked and type(body.get("start")) is int \
                and type(body.get("frames")) is list:
            self.reclaim.adopt(peer, body["start"], body["frames"])

    def due(self, now: float) -> list[int]:
        """The seats awaited that are due for a claim by this orderer's view (told in each `pong`)."""
        replica = self.replica
        if replica is None or replica.phase != "playing":
            return []
        return [s for s in replica.waiting_for.seats if s != self.seat and self.own.defaults.default_reason(s, now)]

    def wait_start(self, seat: int, since: float, length: int, now: float) -> float | None:
        """A seat's clock starts once its acknowledgement of the wait arrived, plus its round trip and a
        heartbeat, while it is not kept behind; one that has not received the wait, or is kept behind,
        for the whole grace is timed from the wait's start (net/table/deadlines.py)."""
        receipts, heartbeat = self.receipts, self.timing.heartbeat
        trip = receipts.round_trip(seat, deadlines.deadline(self.replica, self.timing), self.timing)
        received = receipts.received_at(seat, length)
        if received is None or receipts.behind(seat, now - trip - 2 * heartbeat):
            return since if now - since > self.timing.grace else None
        return received + trip + heartbeat

    def tell_all(self, peers, op: str, body: dict) -> None:
        """The same packet for several joiners: packed once (`tell` takes it while this runs), tagged for each."""
        self._shared = (op, body, pack(op, body))
        try:
            for peer in peers:
                self.tell(peer, op, body)
        finally:
            self._shared = None

    def tell(self, peer: bytes, op: str, body: dict) -> None:
        """A packet for one joiner: tagged for the hello its connection proved, if any (net/table/host_packets.py)."""
        link = self.links.get(peer)
        if link is None:
            self.socket.send(peer, op, body)  # `who`, or `full` to a hello that proved nothing
            return
        shared = self._shared
        packet = shared[2] if shared is not None and shared[1] is body and shared[0] == op else pack(op, body)
        self.socket.send(peer, "tagged", link.seal_packed(packet))

    # -- the loop --------------------------------------------------------------------------------
    def step(self, timeout: float) -> None:
        """Handle what arrived within `timeout` seconds, then act and watch the clocks."""
        own = self.own
        if self.reclaim.awaiting is not None and self.reclaim.seats_back(time.monotonic()):
            self.reclaim.awaiting = None
            with self.outbox.relaying():  # after the seats' longer copies: my frames an orderer took are in them
                for seq, (_, frame) in sorted(own.unordered.items()):
                    if seq >= self.replica.next_seq(self.seat):
                        self.order(frame, None)
        packet = self.socket.recv(self.outbox.timeout(timeout))
        with self.outbox.relaying():  # one write, one entries packet per joiner and one fsync for the whole loop turn
            while packet is not None:
                now = time.monotonic()
                opened = self.door.opened(packet[0], packet[1], now)
                if opened is not None:
                    self.handle_packet(*opened, now)
                packet = self.socket.recv(0)
            if self.reclaim.awaiting is None:  # else a frame of mine (the app's too) would take a place the seats' copies may hold
                self.take_turn()
        with self.outbox.relaying():  # the clocks, once this turn's entries are out: they rarely add a frame
            now = time.monotonic()
            self.door.watch_holds(now)
            self.watch_presence(now)
            self.stalls.watch(now)
            self.watch_code()
            if isinstance(self.socket, RelayHostSocket):
                self.watch_relay()
            self.watchers.step(now)
            if self.reclaim.awaiting is not None:
                self.reclaim.only_stop()
                return
            own.defaults.watch_deadlines(now)
        if self.races and not self.outbox.unsent:  # after the entries: the seat drops only the frames not ordered
            for peer, body in self.races:
                self.tell(peer, "refused", body)
            self.races.clear()

    def take_turn(self) -> None:
        """The app's commands and my own steps: each ordered at once, relayed with this loop turn's batch."""
        own = self.own
        own.drain_commands()
        if self.starts_now() and not own.unordered:
            own.author("start", {})
        for _ in range(MAX_OWN_STEPS):  # my frames are ordered at once: act on each until I wait for others
            length = len(self.replica.log)
            own.act()
            own.reveal_if_due()  # an event my own move just opened: my reveal rides in the same packet
            log = self.replica.log
            if len(log) == length or log[-1].event is None:
                break  # acting again only after a reveal of mine that decided an event: my move may be due now

    def delivered(self) -> bool:
        """Every seat in the room and routed here has reported the whole log (an orderer leaving its room
        stops once the others hold its `leave`: the next orderer's copy must have it, §11)."""
        length, present = len(self.replica.log), self.replica.membership.present
        routed = set(self.routes.values())
        return all(self.acked.get(s, 0) >= length for s in present if s in routed and s != self.seat)

    def starts_now(self) -> bool:
        """Every seat has joined; or an open room (a free dice room) has the `start_with` seats its host
        waits for, and takes the others as they come (PROTOCOL.md §5.2)."""
        replica = self.replica
        if replica.phase == "ready":
            return True
        if replica.phase != "joining" or self.start_with is None:
            return False
        if sum(info is not None for info in replica.seats) < self.start_with or replica.seats[0] is None:
            return False
        state = replica.game.new(replica.seat_count, replica.game_options)
        return all(state.welcomes_back(s) for s, info in enumerate(replica.seats) if info is None)

    def watch_code(self) -> None:
        """The host's short code at the relay (net/table/host.py); a successor offers none."""

    def watch_relay(self) -> None:
        """Name the seats that may order the table in this seat's absence (net/table/succession.py), to the
        relay and to every seat (net/table/deputies.py); stop ordering once the relay says another seat does
        (this seat's copy would fork from the table's)."""
        named = self.socket.name_deputies(self.replica)
        if named is not None and named is not self.listing:  # every seat holds it, for a relay that loses it
            self.listing = named
            self.tell_all(self.routes, "deputies", named)
        if self.socket.taken is not None:
            raise SessionError(f"{fingerprint(self.socket.taken)} took over ordering this table at the relay while "
                               f"this seat was away; resume to play on as a seat: {self.transcript_path}")

    def run(self) -> Any:
        """Play until the game ends (then let the joiners catch up) or `stop()`; returns the result."""
        over_at, awaited = None, set()
        try:
            while not self.stopped:
                self.step(0.05)
                if self.finished:
                    now = time.monotonic()
                    over_at = over_at or now
                    length = len(self.replica.log)
                    behind = {s for s in range(self.replica.seat_count) if s != self.seat and self.acked.get(s, 0) < length
                              and self.replica.seats[s] is not None}  # an open room's free places hold no copy
                    ended = length  # a seat that left after the game's end needs no rematch offer it never answered
                    while self.replica.log[ended - 1].kind in ("rematch", "receipt"):
                        ended -= 1
                    away = {s for s in behind & set(self.own.defaults.away_since) if self.acked.get(s, 0) < ended} - awaited
                    if away:  # e.g. claimed in default while away: it hears the outcome here if it returns in time
                        awaited |= away
                        who = listing(self.replica.who(s) for s in sorted(away))
                        self.emit(Lingering(phrase(f"the game is over; the table stays open up to {self.timing.grace:g} s "
                                                    "for ", who, ", away, to learn the outcome")))
                    stay = self.timing.grace if behind & awaited else 0.0
                    if not behind or now > over_at + max(3.0, 2 * self.timing.heartbeat, stay):
                        break
        except SessionError as error:
            self.emit(Failed(str(error)))
            raise
        finally:
            self.close()
        return self.replica.result

    def close(self) -> None:
        if self.outbox.unsent:
            self.outbox.release()
        if self.socket is not None:
            self.watchers.close()
            self.socket.close()
        self.own.transcript.close()
