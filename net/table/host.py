"""The host's seat: it opens the table, gives the log its order and relays it (net/table/session.py).

The host's own Replica is the gate of the log: a frame from a joiner is appended only when the
replica accepts it, otherwise the author hears `refused` with the reason (and the refusal goes to
the host's transcript). Every accepted frame goes to every joiner with its log index; each joiner
checks it again with its own replica, so a lying host is caught, not trusted.

Default claims (FAIRNESS.md §4; net/table/deadlines.py): the host orders any claim that passes the log's
rules; with 3 or more seats it takes effect only once the other seats' witnesses are in, the host's
own among them only when its clock agrees. A claim against the host's own seat that its own view
refutes is kept out of the log (`refuses_claims`: the orderer can, at no cost to anyone): the
claimant hears `refused` ("disputed: ..."), and the host's player hears `ClaimDisputed`.

A connection gets a seat's route only with a hello that proves the seat's key (net/table/session.py): the
host's challenge for a connection is HMAC-SHA256 of its routing id under a secret made when this
host started, so it needs no memory per connection and differs between connections. A seat in the
joining phase is reserved for one proven key (a key that reconnects keeps its reservation), and a
joiner's join frame must be for its own reserved seat and carry the key it proved. From then on every
packet to that connection is tagged for its hello (`tell`, net/table/host_packets.py), so nothing on the path,
a relay included, can speak for the host; and every packet from it but a hello carries the seat's tag
(`handle`), so nothing on the path can keep a gone seat present or submit for it; a hello's box key
is taken once per seat (a hello replayed on its connection is not the seat's).

A hello holds a free seat only for `timing.seat_hold` seconds: a key whose signed join does not
follow in time loses the seat (its connection hears `full` saying so, and that key is not given
another), so nobody can keep a table "full" with a hello alone; a joiner silent for `drop_after`
before joining frees its seat sooner, and may hello again. The host hears `SeatHeld` (the seat,
the key, in words with its fingerprint) when a key takes a hold and `SeatReleased` when a hold ends
without a join; `refuse(key)` takes a held seat back from a key and refuses it any other. A full
table's refusal names the players seated (and the seats held). Keys cost nothing, so holds are also
counted per source (the connection's address, or the relay's tag of it: net/reach/sources.py): after
HOLD_LAPSES_FREE holds from one source lapse without a join, its next hold waits HOLD_COOLDOWN
seconds, doubled at each further lapse, and fresh keys from there cannot hold a seat in a loop.

A host that resumes (`--resume`, the app's Resume; a seat taking over, net/table/succession.py) may lack
entries a seat holds: relayed before its crash, or ordered by a successor gone too. Each seat's hello
and pings say how long its copy is; a seat with a longer copy is asked for the rest (`ask {next}`,
answered `give {start, frames}`), each frame taken only through the host's replica (signed by its
author, hash-linked to this copy) and relayed on; a frame that does not fit is refused and blamed on
the seat that gave it, which is not asked again. Until every seat that was not away is back with its
copy (or the grace has passed: a seat that never answers is not waited for longer), the host authors
nothing, not even the app's move: a frame of its own would take a place the seats' copies may hold
(`reclaim`).

A frame of another seat refused as a fault (FAULTS: a broken seal, a deal message or payment the
card deal refuses; the seat signed it) is told at once to every other joiner as `fault {seat,
reason, frame}`, each distinct (seat, reason) once: each joiner checks the seat's signature on the
frame and shows the fault; the reason is the host's word, the frame the seat's.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dicetable.core import registry
from dicetable.core.phrase import Phrase, Seat, listing, phrase
from dicetable.net.table import host_packets
from dicetable.net.table.events import (ClaimDisputed, CodeGone, Dropped, Failed, Fault, Invited, Lingering, Refused, Returned,
                                        SeatHeld, SeatReleased, code_event)
from dicetable.net.log import wire
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.identity import fingerprint, verify_signature
from dicetable.net.reach.relay import BadRelay, RelayAddress
from dicetable.net.reach.relay_link import RelayHostSocket, RelayTaken
from dicetable.net.refusals import BadJoin, BadSeal, DealRefused, Disputed, Refusal
from dicetable.net.log.replica import Replica
from dicetable.net.reach.sources import Backoff
from dicetable.net.table.seat_file import SeatFileError, load_seat
from dicetable.net.table.session import SessionError, TableSession
from dicetable.net.log.transcript import TranscriptWriter
from dicetable.net.reach.transport import DEFAULT_BIND, HostSocket, TransportError, unpack, BadPacket

ENTRIES_CHUNK = 64 * 1024  # bytes of frames per entries packet when catching a peer up
HELLO_FIELDS = frozenset({"seat", "key", "next", "nonce", "proof", "box"})
MAX_NEXT = 2**32  # a log index in a hello
FAULTS = (DealRefused, BadSeal)  # refusals of a frame its author signed that show it cheating, not a race
MAX_HELLOS = 4096  # hellos remembered per seat key, so that none of them can be replayed
HOLD_LAPSES_FREE = 1  # seat holds a source may let lapse (no join followed) before its next hold waits
HOLD_COOLDOWN = 60.0  # seconds the next hold from that source waits after one more lapse; doubled at each further one
MAX_HOLD_COOLDOWN = 3600.0  # the longest such wait
MAX_FAULT_NOTICES = 32  # distinct faults told to the joiners per table (a flood is told once)
REVEAL_HOLD = 0.02  # seconds reveals of an undecided event wait for the rest of its reveals before they are relayed


def _read_relay(relay: RelayAddress | str) -> RelayAddress:
    if isinstance(relay, RelayAddress):
        return relay
    try:
        return RelayAddress.decode(relay)
    except BadRelay as error:
        raise SessionError(f"bad relay: {error}") from None


def entry_chunks(log, start: int, end: int | None = None):
    """The log's frames from `start` to `end` (its end) as (first index, frames) of about ENTRIES_CHUNK bytes each."""
    end = len(log) if end is None else end
    while start < end:
        frames, size = [], 0
        while start + len(frames) < end and (not frames or size < ENTRIES_CHUNK):
            frame = log[start + len(frames)].frame
            frames.append(frame)
            size += len(frame)
        yield start, frames
        start += len(frames)


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


class TakenOver(SessionError):
    """Through a relay, another seat orders this table now (net/table/succession.py): rejoin it as a seat."""


class HostSession(TableSession):
    refuses_claims = True  # the orderer keeps a claim it disputes out of everyone's log

    def __init__(
        self,
        profile,
        game: str | None = None,
        seats: int | None = None,
        options: dict | None = None,
        bind: str = DEFAULT_BIND,
        port: int = 0,
        advertise: str | None = None,
        resume: Path | str | None = None,
        relay: RelayAddress | str | None = None,
        code_uses: str = "table",
        code_ttl: float = 1800.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(profile, **kwargs)
        self.bind, self.port_wanted, self.advertise = bind, port, advertise
        self.relay = _read_relay(relay) if relay is not None else None  # through a relay: no port of our own
        self.routes: dict[bytes, int] = {}  # connection -> seat
        self.links: dict[bytes, host_packets.Tagger] = {}  # routed connection -> the tags of its hello (net/table/host_packets.py)
        self._boxes: dict[bytes, set[bytes]] = {}  # seat key -> box keys of its hellos answered this run
        self._listing: dict | None = None  # through a relay: the owner's signed deputies (net/table/deputies.py)
        self._box = None  # the key the joiners' invite names for tagging (made at open: a resumed host learns its relay)
        self.reserved: dict[int, tuple[bytes, bytes, float]] = {}  # seat -> (proven key, connection, since) before its join
        self.refused_keys: dict[bytes, str] = {}  # key -> why it gets no seat (the host refused it, its hold ran out)
        self._held_from: dict[int, str] = {}  # held seat -> the source its holder's connection came from
        self._lapses = Backoff(HOLD_LAPSES_FREE, HOLD_COOLDOWN, MAX_HOLD_COOLDOWN)  # holds no join followed, per source
        self._told: set[tuple[int, str]] = set()  # faults told to the joiners
        self._challenge_secret = secrets.token_bytes(32)  # per run: a restarted host asks every joiner again
        self.last_seen: dict[int, float] = {}
        self.acked: dict[int, int] = {}  # seat -> log length it reported
        self._relay: list[bytes] | None = None  # frames accepted in the batch under way
        self._reveals_only = True  # ... all of them reveals of an event not decided yet
        self._unsent: list[bytes] = []  # frames written, not yet relayed (held reveals, then a batch)
        self._unsent_start = 0  # the log index of the first of them
        self._unsent_since = 0.0
        self.socket: HostSocket | RelayHostSocket | None = None
        self.invite = None
        self.codes = None  # the short code being offered through the relay (net/reach/codes.py)
        self.code_uses, self.code_ttl = code_uses, code_ttl  # through a relay: the short code offered at open
        self._code_gone: tuple[str, str] | None = None  # why the last code stopped, told with the next one
        self._own_due = False  # a resumed orderer: nothing of mine until the seats' longer copies are in (`reclaim`)
        self._reclaim_since = 0.0
        self._awaited: set[int] = set()  # the seats whose copies a resumed host waits for
        self._asked: dict[bytes, float] = {}  # connection -> when it was last asked for its longer copy
        self.resumed = resume is not None
        if resume is not None:
            self._resume(Path(resume))
        else:
            info = registry.get(game)
            seats = info.min_seats if seats is None else seats
            info.check_seats(seats)
            self.game_options = info.resolve_options(options)
            self.game_name, self.seat_count = info.name, seats
            self.replica = Replica(secrets.token_bytes(16), claim_check=self.check_claim, deal_handler=TableDeals(seat=0))
            self.seat = 0

    # -- opening ---------------------------------------------------------------------------------
    def open(self) -> str:
        """Bind the socket, write the opening frames; returns the invite code."""
        self._box = host_packets.host_box(self.profile, relayed=self.relay is not None)
        try:
            if self.relay is not None:
                self.socket = RelayHostSocket(self.profile, self.relay, self.replica.table, self.timing.connect_timeout)
            else:
                retry = 5.0 if self.resumed else 0.0
                self.socket = HostSocket(self.profile.curve_secret, self.bind, self.port_wanted, retry=retry)
        except RelayTaken as error:
            raise TakenOver(str(error)) from None
        except TransportError as error:
            raise SessionError(str(error)) from None
        if self.resumed:
            self.reclaim(time.monotonic())
        address = self.advertise or (self.bind if self.bind not in ("0.0.0.0", "::", "*") else None)
        if address is None and self.relay is None:
            raise SessionError("a table bound to every address needs --advertise ADDR: the address joiners dial")
        self.invite = self.socket.invite(self.replica.table, address)
        if not self.replica.log:
            chain = self.new_chain()
            self.author("open", wire.open_body(self.game_name, self.game_options, self.seat_count, self.profile.public_key))
            self.author("join", wire.join_body(self.profile.name, self.profile.public_key, chain.anchor, chain.length, self.profile.curve_public))
        code = self.invite.encode()
        self.emit(Invited(code))
        if self.relay is not None and self.replica.phase in ("new", "joining") and self.codes is None:
            self.offer_code(self.code_uses, self.code_ttl)
        return code

    # -- short codes (through a relay) ------------------------------------------------------------
    def offer_code(self, uses: str = "table", ttl: float = 1800.0) -> None:
        """Offer a short code for the invite at the relay: one seat's (`uses` "one") or the table's."""
        from dicetable.net.reach import codes

        if not isinstance(self.socket, RelayHostSocket):
            raise SessionError("short codes need a relay (--relay RELAY)")
        self.code_uses, self.code_ttl = uses, ttl
        self.codes = codes.CodeHost(self.invite.encode(), uses=uses, ttl=ttl)
        self.socket.on_mail = self._mail
        self._send_mail(self.codes.start())

    def _mail(self, op: str, body: dict) -> None:
        if self.codes is not None:
            self._send_mail(self.codes.handle(op, body))

    def _send_mail(self, packets) -> None:
        for op, body in packets:
            self.socket.send_relay(op, body)

    def watch_code(self) -> None:
        """Serve the code's joiners; tell the host what happened; withdraw it once no seat is free.
        A code used up, burned or expired is followed at once by a fresh one, however often (the
        relay limits strangers' tries: PROTOCOL.md §13.3); why the old one stopped is told in one
        line with the new code, so the host never shows a dead one."""
        offer = self.codes
        if offer is None:
            return
        self._send_mail(offer.tick())
        events, offer.events = list(offer.events), []
        for kind, text in events:
            if kind in ("burned", "expired"):
                self._code_gone = (kind, text)  # told with the next code
            elif kind in ("code", "error") and self._code_gone is not None:
                gone, why = self._code_gone
                self._code_gone = None
                self.emit(CodeGone(gone, f"{why}; the new code is {text}" if kind == "code" else f"{why}; {text}"))
                if kind == "code":
                    self.emit(code_event(kind, text))
            elif kind != "joined":  # the seat's own join is told when it lands in the log
                self.emit(code_event(kind, text))
        if self.replica.phase != "joining":
            self._send_mail(offer.withdraw())  # every seat is taken: the code opens nothing any more
            self.codes = None
        elif offer.done:  # used up (a one-seat code), burned by a wrong guess, or expired
            self.offer_code(self.code_uses, self.code_ttl)  # a fresh code for the next joiner

    def seat_data(self) -> dict:
        data = super().seat_data()
        if self.relay is not None:
            data["relay"] = self.relay.encode()  # a resumed host serves its table at the same relay
        elif self.socket is not None:
            # A resumed host listens where its invite points (the app's resume reads these back).
            data["port"] = self.socket.port
            data["bind"] = self.bind
            data["advertise"] = self.advertise or ""
        return data

    def _resume(self, path: Path) -> None:
        try:
            seat = load_seat(path)
        except SeatFileError as error:  # missing or damaged: the session cannot resume
            raise SessionError(str(error)) from None
        if not self.port_wanted and type(seat.get("port")) is int:
            self.port_wanted = seat["port"]
        if self.relay is None and type(seat.get("relay")) is str:
            self.relay = _read_relay(seat["relay"])
        if seat["seat"] != 0:
            raise SessionError(f"{path} is a joiner's transcript: resume it with `dicetable join --resume`")
        try:
            writer, transcript = TranscriptWriter.reopen(path)
        except Exception as error:  # not a transcript, damaged, unreadable: one sentence for a person
            raise SessionError(f"cannot resume from {path}: {error}") from None
        deals = TableDeals(seat=0, secrets=seat.get("deals"))  # my deal secrets, so the deal resumes
        self.replica = Replica(transcript.header["table"], deal_handler=deals)  # a replayed claim was checked live
        self.seat = 0
        self.restore_chains(seat)
        try:
            for frame in transcript.frames:
                self.replica.accept(frame)
        except Refusal as refusal:
            raise SessionError(f"the transcript {path} does not replay: {refusal}") from None
        self.replica.claim_check = self.check_claim
        self.game_name, self.seat_count = self.replica.game.name, self.replica.seat_count
        self.game_options = self.replica.options
        self.transcript, self.transcript_path = writer, path
        self.result_announced = self.replica.result is not None
        self._over_since = time.monotonic()
        self.finished = self.replica.settled

    # -- the log ---------------------------------------------------------------------------------
    def submit(self, frame: bytes) -> None:
        self.order(frame, None)

    def order(self, frame: bytes, origin: bytes | None) -> None:
        """Append `frame` to the log if the replica accepts it, and relay it; else refuse it."""
        try:
            if origin is not None:
                self._check_join(frame, origin)
            record = self.replica.accept(frame, signed_here=origin is None)  # origin None: a frame of mine
        except Refusal as refusal:
            reason = str(refusal)
            told = self._tell_fault(refusal, reason, frame, origin)
            if isinstance(refusal, Disputed):  # a claim against my seat that my own view refutes
                self.emit(ClaimDisputed(refusal.seat, refusal.said))
            else:
                self.emit((Fault if told else Refused)(refusal.seat, refusal.said))
            self.record_refusal(frame, reason)
            if origin is None:
                self._own_frame_refused(reason)
            else:
                seat = -1 if refusal.seat is None else refusal.seat
                self.tell(origin, "refused", {"seat": seat, "reason": reason})
            return
        if record.seat in self.reserved and record.kind == "join":
            del self.reserved[record.seat]
            self._held_from.pop(record.seat, None)
        self.applied(record)
        self.pass_on(record)

    def pass_on(self, record) -> None:
        """Relay a record the log just took: with its batch once on disk (`relaying`), or now."""
        if self._relay is not None:
            self._relay.append(record.frame)
            self._reveals_only = self._reveals_only and record.kind == "reveal" and record.event is None
            return
        if not self._unsent:
            self._unsent_start = record.index
        self._unsent.append(record.frame)  # behind any held reveals, in log order
        self.release()

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

    def _check_join(self, frame: bytes, origin: bytes) -> None:
        """A joiner's join takes the seat reserved for it, with the key its hello proved."""
        if self.replica.phase != "joining":
            return  # no seat is free: the replica refuses any join, so play frames are decoded once
        try:
            envelope = wire.decode(frame)
        except wire.WireError:
            return  # the replica refuses it with the reason
        if envelope.kind != "join":
            return
        seat = envelope.seat
        mine = self.routes.get(origin)
        reserved = self.reserved.get(seat)
        if mine != seat:
            raise BadJoin(mine, f"a join for seat {seat} from the connection the host seated at {mine}")
        if reserved is not None and reserved[0] != envelope.body["key"]:
            raise BadJoin(mine, f"the join names another key than the one its hello proved for seat {seat}")

    @contextmanager
    def relaying(self):
        """Frames accepted inside are written together, then relayed in one packet per peer and
        fsync'ed (`release`) — except reveals of an event still undecided, which wait up to REVEAL_HOLD
        for the rest of its reveals (one packet per joiner per event, not one per reveal; each seat
        revealed already, so what it sees later cannot sway its reveal, and deadlines run in seconds)."""
        if self._relay is not None:
            yield
            return
        self._relay, self._reveals_only = [], True
        start = len(self.replica.log)
        try:
            with self.batch(sync=False):
                yield
        finally:
            frames, self._relay = self._relay, None
            if frames and not self._unsent:
                self._unsent_start, self._unsent_since = start, time.monotonic()
            self._unsent += frames
            if self._unsent and (not self._reveals_only or time.monotonic() - self._unsent_since >= REVEAL_HOLD):
                self.release()

    def release(self) -> None:
        """Relay what waits (written to the transcript already), then fsync it in the background: the
        disk is off the roll's round trip. A crash of this process loses nothing relayed (the OS holds
        the writes); a crash of the machine may lose the unsynced tail, which the seats hold and a
        resumed host takes back from them (`reclaim`): frames no seat received are lost, and nobody
        can have acted on those."""
        frames, self._unsent = self._unsent, []
        if frames and self.socket is not None:
            packet = {"start": self._unsent_start, "frames": frames}
            for peer in self.routes:
                self.tell(peer, "entries", packet)
        if self.transcript is not None:
            self.transcript.sync_soon()

    def _durable(self) -> int:
        """The log's length written to the transcript: frames behind it may go to a joiner catching up."""
        if self._unsent:
            return self._unsent_start
        return len(self.replica.log) - (len(self._relay) if self._relay is not None else 0)

    def send_entries(self, peer: bytes, start: int) -> None:
        """Log frames from `start` on, up to the batch under way (it goes out once it is on disk)."""
        for first, frames in entry_chunks(self.replica.log, start, self._durable()):
            self.tell(peer, "entries", {"start": first, "frames": frames})

    # -- taking back the seats' longer copies ------------------------------------------------------
    def reclaim(self, now: float) -> None:
        """An orderer come back (`--resume`) or taking over (net/table/succession.py) may lack entries a seat
        holds (relayed before its fsync, or ordered by an orderer gone since): it authors nothing until
        the seats are back with them (`_seats_back`), and gives each seat the grace from now."""
        self._own_due, self._reclaim_since = True, now
        others = [s for s in range(self.replica.seat_count) if s != self.seat]
        self.last_seen = {s: now for s in others}
        # Awaited even if they drop meanwhile: a seat still redialling may hold what this copy lacks.
        self._awaited = {s for s in others if s not in self._away_since and s not in self.replica.out}

    def _seats_back(self, now: float) -> bool:
        """Every seat that was here has reconnected (and caught this copy up), or the grace has passed."""
        caught_up = all(self.acked.get(s, -1) <= len(self.replica.log) for s in self._awaited)
        return (self._awaited <= set(self.routes.values()) and caught_up) or now - self._reclaim_since > self.timing.grace

    def _only_stop(self) -> None:
        """While the seats' copies are awaited, a stop is honoured at once; other commands wait, in order."""
        waiting = []
        while not self.commands.empty():
            waiting.append(self.commands.get_nowait())
        for name, arg in waiting:
            if name == "stop":
                self.stopped = True
            else:
                self.commands.put((name, arg))

    def _ask_if_longer(self, peer: bytes, now: float) -> None:
        """A seat whose copy is longer than this log is asked for the rest, at most once a heartbeat."""
        if self.acked[self.routes[peer]] > len(self.replica.log) \
                and now - self._asked.get(peer, float("-inf")) >= self.timing.heartbeat:
            self._asked[peer] = now
            self.tell(peer, "ask", {"next": len(self.replica.log)})

    def _adopt(self, peer: bytes, start: int, frames: list) -> None:
        """Frames of the log a seat holds beyond this copy: each checked by this replica as any frame
        is (signed by its author, hash-linked to this copy), in order, and relayed to every seat; the
        first that does not fit is refused, recorded and blamed on the seat that gave it (not asked again)."""
        seat = self.routes[peer]
        for offset, frame in enumerate(frames):
            if start + offset != len(self.replica.log) or type(frame) is not bytes:
                continue
            try:
                record = self.replica.accept(frame)
            except Refusal as refusal:
                reason = f"{self.replica.who(seat)}'s copy of the log does not fit this one: {refusal}"
                self.record_refusal(frame, reason)
                self.emit(Refused(seat, Phrase.read(reason)))
                self._asked[peer] = float("inf")
                return
            self.applied(record)
            self.pass_on(record)

    # -- packets ---------------------------------------------------------------------------------
    def handle(self, peer: bytes, data: bytes, now: float) -> None:
        try:
            op, body = unpack(data)
        except BadPacket:
            return  # not our protocol; a signed frame is the only thing that could matter
        seat = self.routes.get(peer)
        if op != "hello" and seat is not None:  # a seated connection's packets carry its seat's tag (net/table/host_packets.py)
            try:
                opened = self.links[peer].take(op, body)
            except host_packets.Forged:
                self._forged(seat)
                return
            if opened is None:  # before its first packet under this hello: it may have missed the welcome
                self._who(peer)  # (after a host restart, or a hand-over): it says hello again
                return
            op, body = opened
            self.last_seen[seat] = now
            self._present(seat, now)
        self.handle_packet(peer, seat, op, body, now)

    def _forged(self, seat: int) -> None:
        """A packet on `seat`'s connection that the seat did not send (net/table/host_packets.py): ignored, said once."""
        path = f"the relay at {self.relay.address}:{self.relay.port}" if self.relay is not None else "its connection"
        self.fault(None, f"{path} carried packets that are not {self.replica.who(seat)}'s (forged, altered or "
                         "replayed): ignored")

    def handle_packet(self, peer: bytes, seat: int | None, op: str, body: dict, now: float) -> None:
        """One packet as its seat sent it (opened from its tag), or a hello, or an unseated connection's."""
        if op == "hello":
            self._hello(peer, body, now)
        elif seat is None:
            self._who(peer)  # e.g. after the host restarted: the joiner proves its key again
        elif op == "submit" and type(body.get("frame")) is bytes:
            if self.acked.get(seat, 0) <= len(self.replica.log):  # else it sits on entries I lack: resent once they are in
                self.order(body["frame"], peer)
        elif op == "ping" and type(body.get("next")) is int:
            self.acked[seat] = body["next"]
            if 0 <= body["next"] < len(self.replica.log):
                self.send_entries(peer, body["next"])
            self._ask_if_longer(peer, now)
            self.tell(peer, "pong", {"length": len(self.replica.log)})
        elif op == "give" and peer in self._asked and type(body.get("start")) is int \
                and type(body.get("frames")) is list:
            self._adopt(peer, body["start"], body["frames"])

    def challenge(self, peer: bytes) -> bytes:
        """The nonce a hello on connection `peer` must sign: fixed per connection, unlike any other's."""
        return hmac.new(self._challenge_secret, b"dicetable/challenge/v1" + peer, hashlib.sha256).digest()

    def tell(self, peer: bytes, op: str, body: dict) -> None:
        """A packet for one joiner: tagged for the hello its connection proved, if any (net/table/host_packets.py)."""
        link = self.links.get(peer)
        if link is None:
            self.socket.send(peer, op, body)  # `who`, or `full` to a hello that proved nothing
        else:
            self.socket.send(peer, "tagged", link.seal(op, body))

    def _who(self, peer: bytes) -> None:
        self.tell(peer, "who", {"nonce": self.challenge(peer)})

    def _hello(self, peer: bytes, body: dict, now: float) -> None:
        fault = _hello_fault(body)
        if fault:
            self.tell(peer, "full", {"reason": fault})
            return
        want, key, start, nonce, proof, box = (body[f] for f in ("seat", "key", "next", "nonce", "proof", "box"))
        if not hmac.compare_digest(nonce, self.challenge(peer)):
            self._who(peer)  # signed for another connection (a replay, or sent before a reconnect): ask again
            return
        replica = self.replica
        signed = wire.hello_bytes(replica.table, self.socket.public_key, nonce, key, box)
        if not verify_signature(key, signed, proof):
            reason = "the hello does not prove its key: the proof is not that key's signature of this connection's challenge"
            self.tell(peer, "full", {"reason": reason})
            return
        try:
            link = host_packets.Tagger.answering(self._box, box, replica.table, nonce, key)
        except host_packets.BadBox as error:
            self.tell(peer, "full", {"reason": f"a malformed hello: {error}"})
            return
        seat = replica.seat_of(key)
        if box in self._boxes.get(key, ()):  # a joiner makes a fresh box per hello: this one is replayed
            if seat is not None:
                self._forged(seat)
            return
        refusal = None
        if seat is None and want >= 0:
            refusal = f"seat {want} is not yours: your key never joined this table"
        elif seat == self.seat:
            refusal = "this profile is the host's own: join with another profile"
        elif seat is None and key in self.refused_keys:
            refusal = self.refused_keys[key]
        elif seat is None:
            seat, refusal = self._free_seat(peer, key, now)
        if refusal is not None:
            self.socket.send(peer, "tagged", link.seal("full", {"reason": refusal}))  # the answer to this hello
            return
        link.keep([self.links[p] for p, s in self.routes.items() if s == seat and p in self.links])
        for other in [p for p, s in self.routes.items() if s == seat and p != peer]:
            del self.routes[other]  # the seat came back on a new connection
            self.links.pop(other, None)
        self.routes[peer] = seat
        self.links[peer] = link
        boxes = self._boxes.setdefault(key, set())
        if len(boxes) >= MAX_HELLOS:
            boxes.clear()  # a seat's own flood of hellos costs bounded memory (then its oldest could be replayed)
        boxes.add(box)
        self.last_seen[seat] = now
        self._present(seat, now)
        self.tell(peer, "welcome", {
            "seat": seat, "length": len(replica.log), "table": replica.table, "timing": self.timing.to_data(),
        })
        self.send_entries(peer, start)
        self.acked[seat] = start  # what its copy holds, before its first ping
        self._ask_if_longer(peer, now)
        if self._listing is not None:
            self.tell(peer, "deputies", self._listing)

    def _free_seat(self, peer: bytes, key: bytes, now: float) -> tuple[int | None, str | None]:
        """The seat held for `key` (moved to this connection), or a free one held for it now; else
        (None, why not): the table is full, or the connection's source let holds lapse (PROTOCOL.md §10.3)."""
        replica = self.replica
        if replica.phase != "joining":
            return None, self._full_reason(now)
        self.watch_holds(now)
        for seat, (owner, _, since) in list(self.reserved.items()):
            if owner == key:
                self.reserved[seat] = (key, peer, since)  # one hold per key, however often it reconnects
                return seat, None
        free = [seat for seat, info in enumerate(replica.seats) if info is None and seat not in self.reserved]
        if not free:
            return None, self._full_reason(now)
        source = self.socket.source_of(peer)  # None: unknown (a relay that tags nothing), so not counted
        wait = self._lapses.wait(source, now) if source is not None else 0.0
        if wait > 0:  # fresh keys from there would hold the seat in a loop: others go first
            return None, (f"someone at your address held a seat at this table and did not join: no seat for your "
                          f"address for {math.ceil(wait)} s more")
        seat = free[0]
        self.reserved[seat] = (key, peer, now)
        if source is not None:
            self._held_from[seat] = source
        hold = self.timing.seat_hold
        self.emit(SeatHeld(seat, key,
                           phrase(f"{fingerprint(key)} holds ", Seat(seat), f" for its join (at most {hold:g} s)")))
        return seat, None

    def _full_reason(self, now: float) -> str:
        """Why a hello gets no seat: who sits at the table, and which seats are held for a join."""
        replica = self.replica
        players = ", ".join(info.name for info in replica.seats if info is not None)
        if replica.phase != "joining":
            return f"the game has already started and every seat is taken: {players}"
        held = [f"seat {seat} held for a joiner for {max(self.timing.seat_hold - (now - since), 0):.0f} s more"
                for seat, (_, _, since) in sorted(self.reserved.items())]
        return f"the table is full: {'; '.join([players, *held])}"

    # -- holds on free seats -------------------------------------------------------------------------
    def refuse(self, key: bytes) -> None:
        """Thread-safe: take back the seat `key` holds (a squatter's, say) and refuse that key any seat."""
        self.commands.put(("refuse", bytes(key)))

    def handle_command(self, name: str, arg: Any) -> None:
        if name != "refuse":
            super().handle_command(name, arg)
            return
        seat = self.replica.seat_of(arg)
        if seat is not None:
            self.emit(Failed(f"{self.replica.who(seat)} has joined: its seat is in the log"))
            return
        told = "the host refused you a seat at this table"
        self.refused_keys[arg] = told
        for seat, (key, _, _) in list(self.reserved.items()):
            if key == arg:
                self._release(seat, told, f"the host refused {fingerprint(arg)}")

    def watch_holds(self, now: float) -> None:
        """Free every seat whose hold ran out before its join, or whose joiner vanished before it."""
        hold, drop = self.timing.seat_hold, self.timing.drop_after
        for seat, (key, _, since) in list(self.reserved.items()):
            if now - since > hold:
                self._release(seat, f"your hold on seat {seat} ran out: no join came within {hold:g} s",
                              f"{fingerprint(key)} did not join within {hold:g} s")
            elif now - since > 2 * drop and self.last_seen.get(seat, since) < now - drop:
                self._release(seat, f"you went silent before joining: seat {seat} is free again",
                              f"{fingerprint(key)} went silent before joining", refuse=False)

    def _release(self, seat: int, told: str, said: str, refuse: bool = True) -> None:
        """Free a held seat (`told` says why, to its connections, which go); a key refused gets no other,
        and the source it came from counts one lapse (after HOLD_LAPSES_FREE, its next hold waits)."""
        key = self.reserved.pop(seat)[0]
        if refuse:
            self.refused_keys[key] = told
        source = self._held_from.pop(seat, None)
        wait = self._lapses.lapse(source, time.monotonic()) if source is not None else 0.0
        for peer in [p for p, s in self.routes.items() if s == seat]:
            self.tell(peer, "full", {"reason": told})
            del self.routes[peer]
            self.links.pop(peer, None)
        for clock in (self.last_seen, self._away_since, self.acked):
            clock.pop(seat, None)
        waits = f" (its address has let holds lapse before: it gets no seat for {wait:g} s)" if wait else ""
        self.emit(SeatReleased(seat, key, phrase(f"{said}: ", Seat(seat), f" is free again{waits}")))

    # -- presence --------------------------------------------------------------------------------
    def _present(self, seat: int, now: float) -> None:
        if seat in self._away_since:
            del self._away_since[seat]
            self.emit(Returned(seat))
            self._tell_presence(seat, True)

    def _tell_presence(self, seat: int, here: bool) -> None:
        for peer in self.routes:
            self.tell(peer, "presence", {"seat": seat, "here": here})

    def watch_presence(self, now: float) -> None:
        for seat, seen in self.last_seen.items():
            if seat not in self._away_since and now - seen > self.timing.drop_after:
                self._away_since[seat] = seen  # the grace period runs from when it was last heard
                self.emit(Dropped(seat))
                self._tell_presence(seat, False)

    # -- the loop --------------------------------------------------------------------------------
    def step(self, timeout: float) -> None:
        """Handle what arrived within `timeout` seconds, then act and watch the clocks."""
        if self._own_due and self._seats_back(time.monotonic()):
            self._own_due = False
            with self.relaying():  # after the seats' longer copies: my frames an orderer took are in them
                for seq, (_, frame) in sorted(self._sent.items()):
                    if seq >= self.replica.next_seq(self.seat):
                        self.order(frame, None)
        if self._unsent:  # held reveals go out on time
            timeout = min(timeout, max(0.0, self._unsent_since + REVEAL_HOLD - time.monotonic()))
        packet = self.socket.recv(timeout)
        with self.relaying():  # one write, one entries packet per joiner and one fsync for the whole loop turn
            while packet is not None:
                now = time.monotonic()
                self.handle(packet[0], packet[1], now)
                packet = self.socket.recv(0)
            now = time.monotonic()
            self.watch_holds(now)
            self.watch_presence(now)
            self.watch_code()
            if isinstance(self.socket, RelayHostSocket):
                self.watch_relay()
            if self._own_due:  # a frame of mine (the app's too) would take a place the seats' copies may hold
                self._only_stop()
                return
            self.drain_commands()
            if self.replica.phase == "ready" and not self._sent:
                self.author("start", {})
            self.act()
            self.reveal_if_due()  # an event my own move just opened: my reveal rides in the same packet
            self.watch_deadlines(now)

    def watch_relay(self) -> None:
        """Name the seats that may order the table in this seat's absence (net/table/succession.py), to the
        relay and to every seat (net/table/deputies.py); stop ordering once the relay says another seat does
        (this seat's copy would fork from the table's)."""
        listing = self.socket.name_deputies(self.replica)
        if listing is not None and listing is not self._listing:  # every seat holds it, for a relay that loses it
            self._listing = listing
            for peer in self.routes:
                self.tell(peer, "deputies", listing)
        if self.socket.taken is not None:
            raise SessionError(f"{fingerprint(self.socket.taken)} took over ordering this table at the relay while "
                               f"this seat was away; resume to play on as a seat: {self.transcript_path}")

    def run(self) -> Any:
        """Play until the game ends (then let the joiners catch up) or `stop()`; returns the result."""
        if self.socket is None:
            self.open()
        over_at, awaited = None, set()
        try:
            while not self.stopped:
                self.step(0.05)
                if self.finished:
                    now = time.monotonic()
                    over_at = over_at or now
                    length = len(self.replica.log)
                    behind = {s for s in range(self.replica.seat_count) if s != self.seat and self.acked.get(s, 0) < length}
                    ended = length  # a seat that left after the game's end needs no rematch offer it never answered
                    while self.replica.log[ended - 1].kind == "rematch":
                        ended -= 1
                    away = {s for s in behind & set(self._away_since) if self.acked.get(s, 0) < ended} - awaited
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
        if self._unsent:
            self.release()
        if self.socket is not None:
            self.socket.close()
        if self.transcript is not None:
            self.transcript.close()
