"""The table's state machine over the ordered log: every peer (and `dicetable verify`) runs one.

A `Replica` takes the log's frames one by one, in log order, checks each completely and either
appends it (returning a `Record`) or raises a `Refusal` that names the seat at fault and the reason,
leaving the replica exactly as it was. It holds no I/O, no clock and no secrets: the session and
verify drive it, and never re-implement its checks (FAIRNESS.md §1, §3, §5).

API (stable; the session in net/session.py builds on it)
--------------------------------------------------------
    Replica(table=None, games=core.registry.get, deal_handler=None, claim_check=None)
        table:        the 16-byte table id to expect; None takes it from the first ("open") frame.
        games:        name -> GameInfo (tests may pass their own games).
        deal_handler: object with `accept(replica, envelope) -> None` (raises Refusal) that checks
                      "deal" bodies (net/deal.py); without one, "deal" frames are refused.
                      `replica.deal_handler` may also be set later, before the first deal frame.
        claim_check:  callable(replica, envelope) -> None, raising Refusal when a "claim" is not
                      justified by the session's deadline rules; None accepts a claim whenever the
                      claimed-against seat is the one the table is waiting for.

    replica.accept(frame: bytes) -> Record
        Decode (net/wire.py), check, apply, append. Raises only Refusal (subclasses below), and then
        changes nothing. Checks, in this order: wire format (Malformed), table id (WrongTable),
        author seated / seat free (NotSeated, SeatTaken), signature (BadSignature; a "reveal" may
        carry an empty signature, FAIRNESS.md §1), author sequence number (OutOfOrder), then the
        kind's own rules: NotDue (not this seat's turn / wrong phase), IllegalMoveRefused,
        BadReveal (does not open the seat's chain, wrong event), BadAnchor, BadOpen, BadJoin,
        DealRefused, BadClaim.

    Read-only views (never mutate them):
        replica.table        -> bytes | None          table id
        replica.game         -> GameInfo | None       after "open"
        replica.options      -> dict                  resolved game options
        replica.seat_count   -> int                   seats the host opened the table for
        replica.seats        -> tuple[SeatInfo, ...]  joined seats in seat order (None for free seats)
        replica.phase        -> "new" | "joining" | "ready" | "playing" | "over"
        replica.state        -> the core game state (None before "start")
        replica.events       -> tuple[Event, ...]     every random event: number, label, reveals per
                                                     seat, seed, derived outcome (fairness panel)
        replica.pending      -> Event | None          the event collecting reveals now
        replica.waiting_for  -> Waiting               what the table waits for, and from which seats
        replica.result       -> Result | None
        replica.log          -> tuple[Record, ...]    accepted records, index = log position
        replica.moves        -> int                   accepted "move" records
        replica.next_seq(seat) -> int                 the sequence number seat's next frame must carry
        replica.chain_left(seat) -> int               events seat's committed chains still cover
                                                     beyond the last one it revealed
        replica.seat_of(key: bytes) -> int | None     seat of an Ed25519 public key

Log rules
---------
- "open" (seat 0, seq 0) comes first: game, options, number of seats, the host's Ed25519 key.
- "join" for any free seat: name, key, optional curve key, chain anchor h[0] and length N; seat 0's
  join must carry the key of the "open". Keys must differ between seats.
- "start" (seat 0) once every seat has joined: the game's initial state is made.
- "move" from the seat due to act, legal in the current state.
- "reveal" {k, value} from each seat when the state waits for chance: k is the pending event's
  number (1, 2, ... over the whole table), SHA-256(chain domain ‖ value) must equal the seat's
  previous chain value. When every seat has revealed, the outcome is derived (net/fair.py) and the
  state resolved.
- "anchor" {anchor, length, first}: a seat's next chain, taking over at event `first` = the event
  after its current chain's last; accepted only while no reveal for event `first` is in the log.
- "chat" from any seated seat; "resign" from a seated seat while playing (others share the win);
  "claim" {against, reason} from a seated seat against a seat the table waits for (default,
  FAIRNESS.md §4): ends the game, the other seats share the win. Deviation: with more than two
  seats the game ends too (continuing without the seat needs engine support).
- Every seat's frames carry sequence numbers 0, 1, 2, ... with no gap or repeat.
"""

from __future__ import annotations

# Implementation follows shortly; the API above is stable.
