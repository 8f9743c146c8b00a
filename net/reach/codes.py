"""Short codes: `7-orbit-lantern` read aloud instead of a long invite, agreed through an untrusted relay.

The host asks the relay for a mailbox (net/reach/mailbox.py); its number, the *nameplate*, and two words
drawn with `secrets` make the code. A joiner who types the code runs one SPAKE2 exchange with the
host through that mailbox, the whole code as the password; the host hands over the invite only to a
joiner who proved it holds the same code, sealed under the key they agreed:

    joiner -> everyone  pake     its SPAKE2 message (side A)
    host   -> joiner    pake     its SPAKE2 message (side B)
    joiner -> host      confirm  HMAC(confirm key, JOINER_CONFIRM)
    host   -> joiner    invite   nonce ‖ ChaCha20-Poly1305(seal key, invite), or `wrong` (empty)

Each joiner's exchange is its own (its ids and keys name the nameplate and the joiner's side), so a
table-wide code serves many joiners and a transcript of one exchange opens nothing elsewhere.
What each party can do:
- the relay reads every message and learns nothing: SPAKE2 keeps the code and the key from it, and
  the invite travels sealed; it may drop, replay, reorder or forge messages, which at worst makes an
  exchange fail (the joiner takes only an invite that opens under its own key);
- a guesser gets one try per code: the host burns the code at the first wrong confirmation (and
  its session offers a fresh one at once, net/table/host.py), and a SPAKE2 message gives no way to test a
  guess offline; the relay limits how many codes one source may try (net/reach/mailbox.py), and the next
  code's number is drawn at random, so a stranger cannot burn a table's codes one after another;
- someone who learns a one-seat code after its use finds the mailbox burned and the host done;
- a stranger who fills a code's mailbox with junk (so real joiners find it full) floods it: past
  MAX_JUNK such messages the host closes the code as "flooded" and offers a fresh one.
A code closed by a wrong guess, too many tries, a flood or the relay is *lost* (`lost`); an unused code
that reaches its end of life is not. The host's session stops offering codes after LOST_IN_A_ROW lost
codes in a row and says so, and says every refusal of the relay to give one (PROTOCOL.md §13.4): codes
never stop in silence, and the invite still opens the table.

`CodeHost` is the host's side, a non-blocking state machine its session loop steps; `claim_invite`
is the joiner's side, blocking, over any link that sends and receives the relay's `[op, body]`.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from spake2 import SPAKE2_A, SPAKE2_B

from dicetable.net.reach.mailbox import MAX_NAMEPLATE, MAX_TTL, OWNER_BYTES, SIDE_BYTES, USES

APP_ID = b"dicetable.net/short-code/v1"
JOINER_CONFIRM = APP_ID + b"/joiner-confirm"
EXAMPLE = "7-orbit-lantern"
MAX_CODE = 24  # characters: five digits and two words of at most 8 letters
PAKE_BYTES = 33  # a SPAKE2 message: its side byte and an Ed25519 point
CONFIRM_BYTES = 32
NONCE_BYTES = 12
MAX_INVITE = 2048  # bytes of an invite's text
MAX_EXCHANGES = 32  # joiners' exchanges one code serves (a table has at most 16 seats)
PAKES_PER_STEP = 2  # SPAKE2 answers per step (~40 ms each) so the host's loop stays responsive
POLL = 0.2  # seconds between a joiner's fetches while it waits on the host; the host's at the least
FETCH_LOST = 3.0  # seconds after which an unanswered fetch is sent again
RETRY = 30.0  # seconds before the host asks again for a code the relay refused
MAX_JUNK = 16  # messages in a code's mailbox that are no step of any exchange: past this it is flooded (PROTOCOL.md §13.4)
LOST_IN_A_ROW = 5  # codes lost one after another (burned, flooded, dropped by the relay) before the host stops offering
INSTEAD = "joiners can still join with the table's invite (the `invite:` line, or Copy invite in the app)"

# 256 common words, 3 to 8 lower-case letters, no two alike when read aloud.
WORDS = tuple("""
    acorn album alpine amber anchor ankle apple apron arena arrow atlas autumn badger bagel bakery
    bamboo banana banjo basket beacon beaver beetle bicycle bison blanket blossom bottle bramble
    breeze bridge bubble bucket butter button cabin cactus camel camera candle canoe canvas canyon
    carpet castle cheese cherry chess circle cliff clock cloud clover cobra coconut comet compass
    cookie copper coral cotton crab cradle crayon cricket crystal cupcake dagger daisy denim desk
    diamond dinner dolphin domino donkey dragon drum eagle echo elbow elephant emerald engine fabric
    falcon feather fence ferret fiddle finger flame flute forest fossil fountain fox galaxy garden
    garlic gecko giant ginger glove goat golden goose gravel guitar hammer hamster harvest hazel
    helmet heron hippo honey hornet humble igloo island ivory jacket jaguar jelly jigsaw jungle
    kayak kettle kitten koala ladder lagoon lantern laptop lava lemon lizard lobster lotus lumber
    magnet mango maple marble meadow melon meteor mirror monkey motor muffin napkin nectar needle
    noodle oasis ocean olive onion orbit orchid otter oven paddle palace panda parcel parrot pebble
    pelican pencil penguin pepper piano pickle pigeon pillow pilot pirate planet plaza pocket potato
    prism puffin pumpkin puzzle quilt rabbit radio raft raisin ranch raven ribbon riddle river robin
    rocket salad salmon sandal saucer scarf shark sheep shovel signal silver sketch snail spider
    sponge spoon sprout squid stable stamp statue sugar summit sunset swan switch tablet tavern
    teapot temple thunder ticket tiger tomato torch tractor trumpet tulip tunnel turnip turtle
    umbrella unicorn valley velvet violin volcano waffle wagon wallet walnut walrus window winter
    wizard wolf zebra zipper
""".split())
_WORD_SET = frozenset(WORDS)


class CodeError(Exception):
    """A code that cannot be used; the message is one line for a person."""


# -- the code ------------------------------------------------------------------------------------
def make_code(nameplate: int) -> str:
    return _code(nameplate, (secrets.choice(WORDS), secrets.choice(WORDS)))


def _code(nameplate: int, words: tuple[str, str]) -> str:
    """The code as written and as the SPAKE2 password: one spelling, whatever the person typed."""
    return f"{nameplate}-{words[0]}-{words[1]}"


def parse_code(text: str) -> tuple[int, tuple[str, str]]:
    """`(nameplate, (word, word))` from a code as a person typed it (any case, spaces or dashes)."""
    parts = str(text)[:200].lower().replace("-", " ").split()
    if len(parts) != 3 or not parts[0].isascii() or not parts[0].isdigit():
        raise CodeError(f"a code looks like {EXAMPLE}: a number and two words")
    nameplate = int(parts[0])
    if not 1 <= nameplate <= MAX_NAMEPLATE:
        raise CodeError(f"a code's number is from 1 to {MAX_NAMEPLATE}; a code looks like {EXAMPLE}")
    for word in parts[1:]:
        if word not in _WORD_SET:
            near = difflib.get_close_matches(word, WORDS, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise CodeError(f"{word[:20]!r} is not a code word{hint}; a code looks like {EXAMPLE}")
    return nameplate, (parts[1], parts[2])


# -- keys ----------------------------------------------------------------------------------------
def _ids(nameplate: int, joiner: bytes) -> tuple[bytes, bytes]:
    """SPAKE2 ids (joiner, host): one exchange's key is worthless for another code or joiner."""
    return APP_ID + b"/joiner/%d/" % nameplate + joiner, APP_ID + b"/host/%d" % nameplate


@dataclass(frozen=True)
class _Keys:
    confirm: bytes
    seal: bytes

    @classmethod
    def derive(cls, key: bytes, nameplate: int, joiner: bytes) -> "_Keys":
        info = APP_ID + b"/keys/%d/" % nameplate + joiner
        both = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=info).derive(key)
        return cls(both[:32], both[32:])

    def joiner_confirm(self) -> bytes:
        return hmac.new(self.confirm, JOINER_CONFIRM, hashlib.sha256).digest()

    def seal_invite(self, aad: bytes, invite: bytes) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + ChaCha20Poly1305(self.seal).encrypt(nonce, invite, aad)

    def open_invite(self, aad: bytes, sealed: bytes) -> str | None:
        try:
            return ChaCha20Poly1305(self.seal).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], aad).decode()
        except (InvalidTag, ValueError):  # ValueError: short, or not UTF-8
            return None


def _invite_aad(nameplate: int, joiner: bytes) -> bytes:
    return APP_ID + b"/invite/%d/" % nameplate + joiner


def _about(body, nameplate: int | None) -> bool:
    """Whether a relay reply `body` is about the mailbox `nameplate`."""
    return type(body) is dict and type(body.get("nameplate")) is int and body["nameplate"] == nameplate


def _messages(body: dict):
    """The well-formed messages of an `mb_mail`: (n, side, to, phase, body); the rest skipped."""
    messages = body.get("messages")
    if type(messages) is not list:
        return
    for item in messages[:1024]:
        if type(item) is not list or len(item) != 5:
            continue
        n, side, to, phase, data = item
        if type(n) is int and type(side) is bytes and len(side) == SIDE_BYTES and (to is None or type(to) is bytes) \
                and type(phase) is str and type(data) is bytes:
            yield n, side, to, phase, data


def stopped(lost: int) -> str:
    """Why the host offers no more codes, and what to do (PROTOCOL.md §13.4)."""
    return (f"{lost} codes in a row were burned or flooded before anyone joined by one (someone may be guessing "
            f"or flooding them at the relay): no more codes for this table; {INSTEAD}")


def _clean(reason) -> str:
    """A relay's reason, shown to a person: printable and short (the relay is not trusted)."""
    return "".join(ch for ch in str(reason)[:200] if ch.isprintable()) or "no reason given"


# -- the host ------------------------------------------------------------------------------------
@dataclass
class _Exchange:
    keys: _Keys
    settled: bool = False  # its confirmation has been checked


class CodeHost:
    """The host's side of a code, stepped by its session loop: it never waits on the network.

    `start()` asks the relay for a mailbox; `handle()` takes the relay's replies and `tick()` fetches
    from the mailbox when the relay has rung (`mb_ring`: mail for the host, net/reach/mailbox.py), never
    on a clock, so a host waiting with a code sends the relay nothing; each returns the packets to send
    to the relay. `handle("mb_ring", {"nameplate": None})` makes it fetch anew (a new connection to the
    relay, which rings the one that last fetched). `events` gathers what to tell the
    person: ("code", code), ("joined", ...), ("burned", ...), ("expired", ...), ("error", ...).
    `done` once the code serves no one any more (used, burned, expired or withdrawn); a burned or
    expired code's text says why, for the host's session to tell with the next code.
    """

    def __init__(self, invite: str, uses: str = "one", ttl: float = 1800.0, clock=time.monotonic):
        if uses not in USES:
            raise ValueError(f"uses is one of {USES}")
        if not 0 < ttl <= MAX_TTL:
            raise ValueError(f"a code lives from 0 to {MAX_TTL:g} seconds")
        self.invite = invite.encode()
        if len(self.invite) > MAX_INVITE:
            raise ValueError(f"an invite is at most {MAX_INVITE} bytes")
        self.uses, self.ttl, self.clock = uses, float(ttl), clock
        self.side = secrets.token_bytes(SIDE_BYTES)
        self.nameplate: int | None = None
        self.owner = b""  # the relay's token for our mailbox: only we may burn it
        self.code: str | None = None
        self._password = b""  # the code, once the relay gave its number
        self.events: list[tuple[str, str]] = []
        self.done = False
        self.lost = False  # closed by a wrong guess, too many tries, a flood or the relay: not merely expired
        self.junk = 0  # mailbox messages that were no step of any exchange
        self.exchanges: dict[bytes, _Exchange] = {}
        self._asking = False
        self._retry_at = 0.0
        self._ends = 0.0
        self._seen = 0  # the last mailbox message handled
        self._fetch_sent = -FETCH_LOST  # when the last fetch went out
        self._fetch_answered = True
        self._rung = True  # mail may be waiting: fetch (the first fetch also tells the relay where to ring)

    def start(self) -> list[tuple[str, dict]]:
        self._asking = True
        return [("mb_allocate", {"ttl": self.ttl, "uses": self.uses})]

    def withdraw(self) -> list[tuple[str, dict]]:
        """Stop offering the code (every seat is taken): the relay burns its mailbox."""
        if self.done:
            return []
        self.done = True
        return [self._burn()] if self.nameplate is not None else []

    def tick(self) -> list[tuple[str, dict]]:
        if self.done:
            return []
        now = self.clock()
        if self.nameplate is None:
            return self.start() if not self._asking and now >= self._retry_at else []
        if now >= self._ends:
            return self._close("expired", f"code {self.nameplate} expired after {self.ttl / 60:g} min")
        waited = now - self._fetch_sent
        if (not self._fetch_answered and waited >= FETCH_LOST) or (self._fetch_answered and self._rung and waited >= POLL):
            self._fetch_sent, self._fetch_answered, self._rung = now, False, False
            return [("mb_fetch", {"nameplate": self.nameplate, "side": self.side, "after": self._seen})]
        return []

    def handle(self, op: str, body: dict) -> list[tuple[str, dict]]:
        if self.done or type(body) is not dict:
            return []
        if op == "mb_allocated" and self._asking and self.nameplate is None:
            nameplate, owner = body.get("nameplate"), body.get("owner")
            if type(nameplate) is not int or not 1 <= nameplate <= MAX_NAMEPLATE \
                    or type(owner) is not bytes or len(owner) != OWNER_BYTES:
                return []
            self.nameplate, self.owner, self.code, self._asking = nameplate, owner, make_code(nameplate), False
            self._password = self.code.encode()
            self._ends = self.clock() + self.ttl
            self.events.append(("code", self.code))
            return self.tick()
        if op == "mb_ring":
            if body.get("nameplate") in (None, self.nameplate):
                self._rung = True
            return []
        if op == "mb_error" and self._asking and self.nameplate is None and body.get("nameplate") is None:
            self._asking, self._retry_at = False, self.clock() + RETRY
            self.events.append(("error", f"the relay gives no code: {_clean(body.get('reason'))}; "
                                         f"asking again in {RETRY:g} s; {INSTEAD}"))
            return []
        if not _about(body, self.nameplate):
            return []  # a late reply about an earlier code
        if op == "mb_error":
            reason = _clean(body.get("reason"))
            self.lost = True  # the relay dropped it, or refuses it (its mailbox full, say): not its time that ran out
            return self._close("expired", f"code {self.nameplate} is no longer at the relay: {reason}")
        if op == "mb_mail":
            return self._read(body)
        return []

    def _read(self, body: dict) -> list[tuple[str, dict]]:
        out: list[tuple[str, dict]] = []
        budget = PAKES_PER_STEP
        self._fetch_answered = True
        for n, side, to, phase, data in _messages(body):
            if n <= self._seen:
                continue
            if phase == "pake" and budget == 0:
                self._fetch_sent, self._rung = -FETCH_LOST, True  # the rest at the next tick
                break
            self._seen = n
            steps = len(self.exchanges), sum(e.settled for e in self.exchanges.values())
            if phase == "pake" and to in (None, self.side):
                budget -= 1
                out += self._answer_pake(side, data)
            elif phase == "confirm" and to == self.side:
                out += self._check_confirm(side, data)
            if self.done:
                break
            if steps == (len(self.exchanges), sum(e.settled for e in self.exchanges.values())):
                self.junk += 1  # no step of any exchange: junk, a replay, or another side's word
                if self.junk >= MAX_JUNK:  # real joiners would soon find the mailbox full
                    self.lost = True
                    return out + self._close("burned", f"code {self.nameplate}'s mailbox at the relay was flooded "
                                                       f"({self.junk} messages that are no joiner's)")
        return out

    def _answer_pake(self, joiner: bytes, message: bytes) -> list[tuple[str, dict]]:
        if joiner in self.exchanges or len(message) != PAKE_BYTES:
            return []  # a replay, or not a SPAKE2 message
        if len(self.exchanges) >= MAX_EXCHANGES:  # used up, or a flood of tries never finished: a fresh code for the next
            self.lost = True
            return self._close("burned", f"{MAX_EXCHANGES} joiners have tried code {self.nameplate}")
        spake = SPAKE2_B(self._password, *_ids(self.nameplate, joiner))
        answer = spake.start()
        try:
            key = spake.finish(message)
        except Exception:  # hostile bytes: the library raises several types (not a point, wrong side)
            return []
        self.exchanges[joiner] = _Exchange(_Keys.derive(key, self.nameplate, joiner))
        return [self._post(joiner, "pake", answer)]

    def _check_confirm(self, joiner: bytes, proof: bytes) -> list[tuple[str, dict]]:
        exchange = self.exchanges.get(joiner)
        if exchange is None or exchange.settled or len(proof) != CONFIRM_BYTES:
            return []  # nothing to check: no guess was made
        exchange.settled = True
        if not hmac.compare_digest(proof, exchange.keys.joiner_confirm()):
            out = [self._post(joiner, "wrong", b"")]
            self.lost = True
            return out + self._close("burned", "someone tried a wrong code")
        sealed = exchange.keys.seal_invite(_invite_aad(self.nameplate, joiner), self.invite)
        out = [self._post(joiner, "invite", sealed)]
        self.events.append(("joined", f"a joiner confirmed code {self.nameplate}"))
        if self.uses == "one":
            self.done = True
            out.append(self._burn())
        return out

    def _post(self, to: bytes, phase: str, data: bytes) -> tuple[str, dict]:
        return "mb_post", {"nameplate": self.nameplate, "side": self.side, "to": to, "phase": phase, "body": data}

    def _burn(self) -> tuple[str, dict]:
        return "mb_burn", {"nameplate": self.nameplate, "owner": self.owner}

    def _close(self, kind: str, text: str) -> list[tuple[str, dict]]:
        self.done = True
        self.events.append((kind, text))
        return [self._burn()]


# -- the joiner ----------------------------------------------------------------------------------
class _Claim:
    """The joiner's side of one exchange: `handle()` a relay reply, get packets to send, `invite` at the end."""

    def __init__(self, nameplate: int, words: tuple[str, str]):
        self.nameplate = nameplate
        self.side = secrets.token_bytes(SIDE_BYTES)
        self.spake = SPAKE2_A(_code(nameplate, words).encode(), *_ids(nameplate, self.side))
        self.message = self.spake.start()
        self.host: bytes | None = None  # the side that answered our SPAKE2 message
        self.keys: _Keys | None = None
        self.seen = 0
        self.invite: str | None = None

    def opening(self) -> tuple[str, dict]:
        return self._post(None, "pake", self.message)

    def fetch(self) -> tuple[str, dict]:
        return "mb_fetch", {"nameplate": self.nameplate, "side": self.side, "after": self.seen}

    def handle(self, op: str, body) -> list[tuple[str, dict]]:
        if not _about(body, self.nameplate):
            return []
        if op == "mb_error":
            raise CodeError(_clean(body.get("reason")))
        if op != "mb_mail":
            return []
        out: list[tuple[str, dict]] = []
        for n, side, to, phase, data in _messages(body):
            self.seen = max(self.seen, n)
            if to != self.side:
                continue  # not to us: another joiner's exchange
            if phase == "pake" and self.keys is None and len(data) == PAKE_BYTES:
                out.append(self._confirm(side, data))
            elif phase == "invite" and self.keys is not None:
                self.invite = self.keys.open_invite(_invite_aad(self.nameplate, self.side), data)
                if self.invite is None:
                    raise CodeError(f"the invite for code {self.nameplate} did not come sealed by its host "
                                    "(the relay tampered with it); ask the host for a new code")
                return out
            elif phase == "wrong" and self.keys is not None and side == self.host:
                raise CodeError("the code is wrong: it is now burned — ask the host for a new one")
        return out

    def _confirm(self, host: bytes, message: bytes) -> tuple[str, dict]:
        try:
            key = self.spake.finish(message)
        except Exception:  # hostile bytes: the library raises several types
            raise CodeError(f"the answer for code {self.nameplate} is not the host's (the relay tampered with it); "
                            "ask the host for a new code") from None
        self.host, self.keys = host, _Keys.derive(key, self.nameplate, self.side)
        return self._post(host, "confirm", self.keys.joiner_confirm())

    def _post(self, to: bytes | None, phase: str, data: bytes) -> tuple[str, dict]:
        return "mb_post", {"nameplate": self.nameplate, "side": self.side, "to": to, "phase": phase, "body": data}


def claim_invite(link, code: str, timeout: float = 30.0) -> str:
    """The invite behind `code`, agreed with its host through the relay `link`, or CodeError.

    `link.send(op, body)` reaches the relay, `link.recv(timeout)` gives its next `(op, body)` or None.
    """
    claim = _Claim(*parse_code(code))
    link.send(*claim.opening())
    deadline = time.monotonic() + timeout
    next_fetch = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline:
            raise CodeError(f"the host holding code {claim.nameplate} did not answer within {timeout:g} s")
        if now >= next_fetch:
            link.send(*claim.fetch())
            next_fetch = now + POLL
        packet = link.recv(max(min(deadline, next_fetch) - now, 0.0))
        if packet is None:
            continue
        for op, body in claim.handle(*packet):
            link.send(op, body)
        if claim.invite is not None:
            return claim.invite


def complete(text: str) -> list[str]:
    """The ways `text`, a code being typed, can go on: its last, partial word completed with each code
    word it begins (a number alone goes on with a dash). Tab in the app and in `dicetable join`. Typed
    as parse_code takes it (any case, spaces or dashes: `7 Orbit lan`), it goes on as a code is written."""
    typed = str(text)[:200]
    text = "-".join(typed.lower().replace("-", " ").split()) + ("-" if typed[-1:] in ("-", " ") else "")
    head, sep, last = text.rpartition("-") if "-" in text else ("", "", text)
    if not head and last.isdigit():
        return [f"{last}-"]
    if not head or not last.isalpha():
        return []
    done = head.count("-") + 1  # words before the one being typed, the number included
    tail = "-" if done == 1 else ""
    return [f"{head}-{word}{tail}" for word in WORDS if word.startswith(last.lower()) and done <= 2]
