"""One seat at a networked table: everything a seat does, whoever orders the log.

A `Seat` holds this seat's replica (net/log/replica.py) and checks each frame through it; it never
re-implements a check. Around it the seat adds what needs a clock or a secret: its hash chains
(revealed when the table waits for chance), its own frames not yet in the log, its moves (from a
bot, or from the app through the command queue), card payments and sealed answers, and its parts
with one owner each: `defaults` (its clocks and claims, net/table/defaults.py), `series` (the end of
a game and rematches, net/table/series.py), `sealed` (its sealed answers, net/table/sealed_answers.py)
and `transcript` (the transcript on disk with its seat file, net/table/seat_transcript.py).

The seat moves no packets. A driver does (net/table/session.py `TableSession`): the orderer (the host, or a
seat that took over: net/table/orderer.py), or the joiner's link to it (net/table/joiner.py). A
hand-over gives the same Seat another driver (net/table/succession.py `hand_over`); nothing is copied.

Hidden cards (net/cards/table_deals.py, FAIRNESS.md §2): every seat's replica carries a `TableDeals` with this
seat's deal secrets (saved in the seat file, 0600, before any message that depends on them). The
seat sends whatever the deal owes from it (`next_bodies`: shuffle and lock passes, keys
for another seat's draw, its own commitments, keys for a shown card); a move that pays hidden cards
is preceded by the public reveal of those cards (`show_bodies`), and sent once every seat has
opened them. Deal steps run on the reveal deadline (FAIRNESS.md §4).
"""

from __future__ import annotations

import queue
import time
from pathlib import Path
from typing import Any, Callable

from dicetable.core.game import GameError, Move
from dicetable.net.log import wire
from dicetable.net.chance.reveal_chain import DEFAULT_LENGTH, REFRESH_MARGIN, Chain
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.answer_path import FORWARDED, HeldAnswers
from dicetable.net.table.defaults import Defaults
from dicetable.net.table.sealed_answers import SealedAnswers
from dicetable.net.table.series import Series
from dicetable.net.table.room_part import RoomPart
from dicetable.net.table.seat_transcript import SeatTranscript
from dicetable.net.table.session import Chooser
from dicetable.net.cards.table_deals import TableDeals, paid_cards
from dicetable.net.identity import Profile
from dicetable.net.refusals import DealError
from dicetable.core.phrase import Phrase
from dicetable.net.table.events import Chat, Failed, Fault, Joined, NetEvent, Recorded, RematchAnswered, Started, YourTurn


class Seat:
    """One seat's replica, chains, own frames, acts, clocks and claims; a driver moves its frames."""

    defaults_type = Defaults  # its clocks and claims (a test's cheating clock is another)
    series_type = Series

    def __init__(
        self,
        profile: Profile,
        timing: Timing | None = None,
        chooser: Chooser | None = None,
        on_event: Callable[[NetEvent], None] | None = None,
        transcript: Path | str | None = None,
        auto_claim: bool = True,
        think: float = 0.0,
        games: int | None = 1,
    ) -> None:
        self.profile = profile
        self.timing = timing or Timing()
        self.chooser = chooser
        self.on_event = on_event or (lambda event: None)
        self.think = think
        self.chain_length = DEFAULT_LENGTH  # events one committed chain covers before a fresh anchor
        self.driver = None  # what moves this seat's frames (net/table/session.py `TableSession`)
        self.replica = None
        self.seat: int | None = None
        self.chains: list[Chain] = []
        self.commands: queue.Queue = queue.Queue()  # the app's commands, thread-safe (net/table/session.py)
        self.handlers: dict[str, Callable[[Any], None]] = {  # the app's commands by name, once seated
            "move": self.play,
            "chat": lambda text: self.author("chat", wire.chat_body(str(text))),
            "claim": lambda against: self.defaults.send_claim(int(against)),
            "resign": lambda _: self.author("resign", {}),
            "rematch": lambda agree: self.series.send_rematch(agree),
            "secret": lambda args: self.room.roll_secretly(str(args[0]), args[1]),  # a free dice room (PROTOCOL.md §16.6)
            "unveil": lambda _: self.room.unveil(), "leave": lambda _: self.room.leave(),
        }
        self.refusals: list[str] = []
        self.stopped = False
        self.unordered: dict[int, tuple[float, bytes]] = {}  # my frames not yet in the log, by seq: (sent at, frame)
        self.refused_at: int | None = None  # a frame of mine refused when the orderer's log was this long (§10.6)
        self.refused_until = 0.0  # ... waited for until then at most (the orderer's word: it may lie, or lose entries)
        self._turn: tuple[Any, float] = (None, 0.0)  # (log step, since) of my turn, for a bot's think time
        self._announced_turn: Any = None
        self._paying: Move | None = None  # a move waiting for the public reveal of the cards it pays
        self.foreseen: tuple[Any, Move] | None = None  # (view, the chooser's move for it), thought of ahead (`act_ahead`)
        self.left_at: float | None = None  # wall clock when this seat left the table (a resumed seat), if it did
        self.faults_said: set[tuple] = set()  # each fault is shown once
        self.defaults = self.defaults_type(self, auto_claim)
        self.series = self.series_type(self, games)
        self.transcript = SeatTranscript(self, transcript)
        self.sealed = SealedAnswers(self)
        self.held = HeldAnswers(self)  # the other seats' answers, boxed to me (net/table/answer_path.py)
        self.room = RoomPart(self)  # secret rolls, leaving and coming back (a room that goes on)

    @property
    def finished(self) -> bool:
        return self.series.finished

    # -- events --------------------------------------------------------------------------------
    def emit(self, event: NetEvent) -> None:
        self.on_event(event)

    def fault(self, seat: int | None, text: str) -> None:
        """Tell the player, once, that `seat` was caught cheating (FAIRNESS.md §3: shown at once)."""
        if (seat, text) not in self.faults_said:
            self.faults_said.add((seat, text))
            self.emit(Fault(seat, Phrase.read(text)))

    # -- own frames ----------------------------------------------------------------------------
    def next_seq(self) -> int:
        base = self.replica.next_seq(self.seat)
        return max([base, *(seq + 1 for seq in self.unordered)])

    def seated(self) -> bool:
        seats = self.replica.seats
        return self.seat is not None and self.seat < len(seats) and seats[self.seat] is not None

    def author(self, kind: str, body: dict, sign: bool = True) -> bytes:
        """A frame of mine with the next sequence number, on the log as my replica has it, sent to the log."""
        seq = self.next_seq()
        frame = wire.make_frame(self.profile, self.replica.table, self.seat, seq, kind, body, self.replica.head, sign=sign)
        now = time.monotonic()
        self.unordered[seq] = (now, frame)
        self.defaults.sent(kind, now)
        if kind in FORWARDED:  # first to the other seats, boxed, then to the log (FAIRNESS.md §3c)
            self.driver.forward(frame)
        self.driver.submit(frame)
        return frame

    def away_seats(self) -> set[int]:
        """Seats this seat has lost sight of (the orderer among them, by its driver's word)."""
        return set(self.defaults.away_since) | self.driver.away()

    def own_frame_landed(self, record) -> None:
        if record.seat == self.seat:
            self.unordered = {seq: v for seq, v in self.unordered.items() if seq > record.envelope.seq}

    def own_frame_refused(self, reason: str, length=0) -> None:
        """The orderer refused a frame of mine when its log was `length` entries long (its own seat: 0; a
        joiner's orderer says it in `refused`, a peer's word: anything but a count counts as 0)."""
        self.refusals.append(reason)
        length = length if type(length) is int and length >= 0 else 0
        if self.refused_at is None:
            self.refused_until = time.monotonic() + 2 * self.timing.heartbeat
        self.refused_at = max(self.refused_at or 0, length)
        self.settle_refusal()

    def settle_refusal(self) -> None:
        """Decide again after a refusal only on a copy as long as the orderer's log was then (PROTOCOL.md
        §10.6): frames of mine it held before the refused one are in it, so nothing I sign now takes a
        sequence number one of them holds (a second frame there would be my equivocation). Its entries
        left with the refusal or before it; past 2 × heartbeat without them the seat decides anyway: an
        orderer that names a length it never sends cannot keep the seat from answering (and disputing)."""
        if self.refused_at is None or self.replica is None:
            return
        if len(self.replica.log) < self.refused_at and time.monotonic() < self.refused_until:
            return
        self.refused_at = None
        self.unordered.clear()  # the log decides what counts; act again from the replica's state
        self._announced_turn = None
        self.defaults.refused()

    # -- the app's commands --------------------------------------------------------------------
    def drain_commands(self) -> None:
        while True:
            try:
                name, arg = self.commands.get_nowait()
            except queue.Empty:
                return
            self.handle_command(name, arg)

    def handle_command(self, name: str, arg: Any) -> None:
        if name == "stop":
            self.stopped = True
        elif name not in self.handlers:
            self.driver.handle_command(name, arg)  # a driver's own (the door's `refuse`)
        elif self.replica is None or not self.seated():
            self.emit(Failed("not seated at a table yet"))
        else:
            self.handlers[name](arg)

    # -- the log -------------------------------------------------------------------------------
    def applied(self, record) -> None:
        """After the replica accepted a log entry: transcript, events, my next step."""
        self.transcript.write(record.frame)
        self.own_frame_landed(record)
        index, kind, body = record.index, record.kind, record.envelope.body
        if kind == "join":
            if record.seat == self.seat:
                self.chain_placed()
            self.emit(Joined(record.seat, body["name"], index))
        elif kind == "start":
            self.emit(Started(index))
        elif kind == "chat":
            self.emit(Chat(record.seat, body["text"], index))
        elif kind == "rematch":
            self.emit(RematchAnswered(record.seat, body["agree"], record.note, index))
            if index == self.replica.game_start:  # every seat agreed: the next game starts with this record
                # (not `phase`: a batch may hold both consents, and the phase is already the later one's)
                self.series.next_game()
                self.emit(Started(index))
        self.emit(Recorded(record))
        if kind == "deal":
            self.watch_deal()
        elif kind == "claim" and body["against"] == self.seat:
            self.defaults.answer_claim(record)
        elif kind in ("claim", "witness"):  # a claim landed or took effect: its accused's dispute I hold
            self.held.keep_disputes()  # is kept, and carried once the claim took effect (net/table/answer_path.py)
        latest = record.index == len(self.replica.log) - 1  # a batch's earlier records come first
        if latest:
            self.series.game_over()

    def watch_deal(self) -> None:
        """The faults the card deal finds in the log, as this seat's replica finds them: live ones (a
        shown card opening to another, a proven wrong key) and a deck's end-of-game replay."""
        handler = self.replica.deal_handler
        if not isinstance(handler, TableDeals):
            return
        for d in handler.formed:
            deal = handler.deals[d]
            for fault in [*deal.faults, *(deal.findings() if deal.complete else ())]:
                self.fault(fault.seat, f"card deal: {fault}")

    def record_refusal(self, frame: bytes, reason: str) -> None:
        self.refusals.append(reason)
        self.transcript.append_refused(frame, reason)

    # -- acting --------------------------------------------------------------------------------
    def act(self) -> None:
        """Do what the table waits for from my seat: reveal, move, deal, refresh my chain."""
        replica = self.replica
        if replica is None or self.seat is None or not self.seated() or self.finished:
            return
        self.settle_refusal()
        if replica.shown and replica.state is not None:
            self.room.check_shown()  # secret rolls shown to me: seen as they land (PROTOCOL.md §16.6 step 7)
        if replica.phase == "over":
            self.series.check_settled()  # also when my last frames cannot land any more (the host left)
            if not self.finished and not self.unordered:
                if not self.send_deal():  # the end-of-game opening of every deck
                    self.series.send_receipt()  # then my receipt of the end (PROTOCOL.md §5.13)
                self.series.play_on()
            return
        if self.unordered:
            return
        if replica.phase != "playing":
            return
        if replica.chain_left(self.seat) < REFRESH_MARGIN:
            last = self.chains[-1]
            chain = Chain(self.replica.table, self.seat, length=self.chain_length, first=last.last + 1)
            self.chains.append(chain)
            self.transcript.save_secrets()
            self.author("anchor", wire.anchor_body(chain.anchor, chain.length, chain.first))
            return
        if self.room.act():
            return
        if self.send_deal():
            return
        if self.free_act():
            return
        waiting = replica.waiting_for
        state = replica.state
        if self.seat not in waiting.seats:
            return
        if waiting.action == "reveal":
            self.reveal_if_due()
            return
        if waiting.action == "unseal":
            self.sealed.unseal()
            return
        if waiting.action == "seal":
            state = state.asking(self.seat)  # the step asks every seat at once: mine is due now
        if waiting.action in ("move", "seal") and state.actor == self.seat:
            if self._paying is not None:
                self.play(self._paying)  # my cards are open to all now: the move goes
                return
            if self._turn[0] != replica.steps:
                self._turn = (replica.steps, time.monotonic())
            if self.chooser is not None:
                if time.monotonic() - self._turn[1] < self.think:
                    return  # a bot that takes its time, as a person would (demos, tests of drops)
                self.play(self.choose(state.view(self.seat)))
            elif self._announced_turn != len(replica.log):
                self._announced_turn = len(replica.log)
                self.emit(YourTurn(self.seat, len(replica.log)))

    def choose(self, view) -> Move:
        """The chooser's move for `view`: the one it thought of while my last frames were on their way,
        when that was for this very view (`act_ahead`), else its move now."""
        foreseen, self.foreseen = self.foreseen, None
        if foreseen is not None and foreseen[0] == view:
            return foreseen[1]
        return self.chooser(view)

    def free_act(self) -> bool:
        """One of several seats that may move (a free dice room): ask the chooser; True if it moved.

        Asked before my reveal, so a move it makes at once (a headless roll) lands in the log before
        the event that waits for my reveal can be decided."""
        replica = self.replica
        if self.chooser is None or self.unordered or replica is None or replica.phase != "playing" or not self.seated():
            return False
        state = replica.state
        if state.actor == self.seat or not state.may_act(self.seat):
            return False
        move = self.chooser(state.view(self.seat))
        if move is None:
            return False
        self.play(move)
        return bool(self.unordered)

    def reveal_if_due(self) -> bool:
        """Reveal my chain value when the table's open event waits for it (FAIRNESS.md §1)."""
        if self.free_act():
            return True
        replica = self.replica
        pending = replica.pending
        if self.finished or self.unordered or pending is None or not self.seated():
            return False
        return self._reveal(pending)

    def _reveal(self, pending) -> bool:
        """My chain value for the open event `pending`, if I have not revealed it yet."""
        if pending.reveals[self.seat] is not None:
            return False
        k = pending.number
        chain = next((c for c in self.chains if c.covers(k)), None)
        if chain is None:
            return False  # my chain ran out: the anchor refresh in act() comes first
        self.author("reveal", wire.reveal_body(k, chain.reveal(k)), sign=False)
        return True

    def act_ahead(self) -> bool:
        """On a tentative replica that holds my frames of this loop turn (net/table/following.py
        `act_ahead`), my next step if it needs nobody's choice but a bot's: my reveal, the opening of
        my sealed answer, or a bot's sealed answer. True if it authored anything. A bot's move is
        never sent ahead, only thought of (`foreseen`): it goes once the log holds the state it is for
        (`choose`), so the round trip my frames are on covers the bot's thinking."""
        replica = self.replica
        if self.finished or replica.phase != "playing" or not self.seated() or replica.state is None:
            return False
        if replica.chain_left(self.seat) < REFRESH_MARGIN:
            return False  # an anchor comes first: act() sends it once my frames are in the log
        waiting = replica.waiting_for
        if self.seat not in waiting.seats:
            return False
        authored = len(self.unordered)
        if waiting.action == "reveal":
            self._reveal(replica.pending)
        elif waiting.action == "unseal":
            self.sealed.unseal()
        elif waiting.action == "seal" and self.chooser is not None and not self.think:
            self.play(self.chooser(replica.state.asking(self.seat).view(self.seat)))
        elif waiting.action == "move" and self.chooser is not None and replica.state.actor == self.seat:
            view = replica.state.view(self.seat)
            self.foreseen = (view, self.chooser(view))
        return len(self.unordered) > authored

    def deals(self) -> TableDeals | None:
        """This seat's card-deal handler, once it knows its seat."""
        handler = self.replica.deal_handler if self.replica is not None else None
        if isinstance(handler, TableDeals) and self.seat is not None:
            handler.seat = self.seat
            return handler
        return None

    def send_deal(self) -> bool:
        """Send what the card deal owes from this seat now; True if anything was sent."""
        handler = self.deals()
        if handler is None:
            return False
        parties = len(handler.parties)
        try:
            bodies = handler.next_bodies(self.replica)
        except DealError as fault:  # e.g. a wrong key sent to me: the deal cannot go on honestly
            self.fault(fault.seat, f"card deal: {fault}")
            return False
        if len(handler.parties) != parties or any(body.get("step") == "hold" for body in bodies):
            self.transcript.save_secrets()  # new deck keys, or the nonces of my commitments: on disk before they count
        for body in bodies:
            self.author("deal", body)
        return bool(bodies)

    def play(self, move: Move) -> None:
        """Send my move; one that pays hidden cards first reveals them publicly (FAIRNESS.md §2)."""
        replica = self.replica
        if move.kind == "secret" and len(move.args) == 1:  # a chooser's secret roll: the seat adds its commitment
            self.room.chooser_roll(str(move.args[0]))
            return
        if replica.sealing is not None:
            self.sealed.seal(move)
            return
        handler = self.deals()
        try:
            payment = paid_cards(replica.state, move)
            if payment:
                replica.state.apply(move)  # an illegal move must not reveal my cards for nothing
        except GameError as error:
            self.emit(Failed(f"{move} is not legal: {error}"))
            return
        if payment and handler is not None and not handler.can_pay(self.seat, payment):
            try:
                bodies = handler.show_bodies(replica, payment)
            except ValueError as error:
                self.emit(Failed(str(error)))
                return
            self._paying = move
            for body in bodies:
                self.author("deal", body)
            return
        self._paying = None
        self.author("move", wire.move_body(move))

    # -- chains --------------------------------------------------------------------------------
    def new_chain(self) -> Chain:
        chain = Chain(self.replica.table, self.seat, length=self.chain_length)
        self.chains = [chain]
        return chain

    def chain_placed(self) -> None:
        """My first chain opens the event my join's record placed it at: 1, or for a newcomer to an open
        room the first roll not ordered when it joined (PROTOCOL.md §5.2)."""
        first = self.replica.membership.first_event(self.seat) if self.seat is not None else None
        if first is not None and self.chains and self.chains[0].first != first:
            self.chains[0].first = first
            self.transcript.save_secrets()

    def seat_data(self) -> dict:
        """What the seat file keeps: this seat's secrets, and what its driver needs to resume it."""
        data = {
            "seat": self.seat,
            "chains": [[c.secret, c.length, c.first] for c in self.chains],
        }
        handler = self.deals()
        if handler is not None and handler.parties:
            data["deals"] = handler.to_data()  # deck keys, permutations, held cards' nonces (FAIRNESS.md §6)
        return {**data, **self.room.seat_data(), **self.driver.seat_data()}

    def restore_chains(self, data: dict) -> None:
        self.chains = [Chain(self.replica.table, self.seat, bytes(s), int(n), int(f)) for s, n, f in data["chains"]]

    def resumed(self, replica, data: dict, writer, path: Path) -> None:
        """This seat as its transcript and seat file left it (a resumed host or joiner)."""
        self.replica, self.seat = replica, data["seat"]
        replica.claim_check = self.defaults.check_claim  # a replayed claim was checked live
        self.restore_chains(data)
        self.chain_placed()  # a seat file written before its join landed
        self.room.restore(data)
        self.transcript.reopened(writer, path)
        self.series.resumed()
