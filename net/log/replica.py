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
    Record: index, envelope, note (a Phrase), move, event (the Event it completed), frame, kind,
    seat. Event: number, label, chance, reveals (per seat), seed, outcome, missing.

Log rules
---------
Written down in docs/PROTOCOL.md, which this class implements: phases and what the table waits for
(§5.1), "open" and "join" (§5.2), "start" and "move" (§5.3), "reveal" and events (§5.4, §6), "anchor"
(§5.5), "chat" and "resign" (§5.6), "claim", "witness" and "dispute" (§5.7; who decides a default:
net/table/deadlines.py, §7), "seal" and "unseal" (§5.8), "deal" (§5.9, §9), "rematch" (§5.10), seats out
of the game (§5.11), the step, move and event counters (§5.12), sequence numbers (§4.6) and parent
links, forks and equivocation (§4.7).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from collections.abc import Sequence
from typing import Any, Callable

from dicetable.core import registry
from dicetable.core.game import (
    ANYONE, CHANCE, Chance, GameError, GameInfo, Move, Outcome, Result, apply_as, may_act, rematch_options, sealed_seats,
)
from dicetable.core.phrase import Phrase, Seat, listing, phrase
from dicetable.net.chance import reveal_chain as hashchain
from dicetable.net.chance import outcomes
from dicetable.net.log import links
from dicetable.net.chance import seal
from dicetable.net.log import wire
from dicetable.net.table.deadlines import waiting_key
from dicetable.net.cards.table_deals import paid_cards
from dicetable.net.identity import fingerprint
from dicetable.net.refusals import (
    BadAnchor,
    BadClaim,
    BadJoin,
    BadOpen,
    BadRematch,
    BadReveal,
    BadSeal,
    BadSignature,
    DealRefused,
    Equivocation,
    ForkedLog,
    IllegalMoveRefused,
    MalformedFrame,
    NotDue,
    NotSeated,
    OutOfOrder,
    SeatTaken,
    WrongTable,
)


# -- what the replica shows -------------------------------------------------------------------------
@dataclass(frozen=True)
class SeatInfo:
    seat: int
    name: str
    key: bytes
    curve: bytes | None
    fingerprint: str


@dataclass(frozen=True)
class Commitment:
    """A chain a seat committed to: its value h[j] opens table event first + j - 1."""

    anchor: bytes
    length: int
    first: int

    @property
    def last(self) -> int:
        return self.first + self.length - 1


@dataclass(frozen=True)
class ChainTrack:
    """A seat's chains and the last value it opened (the anchor before its first reveal)."""

    commitments: tuple[Commitment, ...]
    last_event: int = 0
    last_value: bytes = b""

    def covering(self, event: int) -> Commitment | None:
        for c in self.commitments:
            if c.first <= event <= c.last:
                return c
        return None

    @property
    def end(self) -> int:
        return self.commitments[-1].last


@dataclass(frozen=True)
class Event:
    """Random event `number`: each seat's reveal (None until in), then the seed and outcome."""

    number: int
    label: Phrase
    chance: Chance
    reveals: tuple[bytes | None, ...]
    seed: bytes | None = None
    outcome: Outcome | None = None

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(s for s, r in enumerate(self.reveals) if r is None)


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


@dataclass(frozen=True)
class Sealing:
    """A sealed step collecting answers: its number (`replica.steps` when it opened), the seats in
    the order their answers apply (`order`; seats out of the game answer by default) and, per seat,
    its commitment (b"" when the answer was given by default) and its opened answer."""

    step: int
    order: tuple[int, ...]
    asked: tuple[int, ...]
    commits: tuple[bytes | None, ...]
    answers: tuple[Move | None, ...]

    @property
    def unsealed(self) -> tuple[int, ...]:
        return tuple(s for s in self.asked if self.commits[s] is None)

    @property
    def unopened(self) -> tuple[int, ...]:
        return tuple(s for s in self.asked if self.answers[s] is None)


@dataclass(frozen=True)
class Claim:
    """The default claim at log entry `index`: `seat` says `against` is in default (FAIRNESS.md §4).

    `state`: "pending" (it waits for witnesses), "out" (the accused went out of the game, or the game
    ended), "answered" (a default answer was given for the accused, which stays in), "lapsed" (the
    wait it was about ended first). `wait` is that wait's `deadlines.waiting_key`."""

    index: int
    seat: int
    against: int
    reason: Phrase
    wait: tuple
    witnesses: tuple[int, ...] = ()
    state: str = "pending"

    @property
    def signers(self) -> tuple[int, ...]:
        return (self.seat, *self.witnesses)


@dataclass(frozen=True)
class Dispute:
    """The accused's signed answer (log entry `index`) to `claimant`'s claim at index `claim` of the
    orderer's log; `held` is False when this copy does not hold the claim (its author refused it)."""

    index: int
    seat: int
    claimant: int
    claim: int
    held: bool
    reason: Phrase
    evidence: int  # frames of its own the log did not hold


@dataclass(frozen=True)
class Record:
    """One accepted frame at log position `index`, with what it did in words (its seats as seats)."""

    index: int
    envelope: wire.Envelope
    note: Phrase
    move: Move | None = None
    event: Event | None = None  # the event this record completed

    @property
    def frame(self) -> bytes:
        return self.envelope.frame

    @property
    def kind(self) -> str:
        return self.envelope.kind

    @property
    def seat(self) -> int:
        return self.envelope.seat


@dataclass(frozen=True)
class Effect:
    """What a checked frame does, not yet applied: `accept` sets `changes` (replica attributes) all
    at once, then logs the note, the move the frame applied and the event it decided."""

    changes: dict
    note: Phrase
    move: Move | None = None
    event: Event | None = None


class _LogView(Sequence):
    """A read-only view of the replica's log list."""

    __slots__ = ("_records",)

    def __init__(self, records: list[Record]) -> None:
        self._records = records

    def __getitem__(self, index):
        return self._records[index]

    def __len__(self) -> int:
        return len(self._records)


_NEW, _JOINING, _READY, _PLAYING, _OVER = "new", "joining", "ready", "playing", "over"


class Replica:
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
        self.game: GameInfo | None = None
        self.options: dict = {}
        self.seat_count = 0
        self.seats: tuple[SeatInfo | None, ...] = ()
        self.phase = _NEW
        self.state: Any = None
        self.events: tuple[Event, ...] = ()
        self.pending: Event | None = None
        self.sealing: Sealing | None = None  # a sealed step collecting answers (core/game.py)
        self.forced: Result | None = None  # a result by resignation or default claim
        self.moves = 0
        self.steps = 0  # state changes so far (moves and resolved chance steps): one key per thing awaited
        self.out: frozenset[int] = frozenset()  # seats out of the game after a default (FAIRNESS.md §4)
        self.claims: tuple[Claim, ...] = ()  # every default claim, with its state
        self.disputes: tuple[Dispute, ...] = ()
        self.ending: Claim | None = None  # the claim whose default ended the game
        self.game_number = 1  # the game being played at this table: 1, then one more per agreed rematch
        self.game_options: dict = {}  # the options the current game was made with
        self.game_start = 0  # log index of the record that started the current game
        self.results: tuple[Result, ...] = ()  # the results of the games before the current one
        self.consents: tuple[bool | None, ...] = ()  # per seat: agreed to the next game (None: not yet)
        self.declined: int | None = None  # the seat that declined a rematch: the table plays no more games
        self._seqs: tuple[int, ...] = (0,) * wire.MAX_SEATS
        self._seen: tuple[int, ...] = (0,) * wire.MAX_SEATS  # per seat: the log entries its last frame built on
        self._heads: list[bytes] = [links.genesis(table)] if table is not None else []  # head(n), n = 0..len(log)
        self._frames: dict[tuple[int, int], int] = {}  # (seat, seq) -> log index: a second frame there is equivocation
        self._chains: tuple[ChainTrack | None, ...] = ()
        self._log: list[Record] = []
        self._host_key = b""

    # -- views ---------------------------------------------------------------------------------
    @property
    def opener(self) -> bytes:
        """The Ed25519 key that signed the table's opening (b"" before it)."""
        return self._host_key

    @property
    def log(self) -> Sequence[Record]:
        return _LogView(self._log)  # read-only and O(1): sessions ask for it on every frame

    @property
    def result(self) -> Result | None:
        if self.forced is not None:
            return self.forced
        return self.state.result if self.state is not None else None

    @property
    def next_options(self) -> dict | None:
        """The options of the next game once this one is over: what its end decides (core/game.py's
        `rematch_options`: TRIAD keeps the colours and the other player starts), else the table's."""
        if self.phase != _OVER or self.state is None:
            return None
        following = rematch_options(self.state)
        return self.game.resolve_options(following) if following is not None else dict(self.options)

    @property
    def series(self) -> tuple[Result, ...]:
        """Every game's result at this table so far, the current game's once it is over."""
        return self.results + ((self.result,) if self.result is not None else ())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name if s else f"seat {i}" for i, s in enumerate(self.seats))

    @property
    def waiting_for(self) -> Waiting:
        if self.phase == _NEW:
            return Waiting("open", (0,))
        if self.phase == _JOINING:
            return Waiting("join", tuple(i for i, s in enumerate(self.seats) if s is None))
        if self.phase == _READY:
            return Waiting("start", (0,))
        owing = self.deal_owing()
        if self.phase == _PLAYING:
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
        owing = getattr(self.deal_handler, "owing", None)
        if owing is None or self.phase not in (_PLAYING, _OVER):
            return ()
        return owing(self)

    @property
    def settled(self) -> bool:
        """The game is over and the deal owes nothing more (every deck opened and checked)."""
        return self.result is not None and not self.deal_owing()

    def next_seq(self, seat: int) -> int:
        return self._seqs[seat]

    def chain_left(self, seat: int) -> int:
        track = self._chains[seat] if seat < len(self._chains) else None
        return 0 if track is None else track.end - track.last_event

    @property
    def head(self) -> wire.Link:
        """Where this replica stands in the log: the parent of a frame authored now."""
        return wire.Link(len(self._log), self._heads[-1])

    def head_at(self, entries: int) -> bytes:
        """The log's head hash after its first `entries` entries."""
        return self._heads[entries]

    def seat_of(self, key: bytes) -> int | None:
        for info in self.seats:
            if info is not None and info.key == key:
                return info.seat
        return None

    def who(self, seat: int) -> Seat:
        if 0 <= seat < len(self.seats) and self.seats[seat] is not None:
            return Seat(seat, self.seats[seat].name)
        return Seat(seat)

    def needed(self, against: int) -> int:
        """Signatures (the claimant's among them) a claim against `against` needs to take effect
        now: a majority of the seats still in, the accused excepted (FAIRNESS.md §4)."""
        voters = sum(1 for s in range(self.seat_count) if s != against and s not in self.out)
        return voters // 2 + 1

    def pending_claim(self, against: int) -> Claim | None:
        return next((c for c in self.claims if c.against == against and c.state == "pending"), None)

    def basis(self, claim: Claim) -> str:
        """What in the log supports `claim`: its signers, and the accused's dispute if it made one."""
        seats = lambda group: f"seat{'s' if len(group) > 1 else ''} {', '.join(str(s) for s in group)}"
        if claim.witnesses:
            text = f"claim by seat {claim.seat}, witnessed by {seats(claim.witnesses)}"
        else:
            text = f"unwitnessed claim by seat {claim.seat}"
        if any(d.claim == claim.index and d.held for d in self.disputes):
            text += f", disputed by seat {claim.against}"
        return text

    # -- the one entry point -------------------------------------------------------------------
    def accept(self, frame: bytes, signed_here: bool = False) -> Record:
        """Check `frame` completely and append it, or raise a Refusal and change nothing.
        `signed_here`: the frame is, byte for byte, one this process signed with its own seat's key,
        so its signature is not verified again (every other check runs; other seats verify it)."""
        try:
            env = wire.decode(frame)
        except wire.WireError as error:
            raise MalformedFrame(None, str(error)) from None
        seat = env.seat
        if self.table is not None and env.table != self.table:
            raise WrongTable(seat, "the message belongs to another table (replayed or misrouted)")
        self._check_place(env)
        if env.kind == "open":
            effect = self._open(env)
        elif self.phase == _NEW:
            raise NotDue(seat, f"a {env.kind} before the table is opened")
        elif env.kind == "join":
            effect = self._join(env)
        else:
            info = self.seats[seat] if seat < len(self.seats) else None
            if info is None:
                raise NotSeated(seat, f"a {env.kind} from a seat nobody has joined")
            if (env.signature or env.kind not in wire.UNSIGNED_KINDS) and not signed_here:
                if not env.signed_by(info.key):
                    raise BadSignature(seat, f"the {env.kind} is not signed by {self.who(seat)}'s key")
            if env.kind != "dispute":  # a dispute's number follows the evidence it carries
                self._check_seq(env)
            self._check_link(env)
            effect = self._dispatch(env)
        seqs, seen = list(self._seqs), list(self._seen)
        seqs[seat] = env.seq + 1
        seen[seat] = env.prev.entries
        heads = self._heads or [links.genesis(env.table)]
        for name, value in {**effect.changes, "_seqs": tuple(seqs), "_seen": tuple(seen)}.items():
            setattr(self, name, value)
        self._heads = heads
        self._heads.append(links.extend(heads[-1], frame))
        self._frames[(seat, env.seq)] = len(self._log)
        record = Record(len(self._log), env, effect.note, effect.move, effect.event)
        self._log.append(record)
        if any(c.state == "pending" for c in self.claims):
            self._lapse()
        return record

    def _lapse(self) -> None:
        """Pending claims end with the wait they are about: the accused did what the table waited for,
        or the game moved on (derived from the state just committed; it cannot fail)."""
        wait, seats = waiting_key(self), self.waiting_for.seats
        self.claims = tuple(
            replace(c, state="lapsed") if c.state == "pending" and (c.wait != wait or c.against not in seats) else c
            for c in self.claims
        )

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

    def _check_link(self, env: wire.Envelope) -> None:
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

    # -- kinds ---------------------------------------------------------------------------------
    def _check_seq(self, env: wire.Envelope, ahead: int = 0) -> None:
        expected = self._seqs[env.seat] + ahead
        if env.seq != expected:
            what = "repeated or replayed" if env.seq < expected else "ahead: a message is missing"
            raise OutOfOrder(env.seat, f"sequence number {env.seq}, expected {expected} ({what})")

    def _open(self, env: wire.Envelope) -> Effect:
        seat, body = env.seat, env.body
        if self.phase != _NEW:
            raise NotDue(seat, "the table is already open")
        if seat != 0:
            raise BadOpen(seat, "only seat 0 (the host) opens a table")
        if not env.signed_by(body["key"]):
            raise BadSignature(seat, "the open is not signed by the host key it names")
        self._check_seq(env)
        self._check_link(env)
        try:
            game = self.games(body["game"])
            game.check_seats(body["seats"])
            options = game.resolve_options(body["options"])
        except GameError as error:
            raise BadOpen(seat, str(error)) from None
        n = body["seats"]
        changes = {
            "table": env.table,
            "game": game,
            "options": options,
            "game_options": options,
            "consents": (None,) * n,
            "seat_count": n,
            "seats": (None,) * n,
            "_chains": (None,) * n,
            "phase": _JOINING,
            "_host_key": body["key"],
        }
        return Effect(changes, phrase(Seat(0), f" opens a {game.title} table for {n}"))

    def _join(self, env: wire.Envelope) -> Effect:
        seat, body = env.seat, env.body
        if self.phase != _JOINING:
            raise NotDue(seat, "the table is not taking players")
        if seat >= self.seat_count:
            raise NotSeated(seat, f"the table has seats 0 to {self.seat_count - 1}")
        if self.seats[seat] is not None:
            raise SeatTaken(seat, f"seat {seat} is already taken by {self.seats[seat].name}")
        if not env.signed_by(body["key"]):
            raise BadSignature(seat, "the join is not signed by the key it names")
        self._check_seq(env)
        self._check_link(env)
        if seat == 0 and body["key"] != self._host_key:
            raise BadJoin(seat, "seat 0 must join with the host key that opened the table")
        if self.seat_of(body["key"]) is not None:
            raise BadJoin(seat, f"the key already sits at seat {self.seat_of(body['key'])}")
        copied = self._anchor_owner(body["anchor"])
        if copied is not None:
            raise BadJoin(seat, f"its chain anchor is {self.who(copied)}'s: a copied chain (chains are bound to their seat)")
        info = SeatInfo(seat, body["name"], body["key"], body.get("curve"), fingerprint(body["key"]))
        seats = list(self.seats)
        seats[seat] = info
        chains = list(self._chains)
        chains[seat] = ChainTrack((Commitment(body["anchor"], body["length"], 1),), 0, body["anchor"])
        phase = _READY if all(seats) else _JOINING
        changes = {"seats": tuple(seats), "_chains": tuple(chains), "phase": phase}
        return Effect(changes, phrase(f"{body['name']} joins at ", Seat(seat), f" ({info.fingerprint})"))

    def _anchor_owner(self, anchor: bytes) -> int | None:
        """The seat that already committed to a chain with this anchor, if any."""
        for seat, track in enumerate(self._chains):
            if track is not None and any(c.anchor == anchor for c in track.commitments):
                return seat
        return None

    def _dispatch(self, env: wire.Envelope) -> Effect:
        kind = env.kind
        if kind == "start":
            return self._start(env)
        if kind == "move":
            return self._move(env)
        if kind == "reveal":
            return self._reveal(env)
        if kind == "seal":
            return self._seal(env)
        if kind == "unseal":
            return self._unseal(env)
        if kind == "anchor":
            return self._anchor(env)
        if kind == "chat":
            return Effect({}, phrase(self.who(env.seat), f" says: {env.body['text']}"))
        if kind == "resign":
            return self._resign(env)
        if kind == "claim":
            return self._claim(env)
        if kind == "witness":
            return self._witness(env)
        if kind == "dispute":
            return self._dispute(env)
        if kind == "deal":
            return self._deal(env)
        if kind == "rematch":
            return self._rematch(env)
        raise MalformedFrame(env.seat, f"unhandled kind {kind}")  # wire.SCHEMAS and this agree

    def _after(self, state: Any, events: tuple[Event, ...], out: frozenset[int] | None = None) -> dict:
        """Phase and pending event for a new game state (a chance step opens the next event).

        A seat out of the game after a default never acts again: where it would, the state's
        `without(seat)` skips it; a game without that hook ends scored as it stands.
        """
        out = self.out if out is None else out
        changes: dict = {"pending": None, "steps": self.steps + 1, "sealing": None}
        while out and state.result is None and state.actor is not None and state.actor in out:
            skipped = state.without(state.actor) if hasattr(state, "without") else None
            if skipped is None:
                ending = next((c for c in reversed(self.claims) if c.state == "out"), None)  # the default that led here
                changes.update({"forced": self._as_it_stands(state, out), "phase": _OVER, "ending": ending})
                break
            state = skipped
        changes["state"] = state
        if changes.get("phase") == _OVER:
            pass
        elif state.result is not None or state.actor is None:
            changes["phase"] = _OVER
        elif state.actor == CHANCE:
            chance = state.chance()
            if not chance.hidden:  # a hidden-card step is resolved by the deal handler instead
                reveals = tuple(b"" if s in out else None for s in range(self.seat_count))
                changes["pending"] = Event(len(events) + 1, chance.label, chance, reveals)
        elif order := sealed_seats(state):
            none = (None,) * self.seat_count
            asked = tuple(s for s in order if s not in out)
            changes["sealing"] = Sealing(changes["steps"], order, asked, none, none)
        return changes

    def _as_it_stands(self, state: Any, out: frozenset[int]) -> Result:
        """The result of a game its rules cannot go on with: the game's own score, else the others share."""
        score_now = getattr(state, "score_now", None)
        result = score_now() if score_now is not None else None
        return result or self._ending(set(out), phrase(listing(Seat(s) for s in sorted(out)), " in default"))

    def _decide(self, event: Event, out: frozenset[int] | None = None) -> tuple[dict, Event]:
        """Every reveal of `event` is in: derive its outcome and resolve the state (FAIRNESS.md §1).

        A seat out of the game contributes 32 zero bytes in its place in the seed.
        """
        seed = outcomes.event_seed(self.table, event.number, tuple(r or bytes(32) for r in event.reveals))
        outcome = outcomes.draw(event.chance, seed)
        event = replace(event, seed=seed, outcome=outcome)
        state = self.state.resolve(outcome)  # a BadOutcome here is an engine bug, not a peer's
        events = self.events + (event,)
        return {"events": events, **self._after(state, events, out)}, event

    def _start(self, env: wire.Envelope) -> Effect:
        if env.seat != 0:
            raise NotDue(env.seat, "only the host (seat 0) starts the game")
        if self.phase != _READY:
            if self.phase == _JOINING:
                raise NotDue(env.seat, f"cannot start: {self.waiting_for}")
            if self.phase == _OVER:
                raise NotDue(env.seat, "a next game starts only once every seat has agreed to a rematch")
            raise NotDue(env.seat, "the game has already started")
        try:
            state = self.game.new(self.seat_count, self.game_options)
        except GameError as error:
            raise BadOpen(env.seat, str(error)) from None
        changes = {"phase": _PLAYING, "game_start": len(self._log), **self._after(state, self.events)}
        return Effect(changes, phrase(Seat(0), " starts the game"))

    def _rematch(self, env: wire.Envelope) -> Effect:
        """A seat's signed consent to the next game, or its refusal (PROTOCOL.md §5.10)."""
        seat, body = env.seat, env.body
        number = self.game_number + 1
        if self.phase != _OVER:
            raise NotDue(seat, "a rematch is agreed once the game is over")
        if self.declined is not None:
            raise NotDue(seat, f"{self.who(self.declined)} declined a rematch: this table plays no more games")
        if self.deal_owing():
            raise NotDue(seat, "a rematch once every deck of this game is opened")
        if getattr(self.deal_handler, "formed", None):
            raise BadRematch(seat, "a table with a card deal plays one game: open a new table")
        if body["game"] != number:
            raise BadRematch(seat, f"a consent to game {body['game']}, but the next game at this table is game {number}")
        if not body["agree"]:
            return Effect({"declined": seat}, phrase(self.who(seat), " declines a rematch"))
        if self.consents[seat]:
            raise NotDue(seat, f"{self.who(seat)} has already agreed to game {number}")
        following = self.next_options
        if body["options"] != following:
            wrong = ", ".join(f"{k}={body['options'].get(k)!r} (not {v!r})" for k, v in following.items()
                              if body["options"].get(k) != v) or "names options this game does not have"
            raise BadRematch(seat, f"game {number}'s options follow from game {self.game_number}'s end: {wrong}")
        consents = list(self.consents)
        consents[seat] = True
        if not all(consents):
            waiting = listing(self.who(s) for s, agreed in enumerate(consents) if not agreed)
            return Effect({"consents": tuple(consents)},
                          phrase(self.who(seat), f" offers a rematch (game {number}); waiting for ", waiting))
        try:
            state = self.game.new(self.seat_count, following)
        except GameError as error:
            raise BadRematch(seat, str(error)) from None
        changes = {  # every seat agreed: the next game starts here, with nobody out and no result yet
            "game_number": number, "game_options": following, "game_start": len(self._log),
            "results": self.series, "consents": (None,) * self.seat_count,
            "forced": None, "ending": None, "out": frozenset(), "phase": _PLAYING,
            **self._after(state, self.events, frozenset()),
        }
        return Effect(changes, phrase(self.who(seat), f" agrees to a rematch: game {number} starts"))

    def _move(self, env: wire.Envelope) -> Effect:
        seat = env.seat
        if self.phase != _PLAYING:
            raise NotDue(seat, "no move is due: " + ("the game is over" if self.phase == _OVER else "the game has not started"))
        if self.sealing is not None:
            raise NotDue(seat, f"the answers to step {self.sealing.step} are sealed: a seal, then its opening, not a move")
        if seat in self.out or not may_act(self.state, seat):
            if seat in self.out:
                raise NotDue(seat, f"seat {seat} is out of the game")
            if self.pending is not None:
                raise NotDue(seat, f"a move while event {self.pending.number} waits for reveals")
            if self.state.actor == CHANCE:
                raise NotDue(seat, "a move while the table waits for the card deal")
            if self.state.actor is not None and self.state.actor >= 0:
                raise NotDue(seat, f"it is seat {self.state.actor}'s turn, not seat {seat}'s")
            raise NotDue(seat, f"seat {seat} may not move now")
        try:
            move = Move.from_data(env.body["move"])
            # A game with hidden hands is checked by apply against this peer's view: a peer cannot
            # list another seat's payments from unknown handles (net/cards/table_deals.py).
            cards = paid_cards(self.state, move)
            if cards is None and move not in self.state.legal_moves():
                raise GameError(f"{move} is not a legal move now")
            state = apply_as(self.state, seat, move)
        except GameError as error:
            raise IllegalMoveRefused(seat, str(error)) from None
        if self.pending is not None and (state.actor != CHANCE or state.chance() != self.pending.chance):
            # A move made while an event collects reveals may not change what that event decides.
            raise IllegalMoveRefused(seat, f"{move} would change event {self.pending.number}, still being decided")
        if cards:
            pay = getattr(self.deal_handler, "pay", None)
            if pay is None:
                raise DealRefused(seat, f"{move} pays hidden cards at a table without a card deal")
            pay(seat, cards)  # DealRefused unless every card was shown from seat's hand; then marks them paid
        note = self.game.describe(self.state, move)
        if self.state.actor != seat:  # one of several seats that may move: the log names the mover
            note = phrase(self.who(seat), " ", note)
        if self.pending is not None:  # queued behind the open event (the state said so): it stays open
            return Effect({"moves": self.moves + 1, "state": state}, note, move)
        changes = {"moves": self.moves + 1, **self._after(state, self.events)}
        return Effect(changes, note, move)

    def _reveal(self, env: wire.Envelope) -> Effect:
        seat, k, value = env.seat, env.body["k"], env.body["value"]
        pending = self.pending
        if pending is None:
            raise NotDue(seat, "a reveal when no random event is open")
        if k != pending.number:
            raise BadReveal(seat, f"a reveal for event {k} while event {pending.number} is open")
        if pending.reveals[seat] is not None:
            raise NotDue(seat, f"seat {seat} has already revealed for event {k}")
        track = self._chains[seat]
        commitment = track.covering(k)
        if commitment is None:
            raise BadReveal(seat, f"no committed chain of seat {seat} covers event {k} (chain ran out)")
        previous = commitment.anchor if k == commitment.first else track.last_value
        if track.last_event != k - 1 or not hashchain.opens(self.table, seat, previous, value):
            raise BadReveal(seat, f"the value for event {k} does not open seat {seat}'s committed chain")
        chains = list(self._chains)
        chains[seat] = replace(track, last_event=k, last_value=value)
        reveals = list(pending.reveals)
        reveals[seat] = value
        event = replace(pending, reveals=tuple(reveals))
        changes: dict = {"_chains": tuple(chains), "pending": event}
        note = phrase(self.who(seat), f" reveals for event {k} (", pending.label, ")")
        if event.missing:
            return Effect(changes, note)
        decided, event = self._decide(event)
        changes.update(decided)
        return Effect(changes, phrase(note, f"; event {k} decided"), event=event)

    def _sealed_step(self, env: wire.Envelope) -> Sealing:
        """The open sealed step a seal or unseal names, asking its author (else a Refusal)."""
        seat, sealing = env.seat, self.sealing
        if self.phase != _PLAYING or sealing is None:
            raise NotDue(seat, f"a {env.kind} when no sealed answer is asked")
        if env.body["step"] != sealing.step:
            raise NotDue(seat, f"a {env.kind} for step {env.body['step']} while step {sealing.step} is asked")
        if seat not in sealing.asked:
            raise NotDue(seat, f"seat {seat} is not asked at step {sealing.step}")
        return sealing

    def _seal(self, env: wire.Envelope) -> Effect:
        seat = env.seat
        sealing = self._sealed_step(env)
        if sealing.commits[seat] is not None:
            raise NotDue(seat, f"seat {seat} has already answered step {sealing.step}")
        commits = list(sealing.commits)
        commits[seat] = env.body["commit"]
        return Effect({"sealing": replace(sealing, commits=tuple(commits))}, phrase(self.who(seat), " seals its answer"))

    def _unseal(self, env: wire.Envelope) -> Effect:
        seat, body = env.seat, env.body
        sealing = self._sealed_step(env)
        if sealing.unsealed:
            waiting = listing(self.who(s) for s in sealing.unsealed)
            raise NotDue(seat, f"answers open once every seat has sealed one (waiting for {waiting})")
        if sealing.answers[seat] is not None:
            raise NotDue(seat, f"seat {seat} has already opened its answer to step {sealing.step}")
        if seal.commitment(self.table, sealing.step, seat, body["move"], body["nonce"]) != sealing.commits[seat]:
            raise BadSeal(seat, f"the answer does not open {self.who(seat)}'s seal for step {sealing.step}")
        try:
            move = Move.from_data(body["move"])
            if move not in self.state.asking(seat).legal_moves():
                raise GameError(f"{move} is not a legal answer now")
        except GameError as error:
            raise IllegalMoveRefused(seat, str(error)) from None
        changes = self._answered(sealing, seat, move)
        return Effect(changes, phrase(self.who(seat), f" opens its sealed answer: {move}"), move)

    def _answered(self, sealing: Sealing, seat: int, move: Move) -> dict:
        """`seat`'s answer is in; once every asked seat's is, all apply in the state's order."""
        answers, commits = list(sealing.answers), list(sealing.commits)
        answers[seat] = move
        if commits[seat] is None:
            commits[seat] = b""  # given by default: nothing of its own to open
        sealing = replace(sealing, answers=tuple(answers), commits=tuple(commits))
        moves = self.moves + 1
        if sealing.unopened:
            return {"sealing": sealing, "moves": moves}
        state = self.state
        for s in sealing.order:
            state = apply_as(state, s, sealing.answers[s] or state.default_move())
        return {"moves": moves, **self._after(state, self.events)}

    def _anchor(self, env: wire.Envelope) -> Effect:
        seat, body = env.seat, env.body
        if self.phase == _OVER:
            raise NotDue(seat, "the game is over")
        track = self._chains[seat]
        if body["first"] != track.end + 1:
            raise BadAnchor(seat, f"a new chain must take over at event {track.end + 1}, not {body['first']}")
        started = self.pending.number if self.pending is not None else len(self.events)
        if body["first"] <= started:
            raise BadAnchor(seat, f"event {body['first']} has already begun: anchors are committed in advance")
        copied = self._anchor_owner(body["anchor"])
        if copied is not None:
            raise BadAnchor(seat, f"the anchor is one {self.who(copied)} already committed to: a copied chain")
        chains = list(self._chains)
        commitment = Commitment(body["anchor"], body["length"], body["first"])
        chains[seat] = replace(track, commitments=track.commitments + (commitment,))
        note = phrase(self.who(seat), f" commits a fresh chain for events {commitment.first}..{commitment.last}")
        return Effect({"_chains": tuple(chains)}, note)

    def _ending(self, losers: set[int], reason: Phrase) -> Result:
        winners = tuple(s for s in range(self.seat_count) if s not in losers)
        scores = tuple((1.0 / len(winners) if s in winners else 0.0) for s in range(self.seat_count))
        return Result(winners, scores, reason)

    def _resign(self, env: wire.Envelope) -> Effect:
        if self.phase != _PLAYING:
            raise NotDue(env.seat, "there is no game in progress to resign")
        result = self._ending(set(self.out) | {env.seat}, phrase(Seat(env.seat), " resigned"))
        return Effect({"forced": result, "phase": _OVER, "pending": None}, phrase(self.who(env.seat), " resigns"))

    def _claim(self, env: wire.Envelope) -> Effect:
        seat, against = env.seat, env.body["against"]
        if self.phase != _PLAYING:
            raise NotDue(seat, "there is no game in progress to claim")
        waiting = self.waiting_for
        if against == seat or against >= self.seat_count or against not in waiting.seats:
            raise BadClaim(seat, f"seat {against} is not the seat the table waits for ({waiting})")
        if seat in self.out:
            raise BadClaim(seat, f"seat {seat} is itself out of the game")
        pending = self.pending_claim(against)
        if pending is not None:
            raise BadClaim(seat, f"{self.who(pending.seat)}'s claim against seat {against} (entry {pending.index + 1}) "
                                 "is pending: witness it instead")
        if self.claim_check is not None:
            self.claim_check(self, env)
        claim = Claim(len(self._log), seat, against, Phrase.read(env.body["reason"] or "no reason given"), waiting_key(self))
        need = self.needed(against)
        if need > 1:  # FAIRNESS.md §4: no one party's clock decides a default
            more = need - 1
            note = phrase(self.who(seat), " claims ", self.who(against), " is in default (", claim.reason, "); it takes effect "
                    f"once {more} more seat{'s' if more > 1 else ''} witness{'' if more > 1 else 'es'} it")
            return Effect({"claims": self.claims + (claim,)}, note)
        changes, verb, what = self._default(claim)
        return Effect(changes, phrase(self.who(seat), f" {verb} ", what))

    def _witness(self, env: wire.Envelope) -> Effect:
        seat, index = env.seat, env.body["claim"]
        claim = next((c for c in self.claims if c.index == index), None)
        if claim is None:
            raise BadClaim(seat, f"log entry {index + 1} is not a default claim")
        if claim.state != "pending":
            raise NotDue(seat, f"the claim at entry {index + 1} is no longer pending ({claim.state})")
        if seat == claim.against:
            raise BadClaim(seat, f"seat {seat} cannot witness a claim against itself")
        if seat in self.out:
            raise BadClaim(seat, f"seat {seat} is itself out of the game")
        if seat in claim.signers:
            raise NotDue(seat, f"seat {seat} has already signed the claim at entry {index + 1}")
        claim = replace(claim, witnesses=claim.witnesses + (seat,))
        need = self.needed(claim.against)
        signed = sum(1 for s in claim.signers if s not in self.out)
        note = phrase(self.who(seat), " witnesses ", self.who(claim.seat), "'s claim against ", self.who(claim.against), " "
                f"({signed} of {need} signatures)")
        if signed < need:
            return Effect({"claims": self._with_claim(claim)}, note)
        changes, _, what = self._default(claim)
        return Effect(changes, phrase(note, ": ", what))

    def _with_claim(self, claim: Claim) -> tuple[Claim, ...]:
        """The claims with `claim` in its place (or added)."""
        if any(c.index == claim.index for c in self.claims):
            return tuple(claim if c.index == claim.index else c for c in self.claims)
        return self.claims + (claim,)

    def _default(self, claim: Claim) -> tuple[dict, str, Phrase]:
        """The changes of a claim that takes effect, with the claim's verb and what it does in words."""
        against, why = claim.against, claim.reason
        default = self._default_move(against)
        if default is not None:
            # A step with a default answer (Dice Breaker's Latent Dice claim): a seat that does not
            # answer in time gives it, and stays in the game.
            if self.sealing is not None:  # late to seal or to open its seal: the default is its answer
                changes = self._answered(self.sealing, against, default)
            else:
                changes = {"moves": self.moves + 1, **self._after(self.state.apply(default), self.events)}
            return (self._settled(changes, claim, "answered"), "claims",
                    phrase(self.who(against), " did not answer in time (", why, f"): {default}"))
        reason = phrase(Seat(against), " in default")
        out = self.out | {against}
        if self.seat_count - len(out) >= 2 and self._goes_on_without(against):
            # FAIRNESS.md §4, more seats: the game goes on without the defaulted seat.
            changes: dict = {"out": out}
            if self.pending is not None:
                reveals = list(self.pending.reveals)
                reveals[against] = b""
                event = replace(self.pending, reveals=tuple(reveals))
                if event.missing:
                    changes["pending"] = event
                else:
                    decided, _ = self._decide(event, out)
                    changes.update(decided)
            else:
                changes.update(self._after(self.state, self.events, out))
            return self._settled(changes, claim, "out"), "claims a default:", phrase(reason, " (", why, "); the game goes on without it")
        if self.seat_count > 2 and hasattr(self.state, "score_now"):
            result = self._as_it_stands(self.state, out)
        else:
            result = self._ending(set(out), reason)
        changes = {"forced": result, "phase": _OVER, "pending": None, "out": out}
        return self._settled(changes, claim, "out"), "claims the game:", phrase(reason, " (", why, ")")

    def _settled(self, changes: dict, claim: Claim, state: str) -> dict:
        """`changes` with `claim` in effect; the claim ended the game if they force a result."""
        claim = replace(claim, state=state)
        changes["claims"] = self._with_claim(claim)
        if "forced" in changes:
            changes["ending"] = claim
        return changes

    def _dispute(self, env: wire.Envelope) -> Effect:
        seat, body = env.seat, env.body
        if self.phase not in (_PLAYING, _OVER):
            raise NotDue(seat, "a dispute before the game has started")
        index = body["claim"]
        try:
            claimed = wire.decode(body["frame"])
        except wire.WireError as error:
            raise BadClaim(seat, f"the claim it disputes is not a frame: {error}") from None
        if claimed.kind != "claim" or claimed.table != self.table or claimed.body["against"] != seat:
            raise BadClaim(seat, f"seat {seat} disputes only a claim against itself at this table")
        claimant = claimed.seat
        if index < len(self._log):
            if self._log[index].frame != body["frame"]:
                raise BadClaim(seat, f"log entry {index + 1} is not the claim it disputes")
            if any(d.claim == index and d.seat == seat for d in self.disputes):
                raise NotDue(seat, f"seat {seat} has already disputed the claim at entry {index + 1}")
            held = True
        elif index == len(self._log):  # its author refused the claim: its copy holds the dispute there
            info = self.seats[claimant] if claimant < len(self.seats) else None
            if info is None or claimant == seat or not claimed.signed_by(info.key):
                raise BadClaim(seat, "the claim it disputes is not signed by the seat that made it")
            link = claimed.prev
            if link.entries > len(self._log) or self._heads[link.entries] != link.head:
                raise BadClaim(seat, "the claim it disputes builds on another log than this one")
            held = False
        else:
            raise BadClaim(seat, f"there is no log entry {index + 1} to dispute")
        carried = self._evidence(env)
        self._check_seq(env, ahead=carried)
        dispute = Dispute(len(self._log), seat, claimant, index, held, Phrase.read(body["reason"]), carried)
        note = phrase(self.who(seat), " disputes ", self.who(claimant), "'s claim")
        if held:
            note += phrase(f" (entry {index + 1}): ", Phrase.read(body['reason']))
        else:
            note += phrase(" against it (", Phrase.read(claimed.body['reason']), "): ", Phrase.read(body['reason']), "; this copy does not hold the claim")
        if carried:
            note += f"; it shows {carried} frame{'s' if carried > 1 else ''} of its own the log does not hold"
        return Effect({"disputes": self.disputes + (dispute,)}, note)

    def _evidence(self, env: wire.Envelope) -> int:
        """Check a dispute's evidence: its author's own frames, each either the frame this log holds at
        its sequence number or one of the author's next frames, in order. Returns how many are new."""
        seat, expected = env.seat, self._seqs[env.seat]
        key = self.seats[seat].key
        new = 0
        for n, frame in enumerate(env.body["evidence"], 1):
            try:
                shown = wire.decode(frame)
            except wire.WireError as error:
                raise BadClaim(seat, f"evidence frame {n} is not a frame: {error}") from None
            if shown.table != self.table or shown.seat != seat:
                raise BadClaim(seat, f"evidence frame {n} is not seat {seat}'s own at this table")
            if (shown.signature or shown.kind not in wire.UNSIGNED_KINDS) and not shown.signed_by(key):
                raise BadSignature(seat, f"evidence frame {n} is not signed by {self.who(seat)}'s key")
            if shown.seq < expected:
                logged = self._frames.get((seat, shown.seq))
                if logged is None or self._log[logged].frame != frame:
                    if logged is not None and shown.signature and self._log[logged].envelope.signature:
                        raise Equivocation(seat, f"evidence frame {n} and log entry {logged + 1} are two different "
                                                 f"frames signed by {self.who(seat)} with sequence number {shown.seq}")
                    raise BadClaim(seat, f"evidence frame {n} is not the frame the log holds at its sequence number")
            elif shown.seq != expected + new:
                raise BadClaim(seat, f"evidence frames are the seat's next frames in order: sequence number "
                                     f"{expected + new}, not {shown.seq}")
            else:
                new += 1
        return new

    def _default_move(self, seat: int) -> Move | None:
        """The move `seat` is taken to make when it does not answer in time, if its step has one."""
        default = getattr(self.state, "default_move", None)
        if default is None or self.pending is not None:
            return None
        if self.sealing is not None:
            return self.state.asking(seat).default_move() if seat in self.waiting_for.seats else None
        return default() if self.state.actor == seat else None

    def _goes_on_without(self, seat: int) -> bool:
        """The rules allow play without `seat`: the game can skip it, and no card deal needs its keys."""
        if not hasattr(self.state, "without") or getattr(self.deal_handler, "formed", None):
            return False
        if self.pending is None and self.state.actor == seat:
            return self.state.without(seat) is not None
        return True

    def _deal(self, env: wire.Envelope) -> Effect:
        if self.deal_handler is None:
            raise DealRefused(env.seat, "this table has no card deal")
        if self.phase not in (_READY, _PLAYING, _OVER):  # over: the end-of-game opening of keys
            raise NotDue(env.seat, "a deal message before every seat has joined")
        outcome = self.deal_handler.accept(self, env)
        note = phrase(self.who(env.seat), f": deal step {env.body.get('step', '')}".rstrip())
        if outcome is None:
            return Effect({}, note)
        if self.state is None or self.state.actor != CHANCE or not self.state.chance().hidden:
            raise DealRefused(env.seat, "a deal outcome when no hidden-card step is due")
        try:
            state = self.state.resolve(outcome)
        except GameError as error:
            raise DealRefused(env.seat, f"the deal's outcome does not fit: {error}") from None
        return Effect(self._after(state, self.events), note)
