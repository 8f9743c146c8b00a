"""The relay's mailboxes for short codes: numbered boxes where a host and its joiners leave messages.

A code (net/reach/codes.py) starts with a mailbox number, the *nameplate*, that the relay hands out: drawn
with `secrets` among the numbers free, so nobody can tell which number a table's next code will have
(PROTOCOL.md §13.1). Anyone at the relay may post to a box or read it; the relay cannot tell a host
from a joiner and need not: everything that matters inside is sealed by the parties' PAKE key
(net/reach/codes.py), so the relay only carries bytes, capped. A box closes when it is burned (a code used
up, or guessed wrong) or when its time is up; what it holds stays readable for
`READABLE_AFTER_CLOSE` seconds, so a joiner in flight still reads the host's last word, and then the
number rests in quarantine for the box's lifetime, so a late joiner with an old code lands in no one
else's new box. Only whoever allocated a box may burn it: the allocation's reply carries a random
owner token (from `secrets`, sent only to the allocating connection) that every burn must name; a
burn without it changes nothing and says nothing, so it cannot tell a live code from a dead one.

What one stranger can take is capped (PROTOCOL.md §13.1). Only the host of a table served at the
relay takes a code (`Caller.table`, set by the relay from the connection's `serve`), and at most
`CODES_PER_TABLE` open ones per table, `CODES_PER_CONNECTION` per connection and `CODES_PER_SOURCE`
per source address (net/reach/sources.py) over all its connections; a code nobody has used yet closes after
`UNUSED_TTL`. A burned box frees its place at once but stays readable a while, so codes taken are also
budgeted per source (`ALLOCATIONS_BURST` at once, then one every `ALLOCATIONS_EVERY` seconds): taking
and burning in a loop cannot fill the relay's `max_nameplates`. Naming another party's box costs a *try*: a connection tries at most
`TRIES_PER_CONNECTION` boxes (speaking in each for at most `SIDES_PER_TRY` joiners), a source
`TRIES_BURST` at once and then one every `TRIES_EVERY` seconds, and a request over budget is refused the same way whether its box exists or not, so
guessing numbers is slow and learns nothing more. Requests for a box of the caller's own table are
free.

Requests and replies at the relay (`answer`), all `[op, body]` packets:

    mb_allocate {ttl, uses}                     -> mb_allocated {nameplate, owner: bin16}
    mb_post {nameplate, side, to, phase, body}  -> nothing
    mb_fetch {nameplate, side, after}           -> mb_mail {nameplate, messages: [[n, side, to, phase, body], ...]}
    (a post to the box's host)                  -> mb_ring {nameplate}, to the host's connection (below)
    mb_burn {nameplate, owner}                  -> nothing (another owner token: nothing happens)
    any refusal                                 -> mb_error {nameplate (None for mb_allocate), reason}

`side` is 16 bytes naming who posts, `to` a side or None (everyone), `phase` a short ascii word,
`n` the message's place in its box (1, 2, ...): a fetch returns the messages after `after` that are
to the fetching side or to everyone, never its own.

A box's host does not poll it: the relay rings the connection of the box's table that last fetched it
(`mb_ring`) when another side posts a message that fetch would return, and the host fetches then. So a
host waiting with a code sends the relay nothing (PROTOCOL.md §13.1): each packet an idle table's
connection carries costs the relay memory until 512 have (net/reach/relay_presence.py).
"""

from __future__ import annotations

import heapq
import hmac
import math
import secrets
import time
from dataclasses import dataclass, field

from dicetable.net.reach.sources import Budget

SIDE_BYTES = 16
OWNER_BYTES = 16
MAX_PHASE = 16  # characters of a phase name
MAX_TTL = 24 * 3600.0  # seconds a used box may live, at most (a longer ttl is cut to this)
UNUSED_TTL = 1800.0  # seconds a box lives until its host seals an invite in it (a code still unused)
MAX_NAMEPLATE = 99_999  # five digits keep a code within 24 characters (net/reach/codes.py)
READABLE_AFTER_CLOSE = 60.0  # seconds a closed box can still be read (the host's last word to a joiner)
SIDES_FOR_ONE = 4  # sides that may post to a one-seat box: the host, its joiner and two retries
CODES_PER_TABLE = 2  # open boxes of one table: its code, and one whose burn is still on its way
CODES_PER_CONNECTION = 2  # open boxes one connection allocated (it serves one table at a time)
CODES_PER_SOURCE = 4  # open boxes allocated from one source address, over all its connections
TRIES_PER_CONNECTION = 4  # other parties' boxes one connection may name (a joiner names one)
SIDES_PER_TRY = 2  # sides one connection may post as in another party's box (a joiner is one)
TRIES_BURST = 20  # other parties' boxes one source may name at once (a table's joiners behind one NAT)
TRIES_EVERY = 3.0  # seconds until a source may name one more
ALLOCATIONS_BURST = 20  # codes one source may take at once (a table of 16 seats with a code per seat)
ALLOCATIONS_EVERY = 3.0  # seconds until a source may take one more: a burned box stays in memory a while
USES = ("one", "table")
REQUEST_FIELDS = {
    "mb_allocate": {"ttl", "uses"},
    "mb_post": {"nameplate", "side", "to", "phase", "body"},
    "mb_fetch": {"nameplate", "side", "after"},
    "mb_burn": {"nameplate", "owner"},
}

Message = tuple[int, bytes, "bytes | None", str, bytes]


class MailboxError(Exception):
    """A mailbox request refused; the message is one sentence for a person."""


@dataclass
class Caller:
    """Who asks, as the relay knows it: its source (net/reach/sources.py), the table its connection serves
    (None for a joiner's), and what this connection has allocated and tried so far."""

    source: str
    table: bytes | None = None
    codes: list[int] = field(default_factory=list)  # boxes this connection allocated
    tried: dict[int, set[bytes]] = field(default_factory=dict)  # other parties' boxes it named -> the sides it posted as
    peer: bytes = b""  # the connection, as the relay names it: where a ring for its box goes


@dataclass
class _Box:
    uses: str
    ttl: float  # the lifetime asked (at most MAX_TTL), granted once the box is used
    opened: float
    closes: float  # when it stops taking posts: its time is up, or earlier if burned
    owner: bytes  # the token its allocation got: a burn must name it
    table: bytes  # the table whose host took it
    source: str  # where that host's connection came from
    used: bool = False  # its host has sealed an invite in it
    messages: list[Message] = field(default_factory=list)
    sides: set[bytes] = field(default_factory=set)
    size: int = 0  # bytes of bodies held
    ring: tuple[bytes, bytes] | None = None  # (connection, side) of its table's last fetch: rung on a post to it

    def is_open(self, now: float) -> bool:
        return now < self.closes

    def is_readable(self, now: float) -> bool:
        return now < self.closes + READABLE_AFTER_CLOSE


class Mailboxes:
    """Every mailbox at one relay; `clock` is injected so tests can move time."""

    def __init__(self, clock=time.monotonic, max_nameplates: int = 10_000, max_messages: int = 64,
                 max_body: int = 4096, max_bytes: int = 64 * 1024 * 1024):
        if not 1 <= max_nameplates * 5 <= MAX_NAMEPLATE:  # live boxes plus quarantine fit in five digits
            raise ValueError(f"max_nameplates is from 1 to {MAX_NAMEPLATE // 5}")
        self.clock = clock
        self.max_nameplates, self.max_messages = max_nameplates, max_messages
        self.max_body, self.max_bytes = max_body, max_bytes
        self.max_box_bytes = min(max_messages * max_body, 32 * 1024)  # a fetch of a whole box fits a packet
        self.boxes: dict[int, _Box] = {}
        self.quarantine: dict[int, float] = {}  # nameplate -> when it may be handed out again
        self._releases: list[tuple[float, int]] = []  # heap of quarantine ends
        self._by_table: dict[bytes, list[int]] = {}  # boxes each table took, open or not yet pruned
        self._by_source: dict[str, list[int]] = {}  # boxes taken from each source, likewise
        self.rings: list[tuple[bytes, int]] = []  # (connection, nameplate) to ring, for the relay to send and clear
        self.tries = Budget(TRIES_BURST, TRIES_EVERY, clock=clock)
        self.allocations = Budget(ALLOCATIONS_BURST, ALLOCATIONS_EVERY, clock=clock)
        self.size = 0  # bytes of bodies held in every box

    # -- the four requests ----------------------------------------------------------------------
    def allocate(self, ttl: float, uses: str, caller: Caller) -> tuple[int, bytes]:
        """A new box for the table `caller` serves, open until it is used for `ttl` seconds (at most
        UNUSED_TTL, then at most MAX_TTL): its number, drawn at random among the free ones, and its owner token."""
        if caller.table is None:
            raise MailboxError("only the host of a table served at this relay takes a code (serve the table first)")
        if type(ttl) not in (int, float) or not math.isfinite(ttl) or ttl <= 0:
            raise MailboxError("a code's lifetime is a number of seconds above 0")
        if type(uses) is not str or uses not in USES:
            raise MailboxError("a code is for one seat (\"one\") or the whole table (\"table\")")
        now = self.clock()
        self._release(now)
        if len(self._open(self._by_table.get(caller.table, []), now)) >= CODES_PER_TABLE:
            raise MailboxError(f"this table holds {CODES_PER_TABLE} open codes at this relay already; "
                               "one frees when it is used, burned or expires")
        if len(self._open(caller.codes, now)) >= CODES_PER_CONNECTION:
            raise MailboxError(f"this connection holds {CODES_PER_CONNECTION} open codes at this relay already")
        if len(self._open(self._by_source.get(caller.source, []), now)) >= CODES_PER_SOURCE:
            raise MailboxError(f"your address holds {CODES_PER_SOURCE} open codes at this relay already; "
                               "one frees when it is used, burned or expires")
        if len(self.boxes) >= self.max_nameplates:
            self.expire()
        if len(self.boxes) >= self.max_nameplates:
            raise MailboxError(f"the relay holds its most codes ({self.max_nameplates}); try again in a few minutes")
        wait = self.allocations.spend(caller.source)  # take and burn in a loop: each burned box stays readable a while
        if wait:
            raise MailboxError(f"too many codes taken from your address; try again in {math.ceil(wait)} s")
        if len(self.quarantine) >= 4 * self.max_nameplates:  # full: the oldest rest is cut short
            self._release(now, force=1)
        nameplate = self._draw()
        ttl = min(float(ttl), MAX_TTL)
        owner = secrets.token_bytes(OWNER_BYTES)
        self.boxes[nameplate] = _Box(uses, ttl, now, now + min(ttl, UNUSED_TTL), owner, caller.table, caller.source)
        for taken in (caller.codes, self._by_table.setdefault(caller.table, []),
                      self._by_source.setdefault(caller.source, [])):
            taken.append(nameplate)
        return nameplate, owner

    def post(self, nameplate: int, side: bytes, to: bytes | None, phase: str, body: bytes, caller: Caller) -> None:
        """Leave a message in an open box; its host's first `invite` marks it used."""
        _check_side(side)
        if to is not None:
            _check_side(to, "a message's addressee")
        if type(phase) is not str or not 1 <= len(phase) <= MAX_PHASE or not (phase.isascii() and phase.isidentifier()):
            raise MailboxError(f"a message's phase is a word of 1 to {MAX_PHASE} ascii letters")
        if type(body) is not bytes or len(body) > self.max_body:
            raise MailboxError(f"a message's body is at most {self.max_body} bytes")
        _check_nameplate(nameplate)
        self._admit(nameplate, caller)
        box = self._box(nameplate)
        if not box.is_open(self.clock()):
            raise _no_code(nameplate)
        posted = caller.tried.get(nameplate)
        if posted is not None and side not in posted and len(posted) >= SIDES_PER_TRY:
            raise MailboxError(f"one connection speaks for at most {SIDES_PER_TRY} joiners in a code's mailbox")
        if side not in box.sides and box.uses == "one" and len(box.sides) >= SIDES_FOR_ONE:
            raise MailboxError(f"code {nameplate} is for one seat and too many have tried it; "
                               "ask the host for a new code")
        if len(box.messages) >= self.max_messages or box.size + len(body) > self.max_box_bytes:
            raise MailboxError(f"code {nameplate}'s mailbox is full; ask the host for a new code")
        if self.size + len(body) > self.max_bytes:
            raise MailboxError("the relay's mailboxes are full; try again in a few minutes")
        box.sides.add(side)
        if posted is not None:
            posted.add(side)
        box.messages.append((len(box.messages) + 1, side, to, phase, body))
        if box.ring is not None and side != box.ring[1] and to in (None, box.ring[1]):
            self.rings.append((box.ring[0], nameplate))  # its host would fetch this: it hears so now
        box.size += len(body)
        self.size += len(body)
        if phase == "invite" and not box.used and caller.table == box.table:
            box.used = True
            box.closes = box.opened + box.ttl

    def fetch(self, nameplate: int, side: bytes, after: int, caller: Caller) -> list[Message]:
        """The messages after number `after` that are to `side` or to everyone, not its own."""
        _check_side(side)
        if type(after) is not int or after < 0:
            raise MailboxError("a fetch starts after a message number of 0 or more")
        _check_nameplate(nameplate)
        self._admit(nameplate, caller)
        box = self._box(nameplate)
        if caller.table is not None and caller.table == box.table and caller.peer:
            box.ring = (caller.peer, side)  # its host's connection now (a renewed one fetches again)
        return [m for m in box.messages[after:] if m[1] != side and (m[2] is None or m[2] == side)]

    def burn(self, nameplate: int, owner: bytes) -> None:
        """Close a box now, for its owner (its messages stay readable a little while); another token,
        or a number that is no box, changes nothing and is no error (a stranger learns nothing)."""
        _check_nameplate(nameplate)
        if type(owner) is not bytes or len(owner) != OWNER_BYTES:
            raise MailboxError(f"a burn names the code's owner token ({OWNER_BYTES} bytes)")
        box = self.boxes.get(nameplate)
        now = self.clock()
        if box is not None and hmac.compare_digest(box.owner, owner) and box.is_open(now):
            box.closes = now

    def expire(self) -> None:
        """Drop every box past reading into quarantine and free the numbers whose quarantine ended."""
        now = self.clock()
        for nameplate in [n for n, box in self.boxes.items() if not box.is_readable(now)]:
            self._retire(nameplate, now)
        self._release(now)
        for index in (self._by_table, self._by_source):
            for key in [k for k, taken in index.items() if not self._open(taken, now)]:
                del index[key]

    # -- what a caller may take -----------------------------------------------------------------
    def _admit(self, nameplate: int, caller: Caller) -> None:
        """Count a first request naming another party's box against the caller's tries (its own table's are free)."""
        box = self.boxes.get(nameplate)
        if (box is not None and caller.table is not None and box.table == caller.table) or nameplate in caller.tried:
            return
        if len(caller.tried) >= TRIES_PER_CONNECTION:
            raise MailboxError(f"one connection tries at most {TRIES_PER_CONNECTION} codes; connect again for another")
        wait = self.tries.spend(caller.source)
        if wait:
            raise MailboxError(f"too many codes tried from your address; try again in {math.ceil(wait)} s")
        caller.tried[nameplate] = set()

    def _open(self, taken: list[int], now: float) -> list[int]:
        """The boxes of `taken` still open; the others are dropped from it."""
        taken[:] = [n for n in taken if n in self.boxes and self.boxes[n].is_open(now)]
        return taken

    # -- numbers --------------------------------------------------------------------------------
    def _draw(self) -> int:
        """A free number, uniformly at random (never the smallest free: nobody can tell a table's next
        number); live boxes and quarantine hold at most 5 * max_nameplates of the 99999 numbers."""
        while True:
            nameplate = 1 + secrets.randbelow(MAX_NAMEPLATE)
            if nameplate not in self.boxes and nameplate not in self.quarantine:
                return nameplate

    def _box(self, nameplate: int) -> _Box:
        box = self.boxes.get(nameplate)
        now = self.clock()
        if box is not None and not box.is_readable(now):
            self._retire(nameplate, now)  # lazily, so an expired code is refused at once
            box = None
        if box is None:
            raise _no_code(nameplate)
        return box

    def _retire(self, nameplate: int, now: float) -> None:
        box = self.boxes.pop(nameplate)
        self.size -= box.size
        life = box.ttl if box.used else min(box.ttl, UNUSED_TTL)  # as long as a late joiner may still hold its code
        until = box.closes + max(life, READABLE_AFTER_CLOSE)
        self.quarantine[nameplate] = until
        heapq.heappush(self._releases, (until, nameplate))

    def _release(self, now: float, force: int = 0) -> None:
        while self._releases and (self._releases[0][0] <= now or force > 0):
            until, nameplate = heapq.heappop(self._releases)
            force -= 1
            if self.quarantine.get(nameplate) == until:
                del self.quarantine[nameplate]


def _no_code(nameplate: int) -> MailboxError:
    return MailboxError(f"no code {nameplate} at this relay (expired, used or mistyped)")


def _check_nameplate(nameplate) -> None:
    if type(nameplate) is not int or not 1 <= nameplate <= MAX_NAMEPLATE:
        raise MailboxError(f"a code's number is from 1 to {MAX_NAMEPLATE}")


def _check_side(side, what: str = "a side") -> None:
    if type(side) is not bytes or len(side) != SIDE_BYTES:
        raise MailboxError(f"{what} is {SIDE_BYTES} bytes")


def answer(boxes: Mailboxes, op: str, body: dict, caller: Caller) -> tuple[str, dict] | None:
    """The relay's reply to one `mb_*` request from `caller`, or None when it has none; a refusal is `mb_error`."""
    nameplate = body.get("nameplate") if type(body) is dict else None
    if type(nameplate) is not int or not 1 <= nameplate <= MAX_NAMEPLATE:
        nameplate = None  # echoed only when it is one
    try:
        fields = REQUEST_FIELDS.get(op)
        if fields is None:
            raise MailboxError(f"the relay's mailboxes know no request {str(op)[:24]!r}")
        if type(body) is not dict or set(body) != fields:
            raise MailboxError(f"a {op} request has exactly the fields {', '.join(sorted(fields))}")
        if op == "mb_allocate":
            nameplate, owner = boxes.allocate(body["ttl"], body["uses"], caller)
            return "mb_allocated", {"nameplate": nameplate, "owner": owner}
        if op == "mb_post":
            boxes.post(body["nameplate"], body["side"], body["to"], body["phase"], body["body"], caller)
            return None
        if op == "mb_fetch":
            messages = boxes.fetch(body["nameplate"], body["side"], body["after"], caller)
            return "mb_mail", {"nameplate": body["nameplate"], "messages": [list(m) for m in messages]}
        boxes.burn(body["nameplate"], body["owner"])
        return None
    except MailboxError as error:
        return "mb_error", {"nameplate": nameplate, "reason": str(error)}
