"""The host: the orderer that opens the table (net/table/orderer.py), binds its socket, and offers its invite.

The host's seat (net/table/seat.py) is seat 0; its driver is this orderer. Through a relay, the host
offers a short code for its invite (net/reach/codes.py) while seats are free. A host that resumes
(`--resume`, the app's Resume) replays its own transcript, reads its secrets from the seat file, and
takes back the seats' longer copies before it authors anything (net/table/reclaim.py).
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from dicetable.core import registry
from dicetable.net.table import host_packets
from dicetable.net.log import wire
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.reach.relay_address import BadRelay, RelayAddress
from dicetable.net.reach.relay_link import RelayHostSocket, RelayTaken
from dicetable.net.log.replica import Replica
from dicetable.net.table.orderer import Orderer
from dicetable.net.table.seat import Seat
from dicetable.net.table.seat_file import SeatFileError, load_seat
from dicetable.net.table.seat_transcript import replayed
from dicetable.net.table.session import SessionError
from dicetable.net.log.transcript import TranscriptWriter
from dicetable.net.reach.transport import DEFAULT_BIND, HostSocket, TransportError
from dicetable.net.table.events import CodeGone, CodesStopped, Invited, code_event


def _read_relay(relay: RelayAddress | str) -> RelayAddress:
    if isinstance(relay, RelayAddress):
        return relay
    try:
        return RelayAddress.decode(relay)
    except BadRelay as error:
        raise SessionError(f"bad relay: {error}") from None


class CodeOffer:
    """The host's short code for its invite at the relay (net/reach/codes.py): offered while seats are
    free, renewed when it is used up, burned or expired, withdrawn once every seat is taken."""

    def __init__(self, host, uses: str = "table", ttl: float = 1800.0) -> None:
        self.host = host
        self.emit = host.emit
        self.uses, self.ttl = uses, ttl  # one seat's code ("one") or the table's, and for how long
        self.offer = None  # the code being offered (net/reach/codes.py's CodeHost)
        self._code_gone: tuple[str, str] | None = None  # why the last code stopped, told with the next one
        self.lost = 0  # codes lost in a row (net/reach/codes.py): at LOST_IN_A_ROW, no more are offered

    def renew(self) -> None:
        """Offer a fresh short code for the invite at the relay: one seat's (`uses` "one") or the table's."""
        from dicetable.net.reach import codes

        host = self.host
        if not isinstance(host.socket, RelayHostSocket):
            raise SessionError("short codes need a relay (--relay RELAY)")
        self.offer = codes.CodeHost(host.invite.encode(), uses=self.uses, ttl=self.ttl)
        host.socket.on_mail = self._mail
        self._send_mail(self.offer.start())

    def _mail(self, op: str, body: dict) -> None:
        if self.offer is not None:
            self._send_mail(self.offer.handle(op, body))

    def _send_mail(self, packets) -> None:
        for op, body in packets:
            self.host.socket.send_relay(op, body)

    def watch(self) -> None:
        """Serve the code's joiners; tell the host what happened; withdraw it once no seat is free.
        A code used up, burned or expired is followed at once by a fresh one (the relay limits
        strangers' tries: PROTOCOL.md §13.3), and why the old one stopped is told in one line with the
        new code, so the host never shows a dead one; but after LOST_IN_A_ROW codes lost in a row
        (burned, flooded) none is offered, and that is told, with what to do (§13.4)."""
        offer = self.offer
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
            elif kind == "joined":  # the seat's own join is told when it lands in the log
                self.lost = 0
            else:
                self.emit(code_event(kind, text))
        if not self.host.replica.membership.free_seats():  # an open room keeps it while a seat is free
            self._send_mail(offer.withdraw())  # every seat is taken: the code opens nothing any more
            self.offer = None
        elif offer.done:  # used up (a one-seat code), burned by a wrong guess, flooded, or expired
            from dicetable.net.reach import codes

            self.lost = self.lost + 1 if offer.lost else 0
            if self.lost < codes.LOST_IN_A_ROW:
                self.renew()  # a fresh code for the next joiner
                return
            self.offer, (_, why) = None, self._code_gone or ("", "")
            self._code_gone = None
            self.emit(CodesStopped(f"{why}; {codes.stopped(self.lost)}".lstrip("; ")))


class TakenOver(SessionError):
    """Through a relay, another seat orders this table now (net/table/succession.py): rejoin it as a seat."""


class HostSession(Orderer):
    """The orderer that opens its table: seat 0, its socket or its relay, its invite and short codes."""

    seat_type = Seat  # the host's seat (net/table/deal_table.py adds the deal to it)

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
        relay: RelayAddress | str | list | None = None,
        code_uses: str = "table",
        code_ttl: float = 1800.0,
        start_with: int | None = None,
        **kwargs: Any,
    ) -> None:
        """`start_with`: an open room (a free dice room) starts once this many seats have joined and takes
        newcomers into its other seats while it runs (PROTOCOL.md §5.2); None: the table starts full."""
        relays = list(relay) if isinstance(relay, (list, tuple)) else [] if relay is None else [relay]
        if len(relays) > 2:
            raise SessionError("a table names at most two relays: its relay, and a second one it moves to if that one dies")
        super().__init__(self.seat_type(profile, **kwargs), relay=_read_relay(relays[0]) if relays else None)
        self.fallback = _read_relay(relays[1]) if len(relays) > 1 else None  # the second relay (net/reach/relay_link.py)
        self.bind, self.port_wanted, self.advertise = bind, port, advertise
        self.invite = None
        self.code = CodeOffer(self, code_uses, code_ttl)  # through a relay: the short code for the invite
        self.resumed = resume is not None
        self.start_with = start_with
        if resume is not None:
            self._resume(Path(resume))
        else:
            info = registry.get(game)
            seats = info.min_seats if seats is None else seats
            info.check_seats(seats)
            self.game_options = info.resolve_options(options)
            self.game_name, self.seat_count = info.name, seats
            own = self.own
            own.replica = Replica(secrets.token_bytes(16), claim_check=own.defaults.check_claim, deal_handler=TableDeals(seat=0))
            own.seat = 0

    # -- opening ---------------------------------------------------------------------------------
    def open(self) -> str:
        """Bind the socket, write the opening frames; returns the invite code."""
        self.box = host_packets.host_box(self.profile, relayed=self.relay is not None)
        try:
            if self.relay is not None:
                self.socket = RelayHostSocket(self.profile, self.relay, self.replica.table, self.timing.connect_timeout,
                                              fallback=self.fallback)
            else:
                retry = 5.0 if self.resumed else 0.0
                self.socket = HostSocket(self.profile.curve_secret, self.bind, self.port_wanted, retry=retry)
        except RelayTaken as error:
            raise TakenOver(str(error)) from None
        except TransportError as error:
            raise SessionError(str(error)) from None
        if self.resumed:
            self.reclaim.start(time.monotonic())
        address = self.advertise or (self.bind if self.bind not in ("0.0.0.0", "::", "*") else None)
        if address is None and self.relay is None:
            raise SessionError("a table bound to every address needs --advertise ADDR: the address joiners dial")
        self.invite = self.socket.invite(self.replica.table, address)
        if not self.replica.log:
            chain = self.own.new_chain()
            self.own.author("open", wire.open_body(self.game_name, self.game_options, self.seat_count, self.profile.public_key))
            self.own.author("join", wire.join_body(self.profile.name, self.profile.public_key, chain.anchor, chain.length, self.profile.curve_public))
        code = self.invite.encode()
        self.emit(Invited(code))
        if self.relay is not None and (self.replica.phase == "new" or self.replica.membership.free_seats()) \
                and self.code.offer is None:
            self.code.renew()
        return code

    def seat_data(self) -> dict:
        data = super().seat_data()
        if isinstance(self.socket, RelayHostSocket):  # the relay it serves at now (it may have moved), and the other
            data["relay"] = self.socket.relay.encode()
            if self.socket.fallback is not None:
                data["fallback"] = self.socket.fallback.encode()
        if self.relay is None and self.socket is not None:
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
            if self.fallback is None and type(seat.get("fallback")) is str:
                self.fallback = _read_relay(seat["fallback"])
        if seat["seat"] != 0:
            raise SessionError(f"{path} is a joiner's transcript: resume it with `dicetable join --resume`")
        try:
            writer, transcript = TranscriptWriter.reopen(path)
        except Exception as error:  # not a transcript, damaged, unreadable: one sentence for a person
            raise SessionError(f"cannot resume from {path}: {error}") from None
        replica = replayed(path, seat, transcript.header["table"], transcript.frames)
        self.own.resumed(replica, seat, writer, path)
        self.game_name, self.seat_count = replica.game.name, replica.seat_count
        self.game_options = replica.options

    def watch_code(self) -> None:
        self.code.watch()

    def run(self) -> Any:
        """Open the table if it is not open yet, then order it (net/table/orderer.py `run`)."""
        if self.socket is None:
            self.open()
        return super().run()
