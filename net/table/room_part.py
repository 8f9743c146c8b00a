"""A seat in a room that goes on without it (a free dice room): its secret rolls, and leaving and
coming back (PROTOCOL.md §5.11, §16.6).

Secret rolls. `roll_secretly(expr)` draws a fresh secret from `secrets`, writes it to the seat file
(0600) before the signed move that commits to it goes out, and keeps it to open the roll: on the
person's word (`unveil`), as the seat leaves, and as the room closes (a closing room waits for its
sealed rolls: core/diceroom.py). `peek(roll)` gives this seat its own sealed roll's dice now, from the
same secret and the decided event's seed, exactly as every seat will draw them at the opening.

Leaving and coming back. `leave()` opens this seat's sealed rolls, then signs `leave` once the open
event no longer waits for its reveal. A seat out of a room that takes it back (resumed from its
transcript, or back from a drop that a claim turned into a default) signs `back` by itself.
"""

from __future__ import annotations

from dicetable.core.game import Move
from dicetable.net.chance import secret_roll
from dicetable.net.log import wire
from dicetable.net.table.events import Failed
from dicetable.net.table.seat_part import SeatPart


class RoomPart(SeatPart):
    def __init__(self, seat) -> None:
        self.own = seat
        self.secrets: dict[str, bytes] = {}  # commitment (hex) -> this seat's secret
        self.leaving = False
        self.left = False  # this run left the room: it does not come back by itself
        self.opening_all = False  # the person asked to open every sealed roll of theirs

    # -- the seat file -------------------------------------------------------------------------------
    def seat_data(self) -> dict:
        return {"secret_rolls": dict(self.secrets)} if self.secrets else {}

    def restore(self, data: dict) -> None:
        self.secrets = {str(k): bytes(v) for k, v in data.get("secret_rolls", {}).items()}

    # -- commands from the app ------------------------------------------------------------------------
    def roll_secretly(self, expr: str) -> None:
        secret = secret_roll.fresh_secret()
        commit = secret_roll.commitment(self.replica.table, self.seat, secret).hex()
        self.secrets[commit] = secret
        self.own.transcript.save_secrets()  # on disk before the move that commits to it (FAIRNESS.md §6)
        self.own.play(Move("secret", (str(expr), commit)))

    def unveil(self, _=None) -> None:
        self.opening_all = True

    def leave(self, _=None) -> None:
        replica = self.replica
        if replica.phase != "playing" or self.seat in replica.out or not replica.state.welcomes_back(self.seat):
            self.own.emit(Failed("there is no room in play to leave"))
            return
        self.leaving = True

    # -- what the seat does by itself -----------------------------------------------------------------
    def owed(self) -> list[tuple[int, bytes, tuple[int, ...]]]:
        """(event, secret, values) of each sealed roll this seat holds the secret of."""
        replica, found = self.replica, []
        rolls = replica.state.rolls if replica.game.name == "diceroom" and replica.state is not None else ()
        first = len(replica.events) - len(rolls) + 1
        for n, roll in enumerate(rolls):
            secret = self.secrets.get(roll.secret) if roll.sealed else None
            if secret is not None:
                k = first + n
                found.append((k, secret, secret_roll.values(roll.expr, replica.events[k - 1].seed, secret)))
        return found

    def peek(self, k: int) -> tuple[int, ...] | None:
        """The values of this seat's own sealed roll decided at event k, for its eyes now."""
        return next((values for event, _, values in self.owed() if event == k), None)

    def act(self) -> bool:
        """Open, leave or come back when due; True if a frame went out (one at a time, as every act)."""
        replica = self.replica
        if self.own.unordered or replica is None or replica.state is None:
            return False
        if replica.phase != "playing" or replica.game.name != "diceroom":
            return False  # the other games have no secret rolls and no seat that leaves or comes back
        if self.left and self.seat in replica.out:
            self.own.stopped = True  # my leave is in the log: this seat is gone (a Resume starts a new session)
            return True
        if self.opening_all or self.leaving or replica.state.closing:  # the room's end opens them too
            owed = self.owed()
            if owed:
                k, secret, values = owed[0]
                self.own.author("unveil", wire.unveil_body(k, secret, values))
                return True
            self.opening_all = False
        if self.leaving:
            pending = replica.pending
            if pending is not None and pending.reveals[self.seat] is None:
                return False  # my reveal first (FAIRNESS.md §4): the seat sends it
            self.leaving, self.left = False, True
            self.own.author("leave", {})
            return True
        if self.seat in replica.out and not self.left and replica.state.welcomes_back(self.seat):
            self.own.author("back", {})
            return True
        return False
