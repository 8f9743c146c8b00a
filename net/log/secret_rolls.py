"""Secret rolls in the log: "unveil", the opening of a sealed roll (PROTOCOL.md §16.6).

A dice room's `secret EXPR COMMITMENT` move is an ordinary fair event whose dice are drawn from the
event's seed and the roller's secret (net/chance/secret_roll.py), so the state records the roll sealed.
`unveil` {k, secret, values} opens the roll event k decided: whoever holds the secret (its roller,
or the seat it was shown to) may send it, in play or once the room is over; every replica checks the
secret against the roll's commitment and the values against the draws they give, then the state
shows the dice. A roll never opened stays sealed, and verify says so.

A `secret` move may carry `to: [seat, box]` (§16.6 step 7): the roll shown now to one other seat, the
game master, its secret boxed to that seat's key (net/table/answer_path.py). Only that seat can open
the box, so the log checks what it can — a seated seat other than the roller, on a secret roll — and
records `shown`: commitment -> (roller, seat, box); the game master's client checks the box against
the commitment (net/table/room_part.py)."""

from __future__ import annotations

from dicetable.core.game import GameError
from dicetable.core.phrase import phrase
from dicetable.net.chance import secret_roll
from dicetable.net.log import wire
from dicetable.net.log.records import OVER, PLAYING, Effect
from dicetable.net.refusals import BadUnveil, IllegalMoveRefused, NotDue


class SecretRolls:
    FIELDS = ("shown",)  # what an Effect may set here (the opening sets the game's state, play.py's)

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.shown: dict[str, tuple[int, int, bytes]] = {}  # commitment hex -> (roller, shown to, box)

    def shown_by(self, env: wire.Envelope, move) -> dict:
        """The changes a `move` frame's `to` field makes (none without one); IllegalMoveRefused unless it
        shows a secret roll to another seated seat."""
        if "to" not in env.body:
            return {}
        replica, seat, (to, box) = self.replica, env.seat, env.body["to"]
        if move.kind != "secret" or len(move.args) != 2:
            raise IllegalMoveRefused(seat, f"only a secret roll is shown to one seat, not {move}")
        if to == seat or to >= len(replica.seats) or replica.seats[to] is None:
            raise IllegalMoveRefused(seat, f"a secret roll is shown to another seated seat, not seat {to}")
        commit = str(move.args[1])
        if commit in self.shown:
            raise IllegalMoveRefused(seat, "this secret roll's commitment was shown before")
        return {"shown": {**self.shown, commit: (seat, to, box)}}

    def roll_of(self, k: int):
        """(index in the room's rolls, the Roll) that event k decided in the current game, or None."""
        replica = self.replica
        rolls = replica.state.rolls if replica.game is not None and replica.game.name == "diceroom" and replica.state else ()
        index = k - (len(replica.events) - len(rolls)) - 1
        return (index, rolls[index]) if 0 <= index < len(rolls) else None

    def unveil(self, env: wire.Envelope) -> Effect:
        replica, seat, body = self.replica, env.seat, env.body
        if replica.phase not in (PLAYING, OVER) or replica.state is None:
            raise NotDue(seat, "there is no room whose rolls could be opened")
        k, secret = body["k"], body["secret"]
        found = self.roll_of(k)
        if found is None or not found[1].secret:
            raise BadUnveil(seat, f"event {k} decided no secret roll of this room")
        index, roll = found
        if not roll.sealed:
            raise NotDue(seat, f"the secret roll of event {k} is already open")
        if secret_roll.commitment(replica.table, roll.seat, secret).hex() != roll.secret:
            raise BadUnveil(seat, f"the secret does not open the commitment {replica.who(roll.seat)} signed for event {k}")
        drawn = secret_roll.values(roll.expr, replica.events[k - 1].seed, secret)
        if tuple(body["values"]) != drawn:
            raise BadUnveil(seat, f"the dice given for event {k} are not the ones its seed and secret draw")
        try:
            state = replica.state.unveil(index, drawn)
        except GameError as error:
            raise BadUnveil(seat, str(error)) from None
        opened = state.rolls[index]
        return Effect({"state": state}, phrase(replica.who(seat), f" opens the secret roll of event {k}: "
                                               f"{replica.names[roll.seat]} rolled {roll.expr}: {opened.describe()}"))
