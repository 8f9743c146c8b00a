"""The orderer's watchers: connections that follow a table's log without a seat (PROTOCOL.md §10.11).

A watcher proves a key as a joiner does (`who`, then a hello signing this connection's challenge), but
its hello is `watch`, signed under its own label (`watch_bytes`), so a watch hello is never a seat's.
It gets a route of its own, apart from the seats' (`orderer.routes`): nothing sent to seats reaches it
(presence, faults, deputies, `ask`), and nothing it sends is taken as a seat's (it can send `ping`
alone: no frame, no witness, no give). What it is sent is the log itself — signed frames every seat
holds and `dicetable verify` reads, where a hidden card's key travels only boxed to its drawer and a
sealed answer only as its commitment until its seat opens it — and never ahead of the seats: only the
log's durable part (`outbox.durable()`), which every seat was sent first.

The table does not wait for its watchers and a flood of them costs bounded memory and time:
- at most MAX_WATCHERS per table (the next watch hello hears `full`);
- entries go out to watchers in sweeps, at most every WATCH_EVERY seconds, each packed once for every
  watcher that holds as much, and spread over loop turns (WATCH_BATCH watchers a turn, after the turn's
  own sends): no burst of them sits inside a seat's round trip;
- each watcher has at most WATCH_WINDOW bytes of entries sent past what its pings acknowledged; past
  that it gets nothing until it pings (then the next sweep catches it up from its `next`, window by window);
- a watcher silent for `drop_after`, or behind its window for `grace`, is dropped (`full`, with why).
Seats hear the count and names of the watchers (`watchers {count, names}`) when it changes, at most
every WATCHERS_TOLD_EVERY seconds.
"""

from __future__ import annotations

import hmac
import time
from collections import deque
from dataclasses import dataclass, field

from dicetable.net.identity import fingerprint, verify_signature
from dicetable.net.table import host_packets
from dicetable.net.table.events import Watching
from dicetable.net.table.outbox import chunks
from dicetable.net.reach.transport import pack

MAX_WATCHERS = 100  # watchers per table
WATCH_WINDOW = 256 * 1024  # bytes of entries a watcher may have unacknowledged
WATCH_EVERY = 0.25  # seconds between sweeps that send new entries to the watchers
WATCH_BATCH = 20  # watchers sent to per loop turn (a sweep spreads over turns: no burst inside a roll's round trip)
WATCHERS_TOLD_EVERY = 1.0  # seconds between the seats' `watchers` notices
MAX_NAME = 32  # characters of a watcher's name
NAMES_TOLD = 8  # watchers' names in a `watchers` notice (the count says how many in all)
WATCH_LABEL = b"dicetable/watch/v1"
WATCH_FIELDS = frozenset({"key", "nonce", "proof", "box", "next", "name"})
MAX_NEXT = 2**32


def watch_bytes(table: bytes, host_key: bytes, nonce: bytes, key: bytes, box: bytes) -> bytes:
    """What a watch hello signs: its label, the table, the host's curve key, the connection's challenge,
    the watcher's key and its box (PROTOCOL.md §10.11); unlike a seat's hello (`wire.hello_bytes`)."""
    return WATCH_LABEL + table + host_key + nonce + key + box


def watch_fault(body: dict) -> str:
    """Why a watch hello is malformed, or "" when it is well-formed."""
    if set(body) != WATCH_FIELDS:
        return "a malformed watch hello: it has exactly key, nonce, proof, box, next and name (update dicetable?)"
    if any(type(body[f]) is not bytes or len(body[f]) != 32 for f in ("key", "nonce", "box")):
        return "a malformed watch hello: its key, nonce and box are 32 bytes each"
    if type(body["proof"]) is not bytes or len(body["proof"]) != 64:
        return "a malformed watch hello: its proof is a 64-byte signature"
    if type(body["next"]) is not int or not 0 <= body["next"] <= MAX_NEXT:
        return "a malformed watch hello: its next is a log index"
    name = body["name"]
    if type(name) is not str or len(name) > MAX_NAME or not name.isprintable():
        return f"a malformed watch hello: its name is printable text of at most {MAX_NAME} characters"
    return ""


@dataclass
class Watcher:
    """One watcher as the orderer holds it: its key and name, its tags, and how far it is sent and caught up."""

    peer: bytes  # its connection
    key: bytes
    name: str
    link: host_packets.Tagger
    sent: int  # the log index its next entries start at
    acked: int  # what its last ping said it holds
    last_seen: float
    behind_since: float | None = None  # since when its window was full with entries waiting
    unacked: deque = field(default_factory=deque)  # (end index, bytes) of entries packets past `acked`

    def room(self) -> int:
        while self.unacked and self.unacked[0][0] <= self.acked:
            self.unacked.popleft()
        return WATCH_WINDOW - sum(size for _, size in self.unacked)

    def __post_init__(self) -> None:
        self.said = f"{self.name} ({fingerprint(self.key)})" if self.name else fingerprint(self.key)


class Watchers:
    """An orderer's watchers (module docstring): their hellos, pings, entries and drops."""

    def __init__(self, orderer) -> None:
        self.orderer = orderer
        self.by_peer: dict[bytes, Watcher] = {}
        self._sent_at = 0.0
        self._sweep: list[bytes] = []  # watchers this sweep has yet to send to
        self._packed: dict[tuple[int, int], list] = {}  # (from, to) -> its entries packets, packed once a sweep
        self._told: tuple[int, tuple[str, ...]] = (0, ())
        self._told_at = 0.0
        self._changed = False  # a watcher came or went since the seats were last told

    def __contains__(self, peer: bytes) -> bool:
        return peer in self.by_peer

    def __len__(self) -> int:
        return len(self.by_peer)

    def names(self) -> list[str]:
        return [w.said for w in self.by_peer.values()]

    # -- packets ---------------------------------------------------------------------------------
    def hello(self, peer: bytes, body: dict, now: float) -> None:
        """A watch hello: a route apart from the seats', or `full` with why not."""
        orderer = self.orderer
        door, replica = orderer.door, orderer.replica
        fault = watch_fault(body)
        if fault:
            orderer.socket.send(peer, "full", {"reason": fault})
            return
        key, nonce, proof, box = body["key"], body["nonce"], body["proof"], body["box"]
        if not hmac.compare_digest(nonce, door.challenge(peer)):
            door.who(peer)  # signed for another connection: ask again
            return
        if not verify_signature(key, watch_bytes(replica.table, orderer.socket.public_key, nonce, key, box), proof):
            orderer.socket.send(peer, "full", {"reason": "the watch hello does not prove its key"})
            return
        try:
            link = host_packets.Tagger.answering(orderer.box, box, replica.table, nonce, key)
        except host_packets.BadBox as error:
            orderer.socket.send(peer, "full", {"reason": f"a malformed watch hello: {error}"})
            return
        if peer in orderer.routes:
            orderer.socket.send(peer, "full", {"reason": "this connection holds a seat: a seat does not watch"})
            return
        if peer not in self.by_peer and len(self.by_peer) >= MAX_WATCHERS:
            reason = f"the table has {MAX_WATCHERS} watchers already: try again later"
            orderer.socket.send(peer, "tagged", link.seal("full", {"reason": reason}))
            return
        start = min(body["next"], len(replica.log))
        self.by_peer[peer] = Watcher(peer, key, body["name"], link, start, start, now)
        self._changed = True
        self._tell(peer, "welcome", {"watching": True, "length": len(replica.log), "table": replica.table,
                                     "timing": orderer.timing.to_data()})
        self._send(self.by_peer[peer], now)

    def handle(self, peer: bytes, op: str, body: dict, now: float) -> None:
        """A watcher's packet: `ping {next}` acknowledges what it holds; what follows goes in the next sweep
        (never packed for one watcher inside a loop turn: a hundred pinging watchers would sit in every roll)."""
        watcher = self.by_peer[peer]
        if op != "ping" or type(body.get("next")) is not int or not 0 <= body["next"] <= len(self.orderer.replica.log):
            return  # a watcher can do nothing else at the table
        watcher.last_seen = now
        holds = body["next"]
        if holds < watcher.sent and holds <= watcher.acked:  # no progress since its last ping: what went past it was lost
            watcher.sent = holds
            watcher.unacked.clear()
        watcher.acked = holds
        self._tell(peer, "pong", {"length": len(self.orderer.replica.log)})  # its entries come in the next sweep

    def _tell(self, peer: bytes, op: str, body: dict) -> None:
        self.orderer.socket.send(peer, "tagged", self.by_peer[peer].link.seal(op, body))

    # -- the loop --------------------------------------------------------------------------------
    def step(self, now: float) -> None:
        """After the orderer's loop turn: new entries to the watchers (at most every WATCH_EVERY), the
        silent and the stuck dropped, the seats told the count."""
        if not self.by_peer:
            self._tell_seats(now)
            return
        if not self._sweep and now - self._sent_at >= WATCH_EVERY:
            self._sent_at = now
            self._sweep = list(self.by_peer)
            self._packed = {}
        timing = self.orderer.timing
        for peer in self._sweep[:WATCH_BATCH]:
            watcher = self.by_peer.get(peer)
            if watcher is None:
                continue
            if now - watcher.last_seen > timing.drop_after:
                self.drop(peer, f"silent for more than {timing.drop_after:g} s")
            elif watcher.behind_since is not None and now - watcher.behind_since > timing.grace:
                self.drop(peer, f"too slow: behind the table for more than {timing.grace:g} s")
            else:
                self._send(watcher, now, sweep=True)
        del self._sweep[:WATCH_BATCH]
        self._tell_seats(now)

    def _send(self, watcher: Watcher, now: float, sweep: bool = False) -> None:
        """The log's durable frames past what `watcher` was sent, as far as its window allows (in a sweep:
        packed once for every watcher that holds as much)."""
        end = self.orderer.outbox.durable()
        if watcher.sent >= end:
            watcher.behind_since = None
            return
        room = watcher.room()
        for first, count, size, packet in self._entries(watcher.sent, end, sweep):
            if size > room and watcher.unacked:
                break
            self.orderer.socket.send(watcher.peer, "tagged", watcher.link.seal_packed(packet))
            watcher.sent = first + count
            watcher.unacked.append((watcher.sent, size))
            room -= size
        watcher.behind_since = None if watcher.sent >= end else (watcher.behind_since or now)

    def _entries(self, start: int, end: int, cached: bool) -> list:
        """The log's frames from `start` to `end` as entries packets (first, frames, bytes, packed inner
        packet), packed once a sweep for every watcher that holds as much (most hold the same)."""
        packets = self._packed.get((start, end))
        if packets is None:
            log = self.orderer.replica.log
            packets = [(first, len(frames), sum(len(f) for f in frames), pack("entries", {"start": first, "frames": frames}))
                       for first, frames in chunks([log[i].frame for i in range(start, end)], start)]
            if cached:  # one sweep's: every watcher in it is sent up to the same end
                self._packed[(start, end)] = packets
        return packets

    def drop(self, peer: bytes, why: str) -> None:
        """Stop sending to a watcher: it hears `full` saying why, and may watch again."""
        self._tell(peer, "full", {"reason": f"stopped watching: {why}"})
        del self.by_peer[peer]
        self._changed = True

    def _tell_seats(self, now: float) -> None:
        """The seats (and the orderer's app) hear who watches when it changed, at most every WATCHERS_TOLD_EVERY."""
        if not self._changed or now - self._told_at < WATCHERS_TOLD_EVERY:  # not 100 names sorted in each loop turn
            return
        self._changed = False
        names = sorted(self.names())
        told = (len(names), tuple(names[:NAMES_TOLD]))
        if told == self._told:
            return
        self._told, self._told_at = told, now
        orderer = self.orderer
        orderer.emit(Watching(told[0], told[1]))
        for peer in orderer.routes:
            orderer.tell(peer, "watchers", {"count": told[0], "names": list(told[1])})

    def close(self) -> None:
        """The table closes: each watcher gets what its window allows of the log's end, then `full` saying so."""
        now = time.monotonic()
        for peer, watcher in list(self.by_peer.items()):
            self._send(watcher, now)
            self.drop(peer, "the table is closed")

    def seated(self, peer: bytes) -> None:
        """A seat's hello on a watcher's connection: it stops watching there."""
        self._changed |= self.by_peer.pop(peer, None) is not None


def told_watching(body: dict) -> Watching | None:
    """A seat's reading of the orderer's `watchers {count, names}` notice; None when it is malformed."""
    count, names = body.get("count"), body.get("names")
    if type(count) is not int or not 0 <= count <= MAX_WATCHERS or type(names) is not list or len(names) > NAMES_TOLD:
        return None
    if any(type(n) is not str or len(n) > MAX_NAME + 20 or not n.isprintable() for n in names):
        return None
    return Watching(count, tuple(names))
