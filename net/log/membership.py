"""The table's opening and its seats in the log: "open" and "join" (PROTOCOL.md §5.2), and in a room
that goes on without them, "leave" and "back" (§5.11).

`Membership` owns what the opening set (the game, its options, the number of seats, the opener's
key) and who sits where; it names seats for every other part's notes and refusals.

An open room (a free dice room) starts with the seats joined so far; its free seats count as out
(§5.11) and a newcomer's `join` takes one while the room runs. Its chain commits from the first
chance step not ordered yet, so it reveals for no roll ordered before it joined (FAIRNESS.md §1:
every contribution is fixed before any is seen)."""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.core.game import GameError, GameInfo, Result
from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.net.identity import fingerprint
from dicetable.net.log import wire
from dicetable.net.log.play import ChainTrack, Commitment
from dicetable.net.log.records import JOINING, NEW, OVER, PLAYING, READY, Effect
from dicetable.net.refusals import BadJoin, BadOpen, BadSignature, NotDue, NotSeated, SeatTaken


@dataclass(frozen=True)
class SeatInfo:
    seat: int
    name: str
    key: bytes
    curve: bytes | None
    fingerprint: str


class Membership:
    FIELDS = ("game", "options", "seat_count", "seats", "opener")  # what an Effect may set here

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.game: GameInfo | None = None
        self.options: dict = {}
        self.seat_count = 0
        self.seats: tuple[SeatInfo | None, ...] = ()
        self.opener = b""  # the Ed25519 key that signed the table's opening

    # -- views ---------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name if s else f"seat {i}" for i, s in enumerate(self.seats))

    def seat_of(self, key: bytes) -> int | None:
        for info in self.seats:
            if info is not None and info.key == key:
                return info.seat
        return None

    def who(self, seat: int) -> Seat:
        if 0 <= seat < len(self.seats) and self.seats[seat] is not None:
            return Seat(seat, self.seats[seat].name)
        return Seat(seat)

    def free_seats(self) -> tuple[int, ...]:
        """The seats a join may take now: any free one while joining; a free one an open room welcomes
        while it runs (its number caps the people the room takes, joins included)."""
        replica = self.replica
        free = tuple(s for s, info in enumerate(self.seats) if info is None)
        if replica.phase == JOINING:
            return free
        state = replica.play.state
        if replica.phase == PLAYING and state is not None:
            return tuple(s for s in free if state.welcomes_back(s))
        return ()

    @property
    def present(self) -> tuple[int, ...]:
        """The seats joined and not out: who is in the room now."""
        out = self.replica.play.out
        return tuple(s for s, info in enumerate(self.seats) if info is not None and s not in out)

    def first_event(self, seat: int) -> int | None:
        """The event the seat's first chain opens with its h[1]: 1, or for a newcomer to an open room the
        first step not ordered when it joined (its own copy of the chain learns it from the log)."""
        track = self.replica.play.chains[seat] if seat < len(self.replica.play.chains) else None
        return track.commitments[0].first if track is not None else None

    def comings_and_goings(self) -> dict[int, list[str]]:
        """Per seat that left a room: `left`, `came back`, in log order (verify's story of a room)."""
        went: dict[int, list[str]] = {}
        started = False
        for record in self.replica.log:
            started = started or record.kind == "start"
            if record.kind in ("leave", "back") or (started and record.kind == "join"):
                said = {"leave": "left", "back": "came back", "join": "joined"}[record.kind]
                went.setdefault(record.seat, []).append(said)
        return went

    # -- kinds ---------------------------------------------------------------------------------
    def open(self, env: wire.Envelope) -> Effect:
        replica, seat, body = self.replica, env.seat, env.body
        if replica.phase != NEW:
            raise NotDue(seat, "the table is already open")
        if seat != 0:
            raise BadOpen(seat, "only seat 0 (the host) opens a table")
        if not env.signed_by(body["key"]):
            raise BadSignature(seat, "the open is not signed by the host key it names")
        replica.check_seq(env)
        replica.check_link(env)
        try:
            game = replica.games(body["game"])
            game.check_seats(body["seats"])
            options = game.resolve_options(body["options"])
        except GameError as error:
            raise BadOpen(seat, str(error)) from None
        n = body["seats"]
        changes = {
            "table": env.table,
            "game": game,
            "options": options,
            "game_options": options,
            "consents": (None,) * n,
            "seat_count": n,
            "seats": (None,) * n,
            "chains": (None,) * n,
            "phase": JOINING,
            "opener": body["key"],
        }
        return Effect(changes, phrase(Seat(0), f" opens a {game.title} table for {n}"))

    def join(self, env: wire.Envelope) -> Effect:
        replica, seat, body = self.replica, env.seat, env.body
        late = replica.phase == PLAYING  # a newcomer to an open room
        if replica.phase != JOINING and not late:
            raise NotDue(seat, "the table is not taking players")
        if seat >= self.seat_count:
            raise NotSeated(seat, f"the table has seats 0 to {self.seat_count - 1}")
        if late and not self.free_seats():  # a game under way that takes nobody new: said before whose seat it is
            raise NotDue(seat, "the table is not taking players: its game has started")
        if self.seats[seat] is not None:
            raise SeatTaken(seat, f"seat {seat} is already taken by {self.seats[seat].name}")
        if late and seat not in self.free_seats():
            raise NotDue(seat, "the table is not taking players: its game has started")
        if not env.signed_by(body["key"]):
            raise BadSignature(seat, "the join is not signed by the key it names")
        replica.check_seq(env)
        replica.check_link(env)
        if seat == 0 and body["key"] != self.opener:
            raise BadJoin(seat, "seat 0 must join with the host key that opened the table")
        if self.seat_of(body["key"]) is not None:
            raise BadJoin(seat, f"the key already sits at seat {self.seat_of(body['key'])}")
        play = replica.play
        copied = play.anchor_owner(body["anchor"])
        if copied is not None:
            raise BadJoin(seat, f"its chain anchor is {self.who(copied)}'s: a copied chain (chains are bound to their seat)")
        info = SeatInfo(seat, body["name"], body["key"], body.get("curve"), fingerprint(body["key"]))
        seats = list(self.seats)
        seats[seat] = info
        chains = list(play.chains)
        # A newcomer's chain opens the first chance step not ordered yet: the rolls under way are decided
        # without it (their reveals were asked of the seats in when they were ordered).
        first = len(play.events) + play.state.chances_ordered() + 1 if late else 1
        chains[seat] = ChainTrack((Commitment(body["anchor"], body["length"], first),), 0, body["anchor"])
        if late:
            changes = {"seats": tuple(seats), "chains": tuple(chains), "out": play.out - {seat}}
            return Effect(changes, Phrase((f"{body['name']} joins the room at seat {seat} ({info.fingerprint}); "
                                           f"reveals from event {first}",)))
        phase = READY if all(seats) else JOINING
        changes = {"seats": tuple(seats), "chains": tuple(chains), "phase": phase}
        return Effect(changes, Phrase((f"{body['name']} joins at seat {seat} ({info.fingerprint})",)))  # the seat as a number: it is what it takes

    def leave(self, env: wire.Envelope) -> Effect:
        """A seat leaves a room that goes on without it (a free dice room): out of the game, its reveals
        count as zeros (§5.11). Not while the open event waits for its reveal: leaving then would let
        the last revealer choose between its value and zeros (FAIRNESS.md §4)."""
        replica, seat = self.replica, env.seat
        play = replica.play
        if replica.phase != PLAYING:
            raise NotDue(seat, "there is no room in play to leave")
        if seat in play.out:
            raise NotDue(seat, f"seat {seat} is already out of the room")
        if not play.state.welcomes_back(seat):
            raise NotDue(seat, "this table does not go on without a seat: resign instead")
        if play.pending is not None and play.pending.reveals[seat] is None:
            raise NotDue(seat, f"event {play.pending.number} waits for its reveal: reveal, then leave")
        out = play.out | {seat}
        if all(s in out for s, info in enumerate(self.seats) if info is not None):  # the last one out ends it
            ending = phrase(self.who(seat), " leaves last: the room is closed")
            result = Result((), (0.0,) * self.seat_count, phrase(Seat(seat), " left last: the room is closed"))
            return Effect({"out": out, "forced": result, "phase": OVER, "pending": None}, ending)
        return Effect({"out": out}, phrase(self.who(seat), " leaves the room; it goes on"))

    def back(self, env: wire.Envelope) -> Effect:
        """A seat out of a room comes back while the room is open: it reveals again from the next event."""
        replica, seat = self.replica, env.seat
        play = replica.play
        if replica.phase != PLAYING or seat not in play.out:
            raise NotDue(seat, f"seat {seat} is not out of a room in play")
        if not play.state.welcomes_back(seat):
            raise NotDue(seat, "this table takes no seat back")
        return Effect({"out": play.out - {seat}}, phrase(self.who(seat), " comes back to the room"))
