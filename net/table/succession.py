"""The table outlives its host (issue 16): on a relay, a seat takes over ordering the log when the seat
that orders it (the host seat, at first) has been gone past the grace.

Who takes over, and when. A joiner whose orderer has been silent past `timing.grace` by its own clock
(net/table/joiner.py) follows `follow()`: the seats try in a fixed order, seat 1, 2, ..., then seat 0, none out
of the game, the k-th of them (k = 0, 1, ...) in the k-th `step` after the orderer has been silent
for the grace and for the relay's HOST_AWAY (before that the relay lets nobody in its place), turn
by turn, so the lowest seat still here takes over and the next one does if it is gone too. Trying is
serving the table at the same relay with the seat's own key (net/reach/relay_link.py): the relay lets it
only if the table's owner named that key among its seats (`deputies`, once every seat had joined: a
list the owner signs and every seat holds, shown again to a relay that lost it, net/table/deputies.py) and
nobody serves the table now; a seat that hears `relay_taken` leaves it to the seat that won, which its
pings reach through the relay. After every seat has had two turns, a seat nobody took over for is
stranded, told what it can do, as without a relay.

What the successor is. An orderer (net/table/orderer.py) around the seat's own Seat (its replica,
chains, transcript, clocks and pending frames: nothing is copied), serving at the relay; the joiner's
thread runs it in place (`PeerSession.run`), so the app's commands and events go on as they were. The other seats reconnect
to it as after any drop (their hello proves their key on the relay's connection; the relay is the
server they authenticate) and catch up by log index. A seat whose copy is longer than the
successor's (the host ordered frames the successor had not heard yet) is asked for them (`ask
{next}`, answered `give {start, frames}`): the successor takes them only through its own replica, so
they are checked as any frame is, and hash-linked to its copy (net/table/reclaim.py: the one way
every resumed orderer takes them back). Each seat's own clock says since when
seat 0 has been away, so the seats claim against it by the default rules (FAIRNESS.md §4: the claim
alone with 2 seats, co-signed with 3 or more), and the game ends by its rules or by a checked claim.

Trust. The successor is no more trusted than the host was: every seat checks every frame it orders,
a log that forks from a seat's copy fails that seat's hash links (the seat names the ordering seat,
whose tag was on the packet, and leaves with its copy), and a seat whose frames it
drops or delays disputes the claim that follows with its own unordered frames as evidence. Joiners
keep checking that the table's `open` is signed by the owner key their invite names. A key with no
seat cannot serve the table at the relay (`this table belongs to another key`); a malicious relay
could let one, but it still orders only frames the seats signed, in a log each seat checks. The
successor's control packets (`presence`, `entries`, `ask`, ...) are tagged as the host's are
(net/table/host_packets.py) under its own seat key; a seat takes them only once its own clock has the orderer
gone past the grace (`follow` calls `trust`), only from the seats of `order` in the log, and once one
of them has answered, from that seat alone (and the owner) until the next hand-over. So before a
hand-over a relay colluding with a seat cannot speak as an orderer, and after one it cannot speak
for the seat that orders, even in league with another seat.

The host seat coming back. Its resumed session (`dicetable host --resume`, the app's resume) finds the
table served by the successor (`relay_taken`, net/table/host.py's TakenOver) and rejoins it as seat 0
(`PeerSession.rejoining`), a joiner like the others,
catching up by log index: nothing is lost, and nothing needs a second hand-over. Taking ordering back
was weighed and not done: the successor's copy is the table's (the longest, checked by every seat),
and a hand-back would race the seats over two orderers once more for no gain in trust.

A host killed between writing a batch and relaying it (net/table/outbox.py `release`) holds, at the end of its
copy, frames nobody saw, where the table went on with others. Rejoining, it compares its whole copy
with the successor's log (its first hello asks from entry 0) and cuts that tail (net/table/following.py `_cut`):
only a host seat rejoining (a joiner's copy holds only what an orderer relayed: it never cuts), only
within the copy it resumed with, from an entry at or past the successor's log at the hand-over (its
welcome says `handed`: its copy then, with the seats' longer copies it took in, all any seat holds of
what the host relayed) and past every entry both agree on. Its transcript is rewritten atomically with
the cut frames kept as refused records (net/log/transcript.py `cut`), so it verifies and agrees with the
other copies. A difference before that point is named as a fork, as before, and nothing is cut. A
successor saying a smaller `handed` could have the host cut frames it did relay, but only where its
own log already differs from what the host relayed: a fork the seats holding those frames name.

Until the seats are back (each routed, its copy no longer than the successor's, or the grace gone
by; net/table/reclaim.py `seats_back`), the successor authors nothing, not even a claim or the app's
move: a frame of its own could take a place their copies hold (its own frames the host ordered, among them).

Known limits: after a second hand-over a seat's own clock starts on the vanished successor only
when the next orderer reports it away. Between its grace passing and the first orderer's answer, a
seat takes the tag of any seat that may succeed, not only the one whose turn it is (the relay
decides which one serves): a relay in league with a seat could answer first and feed it that seat's
word (frames it orders are still signed and checked, claims still co-signed). The cut of a resumed
host seat (above) trusts the successor's `handed`, and that every seat's longer copy reached the
successor before it ordered in that place (`seats_back` waits the grace at most for a seat
away). A host seat partitioned past the grace while still running orders frames nobody sees (its
resume cuts them under the same bound; only the killed host's tail is tested). A resumed owner that finds nobody serving
(its successor gone too) orders again as a host and takes back, as any resumed host does, what the
seats still here hold beyond its copy; entries only the vanished successor held are lost with it
(nobody else saw them, so no seat acted on them).
"""

from __future__ import annotations

import time

from dicetable.net.table import host_packets
from dicetable.net.table import deputies
from dicetable.net.table.orderer import Orderer
from dicetable.net.table.outbox import entry_chunks
from dicetable.net.reach.relay import HOST_AWAY
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_link import RelayHostSocket, RelayTaken
from dicetable.net.reach.transport import TransportError
from dicetable.net.table.events import Dropped


def step(timing) -> float:
    """Seconds between two seats' turns to take over: long enough for the first to be heard."""
    return max(2 * timing.drop_after, 5 * timing.heartbeat, 1.0)


def order(replica) -> list[int]:
    """The seats that may take over ordering, in the order they try (seat 0 last: the host come back)."""
    return [s for s in (*range(1, replica.seat_count), 0) if s not in replica.out]


def orderers(replica, own: int | None) -> dict[int, bytes]:
    """The X25519 keys (net/table/host_packets.py) of the seats but `own` that may order now: their join frames' keys."""
    seats = replica.seats
    boxes = {s: host_packets.seat_box_public(seats[s].key) for s in order(replica)
             if s != own and s < len(seats) and seats[s] is not None}
    return {s: box for s, box in boxes.items() if box is not None}


class Succession:
    """A seat's wait for a new orderer, since the orderer went silent (by the seat's own clock)."""

    def __init__(self, since: float):
        self.since = since
        self.tried = float("-inf")


def follow(peer, now: float) -> bool:
    """For a joiner whose orderer has been silent past the grace: take over ordering when this seat's
    turn comes (then `peer.successor` is set). True while the table may still get an orderer; False
    when the seat is stranded (no relay, no game under way, or nobody took over in time)."""
    replica = peer.replica
    if peer.invite.owner is None or replica.phase not in ("playing", "over") or peer.seat is None:
        return False
    if peer.succession is None:  # the first hand-over: the orderer gone is the host seat
        peer.own.defaults.away_since.setdefault(0, peer.orderer_presence.away_since)
        peer.emit(Dropped(0, f"gone for more than {peer.timing.grace:g} s: a seat takes over ordering "
                                          "the log through the relay"))
    if peer.succession is None or peer.succession.since != peer.orderer_presence.away_since:
        peer.succession = Succession(peer.orderer_presence.away_since)
        peer.link.trust(orderers(replica, peer.seat))  # the orderer is gone: the next one may tag with its seat key
    wait, seats = step(peer.timing), order(replica)
    # From when the relay surely lets a seat serve (its host silent for HOST_AWAY), seat by seat in turn.
    late = now - peer.orderer_presence.away_since - max(peer.patience(), HOST_AWAY)
    turn = peer.seat in seats and late >= 0 and int(late // wait) % len(seats) == seats.index(peer.seat)
    if turn and now - peer.succession.tried >= wait:
        peer.succession.tried = now
        peer.successor = take_over(peer)
        if peer.successor is not None:
            return True
    return bool(seats) and late < 2 * len(seats) * wait + peer.timing.connect_timeout  # every seat has had two turns


def take_over(peer) -> Orderer | None:
    """Serve the peer's table at its relay with the peer's key, or None when the relay lets it not."""
    invite = peer.invite
    relay = RelayAddress(invite.address, invite.port, invite.host_key)
    listing = peer.listing if deputies.fits(peer.listing, peer.replica, invite.owner) else None  # none naming a stranger
    try:
        socket = RelayHostSocket(peer.profile, relay, invite.table_id, peer.timing.connect_timeout, listing=listing)
    except RelayTaken:
        return None  # another seat won: this seat's pings reach it through the relay
    except TransportError as error:
        peer.refusals.append(str(error))
        return None
    return hand_over(peer, socket)


def give(peer, body: dict) -> None:
    """Answer an orderer's `ask`: the frames of this seat's copy from `next` on (they are checked there)."""
    start, log, now = body.get("next"), peer.replica.log, time.monotonic()
    if type(start) is not int or not 0 <= start < len(log) or now - peer.gave_at < peer.timing.heartbeat:
        return  # at most once a heartbeat: asks relayed again and again cost this seat no more uploads
    peer.gave_at = now
    for first, frames in entry_chunks(log, start):  # signed frames, each checked again by the successor's replica
        peer.to_orderer("give", {"start": first, "frames": frames})


def hand_over(peer, socket: RelayHostSocket) -> Orderer:
    """The peer's seat orders the log from now on: the same Seat, its driver an orderer serving at the relay."""
    peer.hang_up()
    successor = Orderer(peer.own, socket, relay=socket.relay)
    successor.box = host_packets.host_box(peer.profile, relayed=True)  # it tags with its seat key (net/table/host_packets.py)
    successor.took_over()
    return successor
