"""The orderer's door: hellos that prove a seat's key, seat holds, and the joiners it refuses (PROTOCOL.md §10.2, §10.3).

A connection gets a seat's route only with a hello that proves the seat's key (net/table/session.py): the
orderer's challenge for a connection is HMAC-SHA256 of its routing id under a secret made when this
orderer started, so it needs no memory per connection and differs between connections. A seat in the
joining phase is reserved for one proven key (a key that reconnects keeps its reservation), and a
joiner's join frame must be for its own reserved seat and carry the key it proved. From then on every
packet to that connection is tagged for its hello (net/table/host_packets.py); a hello's box key is
taken once per seat (a hello replayed on its connection is not the seat's).

A hello holds a free seat only for `timing.seat_hold` seconds: a key whose signed join does not
follow in time loses the seat (its connection hears `full` saying so, and that key is not given
another), so nobody can keep a table "full" with a hello alone; a joiner silent for `drop_after`
before joining frees its seat sooner, and may hello again. Both clocks add twice the joiner's round
trip, measured from the first `who` on its connection to its hello (at most MAX_TRIP s), since its join
comes a round trip after its hello: a slow link is not a squatter (PROTOCOL.md §10.3). The host hears `SeatHeld` (the seat,
the key, in words with its fingerprint) when a key takes a hold and `SeatReleased` when a hold ends
without a join; `refuse(key)` takes a held seat back from a key and refuses it any other. A full
table's refusal names the players seated (and the seats held). Keys cost nothing, so holds are also
counted per source (the connection's address, or the relay's tag of it: net/reach/sources.py): after
HOLD_LAPSES_FREE holds from one source lapse without a join, its next hold waits HOLD_COOLDOWN
seconds, doubled at each further lapse, and fresh keys from there cannot hold a seat in a loop.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time

from dicetable.net.table import host_packets
from dicetable.net.log import wire
from dicetable.net.identity import fingerprint, verify_signature
from dicetable.net.refusals import BadJoin
from dicetable.net.reach.sources import Backoff
from dicetable.net.reach.transport import BadPacket, unpack
from dicetable.core.phrase import Seat, phrase
from dicetable.net.table.events import Failed, SeatHeld, SeatReleased

HELLO_FIELDS = frozenset({"seat", "key", "next", "nonce", "proof", "box"})
MAX_NEXT = 2**32  # a log index in a hello
MAX_HELLOS = 4096  # hellos remembered per seat key, so that none of them can be replayed
HOLD_LAPSES_FREE = 1  # seat holds a source may let lapse (no join followed) before its next hold waits
HOLD_COOLDOWN = 60.0  # seconds the next hold from that source waits after one more lapse; doubled at each further one
MAX_HOLD_COOLDOWN = 3600.0  # the longest such wait
MAX_ASKED = 4096  # connections whose first `who` time is kept, to measure their round trip by their hello
MAX_TRIP = 15.0  # seconds: the longest round trip a hold counts, so a slow answerer holds a seat at most 30 s longer


def _hello_fault(body: dict) -> str:
    """Why a hello body is malformed (exact fields, types and sizes), or "" when it is well-formed."""
    if set(body) != HELLO_FIELDS:
        return "a malformed hello: it has exactly seat, key, next, nonce, proof and box (update dicetable?)"
    seat, key, start, nonce, proof, box = (body[f] for f in ("seat", "key", "next", "nonce", "proof", "box"))
    if type(seat) is not int or not -1 <= seat < wire.MAX_SEATS:
        return "a malformed hello: its seat is -1 or a seat number"
    if type(start) is not int or not 0 <= start <= MAX_NEXT:
        return "a malformed hello: its next is a log index"
    if any(type(v) is not bytes or len(v) != 32 for v in (key, nonce, box)):
        return "a malformed hello: its key, nonce and box are 32 bytes each"
    if type(proof) is not bytes or len(proof) != 64:
        return "a malformed hello: its proof is a 64-byte signature"
    return ""


class Door:
    """Who may sit at an orderer's table: hellos, seat holds before a join, and refused keys."""

    def __init__(self, orderer) -> None:
        self.orderer = orderer
        self.emit = orderer.own.emit
        self.reserved: dict[int, tuple[bytes, bytes, float]] = {}  # seat -> (proven key, connection, since) before its join
        self.refused_keys: dict[bytes, str] = {}  # key -> why it gets no seat (the host refused it, its hold ran out)
        self._boxes: dict[bytes, set[bytes]] = {}  # seat key -> box keys of its hellos answered this run
        self._held_from: dict[int, str] = {}  # held seat -> the source its holder's connection came from
        self._lapses = Backoff(HOLD_LAPSES_FREE, HOLD_COOLDOWN, MAX_HOLD_COOLDOWN)  # holds no join followed, per source
        self._challenge_secret = secrets.token_bytes(32)  # per run: a restarted host asks every joiner again
        self._asked: dict[bytes, float] = {}  # connection -> when it was first asked `who`
        self._trips: dict[int, float] = {}  # held seat -> its joiner's round trip (who to hello)
        self.unopened = 0  # packets on seats' connections that did not open as their seat's (forged, stale, unanswered)

    @property
    def replica(self):
        return self.orderer.replica

    def challenge(self, peer: bytes) -> bytes:
        """The nonce a hello on connection `peer` must sign: fixed per connection, unlike any other's."""
        return hmac.new(self._challenge_secret, b"dicetable/challenge/v1" + peer, hashlib.sha256).digest()

    def who(self, peer: bytes) -> None:
        if len(self._asked) >= MAX_ASKED:
            self._asked.clear()  # a flood of connections costs bounded memory (their holds then count no trip)
        self._asked.setdefault(peer, time.monotonic())
        self.orderer.tell(peer, "who", {"nonce": self.challenge(peer)})

    def hello(self, peer: bytes, body: dict, now: float) -> None:
        orderer = self.orderer
        fault = _hello_fault(body)
        if fault:
            orderer.tell(peer, "full", {"reason": fault})
            return
        want, key, start, nonce, proof, box = (body[f] for f in ("seat", "key", "next", "nonce", "proof", "box"))
        if not hmac.compare_digest(nonce, self.challenge(peer)):
            self.who(peer)  # signed for another connection (a replay, or sent before a reconnect): ask again
            return
        trip = min(max(now - self._asked.pop(peer, now), 0.0), MAX_TRIP)  # this joiner's round trip
        replica = self.replica
        signed = wire.hello_bytes(replica.table, orderer.socket.public_key, nonce, key, box)
        if not verify_signature(key, signed, proof):
            reason = "the hello does not prove its key: the proof is not that key's signature of this connection's challenge"
            orderer.tell(peer, "full", {"reason": reason})
            return
        try:
            link = host_packets.Tagger.answering(orderer.box, box, replica.table, nonce, key)
        except host_packets.BadBox as error:
            orderer.tell(peer, "full", {"reason": f"a malformed hello: {error}"})
            return
        seat = replica.seat_of(key)
        if box in self._boxes.get(key, ()):  # a joiner makes a fresh box per hello: this one is replayed
            if seat is not None:
                self.forged(seat)
            return
        refusal = None
        if seat is None and want >= 0:
            refusal = f"seat {want} is not yours: your key never joined this table"
        elif seat == orderer.own.seat:
            refusal = "this profile is the host's own: join with another profile"
        elif seat is None and key in self.refused_keys:
            refusal = self.refused_keys[key]
        elif seat is None:
            seat, refusal = self._free_seat(peer, key, now, trip)
        if refusal is not None:
            orderer.socket.send(peer, "tagged", link.seal("full", {"reason": refusal}))  # the answer to this hello
            return
        boxes = self._boxes.setdefault(key, set())
        if len(boxes) >= MAX_HELLOS:
            boxes.clear()  # a seat's own flood of hellos costs bounded memory (then its oldest could be replayed)
        boxes.add(box)
        self._seat(peer, seat, link, start, now)

    def _seat(self, peer: bytes, seat: int, link: host_packets.Tagger, start: int, now: float) -> None:
        """A hello proved `seat`'s key on connection `peer`: route the seat there and welcome it."""
        orderer, replica = self.orderer, self.replica
        routes, links = orderer.routes, orderer.links
        link.keep([links[p] for p, s in routes.items() if s == seat and p in links])
        for other in [p for p, s in routes.items() if s == seat and p != peer]:
            del routes[other]  # the seat came back on a new connection
            links.pop(other, None)
        routes[peer] = seat
        links[peer] = link
        orderer.last_seen[seat] = now
        orderer.present(seat, now)
        welcome = {"seat": seat, "length": len(replica.log), "table": replica.table, "timing": orderer.timing.to_data()}
        if orderer.handed is not None:  # a host seat rejoining may cut its copy's tail only past this (net/table/joiner.py)
            welcome["handed"] = orderer.handed
        orderer.tell(peer, "welcome", welcome)
        orderer.send_entries(peer, start)
        orderer.acked[seat] = start  # what its copy holds, before its first ping
        orderer.reclaim.ask_if_longer(peer, now)
        if orderer.listing is not None:
            orderer.tell(peer, "deputies", orderer.listing)
        if orderer.handed is not None:  # a seat just seated hears who is away (the host seat among them) and who is here
            for other in range(replica.seat_count):
                orderer.tell(peer, "presence", {"seat": other, "here": other not in orderer.own.defaults.away_since})

    def opened(self, peer: bytes, data: bytes, now: float) -> tuple[bytes, int | None, str, dict] | None:
        """A packet as its seat sent it (`peer`, seat, op, body), or a hello, or an unseated connection's;
        None for what is not our protocol or not the seat's. A seated connection's packets carry its
        seat's tag (net/table/host_packets.py), and hearing one keeps the seat present."""
        orderer = self.orderer
        try:
            op, body = unpack(data)
        except BadPacket:
            return None  # not our protocol; a signed frame is the only thing that could matter
        seat = orderer.routes.get(peer)
        if op != "hello" and seat is not None:
            try:
                opened = orderer.links[peer].take(op, body)
            except host_packets.Forged:
                self.unopened += 1
                self.forged(seat)
                return None
            if opened is None:  # before its first packet under this hello: it may have missed the welcome
                self.unopened += 1
                self.who(peer)  # (after a host restart, or a hand-over): it says hello again
                return None
            if opened is host_packets.LATE:  # the seat's own, stale (older than the window): no word, no presence
                self.unopened += 1
                return None
            op, body = opened
            orderer.last_seen[seat] = now
            orderer.present(seat, now)
        return peer, seat, op, body

    def forged(self, seat: int) -> None:
        """A packet on `seat`'s connection that the seat did not send (net/table/host_packets.py): ignored, said once."""
        path = f"the relay at {self.orderer.relay.address}:{self.orderer.relay.port}" if self.orderer.relay is not None else "its connection"
        self.orderer.own.fault(None, f"{path} carried packets that are not {self.replica.who(seat)}'s (forged, altered or "
                             "replayed): ignored")

    def unseat(self, seat: int, told: str) -> None:
        """A held seat is free again: its connections hear `told` and go."""
        orderer = self.orderer
        for peer in [p for p, s in orderer.routes.items() if s == seat]:
            orderer.tell(peer, "full", {"reason": told})
            del orderer.routes[peer]
            orderer.links.pop(peer, None)
        for clock in (orderer.last_seen, orderer.own.defaults.away_since, orderer.acked):
            clock.pop(seat, None)

    def _free_seat(self, peer: bytes, key: bytes, now: float, trip: float = 0.0) -> tuple[int | None, str | None]:
        """The seat held for `key` (moved to this connection), or a free one held for it now; else
        (None, why not): the table is full, or the connection's source let holds lapse (PROTOCOL.md §10.3)."""
        replica = self.replica
        if not replica.membership.free_seats():  # joining, or an open room with a free seat (PROTOCOL.md §5.2)
            return None, self._full_reason(now)
        self.watch_holds(now)
        for seat, (owner, _, since) in list(self.reserved.items()):
            if owner == key:
                self.reserved[seat] = (key, peer, since)  # one hold per key, however often it reconnects
                self._trips[seat] = max(self._trips.get(seat, 0.0), trip)
                return seat, None
        free = [seat for seat in replica.membership.free_seats() if seat not in self.reserved]
        if not free:
            return None, self._full_reason(now)
        source = self.orderer.socket.source_of(peer)  # None: unknown (a relay that tags nothing), so not counted
        wait = self._lapses.wait(source, now) if source is not None else 0.0
        if wait > 0:  # fresh keys from there would hold the seat in a loop: others go first
            return None, (f"someone at your address held a seat at this table and did not join: no seat for your "
                          f"address for {math.ceil(wait)} s more")
        seat = free[0]
        self.reserved[seat] = (key, peer, now)
        self._trips[seat] = trip
        if source is not None:
            self._held_from[seat] = source
        hold = self.orderer.own.timing.seat_hold
        self.emit(SeatHeld(seat, key,
                           phrase(f"{fingerprint(key)} holds ", Seat(seat), f" for its join (at most {hold:g} s)")))
        return seat, None

    def _full_reason(self, now: float) -> str:
        """Why a hello gets no seat: who sits at the table, and which seats are held for a join."""
        replica = self.replica
        players = ", ".join(info.name for info in replica.seats if info is not None)
        if replica.phase != "joining" and not replica.membership.free_seats():
            return f"the game has already started and every seat is taken: {players}"
        held = [f"seat {seat} held for a joiner for {max(self.orderer.own.timing.seat_hold - (now - since), 0):.0f} s more"
                for seat, (_, _, since) in sorted(self.reserved.items())]
        return f"the table is full: {'; '.join([players, *held])}"

    # -- holds on free seats -------------------------------------------------------------------------
    def refuse(self, key: bytes) -> None:
        """Take back the seat `key` holds (a squatter's, say) and refuse that key any seat."""
        seat = self.replica.seat_of(key)
        if seat is not None:
            self.emit(Failed(f"{self.replica.who(seat)} has joined: its seat is in the log"))
            return
        told = "the host refused you a seat at this table"
        self.refused_keys[key] = told
        for seat, (held, _, _) in list(self.reserved.items()):
            if held == key:
                self._release(seat, told, f"the host refused {fingerprint(key)}")

    def watch_holds(self, now: float) -> None:
        """Free every seat whose hold ran out before its join, or whose joiner vanished before it."""
        timing = self.orderer.own.timing
        hold, drop = timing.seat_hold, timing.drop_after
        for seat, (key, _, since) in list(self.reserved.items()):
            link = 2 * self._trips.get(seat, 0.0)  # the join comes a round trip after the hello
            within = f"{hold:g} s" + (f" and {link:.0f} s for the link's round trip" if link >= 1 else "")
            if now - since > hold + link:
                self._release(seat, f"your hold on seat {seat} ran out: no join came within {within}",
                              f"{fingerprint(key)} did not join within {within}")
            elif now - since > 2 * drop + link and self.orderer.last_seen.get(seat, since) < now - drop - link:
                self._release(seat, f"you went silent before joining: seat {seat} is free again",
                              f"{fingerprint(key)} went silent before joining", refuse=False)

    def _release(self, seat: int, told: str, said: str, refuse: bool = True) -> None:
        """Free a held seat (`told` says why, to its connections, which go); a key refused gets no other,
        and the source it came from counts one lapse (after HOLD_LAPSES_FREE, its next hold waits)."""
        key = self.reserved.pop(seat)[0]
        self._trips.pop(seat, None)
        if refuse:
            self.refused_keys[key] = told
        source = self._held_from.pop(seat, None)
        wait = self._lapses.lapse(source, time.monotonic()) if source is not None else 0.0
        self.unseat(seat, told)
        waits = f" (its address has let holds lapse before: it gets no seat for {wait:g} s)" if wait else ""
        self.emit(SeatReleased(seat, key, phrase(f"{said}: ", Seat(seat), f" is free again{waits}")))

    # -- joins -----------------------------------------------------------------------------------------
    def check_join(self, frame: bytes, origin: bytes) -> None:
        """A joiner's join takes the seat reserved for it, with the key its hello proved."""
        if not self.replica.membership.free_seats():
            return  # no seat is free: the replica refuses any join, so play frames are decoded once
        try:
            envelope = wire.decode(frame)
        except wire.WireError:
            return  # the replica refuses it with the reason
        if envelope.kind != "join":
            return
        seat = envelope.seat
        mine = self.orderer.routes.get(origin)
        reserved = self.reserved.get(seat)
        if mine != seat:
            raise BadJoin(mine, f"a join for seat {seat} from the connection the host seated at {mine}")
        if reserved is not None and reserved[0] != envelope.body["key"]:
            raise BadJoin(mine, f"the join names another key than the one its hello proved for seat {seat}")

    def joined(self, record) -> None:
        """A join landed: its seat is no longer held."""
        if record.seat in self.reserved and record.kind == "join":
            del self.reserved[record.seat]
            self._held_from.pop(record.seat, None)
            self._trips.pop(record.seat, None)
