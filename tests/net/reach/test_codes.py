"""Short codes (net/reach/codes.py) through the real mailboxes (net/reach/mailbox.py): the right code gives the
invite, a wrong one burns the code, and a relay that reads, replays, swaps or forges mailbox
messages never makes a joiner take another invite. The relay here is the real `mailbox.answer` with
every packet through the wire codec, the host steps in its own thread as its session loop does, and
the last test goes through a real relay on 127.0.0.1."""

from __future__ import annotations

import queue
import threading
import time
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spake2 import SPAKE2_A, SPAKE2_B

from dicetable.net.reach import codes
from dicetable.net.reach.codes import WORDS, CodeError, CodeHost, claim_invite, make_code, parse_code
from dicetable.net.reach.mailbox import MAX_NAMEPLATE, Caller, Mailboxes, answer
from dicetable.net.reach.transport import pack, unpack
from net_helpers import wait_until

INVITE = "dt1-the-real-invite-of-this-table"
EVIL = "dt1-an-invite-of-the-relays-own-table"


@pytest.fixture(autouse=True)
def quick_poll(monkeypatch):
    """Both sides poll the mailbox every 10 ms instead of 200 ms: the same exchanges, sooner."""
    monkeypatch.setattr(codes, "POLL", 0.01)


class Relay:
    """The relay's mailboxes, each packet through the wire codec as net/reach/relay.py carries it; each
    host is a connection serving a table of its own, each joiner's link a connection of its own,
    every one from an address of its own (net/reach/mailbox.py's caps per source are test_relay.py's)."""

    def __init__(self, clock=time.monotonic):
        self.boxes = Mailboxes(clock=clock)
        self.lock = threading.Lock()
        self.seen: list[tuple[str, dict]] = []  # every request, as the relay read it
        self.hosts: dict[int, Caller] = {}
        self.ringing: dict[bytes, CodeHost] = {}  # a host's connection -> the host it rings
        self.places = 0

    def caller(self, table: bool = False) -> Caller:
        self.places += 1
        return Caller(f"10.0.{self.places // 250}.{self.places % 250}",
                      table=self.places.to_bytes(16, "big") if table else None)

    def host(self, host: CodeHost) -> Caller:
        """The connection of `host`'s table."""
        if id(host) not in self.hosts:
            self.hosts[id(host)] = self.caller(table=True)
            self.hosts[id(host)].peer = id(host).to_bytes(8, "big")
            self.ringing[self.hosts[id(host)].peer] = host
        return self.hosts[id(host)]

    def request(self, op: str, body: dict, caller: Caller):
        op, body = unpack(pack(op, body))
        with self.lock:
            self.seen.append((op, body))
            reply = answer(self.boxes, op, body, caller)
        self.ring()
        return None if reply is None else unpack(pack(*reply))

    def ring(self) -> None:
        """Ring the hosts whose boxes were posted to (by a request, or by a test straight into the boxes),
        as net/reach/relay.py does after each mailbox request."""
        with self.lock:
            rings, self.boxes.rings = self.boxes.rings, []
        for peer, nameplate in rings:
            self.ringing[peer].handle(*unpack(pack("mb_ring", {"nameplate": nameplate})))


class Link:
    """A joiner's connection to the relay: `send` and a blocking `recv`, as RelayClient gives."""

    def __init__(self, relay: Relay):
        self.relay, self.replies = relay, queue.Queue()
        self.caller = relay.caller()

    def send(self, op: str, body: dict) -> None:
        reply = self.relay.request(op, body, self.caller)
        if reply is not None:
            self.replies.put(reply)

    def recv(self, timeout: float):
        try:
            return self.replies.get(timeout=timeout)
        except queue.Empty:
            return None


def exchange(relay: Relay, host: CodeHost, packets) -> None:
    """Send the host's packets and hand it the relay's replies until it has nothing more to say."""
    packets = list(packets)
    while packets:
        reply = relay.request(*packets.pop(0), relay.host(host))
        if reply is not None:
            packets += host.handle(*reply)


def offer(relay: Relay, invite: str = INVITE, uses: str = "table", **options) -> CodeHost:
    host = CodeHost(invite, uses=uses, **options)
    exchange(relay, host, host.start())
    assert host.code is not None and host.events[0] == ("code", host.code)
    return host


@contextmanager
def serving(relay: Relay, host: CodeHost):
    """The host's session loop: `tick()` every few ms in its own thread, as HostSession.watch_code does."""
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            relay.ring()
            exchange(relay, host, host.tick())
            time.sleep(0.003)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield host
    finally:
        stop.set()
        thread.join(5)


def bytes_in(value):
    if isinstance(value, bytes):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from bytes_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from bytes_in(item)


# -- the code as a person reads it ----------------------------------------------------------------
def test_the_word_list_is_256_short_distinct_lower_case_words():
    assert len(WORDS) == 256 == len(set(WORDS))
    assert all(3 <= len(w) <= 8 and w.isascii() and w.isalpha() and w.islower() for w in WORDS)
    longest = max(WORDS, key=len)
    assert len(f"99999-{longest}-{longest}") <= codes.MAX_CODE


@settings(max_examples=200, deadline=None)
@given(nameplate=st.integers(1, 99_999), first=st.sampled_from(WORDS), second=st.sampled_from(WORDS),
       upper=st.booleans(), gap=st.sampled_from(["-", " ", " - ", "  ", "\t"]))
def test_a_code_reads_back_however_it_is_typed(nameplate, first, second, upper, gap):
    code = f"{nameplate}-{first}-{second}"
    assert len(code) <= 24 and parse_code(code) == (nameplate, (first, second))
    typed = f"  {nameplate}{gap}{first}{gap}{second} "
    assert parse_code(typed.upper() if upper else typed) == (nameplate, (first, second))


def test_made_codes_use_the_word_list_and_vary():
    made = {make_code(7) for _ in range(50)}
    assert len(made) > 40 and all(len(c) <= 24 and parse_code(c)[0] == 7 for c in made)


@pytest.mark.parametrize("typed, says", [
    ("", "a code looks like 7-orbit-lantern"),
    ("7-orbit", "a code looks like 7-orbit-lantern"),
    ("7-orbit-lantern-river", "a code looks like 7-orbit-lantern"),
    ("orbit-7-lantern", "a code looks like 7-orbit-lantern"),
    ("dt1-abcdef", "a code looks like 7-orbit-lantern"),
    ("٧-orbit-lantern", "a code looks like 7-orbit-lantern"),  # a digit, but not an ascii one
    ("0-orbit-lantern", "from 1 to 99999"),
    ("100000-orbit-lantern", "from 1 to 99999"),
    ("7-orbti-lantern", "'orbti' is not a code word (did you mean 'orbit'?)"),
    ("7-orbit-xyzzy", "'xyzzy' is not a code word; a code looks like 7-orbit-lantern"),
])
def test_a_malformed_code_is_one_clear_line(typed, says):
    with pytest.raises(CodeError) as error:
        parse_code(typed)
    assert says in str(error.value) and "\n" not in str(error.value)


# -- a host and its joiners -----------------------------------------------------------------------
def test_the_right_code_gives_the_invite_and_the_relay_reads_nothing_of_it():
    relay = Relay()
    host = offer(relay)
    typed = "  " + host.code.replace("-", " ").upper()
    with serving(relay, host):
        assert claim_invite(Link(relay), typed, timeout=10) == INVITE
    assert ("joined", f"a joiner confirmed code {host.nameplate}") in host.events and not host.done
    carried = [b for _, body in relay.seen for b in bytes_in(body)]
    assert carried and not any(INVITE.encode() in b or host.code.encode() in b for b in carried)
    assert {body["phase"] for op, body in relay.seen if op == "mb_post"} == {"pake", "confirm", "invite"}


def test_wrong_words_are_refused_at_once_and_burn_the_code():
    relay = Relay()
    host = offer(relay)
    nameplate, (first, second) = parse_code(host.code)
    wrong = f"{nameplate}-{first}-{WORDS[(WORDS.index(second) + 1) % 256]}"
    with serving(relay, host):
        started = time.monotonic()
        with pytest.raises(CodeError, match="^the code is wrong: it is now burned — ask the host for a new one$"):
            claim_invite(Link(relay), wrong, timeout=10)
        assert time.monotonic() - started < 5
        assert host.done and host.events[-1] == ("burned", "someone tried a wrong code")
        with pytest.raises(CodeError, match=f"^no code {nameplate} at this relay \\(expired, used or mistyped\\)$"):
            claim_invite(Link(relay), host.code, timeout=10)


def test_a_wrong_number_finds_no_code():
    relay = Relay()
    host = offer(relay)
    other = host.nameplate % MAX_NAMEPLATE + 1
    with serving(relay, host), pytest.raises(CodeError, match=f"^no code {other} at this relay"):
        claim_invite(Link(relay), f"{other}-orbit-lantern", timeout=10)
    assert not host.done


def test_an_expired_code_finds_no_code_and_the_host_is_told():
    now = [100.0]
    relay = Relay(clock=lambda: now[0])
    host = offer(relay, ttl=600, clock=lambda: now[0])
    now[0] += 600
    with pytest.raises(CodeError, match=f"^no code {host.nameplate} at this relay"):
        claim_invite(Link(relay), host.code, timeout=10)
    exchange(relay, host, host.tick())
    assert host.done and host.events[-1] == ("expired", f"code {host.nameplate} expired after 10 min")


def test_a_silent_host_is_a_timeout_naming_the_code():
    relay = Relay()
    host = offer(relay)  # never stepped again: its machine went to sleep
    with pytest.raises(CodeError, match=f"^the host holding code {host.nameplate} did not answer within 0.3 s$"):
        claim_invite(Link(relay), host.code, timeout=0.3)


def test_a_table_code_serves_three_joiners_at_once():
    relay = Relay()
    host = offer(relay, uses="table")
    results: list = []

    def join():
        try:
            results.append(claim_invite(Link(relay), host.code, timeout=20))
        except CodeError as error:
            results.append(error)

    with serving(relay, host):
        joiners = [threading.Thread(target=join) for _ in range(3)]
        for thread in joiners:
            thread.start()
        for thread in joiners:
            thread.join(30)
    assert results == [INVITE] * 3
    assert [kind for kind, _ in host.events].count("joined") == 3 and not host.done
    assert len(host.exchanges) == 3 and all(e.settled for e in host.exchanges.values())


def test_a_one_seat_code_is_used_up_by_its_first_joiner():
    relay = Relay()
    host = offer(relay, uses="one")
    with serving(relay, host):
        assert claim_invite(Link(relay), host.code, timeout=10) == INVITE
        assert host.done
        with pytest.raises(CodeError, match=f"^no code {host.nameplate} at this relay"):
            claim_invite(Link(relay), host.code, timeout=10)


def test_withdraw_burns_the_mailbox():
    relay = Relay()
    host = offer(relay)
    exchange(relay, host, host.withdraw())
    assert host.done and host.withdraw() == [] and host.tick() == []
    with pytest.raises(CodeError, match="no code"):
        claim_invite(Link(relay), host.code, timeout=10)


def test_a_relay_that_refuses_a_code_is_told_and_asked_again_later():
    now = [0.0]
    host = CodeHost(INVITE, uses="table", clock=lambda: now[0])
    assert host.start() == [("mb_allocate", {"ttl": 1800.0, "uses": "table"})]
    host.handle("mb_error", {"nameplate": None, "reason": "the relay holds its most codes\x1b[2J"})
    assert host.events == [("error", "the relay gives no code: the relay holds its most codes[2J; asking again in 30 s; "
                                     + codes.INSTEAD)]
    assert host.tick() == [] and not host.done
    now[0] += codes.RETRY
    assert host.tick()[0][0] == "mb_allocate"


# -- the relay as the attacker --------------------------------------------------------------------
class Tampering(Link):
    """A joiner's link through a relay that rewrites the mail it hands this joiner."""

    def __init__(self, relay: Relay, rewrite):
        super().__init__(relay)
        self.rewrite = rewrite
        self.side: bytes | None = None  # the joiner's, as the relay sees it on its first post

    def send(self, op: str, body: dict) -> None:
        if op == "mb_post" and self.side is None:
            self.side = body["side"]
        super().send(op, body)

    def recv(self, timeout: float):
        packet = super().recv(timeout)
        if packet is not None and packet[0] == "mb_mail":
            op, body = packet
            return op, {**body, "messages": self.rewrite([list(m) for m in body["messages"]])}
        return packet


def claim_refused(link: Link, code: str, says: str) -> None:
    """The joiner refuses: one CodeError, never an invite."""
    got = None
    with pytest.raises(CodeError, match=says):
        got = claim_invite(link, code, timeout=10)
    assert got is None


def recorded_exchange(invite: str) -> list[list]:
    """A whole exchange at another relay, as a relay records it: the host's `pake` and `invite`."""
    relay = Relay()
    host = offer(relay, invite=invite)
    with serving(relay, host):
        assert claim_invite(Link(relay), host.code, timeout=10) == invite
    return [list(m) for m in relay.boxes.boxes[host.nameplate].messages if m[3] in ("pake", "invite") and m[2] is not None]


def test_a_forged_invite_is_refused():
    relay = Relay()
    host = offer(relay)

    def forge(messages):
        for m in messages:
            if m[3] == "invite":
                m[4] = m[4][:-1] + bytes([m[4][-1] ^ 1])
        return messages

    with serving(relay, host):
        claim_refused(Tampering(relay, forge), host.code, "did not come sealed by its host")


def test_an_invite_sealed_for_another_joiner_is_refused():
    relay = Relay()
    host = offer(relay)
    with serving(relay, host):
        assert claim_invite(Link(relay), host.code, timeout=10) == INVITE
        first = next(m for m in relay.boxes.boxes[host.nameplate].messages if m[3] == "invite")

        def swap(messages):
            return [m if m[3] != "invite" else [m[0], m[1], m[2], "invite", first[4]] for m in messages]

        claim_refused(Tampering(relay, swap), host.code, "did not come sealed by its host")


def test_a_replayed_exchange_from_another_table_is_refused():
    old = recorded_exchange(EVIL)
    relay = Relay()
    host = offer(relay)

    def replay(messages):
        if not link.injected:  # before anything the host says: the old exchange, addressed to this joiner
            link.injected = True
            return [[n, side, link.side, phase, data] for n, side, _, phase, data in old] + messages
        return messages

    link = Tampering(relay, replay)
    link.injected = False
    with serving(relay, host):
        claim_refused(link, host.code, "did not come sealed by its host")
    assert link.injected


def test_a_relay_posing_as_the_host_with_a_guessed_code_is_refused():
    """The relay answers the joiner's SPAKE2 message itself, with its best guess at the code, and
    seals its own invite under the key it got: the joiner's key differs, so the invite does not open."""
    relay = Relay()
    host = offer(relay)  # never stepped: the relay keeps the joiner from it
    nameplate, (first, second) = parse_code(host.code)
    guess = f"{nameplate}-{first}-{WORDS[(WORDS.index(second) + 7) % 256]}"  # its best guess, one word off
    mallory = b"m" * 16

    def pose(messages):
        if link.posed:
            return []
        joiner = link.side
        pake = next(m for m in relay.boxes.boxes[nameplate].messages if m[1] == joiner)
        spake = SPAKE2_B(guess.encode(), *codes._ids(nameplate, joiner))
        reply = spake.start()
        keys = codes._Keys.derive(spake.finish(pake[4]), nameplate, joiner)
        sealed = keys.seal_invite(codes._invite_aad(nameplate, joiner), EVIL.encode())
        link.posed = True
        return [[90, mallory, joiner, "pake", reply], [91, mallory, joiner, "invite", sealed]]

    link = Tampering(relay, pose)
    link.posed = False
    claim_refused(link, host.code, "did not come sealed by its host")
    assert link.posed


def test_a_relay_that_sends_garbage_as_the_hosts_answer_is_refused():
    relay = Relay()
    host = offer(relay)

    def garble(messages):
        return [m if m[3] != "pake" else [m[0], m[1], m[2], "pake", b"B" + b"\xff" * 32] for m in messages]

    with serving(relay, host):
        claim_refused(Tampering(relay, garble), host.code, "not the host's")


# -- hostile messages -----------------------------------------------------------------------------
def test_hostile_mail_for_one_side_leaves_the_host_serving_the_others():
    relay = Relay()
    host = offer(relay)
    n, boxes = host.nameplate, relay.boxes
    boxes.post(n, b"a" * 16, None, "pake", b"short", relay.caller())
    boxes.post(n, b"b" * 16, None, "pake", b"A" + b"\xff" * 32, relay.caller())  # not a point
    boxes.post(n, b"c" * 16, None, "pake", SPAKE2_B(b"x").start(), relay.caller())  # a point, but from the host's side
    boxes.post(n, b"d" * 16, host.side, "confirm", b"\x00" * 32, relay.caller())  # no exchange to confirm
    boxes.post(n, b"e" * 16, None, "hello", b"?", relay.caller())
    boxes.post(n, b"f" * 16, None, "pake", SPAKE2_A(b"guess", *codes._ids(n, b"f" * 16)).start(), relay.caller())  # never confirms
    with serving(relay, host):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not host.exchanges:
            time.sleep(0.01)
        assert list(host.exchanges) == [b"f" * 16]  # the only well-formed one
        assert claim_invite(Link(relay), host.code, timeout=10) == INVITE
    assert not host.done and [k for k, _ in host.events] == ["code", "joined"]


def test_a_code_whose_tries_are_used_up_is_burned_for_a_fresh_one(monkeypatch):
    """A stranger who knows the number can start exchanges it never finishes; past MAX_EXCHANGES the
    host burns the code (its session then offers a fresh one), rather than ignore every later joiner."""
    monkeypatch.setattr(codes, "MAX_EXCHANGES", 3)
    relay = Relay()
    host = offer(relay)
    pake = SPAKE2_A(b"guess", idA=b"a", idB=b"b").start()
    for k in range(4):
        relay.boxes.post(host.nameplate, bytes([k + 1]) * 16, None, "pake", pake, relay.caller())
    with serving(relay, host):
        deadline = time.monotonic() + 10
        while not host.done and time.monotonic() < deadline:
            time.sleep(0.01)
    assert host.done and host.events[-1] == ("burned", f"3 joiners have tried code {host.nameplate}")
    assert len(host.exchanges) == 3
    with pytest.raises(CodeError, match=f"no code {host.nameplate} at this relay"):
        claim_invite(Link(relay), host.code, timeout=10)


def test_a_short_confirmation_is_no_guess_and_burns_nothing():
    relay = Relay()
    host = offer(relay)
    link = Link(relay)
    claim = codes._Claim(*parse_code(host.code))
    link.send(*claim.opening())
    with serving(relay, host):
        deadline = time.monotonic() + 5
        while claim.keys is None and time.monotonic() < deadline:
            link.send(*claim.fetch())
            packet = link.recv(0.05)
            if packet is not None:
                claim.handle(*packet)
        assert claim.keys is not None
        link.send("mb_post", {"nameplate": host.nameplate, "side": claim.side, "to": claim.host,
                              "phase": "confirm", "body": b"\x00" * 5})
        time.sleep(0.1)
        assert not host.done
        assert claim_invite(Link(relay), host.code, timeout=10) == INVITE


hostile = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**70), st.text(max_size=10), st.binary(max_size=40),
                    st.lists(st.one_of(st.integers(0, 9), st.binary(max_size=33), st.text(max_size=8), st.none()), max_size=6))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(op=st.sampled_from(["mb_mail", "mb_error", "mb_allocated", "from"]),
       nameplate=st.one_of(st.just(1), st.just(True), hostile),
       messages=st.one_of(hostile, st.lists(hostile, max_size=4),
                          st.lists(st.tuples(st.integers(-1, 5), st.binary(min_size=16, max_size=16), st.one_of(st.none(), st.binary(min_size=16, max_size=16)),
                                             st.sampled_from(["pake", "confirm", "invite", "wrong", "x"]), st.binary(max_size=40)).map(list), max_size=4)),
       reason=hostile)
def test_any_relay_reply_leaves_both_sides_standing(op, nameplate, messages, reason):
    host = CodeHost(INVITE, uses="table")
    host.start()
    host.handle("mb_allocated", {"nameplate": 1, "owner": bytes(16)})
    body = {"nameplate": nameplate, "messages": messages, "reason": reason}
    for packet in host.handle(op, body):
        assert packet[0] in ("mb_post", "mb_fetch", "mb_burn")
    claim = codes._Claim(1, ("orbit", "lantern"))
    try:
        claim.handle(op, body)
    except CodeError as error:
        assert "\n" not in str(error) and str(error)
    assert claim.invite is None


# -- through a real relay on 127.0.0.1 ------------------------------------------------------------
def test_a_code_through_a_real_relay_which_ignores_a_strangers_burn():
    from dicetable.net.identity import Profile
    from dicetable.net.reach.relay import RelayServer
    from dicetable.net.reach.relay_link import RelayClient, RelayHostSocket
    from dicetable.net.reach.transport import curve_keypair

    server = RelayServer(curve_keypair()[1], "127.0.0.1", 0)
    relay_thread = threading.Thread(target=server.run, daemon=True)
    relay_thread.start()
    stop = threading.Event()
    host_link = None
    try:
        host_link = RelayHostSocket(Profile.generate("alice"), server.address(), bytes(range(16)))
        with RelayClient(server.address(), timeout=5) as joiner_link, RelayClient(server.address(), timeout=5) as stranger:
            host = CodeHost(INVITE, uses="one")
            replies = queue.Queue()
            host_link.on_mail = lambda op, body: replies.put((op, body))

            def host_loop():  # what HostSession does: relay replies to handle(), tick() every loop
                for packet in host.start():
                    host_link.send_relay(*packet)
                while not stop.is_set():
                    host_link.recv(0.01)
                    packets = host.tick()
                    while not replies.empty():
                        packets += host.handle(*replies.get())
                    for packet in packets:
                        host_link.send_relay(*packet)

            thread = threading.Thread(target=host_loop, daemon=True)
            thread.start()
            deadline = time.monotonic() + 5
            while host.code is None and time.monotonic() < deadline:
                time.sleep(0.01)
            n = host.nameplate
            assert parse_code(host.code)[0] == n
            for token in (bytes(16), host.owner[:-1] + bytes([host.owner[-1] ^ 1])):  # a stranger burns the code
                stranger.send("mb_burn", {"nameplate": n, "owner": token})
            assert stranger.recv(0.5) is None  # no answer: the same as for a number that is no code
            assert claim_invite(joiner_link, host.code, timeout=10) == INVITE  # the code still serves its joiner
            assert host.done
            with pytest.raises(CodeError, match=f"no code {n} at this relay"):
                claim_invite(joiner_link, host.code, timeout=10)
            stop.set()
            thread.join(5)
    finally:
        stop.set()
        if host_link is not None:
            host_link.close()
        server.stopped = True
        relay_thread.join(5)


# -- codes never stop in silence (issue 37, finding 6; PROTOCOL.md §13.4) -------------------------
def test_a_mailbox_flooded_with_junk_is_closed_as_lost_for_a_fresh_code():
    """64 posts fill a code's mailbox at the relay, and real joiners then find it full: the host, which
    reads them, closes the code after MAX_JUNK messages that are no exchange's step, rather than sit on it."""
    relay = Relay()
    host = offer(relay)
    for k in range(codes.MAX_JUNK):
        relay.boxes.post(host.nameplate, bytes([k + 1]) * 16, None, "pake", b"junk", relay.caller())
    with serving(relay, host):
        wait_until(lambda: host.done, 10, "the host closing the flooded code")
    assert host.done and host.lost
    assert host.events[-1] == ("burned", f"code {host.nameplate}'s mailbox at the relay was flooded "
                                         f"({codes.MAX_JUNK} messages that are no joiner's)")


@pytest.fixture
def relay_table(tmp_path):
    """A real relay on 127.0.0.1 and a table hosted through it: (relay address, host session, its events)."""
    from dicetable.net.identity import Profile
    from dicetable.net.reach.relay import RelayServer
    from dicetable.net.reach.transport import curve_keypair
    from dicetable.net.table.host import HostSession
    from net_helpers import Running, in_thread, stop_all

    running = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0))
    events = []
    host = HostSession(Profile.generate("ann"), "trice", 2, relay=running.line, on_event=events.append,
                       transcript=tmp_path / "ann.dtt")
    host.open()
    in_thread(host)
    yield running.server.address(), host, events
    stop_all(host)
    running.stop()


def test_lost_codes_in_a_row_stop_the_offer_and_the_host_says_why_and_what_to_do(relay_table):
    from dicetable.net.reach.relay_link import invite_for_code
    from dicetable.net.table.events import CodeOffered, CodesStopped
    from dicetable.tui.commands.host import event_line

    address, host, events = relay_table
    offered = lambda: [e.code for e in events if isinstance(e, CodeOffered)]  # noqa: E731
    for k in range(codes.LOST_IN_A_ROW):
        wait_until(lambda: len(offered()) > k, 10, "a fresh code")
        number, first, second = offered()[-1].split("-")
        with pytest.raises(CodeError, match="the code is wrong"):
            invite_for_code(address, f"{number}-{second}-{first}" if first != second else f"{number}-orbit-orbit", 10)
    wait_until(lambda: any(isinstance(e, CodesStopped) for e in events), 10, "the host saying codes stopped")
    (stopped,) = [e for e in events if isinstance(e, CodesStopped)]
    assert event_line(stopped) == (f"no code: someone tried a wrong code; {codes.LOST_IN_A_ROW} codes in a row were "
                                   "burned or flooded before anyone joined by one (someone may be guessing or flooding "
                                   f"them at the relay): no more codes for this table; {codes.INSTEAD}")
    assert host.code.offer is None and isinstance(events[-1], CodesStopped)  # no further code, none shown dead


def test_a_relay_that_gives_no_code_is_said_on_the_command_line():
    from dicetable.net.table.events import code_event
    from dicetable.tui.commands.host import event_line

    host = CodeHost(INVITE, uses="table")
    host.start()
    host.handle("mb_error", {"nameplate": None, "reason": "too many codes taken from your address; try again in 3 s"})
    assert [event_line(code_event(*told)) for told in host.events] == [
        "no code: the relay gives no code: too many codes taken from your address; try again in 3 s; asking again "
        f"in 30 s; {codes.INSTEAD}"]
