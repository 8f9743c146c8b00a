"""Re-check a finished game from its transcript alone (FAIRNESS.md §5): no network, no secrets.
The algorithm, step by step: PROTOCOL.md §16.3 (one copy), §16.4 (several copies).

Every frame is replayed through a fresh Replica (net/log/replica.py) — signatures, order, sequence
numbers, every reveal against its committed chain, every derived outcome, every move's legality in
the core engine, every "deal" record (net/cards/table_deals.py's TableDeals: a game's own hidden steps and any declared deck,
whose end-of-game replay names a cheating seat; every deck a finished game formed must have been
opened by every seat and replayed, else the seat that did not open it is named) — then the header is checked against the log and the recorded result against the
replayed one. The first fault found is reported with the seat at fault where the log names one.
A table that played rematches holds every game in one log: the replica checks each next game's
consents and options (PROTOCOL.md §5.10), and the verdict lists each game's result.

What a lone transcript cannot prove is said as such (FAIRNESS.md §4, §5): a result that rests on a
default claim names what supports it — `seat 1 wins (seat 0 in default — unwitnessed claim by seat
1)` when no other seat co-signed it (a 2-seat default), `claim by seat 0, witnessed by seat 2` when
others did, `, disputed by seat 1` when the accused answered it with a signed dispute; decks a claim
or resignation left unopened are a card audit not done. A copy that ends in its owner's dispute of a
claim it refused (its owner left the host's log there) is `disputed: ...`, not a finished game. A copy
that ends with a claim pending that no neutral seat could witness says so (`pending, unwitnessed`).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable

from dicetable.core.game import GameError, Result
from dicetable.core.phrase import Phrase, Seat, listing, phrase
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.refusals import DealError, Refusal
from dicetable.net.log.kept_disputes import KeptDispute, in_copy, kept_disputes, signed_by_seat, stopped
from dicetable.net.log.records import Record
from dicetable.net.log.replica import Replica
from dicetable.net.log.transcript import DamagedTranscript, NotATranscript, Transcript, read

__all__ = ["Verdict", "verify", "verify_transcript", "NotATranscript"]

MAX_EVIDENCE_SHOWN = 256  # evidence records of one copy checked and listed (an honest seat keeps a few)


@dataclass(frozen=True)
class Verdict:
    game: str
    moves: int
    result: Phrase | None = None  # the result when valid, with what supports a default claim it rests on
    ended: Result | None = None  # the last game's result, the claim it rests on in its reason
    fault: str | None = None  # one line: where, what, who
    fault_kind: str | None = None  # the Refusal's fault name ("bad reveal", ...) or a transcript fault
    seat: int | None = None  # the seat at fault, when known
    record: int | None = None  # transcript record number (0 = header)
    replica: Replica | None = None
    deals: int = 0  # card deals replayed and checked
    unopened: int = 0  # decks never opened because the game ended by a default or resignation
    confirmed: Phrase | None = None  # who confirmed the end: "confirmed by every seat", or what is not
    unconfirmed: bool = False  # valid, but some seat's signed frames do not vouch for the whole end (§5.13)
    evidence: Phrase | None = None  # frames the copy kept aside that its log never ordered (FAIRNESS.md §3c)
    disputes: tuple[KeptDispute, ...] = ()  # of those, the accused's signed disputes of the claims that put it out


    @property
    def valid(self) -> bool:
        return self.fault is None

    def rolls(self) -> str:
        """Who made a dice room's rolls: `rolls: Ann 2, Bob 1`."""
        rolls = self.replica.state.rolls
        count = Counter(roll.seat for roll in rolls)
        each = ", ".join(f"{self.named(phrase(Seat(s)))} {n}" for s, n in sorted(count.items()))
        said = f"rolls: {each}" if each else "no rolls"
        secret = [r for r in rolls if r.secret]
        if secret:  # PROTOCOL.md §16.6: a secret roll never opened is said as such
            sealed = [r for r in secret if r.sealed]
            said += f", {len(secret)} secret"
            shown = self.replica.shown  # §16.6 step 7: the seat each was shown to, by its roll's commitment
            told = [f"{self.named(phrase(Seat(r.seat)))}'s secret {r.expr} shown to {self.named(phrase(Seat(shown[r.secret][1])))}"
                    for r in secret if r.secret in shown]
            if told:
                said += f" ({', '.join(told)})"
            if sealed:
                who = ", ".join(sorted({self.named(phrase(Seat(r.seat))) for r in sealed}))
                said += f"; {len(sealed)} secret roll{'s' if len(sealed) != 1 else ''} never opened ({who})"
        moves = self.replica.membership.comings_and_goings()
        if moves:
            said += "; " + "; ".join(f"{self.named(phrase(Seat(s)))} {', '.join(went)}" for s, went in moves.items())
        return said

    def named(self, words: Phrase) -> str:
        """`words` in people's names (`people`): a verdict names people, not seat numbers."""
        return words.words(people(self.replica))

    def line(self) -> str:
        aside = f"; {self.named(self.evidence)}" if self.evidence is not None else ""
        return self._line() + aside

    def _line(self) -> str:
        if self.valid:
            checked = f"; {self.deals} card deal{'s' if self.deals != 1 else ''} checked" if self.deals else ""
            replica = self.replica
            if self.unopened:
                cause = "a claim" if replica is not None and replica.ending is not None else "a resignation"
                decks = f"{self.unopened} deck{'s' if self.unopened != 1 else ''}"
                checked += f"; card audit not done: {decks} never opened (the game ended by {cause})"
            went_on = [c for c in replica.claims if c.state == "out" and c != replica.ending] if replica is not None else []
            if went_on:  # defaults the game went on without (FAIRNESS.md §4)
                kept = {d.claim: d for d in self.disputes}
                each = listing(phrase(Seat(c.against), " in default (", replica.basis(c), ")",
                                      kept[c.index].said() if c.index in kept else "") for c in went_on)
                checked += f"; {self.named(each)}, the game went on without"
            if self.confirmed is not None:
                checked += f"; {self.named(self.confirmed)}"
            if self.game == "diceroom" and self.ended is not None:  # a room has rolls, not a winner
                return f"valid: dice room ({self.rolls()}); {self.named(self.ended.reason)}{checked}"
            return f"valid: {self.game}, {self.moves} moves, result: {self.named(self.result)}{checked}"
        if self.fault_kind == "disputed":
            return f"disputed: {self.fault}"
        return f"invalid: {self.fault}"


def _fault(replica: Replica, game: str, kind: str, text: str, seat=None, record=None, evidence=None) -> Verdict:
    return Verdict(game, replica.moves, fault=text, fault_kind=kind, seat=seat, record=record, replica=replica,
                   evidence=evidence)


def people(replica: Replica | None) -> list[str]:
    """Each seat's name as its signed join gives it, `name (seat N)` where two joined with one name."""
    seats = replica.seats if replica is not None else ()
    names = [info.name if info is not None else f"seat {s}" for s, info in enumerate(seats)]
    if len(set(names)) < len(names):
        names = [f"{name} (seat {s})" for s, name in enumerate(names)]
    return names


def verify_transcript(transcript: Transcript, watch: Callable[[Replica, Record], None] | None = None) -> Verdict:
    """The verdict on `transcript`; `watch(replica, record)`, if given, sees the replica after each frame
    it accepts (a replay's snapshots: tui/tables/replay.py) and must not change it."""
    header = transcript.header
    game = header["game"]
    book = TableDeals()  # checks "deal" records live and replays every opened deal at the end
    replica = Replica(deal_handler=book)
    for index, frame in enumerate(transcript.frames):
        number = index + 1  # record 0 is the header
        try:
            record = replica.accept(frame)
        except Refusal as refusal:
            who = f" by {replica.who(refusal.seat)}" if refusal.seat is not None else ""
            text = f"record {number}: {refusal.fault}{who}: {refusal.reason}"
            return _fault(replica, game, refusal.fault, text, refusal.seat, number)
        except GameError as error:  # an engine refusing a derived outcome: the log cannot be replayed
            return _fault(replica, game, "engine", f"record {number}: {error}", None, number)
        if watch is not None:
            watch(replica, record)
    mismatch = _header_mismatch(header, replica)
    if mismatch:
        return _fault(replica, game, "header", f"header: {mismatch}", None, 0)
    try:
        book.check()
    except DealError as fault:
        who = f" by {replica.who(fault.seat)}" if fault.seat is not None else ""
        return _fault(replica, game, "deal", f"card deal{who}: {fault.reason}", fault.seat, None)
    aside = kept_aside(replica, transcript)
    refused = [d for d in replica.disputes if not d.held]
    if replica.result is None and refused:  # its owner refused a claim the host's log holds, and left
        dispute = refused[-1]
        text = f"{replica.game.name}, {replica.moves} moves, no result: {replica.log[dispute.index].note}"
        return _fault(replica, game, "disputed", text, dispute.claimant, dispute.index + 1, aside)
    if replica.result is None:
        end = " (the last record is torn)" if transcript.torn else ""
        waiting = replica.waiting_for
        seat = waiting.seats[0] if len(waiting.seats) == 1 else None
        text = f"the game is unfinished{end}: the log ends waiting for {waiting}"
        halted = stopped(replica, transcript)
        if halted is not None:  # on a claim its accused disputes: the accused's word, not a fault of the log
            claim, said, kept = halted
            text += str(phrase(", with ", Seat(claim.seat), "'s claim against ", Seat(claim.against),
                               f" pending (entry {claim.index + 1})", said))
            return _fault(replica, game, "disputed", text, claim.seat, claim.index + 1, kept_aside(replica, transcript, kept))
        for claim in replica.claims:  # FAIRNESS.md §5b: a claim no neutral seat could witness stopped the game
            if replica.default_claims.unwitnessable(claim):
                text += (f"; {replica.who(claim.seat)}'s claim against {replica.who(claim.against)} (entry {claim.index + 1}) "
                         "is pending, unwitnessed: every seat that could witness it would win by it")
        return _fault(replica, game, "unfinished", text, seat, len(transcript.frames), aside)
    unopened = [(label, missing) for label, missing in book.unchecked() if missing]
    if unopened and replica.forced is None:  # a game that ended by its rules opens every deck
        label, missing = unopened[0]
        text = f"card deal: deck {label.removeprefix('game:')} was never opened by {replica.who(missing[0])}"
        return _fault(replica, game, "deal", text, missing[0], None)
    if transcript.result is None:
        return _fault(replica, game, "result", "the transcript does not record the result", None, None)
    series = replica.series  # a table that played rematches: one recorded result per game, in order
    if len(transcript.results) != len(series):
        text = f"the transcript records {len(transcript.results)} results, the log plays {len(series)} games"
        return _fault(replica, game, "result", text, None, None)
    for number, (data, replayed) in enumerate(zip(transcript.results, series), 1):
        try:
            recorded = Result.from_data(data)
        except (KeyError, TypeError):
            return _fault(replica, game, "result", "the recorded result is unreadable", None, None)
        if recorded != replayed:
            which = f" of game {number}" if len(series) > 1 else ""
            text = (
                f"the recorded result{which} ({recorded.describe()}) differs from the replayed one"
                f" ({replayed.describe()})"
            )
            return _fault(replica, game, "result", text, None, None)
    # The accused's disputes kept aside, said with the default they dispute (net/log/kept_disputes.py).
    out = {c.index for c in replica.claims if c.state == "out"}
    disputes = {place: d for place, d in in_copy(replica, transcript).items() if d.claim in out}
    aside = kept_aside(replica, transcript, {d.frame for d in disputes.values()})
    result = replica.result
    if replica.ending is not None:  # FAIRNESS.md §5: what the claim rests on, never a plain win
        kept = next((d for d in disputes.values() if d.claim == replica.ending.index), None)
        result = replace(result, reason=phrase(result.reason, " — ", replica.basis(replica.ending),
                                               kept.said() if kept is not None else ""))
    words = result.said()
    if len(series) > 1:
        words = listing((phrase(f"game {n}: ", r.said()) for n, r in enumerate((*series[:-1], result), 1)), "; ")
    return Verdict(replica.game.name, replica.moves, words, ended=result, replica=replica, deals=book.checked,
                   unopened=len(unopened), confirmed=confirmation(replica, bool(header.get("receipts"))),
                   unconfirmed=not replica.confirmation().confirmed, evidence=aside, disputes=tuple(disputes.values()))


def kept_aside(replica: Replica, transcript: Transcript, said: set[bytes] = frozenset()) -> Phrase | None:
    """The evidence records (FAIRNESS.md §3c, PROTOCOL.md §16.1) whose frames the log does not hold,
    each its seat's own — signed by it, or an unsigned reveal that opens its committed chain — in words:
    `kept aside, never in this log: Bob's reveal for event 1, Bob's dispute of the claim at entry 9`;
    but those `said` with the claim they dispute (net/log/kept_disputes.py)."""
    from dicetable.net.log import wire

    in_log = {record.frame for record in replica.log} | said
    found: dict[tuple[int, int], Phrase] = {}  # (seat, seq) -> words: in the order the seats signed them
    for frame, _ in transcript.evidence[:MAX_EVIDENCE_SHOWN]:  # a hostile file cannot make verify slow
        if frame in in_log:
            continue
        try:
            env = wire.decode(frame)
        except wire.WireError:
            continue
        info = replica.seats[env.seat] if env.table == replica.table and env.seat < len(replica.seats) else None
        if info is None or not (env.signed_by(info.key) if env.signature else _opens_chain(replica, env)):
            continue  # not that seat's own frame: it proves nothing
        if env.kind == "reveal":
            what = f"'s reveal for event {env.body['k']}"
        elif env.kind == "dispute":
            what = f"'s dispute of the claim at entry {env.body['claim'] + 1}"
        else:
            what = f"'s {env.kind} (sequence number {env.seq})"
        found.setdefault((env.seat, env.seq), phrase(Seat(env.seat), what))
    said = [found[place] for place in sorted(found)]
    return phrase("kept aside, never in this log: ", listing(said)) if said else None


def _opens_chain(replica: Replica, env) -> bool:
    """An unsigned reveal that opens its seat's committed chain at an event the log has not opened
    it at (a bounded number of hashes: a hostile file cannot make verify slow)."""
    from dicetable.net.chance import reveal_chain

    if env.kind != "reveal":
        return False
    k, track = env.body["k"], replica.play.chains[env.seat]
    commitment = track.covering(k)
    if commitment is None or k <= track.last_event:
        return False
    since = max(track.last_event, commitment.first - 1)
    previous = commitment.anchor if since < commitment.first else track.last_value
    return k - since <= 4096 and reveal_chain.opens(replica.table, env.seat, previous, env.body["value"], k - since)


def confirmation(replica: Replica, receipts: bool = True) -> Phrase:
    """Who confirmed the end of this copy (FAIRNESS.md §3b, PROTOCOL.md §16.3): `confirmed by every
    seat`, or the entries only their holder's side signed — never silence, so an end one seat wrote
    alone is not read as a plain result."""
    found = replica.confirmation()
    if found.confirmed:
        return phrase("confirmed by every seat")
    if not receipts:
        return phrase("end not confirmed (written before receipts)")
    missing = found.unconfirmed_by()
    since = min(found.vouched[s] for s in missing)
    last = len(replica.log) - since
    signers = sorted({r.seat for r in replica.log[since:] if r.envelope.signature})
    by = listing(phrase(Seat(s)) for s in signers) if signers else phrase("nobody")
    entries = "entry is" if last == 1 else f"{last} entries are"
    # A seat out of the game (by a claim in this copy) is named as such, never excused: a copy's
    # holder could have written that claim itself.
    named = (phrase(Seat(s), ", out of the game" if s in replica.out else "") for s in missing)
    return phrase(f"end not confirmed: the last {entries} signed only by ", by, " (not confirmed by ",
                  listing(named, " or "), ")")


def _header_mismatch(header: dict, replica: Replica) -> str | None:
    if replica.game is None:
        return "the log has no opening"
    if header["game"] != replica.game.name:
        return f"names the game {header['game']!r:.40}, the log plays {replica.game.name}"
    if header["table"] != replica.table:
        return "names another table id than the log"
    try:
        options = replica.game.resolve_options(header["options"])
    except GameError as error:
        return f"bad options: {error}"
    if options != replica.options:
        return "names other options than the log"
    if len(header["seats"]) != len(replica.seats):
        return f"names {len(header['seats'])} seats, the log {len(replica.seats)}"
    for seat, (named, joined) in enumerate(zip(header["seats"], replica.seats)):
        if named["key"] == b"" and replica.phase != "joining":  # free when the header was written (an open room)
            continue
        if joined is None or named["key"] != joined.key or named["name"] != joined.name:
            return f"seat {seat}'s name or key differs from its join in the log"
    return None


def verify(path: str | os.PathLike) -> Verdict:
    """The verdict on the transcript at `path`; raises NotATranscript for a file that is not one."""
    try:
        transcript = read(path)
    except DamagedTranscript as error:
        return Verdict("?", 0, fault=str(error), fault_kind="damaged", record=error.index)
    return verify_transcript(transcript)


# -- several seats' copies of one table (FAIRNESS.md §5) -----------------------------------------------
@dataclass(frozen=True)
class Agreement:
    """How copies of one table's log compare: `fork` is None when each is a prefix of the longest."""

    copies: int
    entries: int  # entries of the longest copy
    fork: str | None = None  # one line: where the copies part and who signed the fork, if anyone
    forker: int | None = None  # the seat proven to have forked (it signed both branches)
    disputed: str = ""  # the accused's signed disputes some copy kept aside, of claims the longest log holds

    def line(self) -> str:
        if self.fork is None:
            said = f"copies agree: {self.copies} copies, the longest {self.entries} entries, each a prefix of it"
        else:
            said = f"copies fork: {self.fork}"
        return said + (f"; {self.disputed}" if self.disputed else "")


def _authored(frame: bytes, keys: dict[int, bytes]):
    """The envelope of `frame` if it is its seat's own: signed by it, or an unsigned reveal (its hash
    chain authenticates it, which the verdict on that copy checks)."""
    from dicetable.net.log import wire

    env = signed_by_seat(frame, keys)
    if env is not None:
        return env
    try:
        env = wire.decode(frame)
    except wire.WireError:
        return None
    return env if not env.signature and env.kind in wire.UNSIGNED_KINDS else None


def compare(transcripts: list[Transcript]) -> Agreement:
    """Check that copies of one table agree, or name where they fork and who signed both branches.

    Two different frames signed by one seat with one sequence number, in any two copies, prove that
    seat forked the log. Without such a pair the orderer (the host) showed seats different logs — or a
    copy was cut short and its owner appended its own frames. Either way, a claim on one branch against
    the author of a frame on the other (its move, its reveal, its dispute) is disputed by that frame."""
    tables = {t.header["table"] for t in transcripts}
    if len(tables) != 1:
        raise ValueError("the transcripts are of different tables: compare copies of one table")
    keys = _seat_keys(transcripts)
    longest = max(transcripts, key=lambda t: len(t.frames))
    return replace(_agreement(transcripts, keys, longest), disputed=_kept_disputes(transcripts, keys, longest))


def _kept_disputes(transcripts: list[Transcript], keys: dict[int, bytes], longest: Transcript) -> str:
    """The accused's signed disputes any copy kept aside (net/log/kept_disputes.py) of claims the longest
    copy's log holds and that seat never disputed in it, each once, with how many copies hold it:
    `seat 1 (bob) in default by seat 0 (ann)'s claim at entry 23 — disputed by seat 1 (bob): ...`."""
    logged = set()
    for frame in longest.frames:
        env = signed_by_seat(frame, keys)
        if env is not None and env.kind == "dispute":
            logged.add((env.seat, env.body["claim"]))
    found: dict[tuple[int, int], tuple] = {}
    for copy in transcripts:
        for place, dispute in kept_disputes(copy.evidence, longest.frames, keys, logged).items():
            first, copies = found.get(place, (dispute, 0))
            found[place] = (first, copies + 1)
    names = [str(Seat(n, s["name"])) for n, s in enumerate(transcripts[0].header["seats"])]  # as compare names seats
    return "; ".join(phrase(Seat(d.seat), " in default by ", Seat(d.claimant), f"'s claim at entry {d.claim + 1}",
                            d.said(copies)).words(names) for d, copies in (found[place] for place in sorted(found)))


def _agreement(transcripts: list[Transcript], keys: dict[int, bytes], longest: Transcript) -> Agreement:
    first_fork = None
    for copy in transcripts:
        for index, frame in enumerate(copy.frames):
            if index >= len(longest.frames) or longest.frames[index] != frame:
                if first_fork is None or index < first_fork[0]:
                    first_fork = (index, copy)
                break
    if first_fork is None:
        return Agreement(len(transcripts), len(longest.frames))
    index, copy = first_fork
    ours, theirs = copy.frames[index], longest.frames[index] if index < len(longest.frames) else None
    if theirs is None:  # cannot happen: a shorter copy that differs is a fork at a common index
        return Agreement(len(transcripts), len(longest.frames))
    a, b = _authored(ours, keys), _authored(theirs, keys)
    where, disputed = f"at entry {index + 1} the copies hold different frames", ""
    if a is not None and b is not None:
        where += f" ({a.kind} by seat {a.seat} / {b.kind} by seat {b.seat})"
        for claim, other in ((a, b), (b, a)):
            if claim.kind == "claim" and claim.body["against"] == other.seat:
                signed = "signed " if other.signature else ""
                disputed = (f"seat {claim.seat}'s claim against seat {other.seat} is disputed by seat {other.seat}'s "
                            f"{signed}{other.kind} on the same log")
    # signed proof: one seat, one sequence number, two different frames
    names = {seat: s["name"] for seat, s in enumerate(transcripts[0].header["seats"]) if s["key"]}
    placed: dict[tuple[int, int], bytes] = {}
    for copy in transcripts:
        for frame in copy.frames:
            env = signed_by_seat(frame, keys)
            if env is None:
                continue
            other = placed.setdefault((env.seat, env.seq), frame)
            if other != frame:
                text = (f"seat {env.seat} ({names.get(env.seat, '?')}) signed two different "
                        f"frames with sequence number {env.seq}: it forked the log")
                return Agreement(len(transcripts), len(longest.frames), text + (f"; {disputed}" if disputed else ""), env.seat)
    if disputed:
        return Agreement(len(transcripts), len(longest.frames), f"{where}; {disputed}")
    where += "; no seat signed both branches: the host ordered different logs, or a copy was cut and added to"
    return Agreement(len(transcripts), len(longest.frames), where)


def _seat_keys(transcripts) -> dict[int, bytes]:
    """Each seat's key: the first copy's header's, and for a seat free when it was written (a newcomer to
    an open room, PROTOCOL.md §5.2) the key of the first join for that seat in any copy."""
    from dicetable.net.log import wire

    keys = {seat: s["key"] for seat, s in enumerate(transcripts[0].header["seats"]) if s["key"]}
    for copy in transcripts:
        for frame in copy.frames:
            try:
                env = wire.decode(frame)
            except wire.WireError:
                continue
            if env.kind == "join" and env.seat not in keys and env.signed_by(env.body["key"]):
                keys[env.seat] = env.body["key"]
    return keys
