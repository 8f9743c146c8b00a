"""The relay's mailboxes for short codes: numbered boxes where a host and its joiners leave messages.

A code (net/codes.py) starts with a mailbox number, the *nameplate*, that the relay hands out: the
smallest free one, so codes stay short. Anyone at the relay may post to a box or read it; the relay
cannot tell a host from a joiner and need not: everything that matters inside is sealed by the
parties' PAKE key (net/codes.py), so the relay only carries bytes, capped. A box closes when it is
burned (a code used up, or guessed wrong) or when its time is up; what it holds stays readable for
`READABLE_AFTER_CLOSE` seconds, so a joiner in flight still reads the host's last word, and then the
number rests in quarantine for the box's lifetime, so a late joiner with an old code lands in no one
else's new box. Only whoever allocated a box may burn it: the allocation's reply carries a random
owner token (from `secrets`, sent only to the allocating connection) that every burn must name, so a
stranger at the relay cannot burn someone else's code before its joiner uses it.

Requests and replies at the relay (`answer`), all `[op, body]` packets:

    mb_allocate {ttl, uses}                     -> mb_allocated {nameplate, owner: bin16}
    mb_post {nameplate, side, to, phase, body}  -> nothing
    mb_fetch {nameplate, side, after}           -> mb_mail {nameplate, messages: [[n, side, to, phase, body], ...]}
    mb_burn {nameplate, owner}                  -> nothing (another owner token: mb_error)
    any refusal                                 -> mb_error {nameplate (None for mb_allocate), reason}

`side` is 16 bytes naming who posts, `to` a side or None (everyone), `phase` a short ascii word,
`n` the message's place in its box (1, 2, ...): a fetch returns the messages after `after` that are
to the fetching side or to everyone, never its own.
"""

from __future__ import annotations

import heapq
import hmac
import math
import secrets
import time
from dataclasses import dataclass, field

SIDE_BYTES = 16
OWNER_BYTES = 16
MAX_PHASE = 16  # characters of a phase name
MAX_TTL = 24 * 3600.0  # seconds a box may live, at most (a longer ttl is cut to this)
MAX_NAMEPLATE = 99_999  # five digits keep a code within 24 characters (net/codes.py)
READABLE_AFTER_CLOSE = 60.0  # seconds a closed box can still be read (the host's last word to a joiner)
SIDES_FOR_ONE = 4  # sides that may post to a one-seat box: the host, its joiner and two retries
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
class _Box:
    uses: str
    ttl: float
    closes: float  # when it stops taking posts: its time is up, or earlier if burned
    owner: bytes  # the token its allocation got: a burn must name it
    messages: list[Message] = field(default_factory=list)
    sides: set[bytes] = field(default_factory=set)
    size: int = 0  # bytes of bodies held

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
        self._free: list[int] = []  # heap of numbers below `_next` that are free again
        self._next = 1
        self.size = 0  # bytes of bodies held in every box

    # -- the four requests ----------------------------------------------------------------------
    def allocate(self, ttl: float, uses: str) -> tuple[int, bytes]:
        """A new box for `ttl` seconds (at most MAX_TTL): its number, the smallest one free, and its owner token."""
        if type(ttl) not in (int, float) or not math.isfinite(ttl) or ttl <= 0:
            raise MailboxError("a code's lifetime is a number of seconds above 0")
        if type(uses) is not str or uses not in USES:
            raise MailboxError("a code is for one seat (\"one\") or the whole table (\"table\")")
        now = self.clock()
        self._release(now)
        if len(self.boxes) >= self.max_nameplates:
            self.expire()
        if len(self.boxes) >= self.max_nameplates:
            raise MailboxError(f"the relay holds its most codes ({self.max_nameplates}); try again in a few minutes")
        if len(self.quarantine) >= 4 * self.max_nameplates:  # full: the oldest rest is cut short
            self._release(now, force=1)
        nameplate = heapq.heappop(self._free) if self._free else self._take_next()
        ttl = min(float(ttl), MAX_TTL)
        owner = secrets.token_bytes(OWNER_BYTES)
        self.boxes[nameplate] = _Box(uses, ttl, now + ttl, owner)
        return nameplate, owner

    def post(self, nameplate: int, side: bytes, to: bytes | None, phase: str, body: bytes) -> None:
        """Leave a message in an open box."""
        _check_side(side)
        if to is not None:
            _check_side(to, "a message's addressee")
        if type(phase) is not str or not 1 <= len(phase) <= MAX_PHASE or not (phase.isascii() and phase.isidentifier()):
            raise MailboxError(f"a message's phase is a word of 1 to {MAX_PHASE} ascii letters")
        if type(body) is not bytes or len(body) > self.max_body:
            raise MailboxError(f"a message's body is at most {self.max_body} bytes")
        box = self._box(nameplate)
        if not box.is_open(self.clock()):
            raise _no_code(nameplate)
        if side not in box.sides and box.uses == "one" and len(box.sides) >= SIDES_FOR_ONE:
            raise MailboxError(f"code {nameplate} is for one seat and too many have tried it; "
                               "ask the host for a new code")
        if len(box.messages) >= self.max_messages or box.size + len(body) > self.max_box_bytes:
            raise MailboxError(f"code {nameplate}'s mailbox is full; ask the host for a new code")
        if self.size + len(body) > self.max_bytes:
            raise MailboxError("the relay's mailboxes are full; try again in a few minutes")
        box.sides.add(side)
        box.messages.append((len(box.messages) + 1, side, to, phase, body))
        box.size += len(body)
        self.size += len(body)

    def fetch(self, nameplate: int, side: bytes, after: int) -> list[Message]:
        """The messages after number `after` that are to `side` or to everyone, not its own."""
        _check_side(side)
        if type(after) is not int or after < 0:
            raise MailboxError("a fetch starts after a message number of 0 or more")
        box = self._box(nameplate)
        return [m for m in box.messages[after:] if m[1] != side and (m[2] is None or m[2] == side)]

    def burn(self, nameplate: int, owner: bytes) -> None:
        """Close a box now, for its owner (its messages stay readable a little while); an unknown number is no error."""
        _check_nameplate(nameplate)
        if type(owner) is not bytes or len(owner) != OWNER_BYTES:
            raise MailboxError(f"a burn names the code's owner token ({OWNER_BYTES} bytes)")
        box = self.boxes.get(nameplate)
        now = self.clock()
        if box is not None and not hmac.compare_digest(box.owner, owner):
            raise MailboxError(f"only the host that took code {nameplate} may burn it")
        if box is not None and box.is_open(now):
            box.closes = now

    def expire(self) -> None:
        """Drop every box past reading into quarantine and free the numbers whose quarantine ended."""
        now = self.clock()
        for nameplate in [n for n, box in self.boxes.items() if not box.is_readable(now)]:
            self._retire(nameplate, now)
        self._release(now)

    # -- numbers --------------------------------------------------------------------------------
    def _box(self, nameplate: int) -> _Box:
        _check_nameplate(nameplate)
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
        until = box.closes + max(box.ttl, READABLE_AFTER_CLOSE)
        self.quarantine[nameplate] = until
        heapq.heappush(self._releases, (until, nameplate))

    def _release(self, now: float, force: int = 0) -> None:
        while self._releases and (self._releases[0][0] <= now or force > 0):
            until, nameplate = heapq.heappop(self._releases)
            force -= 1
            if self.quarantine.get(nameplate) == until:
                del self.quarantine[nameplate]
                heapq.heappush(self._free, nameplate)

    def _take_next(self) -> int:
        self._next += 1
        return self._next - 1


def _no_code(nameplate: int) -> MailboxError:
    return MailboxError(f"no code {nameplate} at this relay (expired, used or mistyped)")


def _check_nameplate(nameplate) -> None:
    if type(nameplate) is not int or not 1 <= nameplate <= MAX_NAMEPLATE:
        raise MailboxError(f"a code's number is from 1 to {MAX_NAMEPLATE}")


def _check_side(side, what: str = "a side") -> None:
    if type(side) is not bytes or len(side) != SIDE_BYTES:
        raise MailboxError(f"{what} is {SIDE_BYTES} bytes")


def answer(boxes: Mailboxes, op: str, body: dict) -> tuple[str, dict] | None:
    """The relay's reply to one `mb_*` request, or None when it has none; a refusal is `mb_error`."""
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
            nameplate, owner = boxes.allocate(body["ttl"], body["uses"])
            return "mb_allocated", {"nameplate": nameplate, "owner": owner}
        if op == "mb_post":
            boxes.post(body["nameplate"], body["side"], body["to"], body["phase"], body["body"])
            return None
        if op == "mb_fetch":
            messages = boxes.fetch(body["nameplate"], body["side"], body["after"])
            return "mb_mail", {"nameplate": body["nameplate"], "messages": [list(m) for m in messages]}
        boxes.burn(body["nameplate"], body["owner"])
        return None
    except MailboxError as error:
        return "mb_error", {"nameplate": nameplate, "reason": str(error)}
