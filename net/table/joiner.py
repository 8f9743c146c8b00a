"""A joiner's link to whoever orders the log: connects from an invite, takes a seat, and drives it.

The joiner's seat (net/table/seat.py) keeps its own Replica and follows the orderer's log through it
(net/table/following.py): a frame the orderer relays that this replica refuses means the orderer
(or the log it orders) is lying, and the joiner leaves the table saying so rather than play on a log
it cannot trust. Catch-up is by log index: every ping carries the length of this seat's log, and
the host answers with what is missing. `--resume TRANSCRIPT` replays the seat's own transcript,
reads its chain secrets from the seat file beside it, and reclaims its seat.

Through a relay, a host seat silent past the grace does not strand the table: a seat takes over
ordering the log there and the others follow it (net/table/succession.py; `run` goes on as that orderer).
From then on this seat also takes the tags of the seats that may order (net/table/host_packets.py `trust`), and
the tag names the seat that orders, the one blamed for a log that does not fit.

A seat is reclaimed (or asked for) only by proving this profile's key: the joiner's first packet is
a ping, the host answers a connection it does not know with `who {nonce}`, and the hello signs that
nonce with the table id and the host's key (`wire.hello_bytes`, net/table/session.py). Every packet from
the host but `who` must carry the host's tag for this seat's hello (net/table/host_packets.py): any other is
not the host's word, so it is ignored (a `fault` of no seat, said once, naming the relay), and only
tagged packets count as hearing from the host. This seat's own packets but the hello carry its tag
the same way (`to_orderer`), so nothing on the path can ping or submit in its name.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from dicetable.net.table import host_packets
from dicetable.net.table import deputies
from dicetable.net.table import succession
from dicetable.net.log import wire
from dicetable.net.table.deadlines import Timing
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.reach.invite import BadInvite, Invite
from dicetable.net.reach.relay_link import MOVE_AFTER
from dicetable.net.reach.handshake_clock import HandshakeClock
from dicetable.net.table.joiner_pings import OrdererPresence, Pings
from dicetable.net.log.replica import Replica
from dicetable.net.table.seat_file import SeatFileError, load_seat
from dicetable.net.table.following import Following, Rejoin
from dicetable.net.table.seat_transcript import replayed
from dicetable.net.table.seat_links import RelayBoxes, SeatPaths
from dicetable.net.table.direct_links import DirectLinks
from dicetable.net.table.orderer import MAX_SUBMITTED, Orderer
from dicetable.net.table.outbox import chunks, let_out
from dicetable.net.table.seat import Seat
from dicetable.net.table.stalls import SeatStalls
from dicetable.net.table.session import SessionError, TableSession
from dicetable.net.log.transcript import TranscriptWriter
from dicetable.net.identity import fingerprint
from dicetable.net.reach.transport import BadPacket, HostUnreachable, PeerSocket, TransportError, pack, unpack
from dicetable.core.phrase import Phrase, phrase
from dicetable.net.table.events import Dropped, Failed, Ordering, Refused, Returned
from dicetable.net.table.watching import told_watching


class PeerSession(TableSession):
    """A joiner's seat and its link to whoever orders the log (the host, or a seat that took over)."""

    seat_type = Seat  # the joiner's seat (net/table/deal_table.py adds the deal to it)

    def __init__(self, profile, invite: Invite | str | None = None, resume: Path | str | None = None, **kwargs: Any):
        super().__init__(self.seat_type(profile, **kwargs))
        self.socket: PeerSocket | None = None
        self.host_length = 0
        self.orderer_presence = OrdererPresence()  # when the orderer was last heard, and since when it is away
        self._joined_sent = False
        self.welcomed = False
        self.relay_notice = ""  # what a relay said about the table's host (none right now), if anything
        self.succession: succession.Succession | None = None  # on a relay: the orderer gone past the grace
        self.successor: Orderer | None = None  # this seat's driver once it orders in the host seat's place
        self.gave_at = float("-inf")  # when this seat last gave its copy to an orderer behind it
        self.listing: dict | None = None  # on a relay: the owner's signed list of the seats that may serve
        self.moved_at = float("-inf")  # when this seat last moved to the table's other relay (net/reach/relay_link.py)
        self.following = Following(self)  # the orderer's log, entry by entry (net/table/following.py)
        self.submits: list[bytes] = []  # frames of mine made in this loop turn, not yet sent (`send_submits`)
        self.sent: list[bytes] = []  # frames of mine sent in this loop turn: what `act_ahead` tries
        self.pings = Pings(self)  # the handshake's clock, my pings and the orderer's pongs (net/table/joiner_pings.py)
        self.stalls = SeatStalls(self)  # heard but not ordered, or behind the orderer's log: said (net/table/stalls.py)
        if resume is not None:
            self._resume(Path(resume), invite)
        else:
            if invite is None:
                raise SessionError("joining needs an invite (or --resume TRANSCRIPT)")
            self.invite = _read_invite(invite)
            self.own.replica = Replica(self.invite.table_id, deal_handler=TableDeals(), claim_check=self.own.defaults.check_claim)
        try:
            self.link = host_packets.HostLink(self.invite.table_id, host_packets.host_box_public(self.invite))
        except host_packets.BadBox as error:
            raise SessionError(f"bad invite: {error} (copy it again)") from None
        # my answers' boxes by a path the orderer does not carry (net/table/seat_links.py, PROTOCOL.md §10.10)
        self.paths = SeatPaths(self, RelayBoxes(self) if self.invite.owner is not None else DirectLinks(self))

    @classmethod
    def rejoining(cls, host, **kwargs: Any) -> "PeerSession":
        """A resumed host seat whose table another seat orders now (net/table/host.py's TakenOver,
        net/table/succession.py): it rejoins as seat 0 from the same transcript, by its own relay invite."""
        relay, path, replica = host.relay, host.transcript_path, host.replica
        host.close()  # its transcript is reopened here
        invite = Invite(relay.address, relay.port, relay.key, replica.table, owner=replica.opener)
        peer = cls(host.profile, invite, resume=path, **kwargs)
        peer.following.rejoin = Rejoin(len(peer.replica.log))  # its tail may hold frames it wrote and never relayed
        peer.link.trust(succession.orderers(peer.replica, peer.seat))  # the orderer gone past the grace was this seat
        return peer

    def _resume(self, path: Path, invite) -> None:
        try:
            seat = load_seat(path)
        except SeatFileError as error:  # missing or damaged: the session cannot resume
            raise SessionError(str(error)) from None
        try:
            self.own.left_at = path.stat().st_mtime  # its last word at the table: when this seat left it
            writer, transcript = TranscriptWriter.reopen(path)
        except Exception as error:
            raise SessionError(f"cannot resume from {path}: {error}") from None
        self.invite = _read_invite(invite or seat.get("invite", ""))
        if transcript.header["table"] != self.invite.table_id:
            raise SessionError(f"{path} is a transcript of another table than the invite's")
        self.own.resumed(replayed(path, seat, self.invite.table_id, transcript.frames), seat, writer, path)
        self.orderer_presence.outage = (float("-inf"), None)  # away since the crash, for all this seat can tell, until caught up
        self._joined_sent = True

    def seat_data(self) -> dict:
        return {"invite": self.invite.encode()}

    # -- connecting ------------------------------------------------------------------------------
    def connect(self) -> None:
        """Reach the host, authenticate it by the invite's key, and get a seat (or a clear error). Each step
        that shows progress (the secure handshake, the orderer's `who`, its welcome) restarts the clock, and a
        step gets `connect_timeout` plus twice the link's slowest exchange so far (PROTOCOL.md §3.4)."""
        relayed = self.invite.owner is not None
        greeting = pack("dial", {"table": self.invite.table_id}) if relayed else None  # which table, at a relay
        clock = self.pings.handshake = HandshakeClock(self.timing.connect_timeout)
        try:
            self.socket = PeerSocket(self.invite, self.profile.curve_secret, greeting=greeting)
            self.socket.connect(self.timing.connect_timeout)
        except TransportError as error:
            self.close()
            if relayed:
                raise SessionError(str(error).replace("no table answered", "no relay answered")
                                   .replace("the host at", "the relay at")) from None
            if isinstance(error, HostUnreachable) and self.own.left_at is not None:  # a resumed seat: its game is kept
                where = f"{self.invite.address}:{self.invite.port}"
                raise SessionError(f"no table answered at {where}: {self.stranded()}") from None
            raise SessionError(str(error)) from None
        clock.answered("handshake", asked_at=clock.since)  # the secure handshake: the link's first exchange (two or three, in truth)
        self.pings.ask_who()
        while not self.welcomed or self.replica.game is None:  # seated, and the game known
            left = clock.left()
            if left <= 0:
                self.close()
                where = f"{self.invite.address}:{self.invite.port}"
                if self.relay_notice:
                    raise SessionError(f"the relay at {where} says: {self.relay_notice}")
                if self.link.refused and self.invite.owner is not None:
                    raise SessionError(f"the table reached through the relay at {where} does not answer with the host's "
                                       f"key {fingerprint(self.invite.owner)}: the relay or someone else set it up; left it")
                raise SessionError(f"the host at {where} did not seat us {clock.within()}")
            self.step(min(left, 0.1))
        self.pings.handshake = None
        self._check_owner()

    def _check_owner(self) -> None:
        """Through a relay, the table must be opened by the owner key the invite names (else the relay made it)."""
        owner = self.invite.owner
        if owner is not None and self.replica.opener != owner:
            self.close()
            raise SessionError(
                f"the table reached through the relay was not opened by the host's key {fingerprint(owner)} "
                f"(it was by {fingerprint(self.replica.opener)}): the relay or someone else set it up; left it")

    def hello(self, nonce: bytes) -> None:
        """Ask for (or reclaim) a seat, proving this profile's key on this connection."""
        seat = self.seat if self.seat is not None else -1
        key = self.profile.public_key
        box = self.link.box_for(nonce, key)  # the host tags its answers for this hello (net/table/host_packets.py)
        proof = self.profile.sign(wire.hello_bytes(self.invite.table_id, self.invite.host_key, nonce, key, box))
        rejoin = self.following.rejoin
        start = len(self.replica.log) if rejoin is None or rejoin.copy is None else rejoin.agreed  # a rejoining host: compare first
        self.socket.send("hello", {"seat": seat, "key": key, "next": start, "nonce": nonce,
                                   "proof": proof, "box": box})
        if self.pings.handshake is not None:
            self.pings.handshake.asked()

    # -- the log ---------------------------------------------------------------------------------
    def submit(self, frame: bytes) -> None:
        """A frame of mine for the log: sent at the end of this loop turn, with any others the turn
        makes (a reveal and a move, a seal and its opening) in one packet (`send_submits`)."""
        self.submits.append(frame)

    def send_submits(self) -> list[bytes]:
        """The frames this loop turn made, in `submit` packets of up to MAX_SUBMITTED frames and
        ENTRIES_CHUNK bytes (a larger frame alone): most turns make one or two (PROTOCOL.md §10.1).
        Returns them (none while they are kept: before an answer to a hello they would go plain,
        readable on the path, host_packets.py)."""
        if self.socket is None or not self.link.answered():
            return []
        frames, self.submits = self.submits, []
        self.sent += frames
        for _, part in chunks(frames, 0):
            for at in range(0, len(part), MAX_SUBMITTED):
                some = part[at:at + MAX_SUBMITTED]
                self.to_orderer("submit", {"frame": some[0]} if len(some) == 1 else {"frames": some})
        return frames

    def send_turn(self) -> None:
        """My frames made since the last send go now, then at once what they open for me (net/table/following.py
        `act_ahead`: sent after them, and before the clocks, which rarely add a frame)."""
        if self.send_submits():
            let_out()
            self.following.act_ahead(self.sent)
            self.send_submits()

    def forward(self, frame: bytes) -> None:
        """My answer boxed to each other joiner, by my own path, else through the orderer (PROTOCOL.md §10.10)."""
        self.paths.forward(frame)

    def to_orderer(self, op: str, body: dict) -> None:
        """Any packet but the hello: tagged for the orderer's answer to this seat's hello (net/table/host_packets.py)."""
        self.socket.send(*self.link.seal(op, body))

    def handle(self, data: bytes, now: float) -> None:
        try:
            op, body = unpack(data)
        except BadPacket:
            return
        if op == "relay_wait":  # the relay's word, not the host's: the host is not there to hear from
            self.relay_notice = str(body.get("reason", ""))[:200]
            return
        if self.paths.handle(op, body):  # the relay's own word on my boxes (net/table/seat_links.py)
            return
        if op == "who":  # the one packet before any key: all it can make us do is say hello again
            self._who(body)
            return
        opened = self.link.open(body) if op == "tagged" else None
        if opened is host_packets.LATE:
            return
        if opened is None:
            self._not_the_hosts(op, body)
            return
        op, body = opened
        self.relay_notice = ""  # the orderer is heard here: whatever the relay said of it is past
        if self.orderer_presence.heard(now):  # back after an outage
            if self.succession is None:
                self.emit(Returned(0, "the host is back"))
            else:  # a seat that took over (net/table/succession.py); seat 0 stays away until it says otherwise
                if self.own.refused_at is not None:  # the refusing orderer's log is gone with it: this one's counts
                    self.own.refused_at = 0
                self.emit(Ordering(self.link.orderer,
                                   phrase(self.replica.who(self.link.orderer), " orders the log through the relay now")))
            self.pings.ask_who()  # the host may have restarted: it asks this seat to prove itself again
        if op == "welcome":
            self._welcome(body)
        elif op == "who":
            self._who(body)
        elif op == "full":
            self.close()
            raise SessionError(f"the host did not seat us: {body.get('reason', 'no reason given')}")
        elif op == "entries" and type(body.get("start")) is int and type(body.get("frames")) is list:
            self.following.take(body["start"], body["frames"])
        elif op == "refused":
            reason = str(body.get("reason", ""))
            self.emit(Refused(body.get("seat"), Phrase.read(reason)))
            if body.get("seat") == self.seat:  # decided again once my copy is as long as the log was (§10.6)
                self.own.own_frame_refused(reason, body.get("length"))
                if not self.own.seated():
                    self.close()
                    raise SessionError(f"the host refused our join: {reason}")
        elif op == "fault":
            self.following.fault_told(body)
        elif op == "forwarded":  # another seat's answer, boxed to me (net/table/answer_path.py)
            self.own.held.take(body.get("from"), body.get("box"))
        elif op == "offered":  # another seat's signed endpoint for a direct link (net/table/direct_links.py)
            self.paths.offered(body)
        elif op == "deputies" and self.invite.owner is not None:  # the owner's list, to show a relay that lost it
            named = deputies.read(body, self.replica.table)
            if named is not None and named[0] == self.invite.owner:
                self.listing = body  # its keys are checked against the log's seats when shown (succession.take_over)
        elif op == "watchers":  # who watches without a seat (net/table/watching.py)
            watching = told_watching(body)
            if watching is not None:
                self.emit(watching)
        elif op == "ask":  # an orderer that took over, behind this seat's copy (net/table/succession.py)
            succession.give(self, body)
        elif op == "pong" and type(body.get("length")) is int:
            self.pings.pong(body, now)
        elif op == "presence" and type(body.get("seat")) is int:
            seat = body["seat"]
            if body.get("here"):
                if self.own.defaults.away_since.pop(seat, None) is not None:
                    self.emit(Returned(seat))
            elif seat not in self.own.defaults.away_since and seat != self.seat:
                self.own.defaults.away_since[seat] = now - self.timing.drop_after
                self.emit(Dropped(seat))

    def _who(self, body: dict) -> None:
        nonce = body.get("nonce")
        if type(nonce) is bytes and len(nonce) == wire.NONCE_BYTES:
            if self.pings.handshake is not None:
                self.pings.handshake.answered("who")  # the orderer is there: the hello's step starts
            self.hello(nonce)

    def _not_the_hosts(self, op: str, body: dict) -> None:
        """A packet without the host's tag (net/table/host_packets.py): ignored; the relay's own refusal is its word."""
        if op == "full" and self.invite.owner is not None and not self.welcomed:
            self.relay_notice = str(body.get("reason", ""))[:200]  # e.g. the relay has too many connections
            return
        where = f"{self.invite.address}:{self.invite.port}"
        path = f"the relay at {where}" if self.invite.owner is not None else f"the connection to {where}"
        orderer = "the host" if self.succession is None else "the ordering seat"
        self.own.fault(None, f"{path} carried packets that are not {orderer}'s (forged, altered or replayed): "
                         f"ignored; the table goes on with what {orderer} really sent")

    def _welcome(self, body: dict) -> None:
        if body.get("table") != self.invite.table_id:
            self.close()
            raise SessionError("the host answering this invite hosts another table (stale invite?)")
        seat = body.get("seat")
        if type(seat) is not int or (self.seat is not None and seat != self.seat):
            self.close()
            raise SessionError(f"the host gave us seat {seat!r}, not our seat {self.seat}")
        self.own.seat = seat
        if isinstance(self.replica.deal_handler, TableDeals):
            self.replica.deal_handler.seat = seat  # before any deck forms: my deal secrets are made then
        self.timing = Timing.from_data({**body.get("timing", {}), "connect_timeout": self.timing.connect_timeout})
        self.host_length = body.get("length", 0) if type(body.get("length")) is int else 0
        rejoin = self.following.rejoin
        if rejoin is not None and type(body.get("handed")) is int and body["handed"] >= 0:  # an orderer that took over
            rejoin.handed = max(rejoin.handed or 0, body["handed"])  # (net/table/succession.py)
        self.welcomed = True
        if self.pings.handshake is not None:
            self.pings.handshake.answered("welcome")
        self.paths.welcomed()

    def away(self) -> set[int]:
        return {0} if self.orderer_presence.away_since is not None else set()

    def cut_off(self, now: float, since: float) -> float | None:
        return self.orderer_presence.cut_off(now, since)

    def wait_start(self, seat: int, since: float, length: int, now: float) -> float | None:
        return self.pings.wait_start(seat, since, length, now)

    def stranded(self) -> str:
        """What a seat whose host is gone should know: what happened, where its game is kept, what it can do."""
        path = self.transcript_path
        if path is None or not path.exists():
            return "the host has closed the table or is offline; the game had not started, so nothing was kept"
        return (f"the host has closed the table or is offline; your transcript is {path}; `dicetable verify {path}` "
                "checks it; you can make a claim when it returns (resume the game then)")

    def _resend(self, now: float) -> None:
        """Frames of mine the host has not ordered after a drop: send them again, byte for byte (a copy of
        one ordered or refused is not decided again, PROTOCOL.md §10.6); none once one was refused."""
        if self.own.refused_at is not None:
            return
        for seq, (sent, frame) in list(self.own.unordered.items()):
            if now - sent > 2 * self.timing.heartbeat:
                self.own.unordered[seq] = (now, frame)
                self.submit(frame)

    # -- the loop --------------------------------------------------------------------------------
    def step(self, timeout: float) -> None:
        self.sent = []
        with self.own.transcript.batch(sync=False):  # one write per loop turn, after this seat's sends (net/log/transcript.py)
            try:
                self._turn(timeout)
            finally:
                self.send_submits()
                self.paths.flush()  # my answers' boxes, after their submit (net/table/seat_links.py)
        self.own.transcript.sync_soon()  # the disk off the next round trip too: all of it is in the host's log

    def _turn(self, timeout: float) -> None:
        data = self.socket.recv(timeout)
        while data is not None:
            self.handle(data, time.monotonic())
            if self.socket is None:
                return
            data = self.socket.recv(0)
        now = time.monotonic()
        if not self.welcomed:
            self.pings.watch(now)  # a lost ping, who or hello: asked again
            return
        self.own.drain_commands()
        if not self._joined_sent and self.replica.log and (self.replica.phase == "joining" or self._late_seat()):
            chain = self.own.new_chain()
            self._joined_sent = True
            self.own.author("join", wire.join_body(self.profile.name, self.profile.public_key, chain.anchor, chain.length, self.profile.curve_public))
        # Act only on a caught-up log; a rejoining host seat only once its copy is checked up to the
        # orderer's length: nothing of mine is signed on a tail it may still cut.
        rejoin = self.following.rejoin
        if len(self.replica.log) >= self.host_length and (rejoin is None or rejoin.checked(self.host_length)):
            self.orderer_presence.caught_up(now)
            self.own.act()
            self.send_turn()  # before anything else: the orderer waits for it
            self.own.defaults.watch_deadlines(now)
        self.paths.step()  # my own paths for answers' boxes (net/table/seat_links.py): off the round trip too
        self.pings.watch(now)
        presence = self.orderer_presence
        if presence.silent(now, self.timing.drop_after):
            self.emit(Dropped(0, "lost the host; reconnecting"))
        self.stalls.watch(now)
        if presence.away_since is not None and self.invite.fallback is not None and self._relay_lost() \
                and now - max(presence.away_since, self.moved_at) > MOVE_AFTER:
            self._move_relay(now)
        if presence.away_since is not None and now - presence.away_since > self.patience() \
                and not succession.follow(self, now):  # on a relay, a seat takes over ordering first
            since = time.strftime("%H:%M", time.localtime(time.time() - (now - presence.away_since)))
            raise SessionError(f"the host has been unreachable since {since} (more than {self.timing.grace:g} s): "
                               f"{self.stranded()}")

    def patience(self) -> float:
        """How long the orderer may be silent before this seat looks for another: the grace, or nothing
        once the ordering seat has left its room (its `leave` in the log: it is not coming back, §5.11)."""
        orderer = self.link.orderer if self.link.orderer is not None else 0
        return 0.0 if self.replica is not None and orderer in self.replica.out else self.timing.grace

    def _late_seat(self) -> bool:
        """Welcomed to a free seat of an open room that runs already (PROTOCOL.md §5.2): join once caught up."""
        replica = self.replica
        return len(replica.log) >= self.host_length and self.own.seat in replica.membership.free_seats()

    def _relay_lost(self) -> bool:
        """Whether this seat's relay is out of reach (its connection down since it broke) or says it has no
        host for the table: a live relay with the host behind it is never left, however slow the host."""
        return not self.socket._established or bool(self.relay_notice)

    def _move_relay(self, now: float) -> None:
        """No word from the orderer for MOVE_AFTER s at a table with a second relay: look for it there, and
        back here after as long again (the host moves its table the same way: net/reach/relay_link.py). The
        new connection proves this seat by hello and catches up by log index, as after any drop."""
        gone = f"{self.invite.address}:{self.invite.port}"
        self.invite = self.invite.moved()  # kept in the seat file too: a resumed seat looks here first
        self.hang_up()
        self.socket = PeerSocket(self.invite, self.profile.curve_secret, greeting=pack("dial", {"table": self.invite.table_id}))
        self.moved_at, self.relay_notice = now, ""
        self.emit(Dropped(0, f"no word from the host through the relay at {gone}: looking for the table at its "
                             f"other relay {self.invite.address}:{self.invite.port}"))
        self.pings.ask_who()

    def run(self) -> Any:
        """Play until the game ends or `stop()`; returns the result."""
        try:
            if self.socket is None:
                self.connect()
            while not self.stopped and not self.finished and self.successor is None:
                self.step(0.05)
            if self.successor is not None:  # this seat orders the log now: the same thread plays on
                return self.successor.run()
            if self.finished and self.socket is not None:
                self.to_orderer("ping", {"next": len(self.replica.log)})  # tells the host we have it all
        except SessionError as error:
            self.emit(Failed(str(error)))  # the app hears it as a message, the caller as the error
            raise
        finally:
            self.close()
        return self.replica.result

    def hang_up(self) -> None:
        if self.socket is not None:
            self.send_submits()  # e.g. a dispute made just before leaving: it goes out first
            self.paths.flush()
            self.socket.close()
            self.socket = None

    def close(self) -> None:
        self.hang_up()
        self.paths.close()
        self.own.transcript.close()


def _read_invite(invite: Invite | str) -> Invite:
    if isinstance(invite, Invite):
        return invite
    try:
        return Invite.decode(invite)
    except BadInvite as error:
        raise SessionError(f"bad invite: {error}") from None
