"""A seat in a room that goes on without it (a free dice room): its secret rolls, and leaving and
coming back (PROTOCOL.md §5.11, §16.6).

Secret rolls. `roll_secretly(expr)` draws a fresh secret from `secrets`, writes it to the seat file
(0600) before the signed move that commits to it goes out, and keeps it to open the roll: on the
person's word (`unveil`), as the seat leaves, and as the room closes (a closing room waits for its
sealed rolls: core/diceroom.py). `peek(roll)` gives this seat its own sealed roll's dice now, from the
same secret and the decided event's seed, exactly as every seat will draw them at the opening.

Shown to the game master (§16.6 step 7). `roll_secretly(expr, to)` also boxes the secret to seat
`to`'s key (the seat-to-seat box of net/table/answer_path.py) in the move's `to` field. The seat it is
shown to opens the box as the move lands (`check_shown`), checks the secret against the roll's
commitment and keeps it (`shown_secrets`); `peek` then gives it the dice as it gives them to the
roller. A box that does not open, or whose secret is not the roll's, is reported once as a fault;
the later opening is checked by every replica as any other.

Leaving and coming back. `leave()` opens this seat's sealed rolls, then signs `leave` once the open
event no longer waits for its reveal. A seat out of a room that takes it back (resumed from its
transcript, or back from a drop that a claim turned into a default) signs `back` by itself.
"""

from __future__ import annotations

import time

from dicetable.core.dice_expr import parse
from dicetable.core.game import Move
from dicetable.net.chance import secret_roll
from dicetable.net.log import wire
from dicetable.net.table.answer_path import open_box, seal
from dicetable.net.table.events import Failed, SecretShown
from dicetable.net.table.seat_part import SeatPart


class RoomPart(SeatPart):
    def __init__(self, seat) -> None:
        self.own = seat
        self.secrets: dict[str, bytes] = {}  # commitment (hex) -> this seat's secret
        self.leaving = False
        self.left = False  # this run left the room: it does not come back by itself
        self.left_at: float | None = None  # when this run's leave was in the log
        self.opening_all = False  # the person asked to open every sealed roll of theirs
        self.shown_secrets: dict[str, bytes] = {}  # commitment (hex) -> a secret shown to this seat, checked
        self.shown_checked: set[str] = set()  # the commitments shown to this seat whose box was tried
        self.shown_said: set[int] = set()  # the events of the rolls shown to this seat it was told the dice of
        self.show_to: str | None = None  # a chooser's secret rolls are shown to the seat of this name (`roll --to`)

    # -- the seat file -------------------------------------------------------------------------------
    def seat_data(self) -> dict:
        return {"secret_rolls": dict(self.secrets)} if self.secrets else {}

    def restore(self, data: dict) -> None:
        self.secrets = {str(k): bytes(v) for k, v in data.get("secret_rolls", {}).items()}

    # -- commands from the app ------------------------------------------------------------------------
    def roll_secretly(self, expr: str, to: int | None = None) -> None:
        """A secret roll; with `to`, shown now to that seat (the game master) and to nobody else."""
        replica, box = self.replica, None
        if to is not None:
            info = replica.seats[to] if type(to) is int and 0 <= to < len(replica.seats) else None
            box = self.own.held.box(info.key) if info is not None and to != self.seat else None
            if box is None:
                self.own.emit(Failed(f"a secret roll is shown to another seat of this room, not {to}"))
                return
        secret = secret_roll.fresh_secret()
        commit = secret_roll.commitment(replica.table, self.seat, secret).hex()
        self.secrets[commit] = secret
        self.own.transcript.save_secrets()  # on disk before the move that commits to it (FAIRNESS.md §6)
        move = Move("secret", (str(expr), commit))
        if box is None:
            self.own.play(move)
        else:  # a free dice room: no payment, no sealed step, so the move goes out as play() would send it
            self.own.author("move", wire.move_body(move, (to, seal(box, replica.table, self.seat, to, secret))))

    def chooser_roll(self, expr: str) -> None:
        """A chooser's `secret EXPR` (`dicetable roll --secret [--to NAME]`): shown to the seat called
        `show_to` if one is; a name nobody in the room has is said, and the roll stays secret from all."""
        names = self.replica.names
        to = next((s for s, n in enumerate(names) if self.show_to is not None and n.casefold() == self.show_to.casefold()
                   and s != self.seat), None)
        if self.show_to is not None and to is None:
            self.own.emit(Failed(f"nobody else called {self.show_to} is in this room: the roll is shown to nobody"))
        self.roll_secretly(expr, to)

    def check_shown(self) -> None:
        """Open the boxes of the secret rolls shown to this seat since the last look (§16.6 step 7)."""
        replica = self.replica
        for commit, (roller, to, sealed) in list(replica.shown.items()):
            if to != self.seat or commit in self.shown_checked:
                continue
            self.shown_checked.add(commit)
            info = replica.seats[roller]
            box = self.own.held.box(info.key) if info is not None else None
            secret = open_box(box, replica.table, roller, to, sealed) if box is not None else None
            if secret is None or len(secret) != secret_roll.SECRET_BYTES:
                self.own.fault(roller, f"{replica.who(roller)} showed you a secret roll in a box that does not open")
            elif secret_roll.commitment(replica.table, roller, secret).hex() != commit:
                self.own.fault(roller, f"{replica.who(roller)} showed you a secret that is not the roll's commitment")
            else:
                self.shown_secrets[commit] = secret
        for k, _, values in self.shown_to_me() if self.shown_secrets else ():
            if k not in self.shown_said:  # decided: said once, for this seat's eyes (the CLI prints it)
                self.shown_said.add(k)
                roll = self.replica.state.rolls[k - (len(replica.events) - len(replica.state.rolls)) - 1]
                expr = parse(roll.expr)
                self.own.emit(SecretShown(roll.seat, f"only you and {replica.names[roll.seat]} see it: "
                                                     f"{replica.names[roll.seat]} rolled {roll.expr}: "
                                                     f"{expr.describe(expr.faces(values))}"))

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
        return self.sealed_rolls(self.secrets)

    def sealed_rolls(self, secrets: dict[str, bytes]) -> list[tuple[int, bytes, tuple[int, ...]]]:
        """(event, secret, values) of each sealed roll whose secret is in `secrets` (commitment -> s)."""
        replica, found = self.replica, []
        rolls = replica.state.rolls if replica.game.name == "diceroom" and replica.state is not None else ()
        first = len(replica.events) - len(rolls) + 1
        for n, roll in enumerate(rolls):
            secret = secrets.get(roll.secret) if roll.sealed else None
            if secret is not None:
                k = first + n
                found.append((k, secret, secret_roll.values(roll.expr, replica.events[k - 1].seed, secret)))
        return found

    def peek(self, k: int) -> tuple[int, ...] | None:
        """The values of the sealed roll decided at event k, for this seat's eyes now: its own, or one
        shown to it."""
        return next((values for event, _, values in self.owed() + self.shown_to_me() if event == k), None)

    def shown_to_me(self) -> list[tuple[int, bytes, tuple[int, ...]]]:
        """(event, secret, values) of each sealed roll another seat showed this seat (checked)."""
        return [(k, secret, values) for k, secret, values in self.sealed_rolls(self.shown_secrets)]

    def act(self) -> bool:
        """Open, leave or come back when due; True if a frame went out (one at a time, as every act)."""
        replica = self.replica
        if self.own.unordered or replica is None or replica.state is None:
            return False
        if replica.phase != "playing" or replica.game.name != "diceroom":
            return False  # the other games have no secret rolls and no seat that leaves or comes back
        if self.left and self.seat in replica.out:
            if self.left_at is None:
                self.left_at = time.monotonic()
            # my leave is in the log: this seat is gone (a Resume starts a new session); an orderer first
            # lets the others hold it (or a heartbeat's few turns pass), so the next orderer's copy has it (§11)
            if self.own.driver.delivered() or time.monotonic() - self.left_at > 4 * self.own.timing.heartbeat + 1.0:
                self.own.stopped = True
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
