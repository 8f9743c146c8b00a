"""The table's state machine over the ordered log: every peer (and `dicetable verify`) runs one.

A `Replica` takes the log's frames one by one, in log order, checks each completely and either
appends it (returning a `Record`) or raises a `Refusal` that names the seat at fault and the reason,
leaving the replica exactly as it was. It holds no I/O, no clock and no secrets: the session and
verify drive it, and never re-implement its checks (FAIRNESS.md §1, §3, §5).

API (stable; the session in net/table/session.py builds on it)
--------------------------------------------------------
    Replica(table=None, games=core.registry.get, deal_handler=None, claim_check=None)
        table:        the 16-byte table id to expect; None takes it from the first ("open") frame.
        games:        name -> GameInfo (tests may pass their own games).
        deal_handler: object with `accept(replica, envelope) -> Outcome | None` that checks "deal"
                      bodies (net/cards/deal.py) and raises a Refusal (net/refusals.py's DealRefused) for a bad
                      one, committing its own state only when it returns. Returning an Outcome
                      resolves the hidden-card chance step the state waits for (Chance.hidden:
                      such steps open no reveal event; waiting_for says "deal"). Without a handler
                      "deal" frames are refused. `replica.deal_handler` may be set later too.
                      Optional: `owing(replica) -> seats` (who the deal waits for: waiting_for,
                      deadlines) and `pay(seat, payment)` (the check of a move paying hidden
                      cards) — net/cards/table_deals.py's TableDeals has both.
        claim_check:  callable(replica, envelope) -> None: this peer's own view of a "claim" that
                      passed the log's checks, called before it is applied or held pending; it
                      raises a Refusal (net/refusals.py's Disputed) to keep the claim out of this
                      peer's log. The sessions pass their own (net/table/session.py: a claim against their
                      own seat that their clock and frames refute); None (verify, replays, in-process
                      tables) takes the log as it is: a replayed claim is checked by its witnesses,
                      not by the replayer's clock. `replica.claim_check` may be set later too.

    replica.accept(frame: bytes) -> Record
        Decode (net/log/wire.py), check, apply, append. Raises only Refusal (net/refusals.py), and then
        changes nothing. The checks, in their order, and the refusal each raises: PROTOCOL.md §4.8.

    Read-only views (never mutate them):
        replica.table        -> bytes | None          table id
        replica.game         -> GameInfo | None       after "open"
        replica.options      -> dict                  resolved game options
        replica.seat_count   -> int                   seats the host opened the table for
        replica.seats        -> tuple[SeatInfo, ...]  joined seats in seat order (None for free seats)
        replica.phase        -> "new" | "joining" | "ready" | "playing" | "over"
        replica.state        -> the core game state (None before "start")
        replica.events       -> tuple[Event, ...]     every random event: number, label, reveals per
                                                     seat, seed, derived outcome (fairness panel)
        replica.pending      -> Event | None          the event collecting reveals now
        replica.sealing      -> Sealing | None        the sealed step collecting answers now
        replica.waiting_for  -> Waiting               action ("open", "join", "start", "move", "reveal",
                                                     "deal", "seal", "unseal", "any", "nothing") and the seats it waits
                                                     for ("any": seats may move, none is due);
                                                     "deal" whenever the card deal owes a message,
                                                     also after the game ended (the openings)
        replica.result       -> Result | None         the current game's
        replica.game_number  -> int                   the game being played: 1, then one more per rematch
        replica.game_options -> dict                  the options the current game was made with
        replica.game_start   -> int                   log index of the record that started it
        replica.results      -> tuple[Result, ...]    the results of the games before it
        replica.series       -> tuple[Result, ...]    every game's result so far (the current one's once over)
        replica.vouched      -> tuple[int, ...]       per seat: log entries its signed frames build on (§5.13)
        replica.ended_at     -> int | None            log index of the record that ended the current game
        replica.confirmation() -> Confirmation        the log's content and who vouches for all of it
        replica.receipt_owed(seat) -> bool            the game is over and seat has not confirmed it all
        replica.next_options -> dict | None           once over: the options a rematch must carry
        replica.consents     -> tuple[bool | None, ...] per seat: agreed to the next game
        replica.declined     -> int | None            the seat that declined a rematch (no more games)
        replica.log          -> Sequence[Record]      accepted records, index = log position (a view)
        replica.moves        -> int                   accepted moves ("move" records, opened sealed
                                                     answers and answers given by default)
        replica.next_seq(seat) -> int                 the sequence number seat's next frame must carry
        replica.chain_left(seat) -> int               events seat's committed chains still cover
                                                     beyond the last one it revealed
        replica.seat_of(key: bytes) -> int | None     seat of an Ed25519 public key
        replica.steps        -> int                   state changes so far (moves, resolved chances)
        replica.out          -> frozenset[int]        seats out of the game after a default
        replica.deal_owing() -> tuple[int, ...]       seats the card deal waits for
        replica.settled      -> bool                  over, and the deal owes nothing (every deck
                                                     opened at the end and checked live)
        replica.who(seat) -> Seat                     "seat 1 (bob)" for messages, a seat in a Phrase
        replica.claims       -> tuple[Claim, ...]     every default claim, in log order, with its state
                                                     (pending, out, answered, lapsed) and witnesses
        replica.pending_claim(seat) -> Claim | None   the claim against seat waiting for witnesses
        replica.needed(seat) -> int                   signatures a claim against seat needs now
        replica.disputes     -> tuple[Dispute, ...]   the accused seats' disputes, in log order
        replica.ending       -> Claim | None          the claim whose default ended the game
        replica.basis(claim) -> str                   what supports it: "unwitnessed claim by seat 1",
                                                     "claim by seat 0, witnessed by seat 2", then
                                                     ", disputed by seat 1" when the accused disputed it

    Refusal: .fault (short name, e.g. "bad reveal"), .seat (the seat at fault, or None when the
    frame names no one), .reason (one line); str() is "<fault>: seat <n>: <reason>".
    Record (records.py): index, envelope, note (a Phrase), move, event (the Event it completed),
    frame, kind, seat. Event (records.py): number, label, chance, reveals (per seat), seed, outcome, missing.

Parts (one writer each, wired here)
----------------------------------
The replica checks what every frame shares (its table, its place, signature, sequence number and
parent link: PROTOCOL.md §4.6–§4.8) and hands the frame to the part that owns its kind, through
`handlers` (kind -> the part's method): membership.py (open, join), play.py (start, move, reveal,
anchor, chat, resign, deal), sealing.py (seal, unseal), claims.py (claim, witness, dispute),
rematch.py (rematch) and receipts.py (receipt; what each seat's signed frames vouch for). A part checks its kind and returns an `Effect` (records.py): the new values of
fields, each owned by one part (`FIELDS`), which `accept` sets all at once or not at all.

Log rules
---------
Written down in docs/PROTOCOL.md, which these parts implement: phases and what the table waits for
(§5.1), "open" and "join" (§5.2), "start" and "move" (§5.3), "reveal" and events (§5.4, §6), "anchor"
(§5.5), "chat" and "resign" (§5.6), "claim", "witness" and "dispute" (§5.7; who decides a default:
net/table/deadlines.py, §7), "seal" and "unseal" (§5.8), "deal" (§5.9, §9), "rematch" (§5.10), seats out
of the game (§5.11), the step, move and event counters (§5.12), sequence numbers (§4.6) and parent
links, forks and equivocation (§4.7).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from operator import attrgetter
from typing import Any, Callable

from dicetable.core import registry
from dicetable.core.game import ANYONE, CHANCE, GameInfo, Result
from dicetable.net.log import links
from dicetable.net.log import wire
from dicetable.net.log.claims import DefaultClaims
from dicetable.net.log.membership import Membership
from dicetable.net.log.play import Play
from dicetable.net.log.receipts import Receipts
from dicetable.net.log.records import JOINING, NEW, OVER, PLAYING, READY, Effect, LogView, Record
from dicetable.net.log.rematch import Rematches
from dicetable.net.log.sealing import SealedAnswers
from dicetable.net.log.secret_rolls import SecretRolls
from dicetable.net.refusals import (
    BadSignature,
    Equivocation,
    ForkedLog,
    MalformedFrame,
    NotDue,
    NotSeated,
    OutOfOrder,
    WrongTable,
)


@dataclass(frozen=True)
class Waiting:
    """What the table waits for: action in open, join, start, move, reveal, nothing."""

    action: str
    seats: tuple[int, ...]

    def __str__(self) -> str:
        if self.action == "any":
            return "any seat to move when it likes"
        if not self.seats:
            return "nothing (the game is over)"
        who = ", ".join(f"seat {s}" for s in self.seats)
        return f"{who} to {self.action}"


DECODED_KEPT = 32  # decoded frames a replica keeps (its copies share them)


class Replica:
    FIELDS = ("table", "phase", "_seqs", "_seen")  # what an Effect may set on the replica itself

    def __init__(
        self,
        table: bytes | None = None,
        games: Callable[[str], GameInfo] = registry.get,
        deal_handler: Any = None,
        claim_check: Callable[["Replica", wire.Envelope], None] | None = None,
    ) -> None:
        self.table = table
        self.games = games
        self.deal_handler = deal_handler
        self.claim_check = claim_check
        self.phase = NEW
        self._seqs: tuple[int, ...] = (0,) * wire.MAX_SEATS
        self._seen: tuple[int, ...] = (0,) * wire.MAX_SEATS  # per seat: the log entries its last frame built on
        self._heads: list[bytes] = [links.genesis(table)] if table is not None else []  # head(n), n = 0..len(log)
        self._frames: dict[tuple[int, int], int] = {}  # (seat, seq) -> log index: a second frame there is equivocation
        self._log: list[Record] = []
        self.membership = Membership(self)
        self.play = Play(self)
        self.sealed_answers = SealedAnswers(self)
        self.default_claims = DefaultClaims(self)
        self.rematches = Rematches(self)
        self.receipts = Receipts(self)
        self.secret_rolls = SecretRolls(self)
        self.built_on: wire.Link | None = None  # a tentative copy's: the head of the log it was copied from
        self._decoded: dict[bytes, wire.Envelope] = {}  # the last frames decoded (shared with tentative copies)
        self._waiting: tuple[int, Waiting] | None = None  # (log length, waiting_for then)
        self._wire()

    PARTS = ("membership", "play", "sealed_answers", "default_claims", "rematches", "receipts", "secret_rolls")

    def _wire(self) -> None:
        """Who sets each field of an Effect, and the part that checks each kind."""
        parts = (self, *(getattr(self, name) for name in self.PARTS))
        self._owners = {name: part for part in parts for name in part.FIELDS}  # who sets each field of an Effect
        # The part that checks each kind after the checks every frame shares (wire.SCHEMAS lists the kinds).
        self.handlers: dict[str, Callable[[wire.Envelope], Effect]] = {
            "open": self.membership.open, "join": self.membership.join,
            "start": self.play.start, "move": self.play.move, "reveal": self.play.reveal,
            "anchor": self.play.anchor, "chat": self.play.chat, "resign": self.play.resign, "deal": self.play.deal,
            "seal": self.sealed_answers.seal, "unseal": self.sealed_answers.unseal,
            "claim": self.default_claims.claim, "witness": self.default_claims.witness,
            "dispute": self.default_claims.dispute,
            "rematch": self.rematches.rematch, "receipt": self.receipts.receipt,
            "unveil": self.secret_rolls.unveil, "leave": self.membership.leave, "back": self.membership.back,
        }

    def tentative(self) -> "Replica":
        """A copy to try frames on (a joiner's own frames not yet ordered: net/table/following.py
        `act_ahead`): `accept` on it changes nothing here. A frame authored on it builds on this
        log's head (`head`), not on the frames tried: the orderer may order others between them.
        Every field a part owns is replaced, never changed in place, by `accept`, so the parts are
        copied shallowly; the deal handler is shared and must not be fed on the copy."""
        copy = object.__new__(Replica)
        copy.__dict__.update(self.__dict__)
        copy._heads, copy._frames, copy._log = list(self._heads), dict(self._frames), list(self._log)
        for name in self.PARTS:
            part = object.__new__(type(getattr(self, name)))
            part.__dict__.update(getattr(self, name).__dict__)
            part.replica = copy
            setattr(copy, name, part)
        copy.built_on = self.head
        copy._wire()
        return copy

    # -- views of what the parts own (read-only: only `accept` changes them) ---------------------
    game = property(attrgetter("membership.game"))
    options = property(attrgetter("membership.options"))
    seat_count = property(attrgetter("membership.seat_count"))
    seats = property(attrgetter("membership.seats"))
    opener = property(attrgetter("membership.opener"))  # the key that signed the opening (b"" before it)
    names = property(attrgetter("membership.names"))
    who = property(attrgetter("membership.who"))
    seat_of = property(attrgetter("membership.seat_of"))
    state = property(attrgetter("play.state"))
    events = property(attrgetter("play.events"))
    pending = property(attrgetter("play.pending"))
    forced = property(attrgetter("play.forced"))
    moves = property(attrgetter("play.moves"))
    steps = property(attrgetter("play.steps"))
    out = property(attrgetter("play.out"))
    chain_left = property(attrgetter("play.chain_left"))
    sealing = property(attrgetter("sealed_answers.sealing"))
    claims = property(attrgetter("default_claims.claims"))
    disputes = property(attrgetter("default_claims.disputes"))
    ending = property(attrgetter("default_claims.ending"))
    needed = property(attrgetter("default_claims.needed"))
    pending_claim = property(attrgetter("default_claims.pending_claim"))
    basis = property(attrgetter("default_claims.basis"))
    game_number = property(attrgetter("rematches.game_number"))
    game_options = property(attrgetter("rematches.game_options"))
    game_start = property(attrgetter("rematches.game_start"))
    results = property(attrgetter("rematches.results"))
    consents = property(attrgetter("rematches.consents"))
    declined = property(attrgetter("rematches.declined"))
    next_options = property(attrgetter("rematches.next_options"))
    series = property(attrgetter("rematches.series"))
    vouched = property(attrgetter("receipts.vouched"))
    ended_at = property(attrgetter("receipts.ended_at"))
    confirmation = property(attrgetter("receipts.confirmation"))
    receipt_owed = property(attrgetter("receipts.owed_by"))
    shown = property(attrgetter("secret_rolls.shown"))

    # -- views of the log ------------------------------------------------------------------------
    @property
    def log(self) -> Sequence[Record]:
        return LogView(self._log)  # read-only and O(1): sessions ask for it on every frame

    @property
    def result(self) -> Result | None:
        if self.forced is not None:
            return self.forced
        return self.state.result if self.state is not None else None

    @property
    def waiting_for(self) -> Waiting:
        """What the table waits for, kept per log length: every field it reads changes only in `accept`,
        which appends, except a card deal's own state, which a seat's own next message may change (a
        deck it forms): never kept once a deck is formed (none formed: the deal owes what the state says)."""
        if getattr(self.deal_handler, "formed", None):
            return self._waiting_now()
        cached = self._waiting
        if cached is None or cached[0] != len(self._log):
            cached = self._waiting = (len(self._log), self._waiting_now())
        return cached[1]

    def _waiting_now(self) -> Waiting:
        if self.phase == NEW:
            return Waiting("open", (0,))
        if self.phase == JOINING:
            return Waiting("join", tuple(i for i, s in enumerate(self.seats) if s is None))
        if self.phase == READY:
            return Waiting("start", (0,))
        owing = self.deal_owing()
        if self.phase == PLAYING:
            if self.pending is not None:
                return Waiting("reveal", self.pending.missing)
            if owing:  # a hidden step, or keys for a card shown before the move that pays it
                return Waiting("deal", owing)
            if self.state.actor == CHANCE:
                return Waiting("deal", tuple(s for s in range(self.seat_count) if s not in self.out))
            if self.sealing is not None:
                unsealed = self.sealing.unsealed
                return Waiting("seal", unsealed) if unsealed else Waiting("unseal", self.sealing.unopened)
            if self.state.actor == ANYONE:  # seats may move, none is due (no deadline, no claim)
                return Waiting("any", ())
            return Waiting("move", (self.state.actor,))
        if owing:  # the game is over: the end-of-game opening of every deck
            return Waiting("deal", owing)
        if self.declined is None and any(self.consents):  # a rematch offered: the others' answers
            return Waiting("rematch", tuple(s for s, agreed in enumerate(self.consents) if not agreed))
        return Waiting("nothing", ())

    def deal_owing(self) -> tuple[int, ...]:
        """Seats the card deal waits for (none without a deal handler that can say)."""
        owing = self.deal_handler.owing if self.deal_handler is not None else None
        if owing is None or self.phase not in (PLAYING, OVER):
            return ()
        return owing(self)

    @property
    def settled(self) -> bool:
        """The game is over and the deal owes nothing more (every deck opened and checked)."""
        return self.result is not None and not self.deal_owing()

    def next_seq(self, seat: int) -> int:
        return self._seqs[seat]

    def entry_of(self, seat: int, seq: int) -> int | None:
        """The log index of `seat`'s frame with sequence number `seq`, if the log holds it."""
        return self._frames.get((seat, seq))

    @property
    def head(self) -> wire.Link:
        """Where this replica stands in the log: the parent of a frame authored now (on a tentative
        copy, the log it was copied from)."""
        if self.built_on is not None:
            return self.built_on
        return wire.Link(len(self._log), self._heads[-1])

    def head_at(self, entries: int) -> bytes:
        """The log's head hash after its first `entries` entries."""
        return self._heads[entries]

    # -- the one entry point -------------------------------------------------------------------
    def accept(self, frame: bytes, signed_here: bool = False) -> Record:
        """Check `frame` completely and append it, or raise a Refusal and change nothing.
        `signed_here`: the frame is, byte for byte, one this process signed with its own seat's key,
        so its signature is not verified again (every other check runs; other seats verify it)."""
        try:
            env = self.decoded(frame)
        except wire.WireError as error:
            raise MalformedFrame(None, str(error)) from None
        seat = env.seat
        if self.table is not None and env.table != self.table:
            raise WrongTable(seat, "the message belongs to another table (replayed or misrouted)")
        self._check_place(env)
        if env.kind != "open" and self.phase == NEW:
            raise NotDue(seat, f"a {env.kind} before the table is opened")
        if env.kind not in ("open", "join"):  # those two are checked against the key they carry
            info = self.seats[seat] if seat < len(self.seats) else None
            if info is None:
                raise NotSeated(seat, f"a {env.kind} from a seat nobody has joined")
            if (env.signature or env.kind not in wire.UNSIGNED_KINDS) and not signed_here:
                if not env.signed_by(info.key):
                    raise BadSignature(seat, f"the {env.kind} is not signed by {self.who(seat)}'s key")
            if env.kind != "dispute":  # a dispute's number follows the evidence it carries
                self.check_seq(env)
            self.check_link(env)
        effect = self.handlers[env.kind](env)  # wire.decode refused any kind the table does not list
        was = self.phase
        seqs, seen = list(self._seqs), list(self._seen)
        seqs[seat] = env.seq + 1
        seen[seat] = env.prev.entries
        heads = self._heads or [links.genesis(env.table)]
        for name, value in {**effect.changes, "_seqs": tuple(seqs), "_seen": tuple(seen)}.items():
            setattr(self._owners[name], name, value)
        for name, value in self.receipts.after(env, len(self._log), was).items():  # who vouches for what (§5.13)
            setattr(self.receipts, name, value)
        self._heads = heads
        self._heads.append(links.extend(heads[-1], frame))
        self._frames[(seat, env.seq)] = len(self._log)
        record = Record(len(self._log), env, effect.note, effect.move, effect.event)
        self._log.append(record)
        if any(c.state == "pending" for c in self.claims):
            self.default_claims.lapse()
        return record

    def decoded(self, frame: bytes) -> wire.Envelope:
        """`wire.decode(frame)`, kept for the last DECODED_KEPT frames: a joiner's own frames are tried on a
        tentative copy before the orderer relays them back (net/table/following.py), and decoding is
        most of what a reveal costs. Raises what `wire.decode` raises."""
        env = self._decoded.get(frame)
        if env is None:
            env = wire.decode(frame)
            if len(self._decoded) >= DECODED_KEPT:
                self._decoded.clear()
            self._decoded[frame] = env
        return env

    # -- the checks every frame shares (PROTOCOL.md §4.6, §4.7) -----------------------------------
    def _check_place(self, env: wire.Envelope) -> None:
        """A second, different frame at a (seat, seq) already in the log is signed proof of a fork."""
        index = self._frames.get((env.seat, env.seq))
        if index is None or self._log[index].frame == env.frame:
            return
        if not (env.signature and self._log[index].envelope.signature):
            return  # an unsigned reveal proves nothing about its seat: an ordinary out-of-order refusal follows
        if self.seats[env.seat] is None or not env.signed_by(self.seats[env.seat].key):
            return  # not the seat's signature: a bad signature, not the seat's equivocation
        raise Equivocation(env.seat, f"two different frames signed by {self.who(env.seat)} with sequence number "
                                     f"{env.seq} (log entry {index} and this one): the seat forked the log")

    def check_link(self, env: wire.Envelope) -> None:
        """The frame's parent must be in this log, and no earlier than its author's last parent."""
        link, seat = env.prev, env.seat
        heads = self._heads or [links.genesis(env.table)]
        relayed = " (a reveal is unsigned: whoever relayed it may have changed it)" if not env.signature else ""
        if link.entries >= len(heads):
            raise ForkedLog(seat, f"the {env.kind} of {self.who(seat)} builds on {link.entries} log entries, "
                                  f"but this log has {len(heads) - 1}: entries were withheld from this peer{relayed}")
        if heads[link.entries] != link.head:
            raise ForkedLog(seat, f"the {env.kind} of {self.who(seat)} builds on a log that differs from this one "
                                  f"within its first {link.entries} entries: this copy was changed after the seat signed, "
                                  f"or the host showed seats different logs{relayed}")
        if link.entries < self._seen[seat]:
            raise ForkedLog(seat, f"the {env.kind} of {self.who(seat)} builds on {link.entries} log entries after "
                                  f"its earlier frame built on {self._seen[seat]}: a seat's view never goes back")

    def check_seq(self, env: wire.Envelope, ahead: int = 0) -> None:
        expected = self._seqs[env.seat] + ahead
        if env.seq != expected:
            what = "repeated or replayed" if env.seq < expected else "ahead: a message is missing"
            raise OutOfOrder(env.seat, f"sequence number {env.seq}, expected {expected} ({what})")
