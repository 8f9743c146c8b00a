"""Seats that speak the real protocol in one process: selfplay --record, tests, benchmarks.

`ProtocolSeat` is one player's side of the protocol — its own Ed25519 key (net/identity.py), its own
secret hash chains (net/chain.py) — building its frames with net/wire.py exactly as a networked seat
does. `play_table` runs a whole game among such seats: a host replica orders the log, every seat
checks every accepted frame with its own replica (net/replica.py), and the log goes to a transcript
(net/transcript.py) that `dicetable verify` replays.
"""

from __future__ import annotations

import random
import secrets
from pathlib import Path
from typing import Any, Sequence

from core.game import GameError, GameInfo, Move
from net import wire
from net.chain import DEFAULT_LENGTH, REFRESH_MARGIN, Chain
from net.identity import Profile
from net.replica import Replica
from net.transcript import TranscriptWriter, header_for


class NeedsDeal(GameError):
    """The game deals hidden cards: in-process seats do not run the card deal (net/deal.py) yet."""


class ProtocolSeat:
    """One seat's author side: keys, chains, and the frames it sends."""

    def __init__(self, profile: Profile, seat: int, table: bytes, chain_length: int = DEFAULT_LENGTH,
                 refresh_margin: int = REFRESH_MARGIN) -> None:
        self.profile = profile
        self.refresh_margin = refresh_margin
        self.seat = seat
        self.table = table
        self.chain_length = chain_length
        self.chains = [Chain(length=chain_length, first=1)]
        self.seq = 0

    def frame(self, kind: str, body: dict, sign: bool = True) -> bytes:
        data = wire.seal(self.profile, self.table, self.seat, self.seq, kind, body, sign=sign)
        self.seq += 1
        return data

    def open(self, game: GameInfo, options: dict, seats: int) -> bytes:
        return self.frame("open", wire.open_body(game.name, options, seats, self.profile.public_key))

    def join(self) -> bytes:
        chain = self.chains[0]
        body = wire.join_body(self.profile.name, self.profile.public_key, chain.anchor, chain.length,
                              self.profile.curve_public)
        return self.frame("join", body)

    def start(self) -> bytes:
        return self.frame("start", {})

    def move(self, move: Move) -> bytes:
        return self.frame("move", wire.move_body(move))

    def reveal(self, k: int, sign: bool = False) -> bytes:
        chain = next(c for c in self.chains if c.covers(k))
        return self.frame("reveal", wire.reveal_body(k, chain.reveal(k)), sign=sign)

    def refresh(self, last_revealed: int) -> bytes | None:
        """An "anchor" for the next chain when the current one runs low, else None."""
        current = self.chains[-1]
        if current.last - last_revealed >= self.refresh_margin:
            return None
        chain = Chain(length=self.chain_length, first=current.last + 1)
        self.chains.append(chain)
        return self.frame("anchor", wire.anchor_body(chain.anchor, chain.length, chain.first))


class Table:
    """A host replica ordering the log and one checking replica per seat, all in one process."""

    def __init__(self, game: GameInfo, options: dict, names: Sequence[str], chain_length: int = DEFAULT_LENGTH,
                 transcript: Path | None = None, games=None, refresh_margin: int = REFRESH_MARGIN) -> None:
        self.game = game
        self.table = secrets.token_bytes(16)
        self.seats = [ProtocolSeat(Profile.generate(name), s, self.table, chain_length, refresh_margin)
                      for s, name in enumerate(names)]
        kwargs = {"games": games} if games else {}
        self.host = Replica(self.table, **kwargs)
        self.peers = [Replica(self.table, **kwargs) for _ in names]
        self.transcript_path = transcript
        self.writer: TranscriptWriter | None = None
        self._pending: list[bytes] = []  # accepted before the header could be written
        self.result_written = False
        self.post(self.seats[0].open(game, options, len(names)))
        for seat in self.seats:
            self.post(seat.join())
        self.post(self.seats[0].start())

    def post(self, frame: bytes):
        """The host orders `frame` (a Refusal propagates); every seat checks it again."""
        record = self.host.accept(frame)
        for peer in self.peers:
            peer.accept(frame)
        if self.transcript_path is not None:
            if self.writer is None:
                self._pending.append(frame)
                if all(self.host.seats) and self.host.seats:
                    self.writer = TranscriptWriter.create(self.transcript_path, header_for(self.host))
                    for early in self._pending:
                        self.writer.append_frame(early)
            else:
                self.writer.append_frame(frame)
            if self.host.result is not None and not self.result_written:
                self.writer.append_result(self.host.result)
                self.result_written = True
        return record

    def step(self, bots: Sequence[Any], rng: random.Random) -> None:
        """One round of the protocol: every missing reveal (in a shuffled order), or one move."""
        waiting = self.host.waiting_for
        if waiting.action == "reveal":
            k = self.host.pending.number
            order = list(waiting.seats)
            rng.shuffle(order)  # arrival order at the host must not matter
            for s in order:
                self.post(self.seats[s].reveal(k))
                anchor = self.seats[s].refresh(k)
                if anchor is not None:
                    self.post(anchor)
        elif waiting.action == "move":
            (s,) = waiting.seats
            view = self.peers[s].state.view(s)
            self.post(self.seats[s].move(bots[s].choose(view)))
        elif waiting.action == "deal":
            raise NeedsDeal(f"{self.game.title} deals hidden cards; recording it needs the in-process card deal,"
                            " which is not wired yet: play it without --record")
        else:
            raise RuntimeError(f"the table waits for {waiting}")

    def play(self, bots: Sequence[Any], rng: random.Random, max_steps: int = 100_000):
        try:
            for _ in range(max_steps):
                if self.host.result is not None:
                    return self.host.result
                self.step(bots, rng)
            raise RuntimeError(f"game did not end within {max_steps} steps")
        finally:
            if self.writer is not None:
                self.writer.close()


def play_table(game: GameInfo, options: dict, bots: Sequence[Any], names: Sequence[str], rng: random.Random,
               transcript: Path | None = None, chain_length: int = DEFAULT_LENGTH) -> Table:
    """Play one game by the protocol among in-process seats; returns the finished Table."""
    table = Table(game, options, names, chain_length, transcript)
    try:
        table.play(bots, rng)
    except NeedsDeal:
        if transcript is not None:
            Path(transcript).unlink(missing_ok=True)  # an unfinishable transcript helps nobody
        raise
    return table
