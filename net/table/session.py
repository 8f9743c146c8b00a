"""A seat at a networked table: what host and joiner have in common (net/table/host.py, net/table/joiner.py).

Every seat keeps its own `Replica` (net/log/replica.py) over the ordered log and checks each frame on
arrival; it never re-implements a check. Around it the session adds what needs a clock or a secret:
its seat's hash chains (revealed when the table waits for chance), its moves (from a bot, or from
the app through `move()`), deadlines and default claims (FAIRNESS.md §4; the rule in
net/table/deadlines.py), presence, and the transcript on disk with its seat file (net/table/seat_file.py).

The session is one synchronous loop (`run()`), meant for a Textual thread worker or the main thread
of a headless command. The app talks to it through thread-safe methods (`move`, `chat`, `claim`,
`resign`, `stop`) and hears from it through `on_event(event)`, called in the session's thread
(in the app: `lambda e: app.call_from_thread(app.post_message, TableEvent(e))`):

    host = HostSession(profile, "trice", 2, {}, port=0, on_event=...)   # chooser=None: a person
    invite = host.open()            # binds, writes open + join, returns the `dt1-...` code
    app.run_worker(host.run, thread=True)
    peer = PeerSession(profile, invite, on_event=...); peer.connect()   # SessionError: one line
    app.run_worker(peer.run, thread=True)
    ... on `YourTurn`: session.move(Move(...)); on `Claimable`: offer session.claim(seat)

A state where several seats may move (the state's `may_act`, e.g. a free dice room): the chooser is
asked whenever this seat may move and is not the one due; it returns None when it has nothing to do.
A person's moves arrive through `move()` at any moment and go to the log as they are.

Read `session.replica` (state, seats, events, waiting_for) only from the session's thread or
treat it as a snapshot: it changes as records arrive. Timing (heartbeat, grace, deadlines) is the
host's and reaches joiners in its welcome.

The events, one type each, are in net/table/events.py. A `Recorded` follows every log entry (after
the `Joined`, `Started`, `Chat` or `RematchAnswered` the entry makes); `Fault` names a seat caught
cheating, once, the moment this seat knows (a frame of its own signing the host refused as a broken
commitment or deal rule, or what the card deal finds in the log: a shown card that opens to another,
a wrong key, a deck whose end-of-game replay fails); `Defaulted` (after `Ended`) names the claimant
whose claim against this seat decided the game (told also to a seat that learns it on its return);
`Started` follows too when the next game starts with every seat's consent.

Rematches (PROTOCOL.md §5.10): once a game is over (its decks opened), a seat's `rematch()`
signs its consent to the next game with the options the ended game's rules give; the consent that
completes every seat's starts that game in the same log. `games` says how many games the seat plays:
1 (default) finishes at the first game's end as before; N agrees to rematches until N are played,
then declines; None waits for `rematch(agree)` from a person. A seat still waiting for answers
finishes when someone declines or the seats it waits for are gone.

Packets between host and joiners (`[op, body]`, net/reach/transport.py), field by field, and the
tagging of all but `who` and the hello (net/table/host_packets.py): PROTOCOL.md §10.1, §10.4.

Seats are authenticated by their signed frames, and connections by their hello: the host routes a
seat (its entries, refusals, presence, and the liveness that keeps it from default) only to a
connection whose hello proves the seat's Ed25519 key. The proof is the key's signature of
`wire.hello_bytes`: "dicetable/hello/v2" ‖ table id ‖ host curve key ‖ nonce ‖ key ‖ box, where the nonce
is the host's challenge for this one connection (`who`; an HMAC of the connection's routing id
under a secret of this host run). A hello copied onto another connection, or kept from before a
host restart, names a nonce that is not that connection's: the host answers `who` again and changes
nothing. A proof that does not verify, or a malformed hello, gets `full` and changes nothing; the
seat's route stays where it was. A first-time joiner proves its key the same way, so nobody can
reserve a seat in another's name; during joining each proven key holds at most one reservation (a
reconnect moves it), and a joiner's join frame must be for that seat and carry that key. A
connection that proves no key can still make the host send it `who`, nothing else.
Routes are keyed by ZeroMQ routing ids (net/reach/transport.py): each joiner connection announces a fresh
random 16-byte id, the host's ROUTER has no handover (a connection announcing a live connection's id
is ignored: it neither takes over that seat's packets nor keeps it present), and the host drops
packets from ids not of that form. Known limit of libzmq 4.3.5: a client that claims the id libzmq
would make up for the next client announcing none makes the host abort when that client connects;
the host seeds the counter secretly (a 1 in 2**32 guess per claimed id), but only someone holding
the invite (past the CurveZMQ handshake) can try at all; the host then restarts with `--resume`.

Hidden cards (net/cards/table_deals.py, FAIRNESS.md §2): every seat's replica carries a `TableDeals` with this
seat's deal secrets (saved in the seat file, 0600, before any message that depends on them). The
session sends whatever the deal owes from this seat (`next_bodies`: shuffle and lock passes, keys
for another seat's draw, its own commitments, keys for a shown card); a move that pays hidden cards
is preceded by the public reveal of those cards (`show_bodies`), and sent once every seat has
opened them. At the end the result is announced at once, but the session is `finished` only when
every deck has been opened and checked (`replica.settled`), or the reveal deadline has passed.
Deal steps run on the reveal deadline (FAIRNESS.md §4): a seat that does not deliver its shuffle or
lock pass, its card keys or its commitment in time is in default, as for a withheld reveal; a card
game cannot go on without it (every position carries its key), so the claim ends the game.

Default claims (FAIRNESS.md §4; who decides: net/table/deadlines.py). A session claims a seat its own
clock finds in default (`auto_claim`, or `claim()` from the app), co-signs ("witness") a pending claim
only when its own clock agrees, and checks every claim against its own seat with its own view
(`own_view`: its clock since it saw the wait begin, with the deadline's slack, how long it was cut
off, and its answers the log does not hold): its replica's `claim_check` refuses such a claim when it
would take effect alone (net/refusals.py's Disputed) and the session answers it with a signed
"dispute" carrying its unordered frames; a pending one is disputed in the log.

Sealed answers (net/chance/seal.py; Dice Breaker's Latent Dice claim): when the table waits for "seal", every
asked seat is asked at once (the chooser, or a person through `YourTurn` and `move()`, sees the
state as it asks this seat); the move becomes a seal, and once every seat has sealed the session
opens its own by itself. Both wait on the answer deadline; a late seat's answer is the default.
"""

from __future__ import annotations

import queue
from contextlib import contextmanager
import random
import secrets
import time
from pathlib import Path
from typing import Any, Callable

from dicetable.core.game import GameError, Move
from dicetable.core.phrase import Phrase, listing, phrase
from dicetable.net.table import deadlines
from dicetable.net.chance import seal as sealed
from dicetable.net.log import wire
from dicetable.net.chance.reveal_chain import DEFAULT_LENGTH, REFRESH_MARGIN, Chain
from dicetable.net.table.deadlines import Timing
from dicetable.net.table.events import (ClaimDisputed, Chat, Claimable, Defaulted, Ended, Failed, Fault, Joined, NetEvent,
                                        RematchAnswered, RematchGone, Recorded, Started, TranscriptOpened, YourTurn)
from dicetable.net.cards.table_deals import TableDeals, paid_cards
from dicetable.net.identity import Profile
from dicetable.net.refusals import DealError, Disputed
from dicetable.net.table.seat_file import save_seat
from dicetable.net.log.transcript import TranscriptWriter, header_for, transcript_dir


class SessionError(Exception):
    """A table that cannot go on (wrong invite, full table, host gone): one sentence for a person."""


Chooser = Callable[[Any], Move]


def bot_chooser(game, name: str, seed: int | None = None) -> Chooser:
    """A chooser that plays `name` (one of the game's bots) from its seat's view."""
    if name not in game.bots:
        raise SessionError(f"unknown bot {name!r} for {game.title} (bots: {', '.join(game.bots)})")
    seed = secrets.randbits(64) if seed is None else seed
    bot = game.bots[name](game, random.Random(seed))
    return bot.choose


class TableSession:
    """What host and joiner share: replica, chains, own frames, deadlines, events, commands."""

    refuses_claims = False  # keep any claim I dispute out of my log (the host: it orders the log)

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
        self.transcript_path = Path(transcript) if transcript else None
        self.auto_claim = auto_claim
        self.think = think
        self.games = games  # games this seat plays at the table (it agrees to rematches until then); None: a person says
        self.chain_length = DEFAULT_LENGTH  # events one committed chain covers before a fresh anchor
        self._turn_key: Any = None
        self._turn_since = 0.0
        self.replica = None
        self.seat: int | None = None
        self.chains: list[Chain] = []
        self.transcript: TranscriptWriter | None = None
        self._unwritten: list[bytes] = []
        self.commands: queue.Queue = queue.Queue()
        self.refusals: list[str] = []
        self.stopped = False
        self.finished = False
        self.announced_transcript = False
        self._sent: dict[int, tuple[float, bytes]] = {}  # my frames not yet in the log, by seq
        self._waiting_key: Any = None
        self._waiting_since = time.monotonic()
        self._away_since: dict[int, float] = {}  # seats the host reports dropped
        self._claimable: set[int] = set()
        self._last_claim = 0.0
        self._answered: tuple[Any, float] | None = None  # (wait, when) I first sent an answer to it
        self._witnessed: set[int] = set()  # claims (log index) I co-signed
        self._disputed: set[int] = set()  # claims against me (log index) I disputed
        self._announced_turn: Any = None
        self._paying: Move | None = None  # a move waiting for the public reveal of the cards it pays
        self._sealed: tuple[int, Move] | None = None  # (step, answer) I sealed and have not opened yet
        self._unopenable: int | None = None  # a step whose seal of mine I could not open (said once)
        self.result_announced = False
        self.left_at: float | None = None  # wall clock when this seat left the table (a resumed seat), if it did
        self._over_since: float | None = None
        self._faults_said: set[tuple] = set()  # each fault is shown once

    # -- thread-safe commands from the app -----------------------------------------------------
    def move(self, move: Move) -> None:
        self.commands.put(("move", move))

    def chat(self, text: str) -> None:
        self.commands.put(("chat", text))

    def claim(self, against: int) -> None:
        self.commands.put(("claim", against))

    def resign(self) -> None:
        self.commands.put(("resign", None))

    def stop(self) -> None:
        self.commands.put(("stop", None))

    def rematch(self, agree: bool = True) -> None:
        """Offer or accept the next game at this table (agree), or decline it (PROTOCOL.md §5.10)."""
        self.commands.put(("rematch", bool(agree)))

    # -- what subclasses provide ---------------------------------------------------------------
    def submit(self, frame: bytes) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- events --------------------------------------------------------------------------------
    def emit(self, event: NetEvent) -> None:
        self.on_event(event)

    # -- own frames ----------------------------------------------------------------------------
    def next_seq(self) -> int:
        base = self.replica.next_seq(self.seat)
        return max([base, *(seq + 1 for seq in self._sent)])

    def _seated(self) -> bool:
        seats = self.replica.seats
        return self.seat is not None and self.seat < len(seats) and seats[self.seat] is not None

    def author(self, kind: str, body: dict, sign: bool = True) -> bytes:
        """A frame of mine with the next sequence number, on the log as my replica has it, sent to the log."""
        seq = self.next_seq()
        frame = wire.make_frame(self.profile, self.replica.table, self.seat, seq, kind, body, self.replica.head, sign=sign)
        now = time.monotonic()
        self._sent[seq] = (now, frame)
        if kind in deadlines.ANSWERS.get(self.replica.waiting_for.action, ()):  # when I answered: my evidence
            wait = deadlines.waiting_key(self.replica)
            if self._answered is None or self._answered[0] != wait:
                self._answered = (wait, now)
        self.submit(frame)
        return frame

    def _own_frame_landed(self, record) -> None:
        if record.seat == self.seat:
            self._sent = {seq: v for seq, v in self._sent.items() if seq > record.envelope.seq}

    def _own_frame_refused(self, reason: str) -> None:
        self._sent.clear()  # the log decides what counts; act again from the replica's state
        self._announced_turn = None
        # A witness sent behind a refused frame was refused with it (out of order): the claims' own
        # signers say which of mine landed; the rest are sent again while my clock still agrees.
        self._witnessed.clear()
        self.refusals.append(reason)

    # -- the log -------------------------------------------------------------------------------
    def applied(self, record) -> None:
        """After the replica accepted a log entry: transcript, events, my next step."""
        self._write_transcript(record.frame)
        self._own_frame_landed(record)
        index, kind, body = record.index, record.kind, record.envelope.body
        if kind == "join":
            self.emit(Joined(record.seat, body["name"], index))
        elif kind == "start":
            self.emit(Started(index))
        elif kind == "chat":
            self.emit(Chat(record.seat, body["text"], index))
        elif kind == "rematch":
            self.emit(RematchAnswered(record.seat, body["agree"], record.note, index))
            if index == self.replica.game_start:  # every seat agreed: the next game starts with this record
                # (not `phase`: a batch may hold both consents, and the phase is already the later one's)
                self.result_announced, self.finished, self._over_since = False, False, None
                self.emit(Started(index))
        self.emit(Recorded(record))
        if kind == "deal":
            self.watch_deal()
        elif kind == "claim" and body["against"] == self.seat:
            self.answer_claim(record)
        latest = record.index == len(self.replica.log) - 1  # a batch's earlier records come first
        if latest and self.replica.result is not None and not self.result_announced:
            self.result_announced = True
            self._over_since = time.monotonic()
            if self.transcript is not None:
                self.transcript.append_result(self.replica.result)
            self.emit(Ended(self.replica.result, self.describe_result()))
            ending = self.replica.ending
            if ending is not None and ending.against == self.seat:
                self.emit(Defaulted(ending.seat, self.describe_default(ending)))
        if latest:
            self.check_settled()

    def check_settled(self) -> None:
        """Finished once the result is in and every deck is opened (or the openings are overdue)."""
        if self.finished or not self.result_announced:
            return
        overdue = time.monotonic() - self._over_since > max(self.timing.reveal_deadline, 1.0)
        if overdue and not self.replica.settled:
            self.finished = True
        elif self.replica.settled:
            self.finished = self.series_over()
            replica = self.replica
            if self.finished and self.games != 1 and replica.declined is None and self.can_rematch():
                gone = listing(replica.who(s) for s in sorted(self.away_seats()))  # nobody is left to answer
                self.emit(RematchGone(phrase("no rematch: ", gone or "the table", " left")))

    # -- rematches (PROTOCOL.md §5.10) ------------------------------------------------------------
    def can_rematch(self) -> bool:
        """The game is over and its decks opened, nobody declined, and the table can play another."""
        replica = self.replica
        return (replica is not None and replica.phase == "over" and replica.settled and replica.declined is None
                and not replica.deal_handler.formed and self._seated())

    def series_over(self) -> bool:
        """No next game will come: one game was asked for, someone declined, or the seats it waits for left."""
        replica = self.replica
        if self.games == 1 or not self.can_rematch():
            return True
        if self.games is not None and replica.game_number >= self.games:
            return False  # my decline goes out first (play_on), so the others learn it at once
        return bool(self.away_seats() & {s for s, agreed in enumerate(replica.consents) if not agreed})

    def away_seats(self) -> set[int]:
        """Seats this session has lost sight of."""
        return set(self._away_since)

    def send_rematch(self, agree: bool) -> None:
        """My signed consent to the next game, with the options its rules give (or my refusal)."""
        replica = self.replica
        if not self.can_rematch():
            self.emit(Failed("no rematch now: the game is not over, a player declined, or this table plays one game"))
            return
        if agree and replica.consents[self.seat]:
            self.emit(Failed("you have agreed to a rematch already: waiting for the others"))
            return
        self.author("rematch", wire.rematch_body(replica.game_number + 1, replica.next_options, agree))

    def play_on(self) -> None:
        """A seat playing `games` games agrees to the next one until it has played them, then declines."""
        replica = self.replica
        if self.games is None or self._sent or not self.can_rematch() or self.finished:
            return
        if replica.game_number >= self.games:
            self.send_rematch(False)  # (one game only: the session finished at its end, before this)
        elif not replica.consents[self.seat]:
            self.send_rematch(True)

    def fault(self, seat: int | None, text: str) -> None:
        """Tell the player, once, that `seat` was caught cheating (FAIRNESS.md §3: shown at once)."""
        if (seat, text) not in self._faults_said:
            self._faults_said.add((seat, text))
            self.emit(Fault(seat, Phrase.read(text)))

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

    def _write_transcript(self, frame: bytes) -> None:
        """Frames wait in memory until every seat has joined: the header names them all."""
        if self.transcript is None:
            self._unwritten.append(frame)
            if self.replica.phase in ("new", "joining") or self.seat is None:
                return
            path = self.transcript_path or self.default_transcript(self.replica.table)
            self.transcript_path = path
            self.transcript = TranscriptWriter.create(path, header_for(self.replica))
            self.save_secrets()
            frames, self._unwritten = self._unwritten, []
            for pending in frames:
                self.transcript.append_frame(pending)
            self.announced_transcript = True
            self.emit(TranscriptOpened(path))
            return
        self.transcript.append_frame(frame)

    @contextmanager
    def batch(self, sync: bool = True):
        """Transcript records of one batch share one write and one fsync (net/log/transcript.py)."""
        if self.transcript is None:
            yield
            return
        writer = self.transcript
        with writer.batch(sync):
            yield

    def record_refusal(self, frame: bytes, reason: str) -> None:
        self.refusals.append(reason)
        if self.transcript is not None:
            self.transcript.append_refused(frame, reason)

    def describe_result(self) -> str:
        names = [f"{s.name} (seat {i})" if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)]
        result = self.replica.result
        if self.replica.forced is None and self.replica.game.name == "diceroom" and self.replica.state.last:
            return self.replica.state.summary([s.name if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)])
        return result.describe(names)

    def describe_default(self, claim) -> Phrase:
        """The game's end told to the seat whose default decided it, in plain words: `bob: alice claimed
        the game while you were away (since 16:02) — you were in default (...); alice wins (...)`."""
        names = [s.name if s is not None else f"seat {i}" for i, s in enumerate(self.replica.seats)]
        away = f" while you were away (since {time.strftime('%H:%M', time.localtime(self.left_at))})" if self.left_at else ""
        if self.replica.forced is not None:
            what = phrase(f"{names[claim.seat]} claimed the game{away} — you were in default (", claim.reason, ")")
        else:
            what = phrase(f"{names[claim.seat]} claimed your seat in default{away} (", claim.reason, ") and the game went on without it")
        return phrase(f"{names[self.seat]}: ", what, "; ", self.replica.result.said(names))

    # -- acting --------------------------------------------------------------------------------
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
            self.save_secrets()  # new deck keys, or the nonces of my commitments: on disk before they count
        for body in bodies:
            self.author("deal", body)
        return bool(bodies)

    def play(self, move: Move) -> None:
        """Send my move; one that pays hidden cards first reveals them publicly (FAIRNESS.md §2)."""
        replica = self.replica
        if replica.sealing is not None:
            self.seal(move)
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

    # -- sealed answers (net/chance/seal.py) ------------------------------------------------------------
    def _seal_nonce(self, step: int) -> bytes:
        return sealed.nonce_for(self.chains[0].secret, self.replica.table, step, self.seat)

    def seal(self, move: Move) -> None:
        """Seal my answer to the open sealed step: a commitment now, the answer once all have sealed."""
        replica = self.replica
        step, waiting = replica.sealing.step, replica.waiting_for
        if waiting.action != "seal" or self.seat not in waiting.seats:
            given = replica.sealing.answers[self.seat] if self.seat in replica.sealing.asked else None
            if self.seat not in replica.sealing.asked:
                why = "you are not asked at this step"
            elif replica.sealing.commits[self.seat] == b"":
                why = f"too late: your time ran out and the table answered {given} for you"
            else:
                why = "your answer is already sealed"
            self.emit(Failed(why))
            return
        if move not in replica.state.asking(self.seat).legal_moves():
            self.emit(Failed(f"{move} is not a legal answer now"))
            return
        commit = sealed.commitment(replica.table, step, self.seat, move.to_data(), self._seal_nonce(step))
        self._sealed = (step, move)
        self.author("seal", wire.seal_body(step, commit))

    def unseal(self) -> None:
        """Open my sealed answer. After a restart my answer is found again from my commitment: the
        nonce comes from my chain secret, so only one legal answer opens it."""
        replica = self.replica
        sealing = replica.sealing
        step, commit = sealing.step, sealing.commits[self.seat]
        nonce = self._seal_nonce(step)
        answer = self._sealed[1] if self._sealed is not None and self._sealed[0] == step else None
        if answer is None:
            answer = sealed.recover(replica.table, step, self.seat, commit, nonce,
                                    replica.state.asking(self.seat).legal_moves())
        if answer is None:
            if self._unopenable != step:  # said once; the others give the default when time runs out
                self._unopenable = step
                self.emit(Failed(f"cannot open my sealed answer to step {step}: the table will give the default"))
            return
        self.author("unseal", wire.unseal_body(step, answer, nonce))

    def act(self) -> None:
        """Do what the table waits for from my seat: reveal, move, deal, refresh my chain."""
        replica = self.replica
        if replica is None or self.seat is None or not self._seated() or self.finished:
            return
        if replica.phase == "over":
            self.check_settled()  # also when my last frames cannot land any more (the host left)
            if not self.finished and not self._sent:
                self.send_deal()  # the end-of-game opening of every deck
                self.play_on()
            return
        if self._sent:
            return
        if replica.phase != "playing":
            return
        if replica.chain_left(self.seat) < REFRESH_MARGIN:
            last = self.chains[-1]
            chain = Chain(self.replica.table, self.seat, length=self.chain_length, first=last.last + 1)
            self.chains.append(chain)
            self.save_secrets()
            self.author("anchor", wire.anchor_body(chain.anchor, chain.length, chain.first))
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
            self.unseal()
            return
        if waiting.action == "seal":
            state = state.asking(self.seat)  # the step asks every seat at once: mine is due now
        if waiting.action in ("move", "seal") and state.actor == self.seat:
            if self._paying is not None:
                self.play(self._paying)  # my cards are open to all now: the move goes
                return
            if self._turn_key != replica.steps:
                self._turn_key, self._turn_since = replica.steps, time.monotonic()
            if self.chooser is not None:
                if time.monotonic() - self._turn_since < self.think:
                    return  # a bot that takes its time, as a person would (demos, tests of drops)
                self.play(self.chooser(state.view(self.seat)))
            elif self._announced_turn != len(replica.log):
                self._announced_turn = len(replica.log)
                self.emit(YourTurn(self.seat, len(replica.log)))

    def free_act(self) -> bool:
        """One of several seats that may move (a free dice room): ask the chooser; True if it moved.

        Asked before my reveal, so a move it makes at once (a headless roll) lands in the log before
        the event that waits for my reveal can be decided."""
        replica = self.replica
        if self.chooser is None or self._sent or replica is None or replica.phase != "playing" or not self._seated():
            return False
        state = replica.state
        if state.actor == self.seat or not state.may_act(self.seat):
            return False
        move = self.chooser(state.view(self.seat))
        if move is None:
            return False
        self.play(move)
        return bool(self._sent)

    def reveal_if_due(self) -> bool:
        """Reveal my chain value when the table's open event waits for it (FAIRNESS.md §1)."""
        if self.free_act():
            return True
        replica = self.replica
        pending = replica.pending
        if self.finished or self._sent or pending is None or not self._seated():
            return False
        if pending.reveals[self.seat] is not None:
            return False
        k = pending.number
        chain = next((c for c in self.chains if c.covers(k)), None)
        if chain is None:
            return False  # my chain ran out: the anchor refresh in act() comes first
        self.author("reveal", wire.reveal_body(k, chain.reveal(k)), sign=False)
        return True

    def handle_command(self, name: str, arg: Any) -> None:
        if name == "stop":
            self.stopped = True
        elif self.replica is None or not self._seated():
            self.emit(Failed("not seated at a table yet"))
        elif name == "move":
            self.play(arg)
        elif name == "chat":
            self.author("chat", wire.chat_body(str(arg)[:500] or " "))
        elif name == "claim":
            self.send_claim(int(arg))
        elif name == "resign":
            self.author("resign", {})
        elif name == "rematch":
            self.send_rematch(arg)

    def drain_commands(self) -> None:
        while True:
            try:
                name, arg = self.commands.get_nowait()
            except queue.Empty:
                return
            self.handle_command(name, arg)

    # -- deadlines and defaults (FAIRNESS.md §4) -------------------------------------------------
    def watch_deadlines(self, now: float) -> None:
        replica = self.replica
        if replica is None or replica.phase != "playing" or self.finished:
            return
        waiting = replica.waiting_for
        key = deadlines.waiting_key(replica)
        if key != self._waiting_key:
            self._waiting_key = key
            self._waiting_since = now
            self._claimable.clear()
        for seat in waiting.seats:
            if seat == self.seat or seat in self._claimable:
                continue
            why = self.default_reason(seat, now)
            if why:
                self._claimable.add(seat)
                self.emit(Claimable(seat, why))
        for claim in replica.claims:  # co-sign what my own clock agrees with, and nothing else
            if claim.state == "pending" and claim.index not in self._witnessed and self.seat != claim.against \
                    and self.seat not in claim.signers and self.seat not in replica.out \
                    and self.default_reason(claim.against, now):
                self._witnessed.add(claim.index)
                self.author("witness", wire.witness_body(claim.index))
        unclaimed = [s for s in self._claimable if replica.pending_claim(s) is None]
        if self.auto_claim and unclaimed and now - self._last_claim > max(self.timing.heartbeat, 0.2):
            self.send_claim(min(unclaimed))

    def default_reason(self, seat: int, now: float) -> str:
        """Why `seat` is in default now by this session's clock, or "" when it is not."""
        away = self._away_since.get(seat)
        return deadlines.default_reason(self.replica, self.timing, seat, now - self._waiting_since,
                                        None if away is None else now - away)

    def send_claim(self, against: int) -> None:
        """Claim `against` in default; a claim already pending against it is witnessed instead, when
        my clock agrees."""
        now = self._last_claim = time.monotonic()
        pending = self.replica.pending_claim(against)
        if pending is not None:
            if self.seat in pending.signers or pending.index in self._witnessed:
                return
            if not self.default_reason(against, now):
                self.emit(Failed(f"seat {against} is not in default by this seat's clock: no witness"))
                return
            self._witnessed.add(pending.index)
            self.author("witness", wire.witness_body(pending.index))
            return
        reason = self.default_reason(against, now) or f"seat {against} is in default"
        self.author("claim", wire.claim_body(against, reason[:200]))

    # -- claims against my seat (FAIRNESS.md §4: no one party's clock decides) --------------------
    def own_away(self, now: float, since: float) -> float | None:
        """How long this seat was cut off from the table since `since` (None: it was not)."""
        return None

    def own_view(self, now: float) -> str:
        """Why my seat is not in default by my own view (my clock since I saw the wait begin, and my
        answer the log does not hold), or "" when I agree it is."""
        replica = self.replica
        wait = deadlines.waiting_key(replica)
        since = self._waiting_since if wait == self._waiting_key else now  # a wait begun in this batch: my clock starts now
        answered = None
        if self._answered is not None and self._answered[0] == wait and self._sent:
            answered = max(0.0, self._answered[1] - since)
        return deadlines.disputes(replica, self.timing, self.seat, now - since, self.own_away(now, since), answered)

    def check_claim(self, replica, envelope: wire.Envelope) -> None:
        """My replica's `claim_check`: a claim against my seat that my own view refutes is kept out of
        my log when it would take effect alone (a pending one changes nothing: `answer_claim`)."""
        if envelope.body["against"] != self.seat or self.seat is None:
            return
        if not self.refuses_claims and replica.needed(self.seat) > 1:
            return
        why = self.own_view(time.monotonic())
        if why:
            raise Disputed(envelope.seat, f"{replica.who(self.seat)} disputes {replica.who(envelope.seat)}'s claim: {why}")

    def answer_claim(self, record) -> None:
        """A pending claim against my seat landed: dispute it in the log if my own view refutes it."""
        claim = self.replica.pending_claim(self.seat)
        if claim is None or claim.index != record.index or claim.index in self._disputed:
            return
        why = self.own_view(time.monotonic())
        if why:
            self.dispute(record.frame, record.index, record.seat, why)

    def dispute(self, frame: bytes, index: int, claimant: int, why: str) -> bytes | None:
        """Tell the player "disputed", naming the claimant, and sign a dispute of the claim at log index
        `index`, carrying my frames the log does not hold; returns the dispute (None if it cannot
        carry them all)."""
        self._disputed.add(index)
        self.emit(ClaimDisputed(claimant, phrase(self.replica.who(claimant), f" claims this seat is in default: {why}")))
        evidence = [sent for _, (_, sent) in sorted(self._sent.items())]
        if len(evidence) > wire.MAX_EVIDENCE or len(frame) + sum(map(len, evidence)) > wire.MAX_FRAME - 4096:
            self.emit(Failed("too many frames the log does not hold to carry in a dispute"))
            return None
        return self.author("dispute", wire.dispute_body(index, frame, why[:200], evidence))

    # -- secrets and transcript --------------------------------------------------------------------
    def new_chain(self) -> Chain:
        chain = Chain(self.replica.table, self.seat, length=self.chain_length)
        self.chains = [chain]
        return chain

    def seat_data(self) -> dict:
        data = {
            "seat": self.seat,
            "chains": [[c.secret, c.length, c.first] for c in self.chains],
        }
        handler = self.deals()
        if handler is not None and handler.parties:
            data["deals"] = handler.to_data()  # deck keys, permutations, held cards' nonces (FAIRNESS.md §6)
        return data

    def save_secrets(self) -> None:
        if self.transcript_path is not None and self.seat is not None:
            save_seat(self.transcript_path, self.seat_data())

    def restore_chains(self, data: dict) -> None:
        self.chains = [Chain(self.replica.table, self.seat, bytes(s), int(n), int(f)) for s, n, f in data["chains"]]

    def default_transcript(self, table: bytes) -> Path:
        directory = transcript_dir()
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return directory / f"{stamp}-{table.hex()[:8]}-seat{self.seat}.dtt"
