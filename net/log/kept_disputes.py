"""Disputes a copy kept aside (FAIRNESS.md §3c, §5b; PROTOCOL.md §16.3 item 9, §16.4): an accused seat's
signed dispute of a claim that the log holds, which the log itself never took (the relay or the orderer
dropped it), kept as an `evidence` record by the accused itself or by a seat it boxed it to.

Such a dispute proves exactly one thing: the accused signed that it disputes that claim, and why. It
does not undo the claim (the log holds it, with its signers), so `verify` never calls the copy invalid
for it; it says whose word it is: `seat 1 in default (claim by seat 0, witnessed by seat 2) — disputed
by seat 1: <why> (its signed word, kept aside: never in the log)`.

A dispute counts only if it is signed by the accused under its key, and the claim frame inside it is
the very frame at the log entry it names, a claim against that seat; one per claim and seat (the first
kept); at most MAX_CHECKED evidence records are looked at (a hostile file cannot make verify slow).
"""

from __future__ import annotations

from dataclasses import dataclass

from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.net.log import wire

MAX_CHECKED = 256  # evidence records of one copy looked at


@dataclass(frozen=True)
class KeptDispute:
    """Seat `seat`'s signed dispute (`frame`) of the claim at log entry `claim` (0-based), by `claimant`."""

    seat: int
    claim: int
    claimant: int
    reason: str
    frame: bytes

    def said(self, copies: int = 0) -> Phrase:
        """` — disputed by seat 1: <why> (...)`, to follow what supports the claim."""
        where = f" in {copies} cop{'ies' if copies != 1 else 'y'}" if copies else ""
        return phrase(" — disputed by ", Seat(self.seat), ": ", Phrase.read(self.reason),
                      f" (its signed word, kept aside{where}, never in the log)")


def kept_disputes(evidence: list[tuple[bytes, str]], log: list[bytes], keys: dict[int, bytes],
                  logged: set[tuple[int, int]]) -> dict[tuple[int, int], KeptDispute]:
    """The disputes among a copy's `evidence` records of claims that `log` (the frames, in order) holds,
    each signed by its accused seat (`keys`: each seat's key), by (seat, claim); none of a claim the seat
    disputed in the log (`logged`: (seat, claim) of those)."""
    in_log = set(log)
    found: dict[tuple[int, int], KeptDispute] = {}
    for frame, _ in evidence[:MAX_CHECKED]:
        if frame in in_log:
            continue
        dispute = signed_by_seat(frame, keys)
        if dispute is None or dispute.kind != "dispute":
            continue
        index = dispute.body["claim"]
        if index >= len(log) or log[index] != dispute.body["frame"] or (dispute.seat, index) in found \
                or (dispute.seat, index) in logged:
            continue
        claim = signed_by_seat(log[index], keys)
        if claim is None or claim.kind != "claim" or claim.table != dispute.table or claim.body["against"] != dispute.seat:
            continue
        found[(dispute.seat, index)] = KeptDispute(dispute.seat, index, claim.seat, dispute.body["reason"], frame)
    return found


def signed_by_seat(frame: bytes, keys: dict[int, bytes]) -> wire.Envelope | None:
    """The envelope of `frame` if it decodes and is signed by the seat it names."""
    try:
        env = wire.decode(frame)
    except wire.WireError:
        return None
    key = keys.get(env.seat)
    return env if env.signature and key is not None and env.signed_by(key) else None


def in_copy(replica, transcript) -> dict[tuple[int, int], KeptDispute]:
    """The accused's signed disputes a copy (`transcript`, replayed as `replica`) kept aside of claims its log holds."""
    logged = {(d.seat, d.claim) for d in replica.disputes if d.held}
    keys = {seat: info.key for seat, info in enumerate(replica.seats) if info is not None}
    return kept_disputes(transcript.evidence, [r.frame for r in replica.log], keys, logged)


def stopped(replica, transcript):
    """A claim pending where an unfinished log ends that its accused disputes, in the log or in a dispute
    the copy kept aside (PROTOCOL.md §16.3 item 6): (claim, the dispute in words, the kept frames so said), or None."""
    kept = None
    for claim in (c for c in replica.claims if c.state == "pending"):
        logged = next((d for d in replica.disputes if d.held and d.claim == claim.index and d.seat == claim.against), None)
        if logged is not None:
            return claim, phrase(" — disputed by ", Seat(claim.against), " in the log: ", logged.reason), set()
        kept = in_copy(replica, transcript) if kept is None else kept
        spoken = kept.get((claim.against, claim.index))
        if spoken is not None:
            return claim, spoken.said(), {spoken.frame}
    return None
