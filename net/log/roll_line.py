"""A roll told in one line to someone outside the room, and that line checked against a transcript.

    Ann rolled 1d20+5 [attack]: attack: 17 [12] — table 3f2a9c1d, event 9, revealed by 3 seats

The line is words for people, made from the log alone (the event's label and outcome, in the names the
seats joined with), so anyone holding a copy of the table's transcript rebuilds it and compares:
`dicetable verify FILE --roll LINE` says whether that event of that table gave exactly that. The
short table id and the event number find the event; the rest must match word for word.
"""

from __future__ import annotations

import re

from dicetable.net.log.replica import Replica
from dicetable.net.log.verify import people

_WHERE = re.compile(r" — table ([0-9a-f]{8}), event (\d+), revealed by \d+ seats?$")


class RollLineError(ValueError):
    """A line that names no table and event, or one this transcript cannot stand for: one sentence."""


def roll_line(replica: Replica, number: int) -> str:
    """Event `number` of the table, decided, in one line (RollLineError when it is not decided)."""
    if not 1 <= number <= len(replica.events):
        raise RollLineError(f"the table has no decided event {number} (it has {len(replica.events)})")
    event = replica.events[number - 1]
    names = people(replica)
    said = replica.game.describe_outcome(None, event.chance, event.outcome).words(names)
    found = replica.secret_rolls.roll_of(number)
    if found is not None and found[1].secret:  # a secret roll: its dice once opened (PROTOCOL.md §16.6)
        said = found[1].describe()
    revealed = sum(1 for value in event.reveals if value)  # a seat out of the game counts as zeros
    return (f"{event.label.words(names)}: {said} — table {replica.table.hex()[:8]}, event {number}, "
            f"revealed by {revealed} seat{'s' if revealed != 1 else ''}")


def check(line: str, replica: Replica) -> str:
    """The line this transcript's replica gives for the event `line` names: equal to `line` when the
    roll is the table's. RollLineError when the line names another table or no event of this one."""
    found = _WHERE.search(line.strip())
    if found is None:
        raise RollLineError("a roll line ends with — table XXXXXXXX, event N, revealed by N seats "
                            "(copy the whole line)")
    if replica.table is None or replica.table.hex()[:8] != found.group(1):
        raise RollLineError(f"the line is about table {found.group(1)}, this transcript's is "
                            f"{replica.table.hex()[:8] if replica.table else 'unknown'}")
    return roll_line(replica, int(found.group(2)))
