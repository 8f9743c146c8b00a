"""Seats that speak the real protocol in one process: selfplay --record, tests, benchmarks.

`ProtocolSeat` is one player's side of the protocol — its own Ed25519 key (net/identity.py), its own
secret hash chains (net/chance/reveal_chain.py) — building its frames with net/log/wire.py exactly as a networked seat
does. `play_table` runs a whole game among such seats: a host replica orders the log, every seat
checks every accepted frame with its own replica (net/log/replica.py), and the log goes to a transcript
(net/log/transcript.py) that `dicetable verify` replays.

Games with hidden cards run the real card deal (net/cards/deal.py through net/cards/table_deals.py's TableDeals):
each seat's replica holds that seat's deal secrets and its own view only, the host's replica holds
none; a move that pays hidden cards is preceded by the payer's public reveal of them, and the game
ends once every deck has been opened and checked.
"""

from __future__ import annotations

import random
import secrets
from pathlib import Path
from typing import Any, Sequence

from dicetable.core.game import GameInfo, Move
from dicetable.net.chance import seal as sealed
from dicetable.net.log import links
from dicetable.net.log import wire
from dicetable.net.chance.reveal_chain import DEFAULT_LENGTH, REFRESH_MARGIN, Chain
from dicetable.net.cards.table_deals import TableDeals, paid_cards
from dicetable.net.identity import Profile
from dicetable.net.log.replica import Replica
from dicetable.net.log.transcript import TranscriptWriter, header_for


class ProtocolSeat:
    """One seat's author side: keys, chains, and the frames it sends."""

    def __init__(self, profile: Profile, seat: int, table: bytes, chain_length: int = DEFAULT_LENGTH,
                 refresh_margin: int = REFRESH_MARGIN) -> None:
        self.profile = profile
        self.refresh_margin = refresh_margin
        self.seat = seat
        self.table = table
        self.chain_length = chain_length
        self.chains = [Chain(table, seat, length=chain_length, first=1)]
        self.seq = 0
        self.sealed: tuple[int, Move] | None = None  # my sealed answer, until it is opened
        self.view: Replica | None = None  # this seat's own replica: its frames build on the log as it has it

    def frame(self, kind: str, body: dict, sign: bool = True) -> bytes:
        prev = self.view.head if self.view is not None else wire.Link(0, links.genesis(self.table))
        data = wire.make_frame(self.profile, self.table, self.seat, self.seq, kind, body, prev, sign=sign)
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

    def rematch(self, agree: bool = True) -> bytes:
        """My consent to the next game, with the options my own replica says its rules give."""
        return self.frame("rematch", wire.rematch_body(self.view.game_number + 1, self.view.next_options, agree))

    def receipt(self) -> bytes:
        """My signed receipt of the log as my replica holds it: the game's end (PROTOCOL.md §5.13)."""
        return self.frame("receipt", wire.receipt_body(self.view.game_number))

    def seal(self, step: int, move: Move) -> bytes:
        """A sealed answer to `step` (net/chance/seal.py); `unseal` opens it once every seat has sealed."""
        self.sealed = (step, move)
        commit = sealed.commitment(self.table, step, self.seat, move.to_data(), self._nonce(step))
        return self.frame("seal", wire.seal_body(step, commit))

    def unseal(self, step: int) -> bytes:
        answered, move = self.sealed
        assert answered == step, f"seat {self.seat} sealed step {answered}, not {step}"
        return self.frame("unseal", wire.unseal_body(step, move, self._nonce(step)))

    def _nonce(self, step: int) -> bytes:
        return sealed.nonce_for(self.chains[0].secret, self.table, step, self.seat)

    def reveal(self, k: int, sign: bool = False) -> bytes:
        first = self.view.membership.first_event(self.seat) if self.view is not None else None
        if first is not None:  # a newcomer to an open room: its chain opens where the log placed it (§5.2)
            self.chains[0].first = first
        chain = next(c for c in self.chains if c.covers(k))
        return self.frame("reveal", wire.reveal_body(k, chain.reveal(k)), sign=sign)

    def refresh(self, last_revealed: int) -> bytes | None:
        """An "anchor" for the next chain when the current one runs low, else None."""
        current = self.chains[-1]
        if current.last - last_revealed >= self.refresh_margin:
            return None
        chain = Chain(self.table, self.seat, length=self.chain_length, first=current.last + 1)
        self.chains.append(chain)
        return self.frame("anchor", wire.anchor_body(chain.anchor, chain.length, chain.first))


class Table:
    """A host replica ordering the log and one checking replica per seat, all in one process."""

    def __init__(self, game: GameInfo, options: dict, names: Sequence[str], chain_length: int = DEFAULT_LENGTH,
                 transcript: Path | None = None, games=None, refresh_margin: int = REFRESH_MARGIN,
                 present: int | None = None) -> None:
        """`present`: how many of the seats join before the start (an open room starts with them and
        takes the others later, each by its `join`); None: every seat."""
        self.game = game
        self.table = secrets.token_bytes(16)
        self.seats = [ProtocolSeat(Profile.generate(name), s, self.table, chain_length, refresh_margin)
                      for s, name in enumerate(names)]
        kwargs = {"games": games} if games else {}
        self.host = Replica(self.table, deal_handler=TableDeals(), **kwargs)  # the gate holds no secrets
        self.peers = [Replica(self.table, deal_handler=TableDeals(seat=s), **kwargs) for s in range(len(names))]
        for seat, peer in zip(self.seats, self.peers):
            seat.view = peer
        self.transcript_path = transcript
        self.writer: TranscriptWriter | None = None
        self._pending: list[bytes] = []  # accepted before the header could be written
        self.results_written = 0  # games whose result is in the transcript
        self.post(self.seats[0].open(game, options, len(names)))
        for seat in self.seats[:present]:
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
                if self.host.phase not in ("new", "joining", "ready"):  # every seat in, or an open room started
                    self.writer = TranscriptWriter.create(self.transcript_path, header_for(self.host))
                    for early in self._pending:
                        self.writer.append_frame(early)
            else:
                self.writer.append_frame(frame)
            if len(self.host.series) > self.results_written:
                self.writer.append_result(self.host.result)
                self.results_written += 1
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
            peer = self.peers[s]
            move = bots[s].choose(peer.state.view(s))
            cards = paid_cards(peer.state, move)
            if cards:  # a public reveal of the paid cards first, as a session does
                for body in peer.deal_handler.show_bodies(peer, cards):
                    self.post(self.seats[s].frame("deal", body))
                while self.deal_round(rng):
                    pass
            self.post(self.seats[s].move(move))
        elif waiting.action in ("seal", "unseal"):
            step = self.host.sealing.step
            order = list(waiting.seats)
            rng.shuffle(order)  # seals and openings arrive in any order
            for s in order:
                peer = self.peers[s]
                if waiting.action == "seal":
                    self.post(self.seats[s].seal(step, bots[s].choose(peer.state.asking(s).view(s))))
                else:
                    self.post(self.seats[s].unseal(step))
        elif waiting.action == "deal":
            if not self.deal_round(rng):
                raise RuntimeError(f"the table waits for {waiting} but no seat has a deal message to send")
        else:
            raise RuntimeError(f"the table waits for {waiting}")

    def deal_round(self, rng: random.Random) -> bool:
        """Every seat sends what its deal handler owes now (in a shuffled order); False if none did."""
        order = list(range(len(self.seats)))
        rng.shuffle(order)
        sent = False
        for s in order:
            for body in self.peers[s].deal_handler.next_bodies(self.peers[s]):
                self.post(self.seats[s].frame("deal", body))
                sent = True
        return sent

    def rematch(self) -> None:
        """Every seat agrees to the next game, in seat order: the last consent starts it."""
        for seat in self.seats:
            self.post(seat.rematch())

    def play(self, bots: Sequence[Any], rng: random.Random, max_steps: int = 1_000_000, close: bool = True):
        """Play the current game to its end; `close=False` keeps the transcript open for a rematch."""
        try:
            for _ in range(max_steps):
                if self.host.settled:  # over, and every deck of a card deal opened and checked
                    for seat in self.seats:  # every seat confirms the end (PROTOCOL.md §5.13)
                        if self.host.receipt_owed(seat.seat):
                            self.post(seat.receipt())
                    return self.host.result
                self.step(bots, rng)
            raise RuntimeError(f"game did not end within {max_steps} steps")
        finally:
            if self.writer is not None and close:
                self.writer.close()


def play_table(game: GameInfo, options: dict, bots: Sequence[Any], names: Sequence[str], rng: random.Random,
               transcript: Path | None = None, chain_length: int = DEFAULT_LENGTH) -> Table:
    """Play one game by the protocol among in-process seats; returns the finished Table."""
    table = Table(game, options, names, chain_length, transcript)
    table.play(bots, rng)
    return table
