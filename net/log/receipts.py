"""End receipts in the log: each seat's signed confirmation of the log that holds a game's end
(FAIRNESS.md §3b, PROTOCOL.md §5.13).

A signed frame commits to the log before it (its `prev`), never to what comes after: the holder of a
copy can cut it after the other seats' last signed frames and write its own ending. So when a game is
over every seat signs a **receipt**: a frame whose signed parent `[n, head(n)]` holds the end. What a
seat *vouches for* is the most of the log any of its signed frames builds on: its largest `prev`, or
one entry more for a frame signed on top of the whole log before it (`prev` = its own index, so its
place is fixed too). Unsigned reveals vouch for nothing: their place in the log is authenticated by
their author's next signed frame or its receipt (PROTOCOL.md §4.1).

A copy's *content* ends at its last entry that is not a receipt, a chat or a consent to a rematch;
the copy is confirmed by a seat that vouches for all of it. `Receipts` owns the per-seat vouching and
the index of the record that ended the current game."""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.core.phrase import phrase
from dicetable.net.log import wire
from dicetable.net.log.records import OVER, Effect
from dicetable.net.refusals import NotDue

# Entries that change nothing a receipt must confirm: a rewritten chat or receipt decides no game, nor
# does a consent to a rematch (the game it starts is confirmed by that game's own frames); a decline is
# content (it ends the table).
IDLE_KINDS = frozenset({"receipt", "chat"})


def idle(env: wire.Envelope) -> bool:
    return env.kind in IDLE_KINDS or (env.kind == "rematch" and env.body["agree"])


@dataclass(frozen=True)
class Confirmation:
    """How far each seat vouches for a copy: `content` entries matter (the last one neither a
    receipt nor a chat); `vouched[s]` is how many of the first entries seat s signed on top of."""

    content: int
    vouched: tuple[int, ...]

    def unconfirmed_by(self) -> tuple[int, ...]:
        return tuple(s for s, n in enumerate(self.vouched) if n < self.content)

    @property
    def confirmed(self) -> bool:
        return not self.unconfirmed_by()


class Receipts:
    FIELDS = ("vouched", "ended_at")  # what an Effect may set here (accept sets both for every frame)

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.vouched: tuple[int, ...] = (0,) * wire.MAX_SEATS
        self.ended_at: int | None = None  # log index of the record that ended the current game

    def after(self, env: wire.Envelope, index: int, was: str) -> dict:
        """What an accepted frame at log position `index` changes here (the replica's phase was `was`)."""
        changes = {}
        if env.signature:
            reach = index + 1 if env.prev.entries == index else env.prev.entries
            if reach > self.vouched[env.seat]:
                vouched = list(self.vouched)
                vouched[env.seat] = reach
                changes["vouched"] = tuple(vouched)
        if was != OVER and self.replica.phase == OVER:
            changes["ended_at"] = index
        return changes

    def content_before(self, entries: int) -> int:
        """The content among the log's first `entries` entries: up to the last that is neither a
        receipt nor a chat."""
        log = self.replica.log
        while entries > 0 and idle(log[entries - 1].envelope):
            entries -= 1
        return entries

    def confirmation(self) -> Confirmation:
        replica = self.replica
        content = self.content_before(len(replica.log))
        seats = replica.seats  # a seat nobody took (an open room's free seat) has nothing to confirm
        return Confirmation(content, tuple(v if seats[s] is not None else content
                                           for s, v in enumerate(self.vouched[: replica.seat_count])))

    def owed_by(self, seat: int) -> bool:
        """The game is over and `seat`'s signed frames do not yet vouch for all of the log's content:
        its receipt is due (the one test every author makes before signing one)."""
        replica = self.replica
        return (replica.phase == OVER and self.ended_at is not None and replica.seats[seat] is not None  # a free seat owes none
                and self.vouched[seat] < self.content_before(len(replica.log)))

    def receipt(self, env: wire.Envelope) -> Effect:
        """A seat's signed receipt of the log that holds the current game's end (PROTOCOL.md §5.13)."""
        replica, seat = self.replica, env.seat
        if replica.phase != OVER or self.ended_at is None:
            raise NotDue(seat, "a receipt confirms a game's end: the game is not over")
        if env.body["game"] != replica.game_number:
            raise NotDue(seat, f"a receipt of game {env.body['game']}, but the game that ended is game {replica.game_number}")
        if env.prev.entries <= self.ended_at:
            raise NotDue(seat, f"a receipt must build on the log that holds the game's end (entry {self.ended_at + 1})")
        if self.content_before(env.prev.entries) <= self.vouched[seat]:
            raise NotDue(seat, f"{replica.who(seat)} has confirmed this log already: a receipt confirms something new")
        return Effect({}, phrase(replica.who(seat), f" confirms the log's first {env.prev.entries} entries"))
