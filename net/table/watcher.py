"""A watcher: follows a table's log from its invite without a seat, checking every frame (PROTOCOL.md §10.11).

The watcher proves a key on its connection as a joiner does, with a `watch` hello (net/table/watching.py
`watch_bytes`), and the orderer sends it the log: catch-up from the hello's `next`, then the new entries
as they are ordered. Every entry goes through the watcher's own Replica, with the card deal's public
checks (net/cards/table_deals.py `TableDeals` with no seat, as `dicetable verify` runs it): signatures,
sequence numbers and links, every reveal and derived outcome, every move's legality, every deal step.
It holds no secret, so it sees what the log shows and nothing more: hidden cards are unknown handles
until the log opens them (a Tricolor hand at the deal's end), sealed answers commitments until unsealed.
An entry its replica refuses means the orderer (or the log it orders) lies: the watcher says so and
stops (through a relay, after asking again a few times: a dropped packet may be the relay's doing).

Every packet from the orderer but `who` carries the tag for this watcher's hello (net/table/host_packets.py),
so nothing on the path can speak for the orderer. The watcher sends `ping {next}` alone: what it holds
(the orderer sends what follows, within a window, and drops a watcher that stops pinging).

Its transcript is written as a seat's is (net/log/transcript.py: header once every seat has joined, then
each frame, then each game's result), so `dicetable verify` checks it, and `verify SEAT WATCHER` compares
it with a seat's copy.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.log import wire
from dicetable.net.log.replica import Replica
from dicetable.net.log.transcript import TranscriptWriter, header_for, transcript_dir
from dicetable.net.refusals import Refusal
from dicetable.net.reach.invite import BadInvite, Invite
from dicetable.net.reach.transport import BadPacket, PeerSocket, TransportError, pack, unpack
from dicetable.net.table import host_packets
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import Ended, Failed, Joined, Recorded, Started, TranscriptOpened
from dicetable.net.table.session import SessionError
from dicetable.net.table.watching import watch_bytes

RELAY_DOUBTS = 3  # entries through a relay that do not fit the log before the watcher stops


class WatchSession:
    """A watcher's copy of a table's log, its transcript and its link to the orderer."""

    def __init__(self, profile, invite: Invite | str, transcript: Path | str | None = None,
                 timing: Timing | None = None, on_event: Callable[[Any], None] | None = None) -> None:
        self.profile = profile
        try:
            self.invite = invite if isinstance(invite, Invite) else Invite.decode(invite)
        except BadInvite as error:
            raise SessionError(f"bad invite: {error}") from None
        try:
            self.link = host_packets.HostLink(self.invite.table_id, host_packets.host_box_public(self.invite))
        except host_packets.BadBox as error:
            raise SessionError(f"bad invite: {error} (copy it again)") from None
        self.timing = timing or Timing()
        self.on_event = on_event
        self.replica = Replica(self.invite.table_id, deal_handler=TableDeals())
        self.path = Path(transcript) if transcript else None
        self.writer: TranscriptWriter | None = None
        self._unwritten: list[bytes] = []
        self._results = 0  # games whose result is in the transcript
        self.socket: PeerSocket | None = None
        self.welcomed = False
        self.stopped = False
        self.host_length = 0
        self.last_ping = 0.0
        self.last_heard = time.monotonic()
        self._doubts = 0

    def emit(self, event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    # -- what the app reads of a seat, for a watcher (tui/tables/net_table.py drives both) -----------
    seat = None  # a watcher holds none
    games = None  # it follows every game the table plays

    @property
    def transcript_path(self) -> Path | None:
        return self.path

    def can_rematch(self) -> bool:
        return False

    def _cannot_act(self, *_: Any) -> None:
        self.emit(Failed("a watcher cannot act at the table: it follows the log"))

    move = chat = claim = resign = rematch = _cannot_act

    def stop(self) -> None:
        """Thread-safe: stop watching at the next loop turn."""
        self.stopped = True

    @property
    def finished(self) -> bool:
        """The game is over, every deck opened and checked and every seat's end receipt in (PROTOCOL.md §5.13),
        and this copy holds all the orderer said it has."""
        replica = self.replica
        return (self._ended() and len(replica.log) >= self.host_length
                and not any(replica.receipt_owed(s) for s in range(replica.seat_count)))  # every seat confirmed the end

    def _ended(self) -> bool:
        return self.replica.result is not None and self.replica.settled

    # -- connecting ------------------------------------------------------------------------------
    def connect(self) -> None:
        """Reach the orderer (authenticated by the invite's key) and be welcomed as a watcher, or a clear error."""
        relayed = self.invite.owner is not None
        greeting = pack("dial", {"table": self.invite.table_id}) if relayed else None
        where = f"{self.invite.address}:{self.invite.port}"
        try:
            self.socket = PeerSocket(self.invite, self.profile.curve_secret, greeting=greeting)
            self.socket.connect(self.timing.connect_timeout)
        except TransportError as error:
            self.hang_up()
            raise SessionError(str(error)) from None
        self.ping()
        deadline = time.monotonic() + self.timing.connect_timeout
        while not self.welcomed or self.replica.game is None:
            if self.socket is None:  # a finished table closed as we caught up
                raise SessionError(f"the table at {where} closed before we could watch it")
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise SessionError(f"the table at {where} did not let us watch within {self.timing.connect_timeout:g} s")
            self.step(min(left, 0.1))
        owner = self.invite.owner
        if owner is not None and self.replica.opener != owner:
            self.close()
            raise SessionError("the table reached through the relay was not opened by the host's key: left it")

    def ping(self) -> None:
        self.last_ping = time.monotonic()
        self.socket.send("ping", {"next": len(self.replica.log)})

    def _hello(self, nonce: bytes) -> None:
        key = self.profile.public_key
        box = self.link.box_for(nonce, key)
        proof = self.profile.sign(watch_bytes(self.invite.table_id, self.invite.host_key, nonce, key, box))
        self.socket.send("watch", {"key": key, "nonce": nonce, "proof": proof, "box": box,
                                   "next": len(self.replica.log), "name": self.profile.name[:32]})

    # -- packets ---------------------------------------------------------------------------------
    def handle(self, data: bytes, now: float) -> None:
        try:
            op, body = unpack(data)
        except BadPacket:
            return
        if op == "who":
            nonce = body.get("nonce")
            if type(nonce) is bytes and len(nonce) == wire.NONCE_BYTES:
                self._hello(nonce)
            return
        opened = self.link.open(body) if op == "tagged" else None
        if opened is None or opened is host_packets.LATE:
            return  # not the orderer's word (or a stale answer): nothing to take
        op, body = opened
        self.last_heard = now
        if op == "welcome":
            if body.get("table") != self.invite.table_id or body.get("watching") is not True:
                self.close()
                raise SessionError("the host answering this invite did not let us watch its table")
            timing = body.get("timing")
            if type(timing) is dict:
                self.timing = Timing.from_data({**timing, "connect_timeout": self.timing.connect_timeout})
            if type(body.get("length")) is int:
                self.host_length = max(self.host_length, body["length"])
            self.welcomed = True
        elif op == "full":
            self.close()
            if self._ended():
                return  # the table closed after its end (a seat that left may owe its receipt: verify says so)
            raise SessionError(f"the host does not let us watch: {str(body.get('reason', 'no reason given'))[:300]}")
        elif op == "entries" and type(body.get("start")) is int and type(body.get("frames")) is list:
            self.take(body["start"], body["frames"])
        elif op == "pong" and type(body.get("length")) is int:
            self.host_length = max(self.host_length, body["length"])

    def take(self, start: int, frames: list) -> None:
        """The orderer's entries from `start` on: each checked by this replica, in order, and written."""
        records = []
        try:
            for offset, frame in enumerate(frames):
                index, have = start + offset, len(self.replica.log)
                if index < have:
                    if self.replica.log[index].frame != frame:
                        self._refuse(frame, f"forked log: the host sent another entry {index + 1} than the one "
                                            "this watcher holds: it shows different logs")
                    continue
                if index > have or type(frame) is not bytes:
                    self.ping()  # a gap: ask for what is missing
                    return
                try:
                    records.append(self.replica.accept(frame))
                except Refusal as refusal:
                    self._refuse(frame, f"the host relayed a message this watcher refuses: {refusal}")
                    return
        finally:
            self._write(records)
        self.host_length = max(self.host_length, len(self.replica.log))

    def _refuse(self, frame: bytes, reason: str) -> None:
        """A log this watcher cannot follow: through a relay ask again a few times, else say so and stop."""
        if self.invite.owner is not None and self._doubts < RELAY_DOUBTS:
            self._doubts += 1
            self.ping()
            return
        if self.writer is not None:
            self.writer.append_refused(frame, reason)
        self.close()
        raise SessionError(reason + "; stopped watching a table whose log cannot be trusted")

    # -- the transcript and the app ------------------------------------------------------------
    def _write(self, records: list) -> None:
        if not records:
            return
        if self.writer is None:
            self._unwritten += [r.frame for r in records]
            if not any(seat is None for seat in self.replica.seats) and self.replica.game is not None:
                self._open_transcript()
        else:
            with self.writer.batch(sync=False):
                for record in records:
                    self.writer.append_frame(record.frame)
        for record in records:
            self._told(record)
        series = self.replica.series
        while self._results < len(series):  # each game's result once it is in
            if self.writer is not None:
                self.writer.append_result(series[self._results])
            self._results += 1
            self.emit(Ended(series[self._results - 1], self._describe(series[self._results - 1])))
        if self.writer is not None:
            self.writer.sync_soon()

    def _open_transcript(self) -> None:
        replica = self.replica
        if self.path is None:
            directory = transcript_dir()
            directory.mkdir(parents=True, exist_ok=True)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.path = directory / f"{stamp}-{replica.table.hex()[:8]}-watch.dtt"
        self.writer = TranscriptWriter.create(self.path, header_for(replica))
        frames, self._unwritten = self._unwritten, []
        with self.writer.batch(sync=False):
            for frame in frames:
                self.writer.append_frame(frame)
        self.emit(TranscriptOpened(self.path))

    def _told(self, record) -> None:
        body = record.envelope.body
        if record.kind == "join":
            self.emit(Joined(record.seat, body["name"], record.index))
        elif record.kind == "start" or (record.kind == "rematch" and record.index == self.replica.game_start):
            self.emit(Started(record.index))
        self.emit(Recorded(record))

    def _describe(self, result) -> str:
        names = [f"{s.name} (seat {i})" if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)]
        return result.describe(names)

    # -- the loop --------------------------------------------------------------------------------
    def step(self, timeout: float) -> None:
        data = self.socket.recv(timeout)
        while data is not None:
            self.handle(data, time.monotonic())
            if self.socket is None:
                return
            data = self.socket.recv(0)
        now = time.monotonic()
        if now - self.last_ping >= (self.timing.heartbeat if self.welcomed else 5 * self.timing.heartbeat):
            self.ping()
        if self.welcomed and now - self.last_heard > self.timing.grace:
            self.close()
            raise SessionError(f"the host has been silent for more than {self.timing.grace:g} s: stopped watching"
                               + (f"; the log so far is in {self.path}" if self.path is not None else ""))

    def run(self) -> Any:
        """Watch until the game is over and settled, or `stop()`; returns the result (None if stopped before)."""
        try:
            if self.socket is None:
                self.connect()
            while not self.stopped and not self.finished and self.socket is not None:
                self.step(0.05)
        except SessionError as error:
            self.emit(Failed(str(error)))
            raise
        finally:
            self.close()
        return self.replica.result

    def hang_up(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def close(self) -> None:
        self.hang_up()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
