"""Rematches in the log: each seat's signed "rematch" consent to the next game at the table, or its
refusal (PROTOCOL.md §5.10). The last consent starts the next game, with the options the last one's
end decides.

`Rematches` owns the table's series: the game being played, its options and first log entry, the
results of the games before it, and the seats' answers to the next game."""

from __future__ import annotations


from dicetable.core.game import GameError, Result
from dicetable.core.phrase import listing, phrase
from dicetable.net.log import wire
from dicetable.net.log.records import OVER, PLAYING, Effect
from dicetable.net.refusals import BadRematch, NotDue


class Rematches:
    FIELDS = ("game_number", "game_options", "game_start", "results", "consents", "declined")  # what an Effect may set here

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.game_number = 1  # the game being played at this table: 1, then one more per agreed rematch
        self.game_options: dict = {}  # the options the current game was made with
        self.game_start = 0  # log index of the record that started the current game
        self.results: tuple[Result, ...] = ()  # the results of the games before the current one
        self.consents: tuple[bool | None, ...] = ()  # per seat: agreed to the next game (None: not yet)
        self.declined: int | None = None  # the seat that declined a rematch: the table plays no more games

    @property
    def next_options(self) -> dict | None:
        """The options of the next game once this one is over: what its end decides (core/game.py's
        `rematch_options`: TRIAD keeps the colours and the other player starts), else the table's."""
        replica = self.replica
        if replica.phase != OVER or replica.state is None:
            return None
        following = replica.state.rematch_options()
        return replica.game.resolve_options(following) if following is not None else dict(replica.options)

    @property
    def series(self) -> tuple[Result, ...]:
        """Every game's result at this table so far, the current game's once it is over."""
        result = self.replica.result
        return self.results + ((result,) if result is not None else ())

    def rematch(self, env: wire.Envelope) -> Effect:
        """A seat's signed consent to the next game, or its refusal (PROTOCOL.md §5.10)."""
        replica, seat, body = self.replica, env.seat, env.body
        number = self.game_number + 1
        if replica.phase != OVER:
            raise NotDue(seat, "a rematch is agreed once the game is over")
        if self.declined is not None:
            raise NotDue(seat, f"{replica.who(self.declined)} declined a rematch: this table plays no more games")
        if replica.deal_owing():
            raise NotDue(seat, "a rematch once every deck of this game is opened")
        if replica.deal_handler is not None and replica.deal_handler.formed:
            raise BadRematch(seat, "a table with a card deal plays one game: open a new table")
        if body["game"] != number:
            raise BadRematch(seat, f"a consent to game {body['game']}, but the next game at this table is game {number}")
        if not body["agree"]:
            return Effect({"declined": seat}, phrase(replica.who(seat), " declines a rematch"))
        if self.consents[seat]:
            raise NotDue(seat, f"{replica.who(seat)} has already agreed to game {number}")
        following = self.next_options
        if body["options"] != following:
            wrong = ", ".join(f"{k}={body['options'].get(k)!r} (not {v!r})" for k, v in following.items()
                              if body["options"].get(k) != v) or "names options this game does not have"
            raise BadRematch(seat, f"game {number}'s options follow from game {self.game_number}'s end: {wrong}")
        consents = list(self.consents)
        consents[seat] = True
        if not all(consents):
            waiting = listing(replica.who(s) for s, agreed in enumerate(consents) if not agreed)
            return Effect({"consents": tuple(consents)},
                          phrase(replica.who(seat), f" offers a rematch (game {number}); waiting for ", waiting))
        try:
            state = replica.game.new(replica.seat_count, following)
        except GameError as error:
            raise BadRematch(seat, str(error)) from None
        changes = {  # every seat agreed: the next game starts here, with nobody out and no result yet
            "game_number": number, "game_options": following, "game_start": len(replica.log),
            "results": self.series, "consents": (None,) * replica.seat_count,
            "forced": None, "ending": None, "out": frozenset(), "phase": PLAYING,
            **replica.play.after(state, replica.events, frozenset()),
        }
        return Effect(changes, phrase(replica.who(seat), f" agrees to a rematch: game {number} starts"))
