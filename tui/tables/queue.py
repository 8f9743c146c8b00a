"""Play whoever is waiting: a queue per game among the tables announced nearby (this machine's lobby,
net/reach/same_machine.py, and the LAN's mDNS, net/reach/lan.py), with no server to keep it.

Someone who asks for a game waits at a table of their own: a two-seat table of that game (its
default options) announced with the queue mark (net/reach/announcement.py). Every app that asks
follows the same rule, so two people who ask at the same moment end at one table:

- a person who asks joins an open queue table of the game announced by someone else, the lowest
  host key first (everyone who looks picks the same one); if there is none, they host one and wait;
- while waiting with nobody seated yet, they leave their table for a queue table of the game whose
  host key is lower than theirs: of two who asked at once and each hosted, the lower key hosts and
  the other joins it (the lower never moves for a higher one, so the two never cross);
- a join that fails (the table filled first, or its host left) is not tried again: they look anew.

A queue table is an ordinary network table, opened and joined in tui/tables/opening.py; the join
checks the table's opening against the announced keys, as a join from the LAN list does.
"""

from __future__ import annotations

from typing import Callable, Iterable

from dicetable.net.reach.announcement import FORGED, Announcement, KnownHosts, assess
from dicetable.net.reach.local_networks import DiscoveryError

QUEUE_SEATS = 2  # a queue seats two people who asked for the same game


def partner(tables: Iterable[Announcement], game: str, me, hosting: bool, known: KnownHosts,
            skip: Iterable[bytes] = ()) -> tuple[Announcement, str] | None:
    """The queue table to join among `tables`, with its trust (net/reach/announcement.py `assess`):
    an open one of `game` hosted by another key, never a forged one nor a table in `skip`; while
    `hosting`, only one whose host key is lower than `me`'s. The lowest host key first."""
    skip = set(skip)
    found = []
    for ann in tables:
        if not (ann.queue and ann.open and ann.game == game and ann.addresses) or ann.table_id in skip:
            continue
        if ann.host_key == me.public_key or (hosting and ann.host_key > me.public_key):
            continue
        trust, _ = assess(ann, known, me)
        if trust != FORGED:
            found.append((ann, trust))
    return min(found, key=lambda pair: (pair[0].host_key, pair[0].table_id), default=None)


def seated(table) -> int:
    """The people seated at a network table so far (none before its first view)."""
    view = table.view()
    return 0 if view is None else sum(seat.kind != "free" for seat in view.seats)


class Queue:
    """One person's place in the queue of `game`: `step()` looks at the tables announced now
    (`tables()`) and hosts, joins or waits by the rule above. `table` is where they are (a NetTable,
    None before the first step); `failed` says why their own table could not open (the queue stops)."""

    def __init__(self, profile, game: str, where, tables: Callable[[], list[Announcement]], directory=None) -> None:
        self.profile, self.game, self.where, self.tables = profile, game, where, tables
        self.directory = directory  # the profile directory: its known hosts judge the announcements
        self.table = None
        self.joining: Announcement | None = None  # the queue table joined, while `table` is a seat there
        self.tried: set[bytes] = set()  # queue tables whose join failed: not tried again
        self.gave_way = None  # this person's own table, closed for a lower key's (they asked at once)
        self.failed = ""

    def step(self):
        """One look: the table to show when it changed (hosted or joined now), else None."""
        table = self.table
        if self.failed:
            return None
        if table is not None and table.role == "join":
            if not table.closed_reason:
                return None  # joining, or seated: the game starts when the host sees the table full
            self.tried.add(self.joining.table_id)  # full, or its host left: look again
            self.table = self.joining = None
        elif table is not None:
            if table.closed_reason:
                self.failed = table.closed_reason
                return None
            if seated(table) > 1:
                return None  # someone sat down: the game is starting
        hosting = self.table is not None
        try:
            found = partner(self.tables(), self.game, self.profile, hosting, KnownHosts(self.directory), self.tried)
        except DiscoveryError as error:  # a damaged known hosts file: joining strangers is not safe
            found = None
            if not hosting:
                self.failed = str(error)
                return None
        if found is None:
            return self._host() if not hosting else None
        if hosting:
            self.gave_way = self.table
            self.table.close()  # a lower key waits too: it hosts, this table gives way
        return self._join(*found)

    def _host(self):
        from dicetable.net.table.session import SessionError
        from dicetable.tui.tables.opening import host_table, hosting_seats

        try:
            self.table = host_table(self.profile, self.game, hosting_seats(self.game, QUEUE_SEATS), self.where)
        except (SessionError, DiscoveryError) as error:
            self.failed = str(error)
            return None
        return self.table

    def _join(self, ann: Announcement, trust: str):
        from dicetable.tui.tables.opening import announced_check, join_table

        check = announced_check(ann, trust, self.directory)
        self.table = join_table(self.profile, ann.invite().encode(), on_connected=check)
        self.joining = ann
        return self.table

    def cancel(self) -> None:
        if self.table is not None:
            self.table.close()
