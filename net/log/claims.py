"""Default claims in the log: "claim", "witness" and "dispute" (PROTOCOL.md §5.7, §7; who decides a
default: net/table/deadlines.py). A claim takes effect once a majority of the seats still in, the
accused excepted, have signed it; it lapses when the wait it was about ends first. No seat witnesses a
default that would end the game with it among the winners (`winners_by_default`): nobody wins by its
own witness (FAIRNESS.md §5b). A claim that no neutral seat is left to witness stands on its
claimant's word, as with 2 seats, and says so ("unwitnessed claim").

`DefaultClaims` owns every claim with its state, the accused seats' disputes and the claim whose
default ended the game."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dicetable.core.game import Move
from dicetable.core.phrase import Phrase, Seat, listing, phrase
from dicetable.net.log import wire
from dicetable.net.log.records import OVER, PLAYING, Effect
from dicetable.net.refusals import BadClaim, BadSignature, Equivocation, NotDue
from dicetable.net.table.deadlines import waiting_key


@dataclass(frozen=True)
class Claim:
    """The default claim at log entry `index`: `seat` says `against` is in default (FAIRNESS.md §4).

    `state`: "pending" (it waits for witnesses), "out" (the accused went out of the game, or the game
    ended), "answered" (a default answer was given for the accused, which stays in), "lapsed" (the
    wait it was about ended first). `wait` is that wait's `deadlines.waiting_key`."""

    index: int
    seat: int
    against: int
    reason: Phrase
    wait: tuple
    witnesses: tuple[int, ...] = ()
    state: str = "pending"

    @property
    def signers(self) -> tuple[int, ...]:
        return (self.seat, *self.witnesses)


@dataclass(frozen=True)
class Dispute:
    """The accused's signed answer (log entry `index`) to `claimant`'s claim at index `claim` of the
    orderer's log; `held` is False when this copy does not hold the claim (its author refused it)."""

    index: int
    seat: int
    claimant: int
    claim: int
    held: bool
    reason: Phrase
    evidence: int  # frames of its own the log did not hold


class DefaultClaims:
    FIELDS = ("claims", "disputes", "ending")  # what an Effect may set here

    def __init__(self, replica) -> None:  # the replica this part belongs to
        self.replica = replica
        self.claims: tuple[Claim, ...] = ()  # every default claim, with its state
        self.disputes: tuple[Dispute, ...] = ()
        self.ending: Claim | None = None  # the claim whose default ended the game

    # -- views ---------------------------------------------------------------------------------
    def needed(self, against: int) -> int:
        """Signatures (the claimant's among them) a claim against `against` needs to take effect
        now: a majority of the seats still in, the accused excepted (FAIRNESS.md §4)."""
        replica = self.replica
        voters = sum(1 for s in range(replica.seat_count) if s != against and s not in replica.out)
        return voters // 2 + 1

    def pending_claim(self, against: int) -> Claim | None:
        return next((c for c in self.claims if c.against == against and c.state == "pending"), None)

    def winners_by_default(self, against: int) -> tuple[int, ...]:
        """The seats that would win at once if a claim against `against` took effect now, worked out
        on the state as it stands by the in-effect rules (`_default`, which changes nothing); () when
        the game would go on."""
        replica = self.replica
        probe = Claim(len(replica.log), -1, against, phrase(), waiting_key(replica))
        changes, _, _ = self._default(probe)
        result = changes.get("forced")
        if result is None and changes.get("phase") == OVER and changes.get("state") is not None:
            result = changes["state"].result
        return tuple(result.winners) if result is not None else ()

    def alone(self, seat: int, against: int) -> bool:
        """Whether a claim by `seat` against `against` would take effect as it lands (no witness to wait for)."""
        return self._carried(Claim(len(self.replica.log), seat, against, phrase(), waiting_key(self.replica)))

    def _carried(self, claim: Claim) -> bool:
        """Whether `claim` takes effect: a majority of the seats in, the accused excepted, signed it; or
        a seat still in signed it and every seat that could still witness it would win by it (a witness
        that wins by its witness adds no neutral word, FAIRNESS.md §5b: the claim then stands on its
        claimant's word, as with 2 seats, and says so: "unwitnessed claim")."""
        replica = self.replica
        signed = sum(1 for s in claim.signers if s not in replica.out)
        if signed >= self.needed(claim.against):
            return True
        winners = self.winners_by_default(claim.against)
        return signed > 0 and not any(s != claim.against and s not in replica.out and s not in claim.signers
                                      and replica.seats[s] is not None and s not in winners
                                      for s in range(replica.seat_count))

    def unwitnessable(self, claim: Claim) -> bool:
        """A pending claim that no seat left can bring into effect: too few seats that could still sign
        it would not win by it (PROTOCOL.md §5.7: it stays pending, unwitnessed)."""
        replica = self.replica
        if claim.state != "pending":
            return False
        signed = sum(1 for s in claim.signers if s not in replica.out)
        winners = self.winners_by_default(claim.against)
        neutral = [s for s in range(replica.seat_count) if s != claim.against and s not in replica.out
                   and s not in claim.signers and replica.seats[s] is not None and s not in winners]
        return signed + len(neutral) < self.needed(claim.against)

    def basis(self, claim: Claim) -> Phrase:
        """What in the log supports `claim`: its signers, and the accused's dispute if it made one."""
        if claim.witnesses:
            text = phrase("claim by ", Seat(claim.seat), ", witnessed by ", listing(Seat(s) for s in claim.witnesses))
        else:
            text = phrase("unwitnessed claim by ", Seat(claim.seat))
        if any(d.claim == claim.index and d.held for d in self.disputes):
            text = phrase(text, ", disputed by ", Seat(claim.against))
        return text

    # -- kinds ---------------------------------------------------------------------------------
    def claim(self, env: wire.Envelope) -> Effect:
        replica = self.replica
        seat, against = env.seat, env.body["against"]
        if replica.phase != PLAYING:
            raise NotDue(seat, "there is no game in progress to claim")
        waiting = replica.waiting_for
        if against == seat or against >= replica.seat_count or against not in waiting.seats:
            raise BadClaim(seat, f"seat {against} is not the seat the table waits for ({waiting})")
        if seat in replica.out:
            raise BadClaim(seat, f"seat {seat} is itself out of the game")
        pending = self.pending_claim(against)
        if pending is not None:
            raise BadClaim(seat, f"{replica.who(pending.seat)}'s claim against seat {against} (entry {pending.index + 1}) "
                                 "is pending: witness it instead")
        if replica.claim_check is not None:
            replica.claim_check(replica, env)
        claim = Claim(len(replica.log), seat, against, Phrase.read(env.body["reason"] or "no reason given"), waiting_key(replica))
        need = self.needed(against)
        if need > 1 and not self._carried(claim):  # FAIRNESS.md §4: no one party's clock decides a default
            more = need - 1
            note = phrase(replica.who(seat), " claims ", replica.who(against), " is in default (", claim.reason, "); it takes effect "
                    f"once {more} more seat{'s' if more > 1 else ''} witness{'' if more > 1 else 'es'} it")
            return Effect({"claims": self.claims + (claim,)}, note)
        changes, verb, what = self._default(claim)
        return Effect(changes, phrase(replica.who(seat), f" {verb} ", what))

    def witness(self, env: wire.Envelope) -> Effect:
        replica = self.replica
        seat, index = env.seat, env.body["claim"]
        claim = next((c for c in self.claims if c.index == index), None)
        if claim is None:
            raise BadClaim(seat, f"log entry {index + 1} is not a default claim")
        if claim.state != "pending":
            raise NotDue(seat, f"the claim at entry {index + 1} is no longer pending ({claim.state})")
        if seat == claim.against:
            raise BadClaim(seat, f"seat {seat} cannot witness a claim against itself")
        if seat in replica.out:
            raise BadClaim(seat, f"seat {seat} is itself out of the game")
        if seat in claim.signers:
            raise NotDue(seat, f"seat {seat} has already signed the claim at entry {index + 1}")
        if seat in self.winners_by_default(claim.against):  # FAIRNESS.md §5b: no witness wins by its witness
            raise BadClaim(seat, f"seat {seat} would win the game by this default: it cannot witness it")
        claim = replace(claim, witnesses=claim.witnesses + (seat,))
        need = self.needed(claim.against)
        signed = sum(1 for s in claim.signers if s not in replica.out)
        note = phrase(replica.who(seat), " witnesses ", replica.who(claim.seat), "'s claim against ", replica.who(claim.against), " "
                f"({signed} of {need} signatures)")
        if not self._carried(claim):
            return Effect({"claims": self._with_claim(claim)}, note)
        changes, _, what = self._default(claim)
        return Effect(changes, phrase(note, ": ", what))

    def dispute(self, env: wire.Envelope) -> Effect:
        replica = self.replica
        seat, body = env.seat, env.body
        if replica.phase not in (PLAYING, OVER):
            raise NotDue(seat, "a dispute before the game has started")
        index = body["claim"]
        try:
            claimed = wire.decode(body["frame"])
        except wire.WireError as error:
            raise BadClaim(seat, f"the claim it disputes is not a frame: {error}") from None
        if claimed.kind != "claim" or claimed.table != replica.table or claimed.body["against"] != seat:
            raise BadClaim(seat, f"seat {seat} disputes only a claim against itself at this table")
        claimant = claimed.seat
        log = replica.log
        if index < len(log):
            if log[index].frame != body["frame"]:
                raise BadClaim(seat, f"log entry {index + 1} is not the claim it disputes")
            if any(d.claim == index and d.seat == seat for d in self.disputes):
                raise NotDue(seat, f"seat {seat} has already disputed the claim at entry {index + 1}")
            held = True
        elif index == len(log):  # its author refused the claim: its copy holds the dispute there
            info = replica.seats[claimant] if claimant < len(replica.seats) else None
            if info is None or claimant == seat or not claimed.signed_by(info.key):
                raise BadClaim(seat, "the claim it disputes is not signed by the seat that made it")
            link = claimed.prev
            if link.entries > len(log) or replica.head_at(link.entries) != link.head:
                raise BadClaim(seat, "the claim it disputes builds on another log than this one")
            held = False
        else:
            raise BadClaim(seat, f"there is no log entry {index + 1} to dispute")
        carried = self._evidence(env)
        replica.check_seq(env, ahead=carried)
        dispute = Dispute(len(log), seat, claimant, index, held, Phrase.read(body["reason"]), carried)
        note = phrase(replica.who(seat), " disputes ", replica.who(claimant), "'s claim")
        if held:
            note += phrase(f" (entry {index + 1}): ", Phrase.read(body['reason']))
        else:
            note += phrase(" against it (", Phrase.read(claimed.body['reason']), "): ", Phrase.read(body['reason']), "; this copy does not hold the claim")
        if carried:
            note += f"; it shows {carried} frame{'s' if carried > 1 else ''} of its own the log does not hold"
        return Effect({"disputes": self.disputes + (dispute,)}, note)

    # -- after each accepted frame ---------------------------------------------------------------
    def lapse(self) -> None:
        """Pending claims end with the wait they are about: the accused did what the table waited for,
        or the game moved on (derived from the state just committed; it cannot fail)."""
        replica = self.replica
        wait, seats = waiting_key(replica), replica.waiting_for.seats
        self.claims = tuple(
            replace(c, state="lapsed") if c.state == "pending" and (c.wait != wait or c.against not in seats) else c
            for c in self.claims
        )

    # -- helpers -------------------------------------------------------------------------------
    def _evidence(self, env: wire.Envelope) -> int:
        """Check a dispute's evidence: its author's own frames, each either the frame this log holds at
        its sequence number or one of the author's next frames, in order. Returns how many are new."""
        replica = self.replica
        seat, expected = env.seat, replica.next_seq(env.seat)
        key = replica.seats[seat].key
        new = 0
        for n, frame in enumerate(env.body["evidence"], 1):
            try:
                shown = wire.decode(frame)
            except wire.WireError as error:
                raise BadClaim(seat, f"evidence frame {n} is not a frame: {error}") from None
            if shown.table != replica.table or shown.seat != seat:
                raise BadClaim(seat, f"evidence frame {n} is not seat {seat}'s own at this table")
            if (shown.signature or shown.kind not in wire.UNSIGNED_KINDS) and not shown.signed_by(key):
                raise BadSignature(seat, f"evidence frame {n} is not signed by {replica.who(seat)}'s key")
            if shown.seq < expected:
                logged = replica.entry_of(seat, shown.seq)
                if logged is None or replica.log[logged].frame != frame:
                    if logged is not None and shown.signature and replica.log[logged].envelope.signature:
                        raise Equivocation(seat, f"evidence frame {n} and log entry {logged + 1} are two different "
                                                 f"frames signed by {replica.who(seat)} with sequence number {shown.seq}")
                    raise BadClaim(seat, f"evidence frame {n} is not the frame the log holds at its sequence number")
            elif shown.seq != expected + new:
                raise BadClaim(seat, f"evidence frames are the seat's next frames in order: sequence number "
                                     f"{expected + new}, not {shown.seq}")
            else:
                new += 1
        return new

    def _with_claim(self, claim: Claim) -> tuple[Claim, ...]:
        """The claims with `claim` in its place (or added)."""
        if any(c.index == claim.index for c in self.claims):
            return tuple(claim if c.index == claim.index else c for c in self.claims)
        return self.claims + (claim,)

    def _default(self, claim: Claim) -> tuple[dict, str, Phrase]:
        """The changes of a claim that takes effect, with the claim's verb and what it does in words."""
        replica, play = self.replica, self.replica.play
        against, why = claim.against, claim.reason
        default = self._default_move(against)
        if default is not None:
            # A step with a default answer (Dice Breaker's Latent Dice claim): a seat that does not
            # answer in time gives it, and stays in the game.
            if replica.sealing is not None:  # late to seal or to open its seal: the default is its answer
                changes = replica.sealed_answers.answered(replica.sealing, against, default)
            else:
                changes = {"moves": play.moves + 1, **play.after(play.state.apply(default), play.events)}
            return (self._settled(changes, claim, "answered"), "claims",
                    phrase(replica.who(against), " did not answer in time (", why, f"): {default}"))
        reason = phrase(Seat(against), " in default")
        out = play.out | {against}
        if replica.seat_count - len(out) >= 2 and self._goes_on_without(against):
            # FAIRNESS.md §4, more seats: the game goes on without the defaulted seat.
            changes: dict = {"out": out}
            if play.pending is not None:
                reveals = list(play.pending.reveals)
                reveals[against] = b""
                event = replace(play.pending, reveals=tuple(reveals))
                if event.missing:
                    changes["pending"] = event
                else:
                    decided, _ = play.decide(event, out)
                    changes.update(decided)
            else:
                changes.update(play.after(play.state, play.events, out))
            return self._settled(changes, claim, "out"), "claims a default:", phrase(reason, " (", why, "); the game goes on without it")
        if replica.seat_count > 2 and play.state.score_now() is not None:
            result = play.as_it_stands(play.state, out)
        else:
            result = play.ending(set(out), reason)
        changes = {"forced": result, "phase": OVER, "pending": None, "out": out}
        return self._settled(changes, claim, "out"), "claims the game:", phrase(reason, " (", why, ")")

    def _settled(self, changes: dict, claim: Claim, state: str) -> dict:
        """`changes` with `claim` in effect; the claim ended the game if they force a result."""
        claim = replace(claim, state=state)
        changes["claims"] = self._with_claim(claim)
        if "forced" in changes:
            changes["ending"] = claim
        return changes

    def _default_move(self, seat: int) -> Move | None:
        """The move `seat` is taken to make when it does not answer in time, if its step has one."""
        replica, play = self.replica, self.replica.play
        default = play.state.default_move
        if play.pending is not None:
            return None
        if replica.sealing is not None:
            return play.state.asking(seat).default_move() if seat in replica.waiting_for.seats else None
        return default() if play.state.actor == seat else None

    def _goes_on_without(self, seat: int) -> bool:
        """The rules allow play without `seat`: the game can skip it, and no card deal needs its keys."""
        replica, play = self.replica, self.replica.play
        if replica.deal_handler is not None and replica.deal_handler.formed:
            return False
        return play.state.without(seat) is not None  # None where the rules cannot skip it (core/game.py)
