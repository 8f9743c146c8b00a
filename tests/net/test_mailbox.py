"""The relay's short-code mailboxes (net/mailbox.py): numbers handed out small and never twice too
soon, messages filtered by side, every cap held, and hostile requests answered with one `mb_error`
line while nothing changes. Time is a hand-moved clock."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.net.mailbox import (
    MAX_NAMEPLATE, MAX_TTL, READABLE_AFTER_CLOSE, MailboxError, Mailboxes, answer,
)

HOST, JOINER, OTHER = b"h" * 16, b"j" * 16, b"o" * 16


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
            dict(boxes.quarantine), list(boxes._free), boxes._next, boxes.size)


def refused(boxes: Mailboxes, op: str, body, words: str) -> str:
    before = state(boxes)
    reply = answer(boxes, op, body)
    assert reply is not None and reply[0] == "mb_error", reply
    assert words in reply[1]["reason"], reply
    assert "\n" not in reply[1]["reason"]
    assert state(boxes) == before
    return reply[1]["reason"]


def take(boxes: Mailboxes, ttl: float, uses: str) -> int:
    """A new box's number (its owner token stays with the box, for `burn`)."""
    return boxes.allocate(ttl, uses)[0]


def burn(boxes: Mailboxes, n: int) -> None:
    """Burn box `n` as its host does: naming the token its allocation got."""
    boxes.burn(n, boxes.boxes[n].owner)


def test_numbers_are_the_smallest_free(boxes):
    assert [take(boxes, 60, "one") for _ in range(3)] == [1, 2, 3]
    burn(boxes, 2)
    assert take(boxes, 60, "table") == 4  # 2 rests in quarantine


def test_a_burned_number_rests_for_the_codes_lifetime_then_comes_back(boxes, clock):
    assert take(boxes, 600, "one") == 1
    burn(boxes, 1)
    clock.now += 599
    boxes.expire()
    assert 1 in boxes.quarantine and 1 not in boxes.boxes
    assert take(boxes, 600, "one") == 2
    clock.now += 2
    assert take(boxes, 600, "one") == 1


def test_an_expired_box_is_refused_at_once_and_its_number_rests(boxes, clock):
    n = take(boxes, 600, "table")
    clock.now += 600
    with pytest.raises(MailboxError, match=f"no code {n} at this relay"):
        boxes.post(n, JOINER, None, "pake", b"x")
    clock.now += READABLE_AFTER_CLOSE
    with pytest.raises(MailboxError, match=f"no code {n} at this relay"):
        boxes.fetch(n, JOINER, 0)
    assert n in boxes.quarantine and n not in boxes.boxes
    assert take(boxes, 600, "table") == n + 1


def test_a_ttl_over_a_day_is_cut_to_a_day(boxes, clock):
    n = take(boxes, 10 * MAX_TTL, "table")
    assert boxes.boxes[n].closes == clock.now + MAX_TTL


def test_fetch_gives_messages_to_this_side_or_everyone_never_its_own(boxes):
    n = take(boxes, 60, "table")
    boxes.post(n, JOINER, None, "pake", b"1")
    boxes.post(n, HOST, JOINER, "pake", b"2")
    boxes.post(n, HOST, OTHER, "pake", b"3")
    boxes.post(n, OTHER, None, "pake", b"4")
    assert boxes.fetch(n, HOST, 0) == [(1, JOINER, None, "pake", b"1"), (4, OTHER, None, "pake", b"4")]
    assert boxes.fetch(n, JOINER, 0) == [(2, HOST, JOINER, "pake", b"2"), (4, OTHER, None, "pake", b"4")]
    assert boxes.fetch(n, JOINER, 2) == [(4, OTHER, None, "pake", b"4")]
    assert boxes.fetch(n, JOINER, 4) == []


def test_a_burned_box_takes_no_posts_but_stays_readable_a_while(boxes, clock):
    n = take(boxes, 600, "one")
    boxes.post(n, HOST, JOINER, "invite", b"sealed")
    burn(boxes, n)
    burn(boxes, n)  # twice is no error
    with pytest.raises(MailboxError, match=f"no code {n} at this relay"):
        boxes.post(n, JOINER, HOST, "confirm", b"x")
    clock.now += READABLE_AFTER_CLOSE - 1
    assert boxes.fetch(n, JOINER, 0) == [(1, HOST, JOINER, "invite", b"sealed")]
    clock.now += 1
    with pytest.raises(MailboxError, match="no code"):
        boxes.fetch(n, JOINER, 0)


def test_caps_on_messages_bytes_and_sides(clock):
    boxes = Mailboxes(clock=clock, max_messages=5, max_body=10)
    n = take(boxes, 60, "table")
    with pytest.raises(MailboxError, match="at most 10 bytes"):
        boxes.post(n, HOST, None, "pake", b"x" * 11)
    for _ in range(5):
        boxes.post(n, HOST, None, "pake", b"x")
    with pytest.raises(MailboxError, match="full"):
        boxes.post(n, HOST, None, "pake", b"")
    one = take(boxes, 60, "one")
    for i in range(4):
        boxes.post(one, bytes([i]) * 16, None, "pake", b"")
    boxes.post(one, bytes([0]) * 16, None, "confirm", b"")  # a side already in may post again
    with pytest.raises(MailboxError, match="one seat"):
        boxes.post(one, b"z" * 16, None, "pake", b"")
    assert boxes.size == 5


def test_a_box_holds_at_most_32_kib_so_a_fetch_fits_a_packet(boxes):
    n = take(boxes, 60, "table")
    for _ in range(8):
        boxes.post(n, HOST, None, "invite", b"x" * 4096)
    with pytest.raises(MailboxError, match="full"):
        boxes.post(n, HOST, None, "invite", b"x")
    assert len(boxes.fetch(n, JOINER, 0)) == 8


def test_the_relay_holds_at_most_max_nameplates_and_numbers_stay_five_digits(clock):
    boxes = Mailboxes(clock=clock, max_nameplates=3)
    for _ in range(3):
        take(boxes, 60, "one")
    with pytest.raises(MailboxError, match="most codes"):
        take(boxes, 60, "one")
    for _ in range(50):  # burn and take again: quarantine is capped, so numbers stay small
        for n in list(boxes.boxes):
            burn(boxes, n)
        clock.now += READABLE_AFTER_CLOSE
        boxes.expire()
        for _ in range(3):
            assert take(boxes, 60, "one") <= 15
    with pytest.raises(ValueError):
        Mailboxes(max_nameplates=MAX_NAMEPLATE)


def test_the_relay_wide_byte_cap(clock):
    boxes = Mailboxes(clock=clock, max_bytes=25)
    a, b = take(boxes, 60, "table"), take(boxes, 60, "table")
    boxes.post(a, HOST, None, "pake", b"x" * 20)
    with pytest.raises(MailboxError, match="mailboxes are full"):
        boxes.post(b, HOST, None, "pake", b"x" * 6)
    burn(boxes, a)
    clock.now += 60 + READABLE_AFTER_CLOSE
    boxes.expire()
    boxes.post(b if b in boxes.boxes else take(boxes, 60, "table"), HOST, None, "pake", b"x" * 6)


# -- answer: the relay's packets ------------------------------------------------------------------
def test_answer_round_trip(boxes):
    op, allocated = answer(boxes, "mb_allocate", {"ttl": 60, "uses": "one"})
    assert op == "mb_allocated" and allocated["nameplate"] == 1 and len(allocated["owner"]) == 16
    assert answer(boxes, "mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}) is None
    assert answer(boxes, "mb_fetch", {"nameplate": 1, "side": HOST, "after": 0}) == \
        ("mb_mail", {"nameplate": 1, "messages": [[1, JOINER, None, "pake", b"m"]]})
    assert answer(boxes, "mb_burn", {"nameplate": 1, "owner": allocated["owner"]}) is None
    assert answer(boxes, "mb_post", {"nameplate": 1, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}) == \
        ("mb_error", {"nameplate": 1, "reason": "no code 1 at this relay (expired, used or mistyped)"})


@pytest.mark.parametrize("op, body, words", [
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
    ("mb_burn", {"nameplate": 1, "owner": b"o" * 16}, "only the host that took code 1 may burn it"),
    ("mb_burn", [], "exactly the fields"),
    ("mb_teleport", {}, "no request"),
])
def test_malformed_requests_get_one_line_and_change_nothing(boxes, op, body, words):
    take(boxes, 60, "table")
    boxes.post(1, HOST, None, "pake", b"kept")
    refused(boxes, op, body, words)


def test_a_stranger_cannot_burn_someone_elses_code(boxes):
    """Anyone at the relay may post to a code's box, but burning it takes the token only its
    allocation got: a stranger's burn, with any token or a guessed one, is refused and the code
    still serves its joiner; its host's burn closes it."""
    _, allocated = answer(boxes, "mb_allocate", {"ttl": 600, "uses": "one"})
    n, owner = allocated["nameplate"], allocated["owner"]
    _, theirs = answer(boxes, "mb_allocate", {"ttl": 600, "uses": "one"})  # the stranger's own code
    for token in (theirs["owner"], bytes(16), owner[:-1] + bytes([owner[-1] ^ 1])):
        reason = refused(boxes, "mb_burn", {"nameplate": n, "owner": token}, f"only the host that took code {n}")
        assert reason == f"only the host that took code {n} may burn it"
    assert answer(boxes, "mb_post", {"nameplate": n, "side": JOINER, "to": None, "phase": "pake", "body": b"m"}) is None
    assert answer(boxes, "mb_burn", {"nameplate": n, "owner": owner}) is None
    assert answer(boxes, "mb_post", {"nameplate": n, "side": JOINER, "to": None, "phase": "pake", "body": b"m"})[0] == "mb_error"


values = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), st.text(max_size=30),
                   st.binary(max_size=40), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(op=st.sampled_from(["mb_allocate", "mb_post", "mb_fetch", "mb_burn", "mb_", "from"]),
       body=st.one_of(values, st.fixed_dictionaries({}, optional={k: values for k in ("ttl", "uses", "nameplate", "side", "to", "phase", "body", "after", "owner")})))
def test_any_request_is_answered_without_raising(op, body):
    boxes = Mailboxes(clock=Clock())
    take(boxes, 60, "table")
    reply = answer(boxes, op, body)
    assert reply is None or reply[0] in ("mb_allocated", "mb_mail", "mb_error")
    if reply is not None and reply[0] == "mb_error":
        assert type(reply[1]["reason"]) is str and reply[1]["nameplate"] in (None, *range(1, MAX_NAMEPLATE + 1))
