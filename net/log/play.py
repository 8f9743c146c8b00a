"""The game in the log: "start", "move", "reveal" and its events, "anchor", "chat", "resign" and the
"deal" records that resolve hidden-card steps (PROTOCOL.md §5.3–§5.6, §5.9, §5.11, §5.12, §6).

`Play` owns the game's state, its random events, the seats' reveal chains, the seats out of the game
and the step and move counters; the other parts move the game on through `after` and `decide`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dicetable.core.game import CHANCE, GameError, Move, Result
from dicetable.core.phrase import Phrase, Seat, listing, phrase
from dicetable.net.cards.table_deals import paid_cards
from dicetable.net.chance import outcomes
from dicetable.net.chance import reveal_chain as hashchain
from dicetable.net.log import wire
from dicetable.net.log.records import JOINING, OVER, PLAYING, READY, Effect, Event
from dicetable.net.log.sealing import Sealing
from dicetable.net.refusals import BadAnchor, BadOpen, BadReveal, DealRefused, IllegalMoveRefused, NotDue


@dataclass(frozen=True)
class Commitment:
    """A chain a seat committed to: its value h[j] opens table event first + j - 1."""

    anchor: bytes
    length: int
    first: int

    @property
    def last(self) -> int:
        return self.first + self.length - 1


@dataclass(frozen=True)
class ChainTrack:
    """A seat's chains and the last value it opened (the anchor before its first reveal)."""

    commitments: tuple[Commitment, ...]
    last_event: int = 0
    last_value: bytes = b""

    def covering(self, event: int) -> Commitment | None:
        for c in self.commitments:
            if c.first <= event <= c.last:
                return c
        return None

    @property
    def end(self) -> int:
        return self.commitments[-1].last


class Play:
    FIELDS = ("state", "events", "pending", "forced", "moves", "steps", "out", "chains")  # what an Effect may set here

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.state: Any = None
        self.events: tuple[Event, ...] = ()
        self.pending: Event | None = None
        self.forced: Result | None = None  # a result by resignation or default claim
        self.moves = 0
        self.steps = 0  # state changes so far (moves and resolved chance steps): one key per thing awaited
        self.out: frozenset[int] = frozenset()  # seats out of the game after a default (FAIRNESS.md §4)
        self.chains: tuple[ChainTrack | None, ...] = ()

    # -- kinds ---------------------------------------------------------------------------------
    def start(self, env: wire.Envelope) -> Effect:
        replica = self.replica
        if env.seat != 0:
            raise NotDue(env.seat, "only the host (seat 0) starts the game")
        if replica.phase not in (READY, JOINING):
            if replica.phase == OVER:
                raise NotDue(env.seat, "a next game starts only once every seat has agreed to a rematch")
            raise NotDue(env.seat, "the game has already started")
        try:
            state = replica.game.new(replica.seat_count, replica.game_options)
        except GameError as error:
            raise BadOpen(env.seat, str(error)) from None
        free = frozenset(s for s, info in enumerate(replica.seats) if info is None)
        if free and not all(state.welcomes_back(s) for s in free):  # only an open room starts with seats free
            raise NotDue(env.seat, f"cannot start: {replica.waiting_for}")
        changes = {"phase": PLAYING, "game_start": len(replica.log), "out": free, **self.after(state, self.events, free)}
        return Effect(changes, phrase(Seat(0), " starts the game"))

    def move(self, env: wire.Envelope) -> Effect:
        replica, seat = self.replica, env.seat
        if replica.phase != PLAYING:
            raise NotDue(seat, "no move is due: " + ("the game is over" if replica.phase == OVER else "the game has not started"))
        if replica.sealing is not None:
            raise NotDue(seat, f"the answers to step {replica.sealing.step} are sealed: a seal, then its opening, not a move")
        if seat in self.out or not self.state.may_act(seat):
            if seat in self.out:
                raise NotDue(seat, f"seat {seat} is out of the game")
            if self.pending is not None:
                raise NotDue(seat, f"a move while event {self.pending.number} waits for reveals")
            if self.state.actor == CHANCE:
                raise NotDue(seat, "a move while the table waits for the card deal")
            if self.state.actor is not None and self.state.actor >= 0:
                raise NotDue(seat, f"it is seat {self.state.actor}'s turn, not seat {seat}'s")
            raise NotDue(seat, f"seat {seat} may not move now")
        try:
            move = Move.from_data(env.body["move"])
            # A game with hidden hands is checked by apply against this peer's view: a peer cannot
            # list another seat's payments from unknown handles (net/cards/table_deals.py).
            cards = paid_cards(self.state, move)
            if cards is None and move not in self.state.legal_moves():
                raise GameError(f"{move} is not a legal move now")
            state = self.state.apply_as(seat, move)
        except GameError as error:
            raise IllegalMoveRefused(seat, str(error)) from None
        shown = replica.secret_rolls.shown_by(env, move)  # a secret roll shown to one seat (§16.6 step 7)
        if self.pending is not None and (state.actor != CHANCE or state.chance() != self.pending.chance):
            # A move made while an event collects reveals may not change what that event decides.
            raise IllegalMoveRefused(seat, f"{move} would change event {self.pending.number}, still being decided")
        if cards:
            pay = replica.deal_handler.pay if replica.deal_handler is not None else None
            if pay is None:
                raise DealRefused(seat, f"{move} pays hidden cards at a table without a card deal")
            pay(seat, cards)  # DealRefused unless every card was shown from seat's hand; then marks them paid
        note = replica.game.describe(self.state, move)
        if self.state.actor != seat:  # one of several seats that may move: the log names the mover
            note = phrase(replica.who(seat), " ", note)
        if self.pending is not None:  # queued behind the open event (the state said so): it stays open
            return Effect({"moves": self.moves + 1, "state": state, **shown}, note, move)
        changes = {"moves": self.moves + 1, **self.after(state, self.events), **shown}
        return Effect(changes, note, move)

    def reveal(self, env: wire.Envelope) -> Effect:
        seat, k, value = env.seat, env.body["k"], env.body["value"]
        pending = self.pending
        if pending is None:
            raise NotDue(seat, "a reveal when no random event is open")
        if k != pending.number:
            raise BadReveal(seat, f"a reveal for event {k} while event {pending.number} is open")
        if pending.reveals[seat] is not None:
            raise NotDue(seat, f"seat {seat} has already revealed for event {k}")
        track = self.chains[seat]
        commitment = track.covering(k)
        if commitment is None:
            raise BadReveal(seat, f"no committed chain of seat {seat} covers event {k} (chain ran out)")
        # The value for the last event this chain was opened at: a seat out of the game for some events
        # (its reveals counted as zeros) opens across them on its return (PROTOCOL.md §5.4).
        since = max(track.last_event, commitment.first - 1)
        previous = commitment.anchor if since < commitment.first else track.last_value
        if not hashchain.opens(self.replica.table, seat, previous, value, k - since):
            raise BadReveal(seat, f"the value for event {k} does not open seat {seat}'s committed chain")
        chains = list(self.chains)
        chains[seat] = replace(track, last_event=k, last_value=value)
        reveals = list(pending.reveals)
        reveals[seat] = value
        event = replace(pending, reveals=tuple(reveals))
        changes: dict = {"chains": tuple(chains), "pending": event}
        note = phrase(self.replica.who(seat), f" reveals for event {k} (", pending.label, ")")
        if event.missing:
            return Effect(changes, note)
        decided, event = self.decide(event)
        changes.update(decided)
        return Effect(changes, phrase(note, f"; event {k} decided"), event=event)

    def anchor(self, env: wire.Envelope) -> Effect:
        replica, seat, body = self.replica, env.seat, env.body
        if replica.phase == OVER:
            raise NotDue(seat, "the game is over")
        track = self.chains[seat]
        if body["first"] != track.end + 1:
            raise BadAnchor(seat, f"a new chain must take over at event {track.end + 1}, not {body['first']}")
        started = self.pending.number if self.pending is not None else len(self.events)
        if body["first"] <= started:
            raise BadAnchor(seat, f"event {body['first']} has already begun: anchors are committed in advance")
        copied = self.anchor_owner(body["anchor"])
        if copied is not None:
            raise BadAnchor(seat, f"the anchor is one {replica.who(copied)} already committed to: a copied chain")
        chains = list(self.chains)
        commitment = Commitment(body["anchor"], body["length"], body["first"])
        chains[seat] = replace(track, commitments=track.commitments + (commitment,))
        note = phrase(replica.who(seat), f" commits a fresh chain for events {commitment.first}..{commitment.last}")
        return Effect({"chains": tuple(chains)}, note)

    def chat(self, env: wire.Envelope) -> Effect:
        return Effect({}, phrase(self.replica.who(env.seat), f" says: {env.body['text']}"))

    def resign(self, env: wire.Envelope) -> Effect:
        if self.replica.phase != PLAYING:
            raise NotDue(env.seat, "there is no game in progress to resign")
        result = self.ending(set(self.out) | {env.seat}, phrase(Seat(env.seat), " resigned"))
        return Effect({"forced": result, "phase": OVER, "pending": None}, phrase(self.replica.who(env.seat), " resigns"))

    def deal(self, env: wire.Envelope) -> Effect:
        replica = self.replica
        if replica.deal_handler is None:
            raise DealRefused(env.seat, "this table has no card deal")
        if replica.phase not in (READY, PLAYING, OVER):  # over: the end-of-game opening of keys
            raise NotDue(env.seat, "a deal message before every seat has joined")
        outcome = replica.deal_handler.accept(replica, env)
        note = phrase(replica.who(env.seat), f": deal step {env.body.get('step', '')}".rstrip())
        if outcome is None:
            return Effect({}, note)
        if self.state is None or self.state.actor != CHANCE or not self.state.chance().hidden:
            raise DealRefused(env.seat, "a deal outcome when no hidden-card step is due")
        try:
            state = self.state.resolve(outcome)
        except GameError as error:
            raise DealRefused(env.seat, f"the deal's outcome does not fit: {error}") from None
        return Effect(self.after(state, self.events), note)

    # -- moving the game on ----------------------------------------------------------------------
    def after(self, state: Any, events: tuple[Event, ...], out: frozenset[int] | None = None) -> dict:
        """Phase and pending event for a new game state (a chance step opens the next event).

        A seat out of the game after a default never acts again: where it would, the state's
        `without(seat)` skips it; where it cannot (None), the game ends scored as it stands.
        """
        seat_count = self.replica.seat_count
        out = self.out if out is None else out
        changes: dict = {"pending": None, "steps": self.steps + 1, "sealing": None}
        while out and state.result is None and state.actor is not None and state.actor in out:
            skipped = state.without(state.actor)
            if skipped is None:
                ending = next((c for c in reversed(self.replica.claims) if c.state == "out"), None)  # the default that led here
                changes.update({"forced": self.as_it_stands(state, out), "phase": OVER, "ending": ending})
                break
            state = skipped
        changes["state"] = state
        if changes.get("phase") == OVER:
            pass
        elif state.result is not None or state.actor is None:
            changes["phase"] = OVER
        elif state.actor == CHANCE:
            chance = state.chance()
            if not chance.hidden:  # a hidden-card step is resolved by the deal handler instead
                number = len(events) + 1  # a seat whose chain starts later joined after this step was ordered (§5.2)
                reveals = tuple(b"" if s in out or self.chains[s].commitments[0].first > number else None
                                for s in range(seat_count))
                changes["pending"] = Event(number, chance.label, chance, reveals)
        elif order := state.sealed():
            none = (None,) * seat_count
            asked = tuple(s for s in order if s not in out)
            changes["sealing"] = Sealing(changes["steps"], order, asked, none, none)
        return changes

    def decide(self, event: Event, out: frozenset[int] | None = None) -> tuple[dict, Event]:
        """Every reveal of `event` is in: derive its outcome and resolve the state (FAIRNESS.md §1).

        A seat out of the game contributes 32 zero bytes in its place in the seed.
        """
        seed = outcomes.event_seed(self.replica.table, event.number, tuple(r or bytes(32) for r in event.reveals))
        outcome = outcomes.draw(event.chance, seed)
        event = replace(event, seed=seed, outcome=outcome)
        state = self.state.resolve(outcome)  # a BadOutcome here is an engine bug, not a peer's
        events = self.events + (event,)
        return {"events": events, **self.after(state, events, out)}, event

    def ending(self, losers: set[int], reason: Phrase) -> Result:
        seat_count = self.replica.seat_count
        winners = tuple(s for s in range(seat_count) if s not in losers)
        scores = tuple((1.0 / len(winners) if s in winners else 0.0) for s in range(seat_count))
        return Result(winners, scores, reason)

    def as_it_stands(self, state: Any, out: frozenset[int]) -> Result:
        """The result of a game its rules cannot go on with: the game's own score, else the others share."""
        result = state.score_now()
        return result or self.ending(set(out), phrase(listing(Seat(s) for s in sorted(out)), " in default"))

    # -- the seats' reveal chains ----------------------------------------------------------------
    def anchor_owner(self, anchor: bytes) -> int | None:
        """The seat that already committed to a chain with this anchor, if any."""
        for seat, track in enumerate(self.chains):
            if track is not None and any(c.anchor == anchor for c in track.commitments):
                return seat
        return None

    def chain_left(self, seat: int) -> int:
        track = self.chains[seat] if seat < len(self.chains) else None
        return 0 if track is None else track.end - track.last_event
