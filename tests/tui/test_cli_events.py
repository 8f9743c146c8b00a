"""The lines `dicetable host`/`join`/`roll` print for a table's events (tui/commands/host.py): one per
event a person follows, `<what>: [seat N: ]<words>`, in the words' plain text."""

from pathlib import Path

import pytest

from dicetable.core.game import Result
from dicetable.core.phrase import Seat, phrase
from dicetable.net.table.events import (
    Chat,
    ClaimDisputed,
    Claimable,
    CodeGone,
    CodeOffered,
    Dropped,
    Ended,
    Failed,
    Fault,
    Invited,
    Joined,
    Lingering,
    Ordering,
    Refused,
    RematchAnswered,
    RematchGone,
    Returned,
    SeatHeld,
    SeatReleased,
    Started,
    TranscriptOpened,
    Unwitnessed,
    YourTurn,
)
from dicetable.tui.commands.host import event_line


@pytest.mark.parametrize("event, line", [
    (Invited("dt1-abc"), "invite: dt1-abc"),
    (TranscriptOpened(Path("/t/a.dtt")), "transcript: /t/a.dtt"),
    (Joined(1, "bob", 3), "joined: seat 1 bob"),
    (Started(4), "started"),
    (Chat(1, "good roll", 9), "chat: seat 1: good roll"),
    (Dropped(2), "dropped: seat 2"),
    (Dropped(0, "lost the host; reconnecting"), "dropped: seat 0: lost the host; reconnecting"),
    (Returned(2), "returned: seat 2"),
    (Claimable(1, phrase(Seat(1), " did not move within 4 s")), "claimable: seat 1: seat 1 did not move within 4 s"),
    (CodeOffered("7-purple-sausages"), "code: 7-purple-sausages"),
    (CodeGone("burned", "someone tried a wrong code; the new code is 8-a-b"), "burned: someone tried a wrong code; the new code is 8-a-b"),
    (RematchAnswered(0, True, phrase(Seat(0, "ann"), " offers a rematch"), 12), "rematch: seat 0 (ann) offers a rematch"),
    (RematchGone(phrase("no rematch: ", Seat(1, "bob"), " left")), "rematch: no rematch: seat 1 (bob) left"),
    (Refused(2, phrase("bad reveal: ", Seat(2), ": no chain")), "refused: bad reveal: seat 2: no chain"),
    (Fault(None, phrase("the relay lied")), "fault: the relay lied"),
    (ClaimDisputed(0, phrase(Seat(0, "ann"), " claims this seat is in default: no")), "disputed: seat 0 (ann) claims this seat is in default: no"),
    (Unwitnessed(1, phrase(Seat(2, "cy"), "'s claim against ", Seat(1, "bob"), " stays pending, unwitnessed")),
     "unwitnessed: seat 2 (cy)'s claim against seat 1 (bob) stays pending, unwitnessed"),
    (Lingering(phrase("the game is over; the table stays open for ", Seat(1, "bob"), ", away")),
     "lingering: the game is over; the table stays open for seat 1 (bob), away"),
    (Ordering(1, phrase(Seat(1, "bob"), " orders the log now")), "ordering: seat 1 (bob) orders the log now"),
    (SeatHeld(1, b"k", phrase("ABCD holds ", Seat(1), " for its join")), "waiting: ABCD holds seat 1 for its join"),
    (SeatReleased(1, b"k", phrase("ABCD went silent: ", Seat(1), " is free again")), "released: ABCD went silent: seat 1 is free again"),
])
def test_each_event_a_person_follows_is_one_line(event, line):
    assert event_line(event) == line


@pytest.mark.parametrize("event", [YourTurn(0, 5), Ended(Result((0,), (1.0, 0.0), "Trice"), "ann (seat 0) wins (Trice)"),
                                   Failed("not seated at a table yet")])
def test_turns_the_result_and_errors_are_printed_elsewhere(event):
    assert event_line(event) is None
