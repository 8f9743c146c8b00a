"""The relay's short-code mailboxes (net/reach/mailbox.py): numbers drawn at random and never twice too
soon, messages filtered by side, every cap held (codes per table, connection and source, tries per
connection and source), and hostile requests answered with one `mb_error` line while nothing
changes. Time is a hand-moved clock; the attacks through a real relay are in test_relay.py."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.net.reach.mailbox import (
    ALLOCATIONS_BURST, ALLOCATIONS_EVERY, CODES_PER_CONNECTION, CODES_PER_SOURCE, CODES_PER_TABLE, MAX_NAMEPLATE, MAX_TTL, READABLE_AFTER_CLOSE,
    SIDES_PER_TRY, TRIES_BURST, TRIES_EVERY, TRIES_PER_CONNECTION, UNUSED_TTL, Caller, MailboxError, Mailboxes, answer,
)

HOST, JOINER, OTHER = b"h" * 16, b"j" * 16, b"o" * 16
_places = itertools.count(1)


def host_caller() -> Caller:
    """A host's connection serving a table of its own, from an address of its own."""
    n = next(_places)
    return Caller(f"10.1.{n // 250}.{n % 250}", table=n.to_bytes(16, "big"))


def joiner_caller(source: str | None = None) -> Caller:
    """A joiner's connection (it serves no table), from an address of its own unless `source` is given."""
    n = next(_places)
    return Caller(source or f"10.2.{n // 250}.{n % 250}")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def boxes(clock):
    return Mailboxes(clock=clock)


def state(boxes: Mailboxes):
    """Everything a refused request must leave as it was."""
    return ({n: (b.closes, list(b.messages), set(b.sides), b.size) for n, b in boxes.boxes.items()},
            dict(boxes.quarantine), boxes.size)


def refused(boxes: Mailboxes, op: str, body, words: str, caller: Caller | None = None) -> str:
    before = state(boxes)
    reply = answer(boxes, op, body, caller or joiner_caller())
    assert reply is not None and reply[0] == "mb_error", reply
    assert words in reply[1]["reason"], reply
    assert "\n" not in reply[1]["reason"]
    assert state(boxes) == before
    return reply[1]["reason"]


def take(boxes: Mailboxes, ttl: float, uses: str, caller: Caller | None = None) -> int:
    """A new box's number, taken by `caller` (a new table's host by default; its owner token stays
    with the box, for `burn`)."""
    return boxes.allocate(ttl, uses, caller or host_caller())[0]


def post(boxes: Mailboxes, n: int, side: bytes, to, phase: str, body: bytes, caller: Caller | None = None) -> None:
    """A post by the box's own host unless `caller` is given."""
    boxes.post(n, side, to, phase, body, caller or owner_of(boxes, n))


def fetch(boxes: Mailboxes, n: int, side: bytes, after: int, caller: Caller | None = None):
    return boxes.fetch(n, side, after, caller or owner_of(boxes, n))


def owner_of(boxes: Mailboxes, n: int) -> Caller:
    """The connection of the host whose table took box `n` (any box: a closed one's table is unknown)."""
    box = boxes.boxes.get(n)
    return Caller(box.source if box else "10.9.9.9", table=box.table if box else bytes(16))


def burn(boxes: Mailboxes, n: int) -> None:
    """Burn box `n` as its host does: naming the token its allocation got."""
    boxes.burn(n, boxes.boxes[n].owner)


def test_numbers_are_drawn_at_random_among_the_free_ones(boxes):
    taken = [take(boxes, 60, "one") for _ in range(200)]
    assert len(set(taken)) == 200 and all(1 <= n <= MAX_NAMEPLATE for n in taken)
    assert taken != sorted(taken) and max(taken) > 1000  # not the smallest free: nobody can tell the next one


def test_a_burned_number_rests_for_the_codes_lifetime_then_comes_back(boxes, clock):
    n = take(boxes, 600, "one")
    burn(boxes, n)
    clock.now += 599
    boxes.expire()
    assert n in boxes.quarantine and n not in boxes.boxes
    assert take(boxes, 600, "one") != n
    clock.now += 2
    boxes.expire()
    assert n not in boxes.quarantine  # free to be drawn again


def test_an_expired_box_is_refused_at_once_and_its_number_rests(boxes, clock):
    n = take(boxes, 600, "table")
    clock.now += 600
    with pytest.raises(MailboxError, match=f"no code {n} at this relay"):
        post(boxes, n, JOINER, None, "pake", b"x")
    clock.now += READABLE_AFTER_CLOSE
    with pytest.raises(MailboxError, match=f"no code {n} at this relay"):
        fetch(boxes, n, JOINER, 0)
    assert n in boxes.quarantine and n not in boxes.boxes
    assert take(boxes, 600, "table") != n


def test_a_code_lives_half_an_hour_until_used_and_at_most_a_day(boxes, clock):
    host = host_caller()
    n = take(boxes, 10 * MAX_TTL, "table", host)
    assert boxes.boxes[n].closes == clock.now + UNUSED_TTL  # nobody has used it yet
    clock.now += 60
    post(boxes, n, JOINER, None, "pake", b"p", joiner_caller())
    post(boxes, n, JOINER, None, "invite", b"forged", joiner_caller())  # a stranger's "invite" uses nothing
    assert boxes.boxes[n].closes == clock.now - 60 + UNUSED_TTL
    post(boxes, n, HOST, JOINER, "invite", b"sealed", host)  # its host sealed an invite: used
    assert boxes.boxes[n].closes == clock.now - 60 + MAX_TTL
    short = take(boxes, 600, "table")
    assert boxes.boxes[short].closes == clock.now + 600


def test_fetch_gives_messages_to_this_side_or_everyone_never_its_own(boxes):
    n = take(boxes, 60, "table")
    post(boxes, n, JOINER, None, "pake", b"1")
    post(boxes, n, HOST, JOINER, "pake", b"2")
    post(boxes, n, HOST, OTHER, "pake", b"3")
    post(boxes, n, OTHER, None, "pake", b"4")
    assert fetch(boxes, n, HOST, 0) == [(1, JOINER, None, "pake", b"1"), (4, OTHER, None, "pake", b"4")]
    assert fetch(boxes, n, JOINER, 0) == [(2, HOST, JOINER, "pake", b"2"), (4, OTHER, None, "pake", b"4")]
    assert fetch(boxes, n, JOINER, 2) == [(4, OTHER, None, "pake", b"4")]
    assert fetch(boxes, n, JOINER, 4) == []


def test_a_burned_box_takes_no_posts_but_stays_readable_a_while(boxes, clock):
    n = take(boxes, 600, "one")
    post(boxes, n, HOST, JOINER, "invite", b"sealed")
    burn(boxes, n)
    burn(boxes, n)  # twice is no error
    with pytest.raises(MailboxError, match=f"no code {n} at this relay"):
        post(boxes, n, JOINER, HOST, "confirm", b"x")
    clock.now += READABLE_AFTER_CLOSE - 1
    assert fetch(boxes, n, JOINER, 0) == [(1, HOST, JOINER, "invite", b"sealed")]
    clock.now += 1
    with pytest.raises(MailboxError, match="no code"):
        fetch(boxes, n, JOINER, 0)


def test_caps_on_messages_bytes_and_sides(clock):
    boxes = Mailboxes(clock=clock, max_messages=5, max_body=10)
    n = take(boxes, 60, "table")
    with pytest.raises(MailboxError, match="at most 10 bytes"):
        post(boxes, n, HOST, None, "pake", b"x" * 11)
    for _ in range(5):
        post(boxes, n, HOST, None, "pake", b"x")
    with pytest.raises(MailboxError, match="full"):
        post(boxes, n, HOST, None, "pake", b"")
    one = take(boxes, 60, "one")
    for i in range(4):
        post(boxes, one, bytes([i]) * 16, None, "pake", b"", joiner_caller())
    post(boxes, one, bytes([0]) * 16, None, "confirm", b"")  # a side already in may post again
    with pytest.raises(MailboxError, match="one seat"):
        post(boxes, one, b"z" * 16, None, "pake", b"", joiner_caller())
    assert boxes.size == 5


def test_a_box_holds_at_most_32_kib_so_a_fetch_fits_a_packet(boxes):
    n = take(boxes, 60, "table")
    for _ in range(8):
        post(boxes, n, HOST, None, "invite", b"x" * 4096)
    with pytest.raises(MailboxError, match="full"):
        post(boxes, n, HOST, None, "invite", b"x")
    assert len(fetch(boxes, n, JOINER, 0, joiner_caller())) == 8


def test_the_relay_holds_at_most_max_nameplates_and_its_quarantine_is_capped(clock):
    boxes = Mailboxes(clock=clock, max_nameplates=3)
    for _ in range(3):
        take(boxes, 60, "one")
    with pytest.raises(MailboxError, match="most codes"):
        take(boxes, 60, "one")
    for _ in range(50):  # burn and take again: quarantine is capped, so numbers never run out
        for n in list(boxes.boxes):
            burn(boxes, n)
        clock.now += READABLE_AFTER_CLOSE
        boxes.expire()
        for _ in range(3):
            assert 1 <= take(boxes, 60, "one") <= MAX_NAMEPLATE
        assert len(boxes.quarantine) <= 4 * 3
    with pytest.raises(ValueError):
        Mailboxes(max_nameplates=MAX_NAMEPLATE)


def test_the_relay_wide_byte_cap(clock):
    boxes = Mailboxes(clock=clock, max_bytes=25)
    a, b = take(boxes, 60, "table"), take(boxes, 60, "table")
    post(boxes, a, HOST, None, "pake", b"x" * 20)
    with pytest.raises(MailboxError, match="mailboxes are full"):
        post(boxes, b, HOST, None, "pake", b"x" * 6)
    burn(boxes, a)
    clock.now += 60 + READABLE_AFTER_CLOSE
    boxes.expire()
    c = b if b in boxes.boxes else take(boxes, 60, "table")
    post(boxes, c, HOST, None, "pake", b"x" * 6)


# -- what one stranger can take -------------------------------------------------------------------
def test_only_the_host_of_a_served_table_takes_a_code(boxes):
    reason = refused(boxes, "mb_allocate", {"ttl": 60, "uses": "one"}, "serve the table first")
    assert reason == "only the host of a table served at this relay takes a code (serve the table first)"


def test_codes_are_capped_per_table_per_connection_and_per_source(boxes, clock):
    table = host_caller()
    for _ in range(CODES_PER_TABLE):
        take(boxes, 600, "table", table)
    again = Caller("10.3.0.1", table=table.table)  # the same table served again, on another connection from elsewhere
    refused(boxes, "mb_allocate", {"ttl": 60, "uses": "one"}, f"this table holds {CODES_PER_TABLE} open codes", again)
    burn(boxes, table.codes[0])  # a burned code frees its place at once
    take(boxes, 600, "table", again)
    moving = host_caller()  # one connection serving one table after another
    for _ in range(CODES_PER_CONNECTION):
        take(boxes, 600, "table", moving)
    moving.table = b"another table!!!"
    refused(boxes, "mb_allocate", {"ttl": 60, "uses": "one"}, "this connection holds", moving)
    # One source over any number of connections, each serving a table of its own:
    hosts = [Caller("10.4.0.1", table=bytes([7, k]) * 8) for k in range(10)]
    granted = [answer(boxes, "mb_allocate", {"ttl": 600, "uses": "table"}, h)[0] for h in hosts for _ in range(2)]
    assert granted.count("mb_allocated") == CODES_PER_SOURCE
    reason = refused(boxes, "mb_allocate", {"ttl": 60, "uses": "one"}, "your address holds", hosts[-1])
    assert reason == (f"your address holds {CODES_PER_SOURCE} open codes at this relay already; "
                      "one frees when it is used, burned or expires")
    clock.now += UNUSED_TTL  # unused, they close: the address may take codes again
    assert answer(boxes, "mb_allocate", {"ttl": 600, "uses": "table"}, hosts[0])[0] == "mb_allocated"


def test_taking_and_burning_codes_in_a_loop_is_budgeted_per_source(boxes, clock):
    looping = host_caller()
    for _ in range(ALLOCATIONS_BURST):  # a burned code frees its place among the open ones at once...
        burn(boxes, take(boxes, 600, "table", looping))
    held = len(boxes.boxes)  # ...but stays readable a while: these are what the loop costs the relay
    reason = refused(boxes, "mb_allocate", {"ttl": 60, "uses": "one"}, "too many codes taken", looping)
    assert reason == f"too many codes taken from your address; try again in {ALLOCATIONS_EVERY:g} s"
    elsewhere = Caller(looping.source, table=b"another table!!!")  # another connection and table, same source
    refused(boxes, "mb_allocate", {"ttl": 60, "uses": "one"}, "too many codes taken", elsewhere)
    take(boxes, 600, "table")  # a host at another address is not held up
    clock.now += ALLOCATIONS_EVERY
    take(boxes, 600, "table", looping)
    assert held == ALLOCATIONS_BURST


def test_tries_at_other_peoples_codes_are_capped_per_connection_and_per_source(boxes, clock):
    live = take(boxes, 600, "table")
    guesser = joiner_caller("10.5.0.1")
    for n in range(1, TRIES_PER_CONNECTION + 1):
        answer(boxes, "mb_fetch", {"nameplate": n, "side": JOINER, "after": 0}, guesser)
    refused(boxes, "mb_fetch", {"nameplate": live, "side": JOINER, "after": 0}, "one connection tries at most", guesser)
    # New connections from the same source: the source's budget runs out, then one try every TRIES_EVERY s.
    spent = TRIES_PER_CONNECTION
    while spent < TRIES_BURST:
        assert answer(boxes, "mb_fetch", {"nameplate": 99_000 + spent, "side": JOINER, "after": 0},
                      joiner_caller("10.5.0.1"))[1]["reason"].startswith("no code")
        spent += 1
    for n in (live, 99_999):  # the same answer whether the box exists or not: nothing to learn by guessing
        reason = refused(boxes, "mb_post", {"nameplate": n, "side": JOINER, "to": None, "phase": "pake", "body": b""},
                         "too many codes tried from your address", joiner_caller("10.5.0.1"))
        assert reason == f"too many codes tried from your address; try again in {TRIES_EVERY:g} s"
    assert answer(boxes, "mb_fetch", {"nameplate": live, "side": JOINER, "after": 0}, joiner_caller("10.5.0.2"))[0] == "mb_mail"
    clock.now += TRIES_EVERY
    assert answer(boxes, "mb_fetch", {"nameplate": live, "side": JOINER, "after": 0}, joiner_caller("10.5.0.1"))[0] == "mb_mail"
    # Its own table's boxes cost a host nothing, however often it asks.
    owner = owner_of(boxes, live)
    owner.source = "10.5.0.1"
    for _ in range(3 * TRIES_BURST):
        assert answer(boxes, "mb_fetch", {"nameplate": live, "side": HOST, "after": 0}, owner)[0] == "mb_mail"


def test_one_connection_speaks_for_at_most_two_joiners_in_a_box(boxes):
    n = take(boxes, 600, "table")
    flooder = joiner_caller()
    for k in range(SIDES_PER_TRY):
        post(boxes, n, bytes([k + 1]) * 16, None, "pake", b"p", flooder)
    with pytest.raises(MailboxError, match=f"at most {SIDES_PER_TRY} joiners"):
        post(boxes, n, b"z" * 16, None, "pake", b"p", flooder)
    post(boxes, n, bytes([1]) * 16, None, "confirm", b"c", flooder)  # the sides it has may go on


# -- answer: the relay's packets ------------------------------------------------------------------
def numbered_one(boxes: Mailboxes) -> Mailboxes:
    """`boxes` whose next draws are 1, 2, ...: tests that name a box by number."""
    drawn = itertools.count(1)
    boxes._draw = lambda: next(drawn)
    return boxes


def test_answer_round_trip(boxes):
    host, joiner = host_caller(), joiner_caller()
    op, allocated = answer(numbered_one(boxes), "mb_allocate", {"ttl": 60, "uses": "one"}, host)
    assert op == "mb_allocated" and allocated["nameplate"] == 1 and len(allocated["owner"]) == 16
    assert answer(boxes, "mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}, joiner) is None
    assert answer(boxes, "mb_fetch", {"nameplate": 1, "side": HOST, "after": 0}, host) == \
        ("mb_mail", {"nameplate": 1, "messages": [[1, JOINER, None, "pake", b"m"]]})
    assert answer(boxes, "mb_burn", {"nameplate": 1, "owner": allocated["owner"]}, host) is None
    assert answer(boxes, "mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}, joiner) == \
        ("mb_error", {"nameplate": 1, "reason": "no code 1 at this relay (expired, used or mistyped)"})


@pytest.mark.parametrize("op, body, words", [
    ("mb_allocate", {"ttl": 60, "uses": "one"}, "serve the table first"),
    ("mb_allocate", {"ttl": 0, "uses": "one"}, "above 0"),
    ("mb_allocate", {"ttl": float("nan"), "uses": "one"}, "above 0"),
    ("mb_allocate", {"ttl": True, "uses": "one"}, "above 0"),
    ("mb_allocate", {"ttl": "60", "uses": "one"}, "above 0"),
    ("mb_allocate", {"ttl": 60, "uses": "all"}, "one seat"),
    ("mb_allocate", {"ttl": 60, "uses": ["one"]}, "one seat"),
    ("mb_allocate", {"ttl": 60}, "exactly the fields"),
    ("mb_allocate", {"ttl": 60, "uses": "one", "extra": 1}, "exactly the fields"),
    ("mb_post", {"nameplate": True, "side": JOINER, "to": None, "phase": "pake", "body": b""}, "number is from 1"),
    ("mb_post", {"nameplate": 1.0, "side": JOINER, "to": None, "phase": "pake", "body": b""}, "number is from 1"),
    ("mb_post", {"nameplate": 0, "side": JOINER, "to": None, "phase": "pake", "body": b""}, "number is from 1"),
    ("mb_post", {"nameplate": 2**70, "side": JOINER, "to": None, "phase": "pake", "body": b""}, "number is from 1"),
    ("mb_post", {"nameplate": 1, "side": b"short", "to": None, "phase": "pake", "body": b""}, "16 bytes"),
    ("mb_post", {"nameplate": 1, "side": "j" * 16, "to": None, "phase": "pake", "body": b""}, "16 bytes"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": b"x", "phase": "pake", "body": b""}, "addressee"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "", "body": b""}, "phase"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "p" * 17, "body": b""}, "phase"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pa ke", "body": b""}, "phase"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pæke", "body": b""}, "phase"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pake", "body": "text"}, "body"),
    ("mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pake", "body": b"x" * 4097}, "4096 bytes"),
    ("mb_post", {"nameplate": 9, "side": JOINER, "to": None, "phase": "pake", "body": b""}, "no code 9"),
    ("mb_fetch", {"nameplate": 1, "side": JOINER, "after": -1}, "0 or more"),
    ("mb_fetch", {"nameplate": 1, "side": JOINER, "after": None}, "0 or more"),
    ("mb_fetch", {"nameplate": 9, "side": JOINER, "after": 0}, "no code 9"),
    ("mb_burn", {"nameplate": "1", "owner": b"o" * 16}, "number is from 1"),
    ("mb_burn", {"nameplate": 1}, "exactly the fields"),
    ("mb_burn", {"nameplate": 1, "owner": b"short"}, "owner token"),
    ("mb_burn", {"nameplate": 1, "owner": "o" * 16}, "owner token"),
    ("mb_burn", [], "exactly the fields"),
    ("mb_teleport", {}, "no request"),
])
def test_malformed_requests_get_one_line_and_change_nothing(boxes, op, body, words):
    take(numbered_one(boxes), 60, "table")
    post(boxes, 1, HOST, None, "pake", b"kept")
    if op == "mb_allocate" and words != "serve the table first":
        refused(boxes, op, body, words, host_caller())
    else:
        refused(boxes, op, body, words)


def test_a_stranger_cannot_burn_someone_elses_code_nor_learn_it_exists(boxes):
    """Anyone at the relay may post to a code's box, but burning it takes the token only its
    allocation got: a stranger's burn, with any token or a guessed one, changes nothing and gets the
    same answer (none) as a burn of a number that is no box, so burns tell no live code from a dead
    one; the code still serves its joiner, and its host's burn closes it."""
    host, stranger = host_caller(), host_caller()
    _, allocated = answer(boxes, "mb_allocate", {"ttl": 600, "uses": "one"}, host)
    n, owner = allocated["nameplate"], allocated["owner"]
    _, theirs = answer(boxes, "mb_allocate", {"ttl": 600, "uses": "one"}, stranger)  # the stranger's own code
    dead = next(k for k in range(1, MAX_NAMEPLATE) if k not in boxes.boxes)
    for number, token in ((n, theirs["owner"]), (n, bytes(16)), (n, owner[:-1] + bytes([owner[-1] ^ 1])), (dead, owner)):
        before = state(boxes)
        assert answer(boxes, "mb_burn", {"nameplate": number, "owner": token}, stranger) is None
        assert state(boxes) == before
    joiner = joiner_caller()
    assert answer(boxes, "mb_post", {"nameplate": n, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}, joiner) is None
    assert answer(boxes, "mb_burn", {"nameplate": n, "owner": owner}, host) is None
    assert answer(boxes, "mb_post", {"nameplate": n, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}, joiner)[0] == "mb_error"


values = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), st.text(max_size=30),
                   st.binary(max_size=40), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(op=st.sampled_from(["mb_allocate", "mb_post", "mb_fetch", "mb_burn", "mb_", "from"]),
       body=st.one_of(values, st.fixed_dictionaries({}, optional={k: values for k in ("ttl", "uses", "nameplate", "side", "to", "phase", "body", "after", "owner")})))
def test_any_request_is_answered_without_raising(op, body):
    boxes = Mailboxes(clock=Clock())
    host = host_caller()
    take(boxes, 60, "table", host)
    reply = answer(boxes, op, body, host if op == "mb_allocate" else joiner_caller())
    assert reply is None or reply[0] in ("mb_allocated", "mb_mail", "mb_error")
    if reply is not None and reply[0] == "mb_error":
        assert type(reply[1]["reason"]) is str and reply[1]["nameplate"] in (None, *range(1, MAX_NAMEPLATE + 1))
