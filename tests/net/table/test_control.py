"""The host's control packets are tagged end to end (net/table/host_packets.py): a relay that speaks for the host
— "seat 2 is away", "you are refused", "the table is full", "you have seat 0", "the log is a million
entries long" — or replays what the host once said is ignored and named, never followed, through
the real relay, host and seats on 127.0.0.1; the tags themselves are checked piece by piece."""

from __future__ import annotations

import queue
import time
from contextlib import contextmanager
from dataclasses import replace

import pytest

from dicetable.core import registry
from dicetable.net.table import host_packets
from dicetable.net.table import deputies
from dicetable.net.log import wire
from dicetable.net.table.events import ClaimDisputed, Claimable, Dropped, Fault, Refused, Returned, YourTurn
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.reach.invite import Invite
from dicetable.net.table.joiner import PeerSession
from dicetable.net.reach.relay import RelayServer
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.reach.transport import MAX_PACKET, curve_keypair, pack, unpack
from dicetable.net.log.verify import verify
from net_helpers import FAST, Running, in_thread, stop_all, wait_until

BREAKER = registry.get("dicebreaker")
TABLE, CHALLENGE = bytes(range(16)), bytes(32)


# -- the tags, piece by piece ---------------------------------------------------------------------
def pair(profile=None, relayed=False):
    """A host's tagger and a joiner's link agreeing on one hello's key, as host and peer make them."""
    host = profile or Profile.generate("ann")
    joiner_key = Profile.generate("bob").public_key
    public = bytes(host_packets.host_box(host, relayed).public_key)
    link = host_packets.HostLink(TABLE, public)
    box = link.box_for(CHALLENGE, joiner_key)
    return host_packets.Tagger.answering(host_packets.host_box(host, relayed), box, TABLE, CHALLENGE, joiner_key), link, box


def test_a_tagged_packet_opens_once_and_only_as_sent():
    tagger, link, _ = pair()
    first, second = tagger.seal("presence", {"seat": 2, "here": False}), tagger.seal("pong", {"length": 9})
    assert link.open(second) == ("pong", {"length": 9})
    assert link.open(first) == ("presence", {"seat": 2, "here": False})  # held back past a later packet: taken, once
    assert link.open(first) is None and link.open(second) is None  # replayed
    third = tagger.seal("presence", {"seat": 2, "here": True})
    altered = {**third, "packet": pack("presence", {"seat": 2, "here": False})}
    assert link.open(altered) is None and link.open({**third, "n": third["n"] + 1}) is None
    for bad in ({}, {**third, "tag": "x"}, {**third, "n": 0}, {**third, "n": True}, {**third, "extra": 1}, []):
        assert link.open(bad) is None
    assert link.open(third) == ("presence", {"seat": 2, "here": True})
    assert link.refused == 10


def test_a_packet_for_every_seat_is_packed_once_and_opens_only_for_its_own_seat():
    """`Orderer.tell_all`: one packing of `[op, body]` for all, a tag and counter per seat's hello."""
    from types import SimpleNamespace

    from dicetable.net.table.orderer import Orderer

    host = Profile.generate("ann")
    (bob_tagger, bob, _), (cy_tagger, cy, _) = pair(host), pair(host)
    sent = []
    orderer = Orderer.__new__(Orderer)  # its packets only: links and a socket that keeps what is sent
    orderer.links, orderer._shared = {b"bob": bob_tagger, b"cy": cy_tagger}, None
    orderer.socket = SimpleNamespace(send=lambda peer, op, body: sent.append((peer, op, body)))
    Orderer.tell_all(orderer, [b"bob", b"cy"], "entries", {"start": 3, "frames": [b"f"]})
    (_, op, to_bob), (_, _, to_cy) = sent
    assert op == "tagged" and to_bob["packet"] is to_cy["packet"]  # the same bytes, packed once
    assert bob.open(to_cy) is None and cy.open(to_bob) is None  # another seat's tag opens nothing
    assert bob.open(to_bob) == cy.open(to_cy) == ("entries", {"start": 3, "frames": [b"f"]})


def test_a_relay_invite_names_the_owner_key_and_a_direct_one_the_curve_key():
    """The joiner's idea of the host's box key is the one the host tags with, on both paths, and the
    relay's own key (what a relay invite's host key is) opens nothing."""
    host = Profile.generate("ann")
    for relayed in (False, True):
        tagger, link, _ = pair(host, relayed)
        assert link.open(tagger.seal("welcome", {"seat": 1})) == ("welcome", {"seat": 1})
    relay_key = curve_keypair()[0]
    fooled = host_packets.HostLink(TABLE, relay_key)
    fooled.box_for(CHALLENGE, host.public_key)
    tagger, _, _ = pair(host, relayed=True)
    assert fooled.open(tagger.seal("welcome", {"seat": 1})) is None


def test_another_hellos_key_opens_nothing_and_a_newer_hello_retires_the_older_without_blame():
    tagger, link, _ = pair()
    other, _, _ = pair()  # another connection's hello (another joiner, or the same one elsewhere)
    assert link.open(other.seal("full", {"reason": "forged"})) is None
    host = Profile.generate("ann")
    joiner_key = Profile.generate("bob").public_key
    link = host_packets.HostLink(TABLE, bytes(host_packets.host_box(host, False).public_key))
    old = host_packets.Tagger.answering(host_packets.host_box(host, False), link.box_for(CHALLENGE, joiner_key), TABLE, CHALLENGE, joiner_key)
    new = host_packets.Tagger.answering(host_packets.host_box(host, False), link.box_for(b"\x01" * 32, joiner_key), TABLE, b"\x01" * 32, joiner_key)
    held = old.seal("presence", {"seat": 2, "here": False})
    assert link.open(old.seal("welcome", {"seat": 1})) is not None  # the first hello's answer, then the second's
    assert link.open(new.seal("welcome", {"seat": 1})) is not None
    assert link.open(held) is host_packets.LATE and link.refused == 0  # the first hello's key takes nothing any more:
    # the host's answer to a hello the second superseded, late (two hellos racing after a reconnect), blames nobody
    assert link.open({**held, "packet": pack("presence", {"seat": 1, "here": False})}) is None and link.refused == 1


def test_a_seats_tag_opens_only_once_trusted_and_a_hello_has_one_orderer():
    """A seat that may succeed (net/table/succession.py) tags with its own seat key: nothing of it opens
    before `trust`; after, it opens under a hello nobody answered yet, and names the seat; a hello
    the host answered, or one a seat answered, takes no other key, and once a seat orders, no other
    seat's key opens a later hello until the next `trust`."""
    host, bob, cy = (Profile.generate(name) for name in ("ann", "bob", "cy"))
    joiner_key = Profile.generate("dee").public_key
    link = host_packets.HostLink(TABLE, host_packets.seat_box_public(host.public_key))

    def answer(profile, box, challenge):
        return host_packets.Tagger.answering(host_packets.host_box(profile, True), box, TABLE, challenge, joiner_key)

    first = link.box_for(CHALLENGE, joiner_key)
    assert link.open(answer(host, first, CHALLENGE).seal("welcome", {"seat": 3})) == ("welcome", {"seat": 3})
    fresh = b"\x02" * 32
    second = link.box_for(fresh, joiner_key)
    assert link.open(answer(bob, second, fresh).seal("presence", {"seat": 0, "here": False})) is None  # not trusted yet
    link.trust({1: host_packets.seat_box_public(bob.public_key), 2: host_packets.seat_box_public(cy.public_key)})
    assert link.open(answer(bob, first, CHALLENGE).seal("pong", {"length": 1})) is None  # the host answered that hello
    assert link.open(answer(bob, second, fresh).seal("pong", {"length": 2})) == ("pong", {"length": 2})
    assert link.orderer == 1
    assert link.open(answer(cy, second, fresh).seal("pong", {"length": 3})) is None  # Bob answered it: Cy takes no part
    third = link.box_for(b"\x03" * 32, joiner_key)  # Bob orders: a later hello is his (or the host's) to answer
    assert link.open(answer(cy, third, b"\x03" * 32).seal("pong", {"length": 4})) is None
    link.trust({2: host_packets.seat_box_public(cy.public_key)})  # the next hand-over: Bob gone past the grace too
    assert link.open(answer(cy, third, b"\x03" * 32).seal("pong", {"length": 5})) == ("pong", {"length": 5})
    assert link.orderer == 2 and link.refused == 4
    assert host_packets.seat_box_public(b"\xff" * 32) is None  # no key, no tag: such a seat is never trusted


def test_a_relay_invite_whose_owner_key_is_no_key_is_one_clear_line():
    invite = Invite("127.0.0.1", 7070, curve_keypair()[0], TABLE, owner=b"\xff" * 32)
    with pytest.raises(SessionError, match=r"^bad invite: its owner key is not an Ed25519 public key \(copy it again\)$"):
        PeerSession(Profile.generate("bob"), invite)


def test_a_hello_box_with_no_shared_secret_is_refused():
    with pytest.raises(host_packets.BadBox):
        host_packets.Tagger.answering(host_packets.host_box(Profile.generate("ann"), False), bytes(32), TABLE, CHALLENGE, bytes(32))


# -- the relay speaking for the host ----------------------------------------------------------------
class Forging(RelayServer):
    """A relay that speaks for the host: on the test's word it sends every joiner of its tables
    packets the host never sent, plain and inside a genuine tag; it also replays the host's own
    `presence ... here: false` packets it carried."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.orders: queue.SimpleQueue = queue.SimpleQueue()
        self.last: dict[bytes, dict] = {}  # the last tagged body carried to each joiner
        self.away: list[tuple[bytes, bytes]] = []  # (joiner, packet) of the host's "seat ... is away"
        self.forged = 0

    def _send_raw(self, peer, data):
        op, body = unpack(data, limit=MAX_PACKET + 1024)
        if op == "tagged":  # the relay reads what is inside: tagged is not sealed
            self.last[peer] = body
            op, body = unpack(body["packet"])
        if op == "presence" and body.get("here") is False:
            self.away.append((peer, data))
        super()._send_raw(peer, data)

    def step(self, timeout):
        super().step(timeout)
        while not self.orders.empty():
            order = self.orders.get()
            for entry in list(self.tables.values()):
                for peer in list(entry.dialled):
                    for data in order(self, peer):
                        self.forged += 1
                        super()._send_raw(peer, data)


MALLORY = Profile.generate("mallory")  # a stranger the relay would have seats name as a deputy


def speak_for_the_host(relay: Forging, peer: bytes) -> list[bytes]:
    """Everything a relay could say in the host's name to one joiner."""
    lies = [pack("presence", {"seat": seat, "here": False}) for seat in (1, 2)]
    lies += [pack("refused", {"seat": seat, "reason": "forged: your frame was refused"}) for seat in (1, 2)]
    lies += [pack("pong", {"length": 10**6}), pack("full", {"reason": "forged: the table is full"}),
             pack("welcome", {"seat": 0, "length": 0, "table": TABLE, "timing": {}}),
             pack("deputies", deputies.sign(MALLORY, relay.connections[peer].table, [MALLORY.public_key]))]
    genuine = relay.last.get(peer)
    if genuine is not None:  # the host's own tag around another packet
        lies.append(pack("tagged", {**genuine, "n": genuine["n"] + 1, "packet": lies[0]}))
        lies.append(pack("tagged", {**genuine, "n": genuine["n"] + 1, "packet": lies[1]}))
    return lies


def replay_away(relay: Forging, peer: bytes) -> list[bytes]:
    return [data for to, data in relay.away if to == peer]


def table_of_three(running, tmp_path, timing):
    """Ann hosts Dice Breaker through the relay with a bot; Bob (a bot) and Carol (a person who has
    not moved yet) join. Returns the sessions and their events."""
    events = {name: [] for name in ("ann", "bob", "carol")}
    host = HostSession(Profile.generate("ann"), "dicebreaker", 3, {}, timing=timing, relay=running.line,
                       chooser=bot_chooser(BREAKER, "greedy", 1), on_event=events["ann"].append,
                       transcript=tmp_path / "ann.dtt")
    invite = host.open()
    in_thread(host)
    seats = [host]
    for name, chooser in (("bob", bot_chooser(BREAKER, "greedy", 2)), ("carol", None)):
        peer = PeerSession(Profile.generate(name), invite, timing=timing, chooser=chooser,
                           on_event=events[name].append, transcript=tmp_path / f"{name}.dtt")
        peer.connect()
        in_thread(peer)
        seats.append(peer)
    wait_until(lambda: any(isinstance(e, YourTurn) for e in events["carol"]), timeout=30, what="Carol's turn")
    return seats, events


def kinds(events, *wanted):
    return [e for e in events if isinstance(e, wanted)]


@pytest.mark.slow
def test_a_relay_speaking_for_the_host_is_ignored_and_named(tmp_path):
    """While the table waits for Carol, the relay tells Bob that Carol is away (and Carol that Bob
    is), refuses their frames, says the table is full, seats them elsewhere and claims a log a million
    entries long, for longer than the grace: nobody drops, claims, leaves or stalls, and each says
    once that the relay forged the host's packets. Carol then plays and the table goes on."""
    timing = replace(FAST, grace=1.0, answer_deadline=60.0, reveal_deadline=60.0, connect_timeout=5.0)
    running = Running(Forging(curve_keypair()[1], "127.0.0.1", 0))
    seats = []
    try:
        seats, events = table_of_three(running, tmp_path, timing)
        host, bob, carol = seats
        before = len(host.replica.log)
        end = time.monotonic() + 2 * timing.grace + timing.drop_after
        while time.monotonic() < end:  # the lies go on past the grace, as often as the seats ping
            running.server.orders.put(speak_for_the_host)
            time.sleep(timing.heartbeat)
        assert running.server.forged >= 100
        for name, peer in (("bob", bob), ("carol", carol)):
            assert peer.socket is not None and not peer.stopped, f"{name} left the table"
            assert not kinds(events[name], Dropped, Claimable, Refused, ClaimDisputed), name
            (said,) = kinds(events[name], Fault)
            assert said.seat is None and "the relay at 127.0.0.1" in said.said and "not the host's" in said.said, said
            assert peer.link.refused >= 20
            assert deputies.read(peer.listing, host.replica.table)[0] == host.profile.public_key  # the owner's list
        assert not any(r.kind in ("claim", "witness") for r in host.replica.log)
        carol.chooser = bot_chooser(BREAKER, "greedy", 3)  # Carol moves: the table goes on
        wait_until(lambda: len(bob.replica.log) > before + 10 and len(carol.replica.log) > before + 10,
                   timeout=30, what="the table to go on after Carol's move")
        assert bob.replica.log[-1].frame in [r.frame for r in host.replica.log]
    finally:
        stop_all(*seats)
        running.stop()
    for name in ("ann", "bob", "carol"):  # every copy is the true log so far
        verdict = verify(tmp_path / f"{name}.dtt")
        assert verdict.fault_kind == "unfinished", verdict.line()


@pytest.mark.slow
def test_a_relay_replaying_the_hosts_word_that_a_seat_is_away_is_ignored(tmp_path):
    """Carol really drops (the host tells Bob, tagged) and comes back; the relay then replays the
    host's genuine "Carol is away" to Bob: Bob keeps Carol present."""
    running = Running(Forging(curve_keypair()[1], "127.0.0.1", 0))
    seats = []
    try:
        seats, events = table_of_three(running, tmp_path, replace(FAST, answer_deadline=60.0))
        host, bob, carol = seats
        carol.stop()
        wait_until(lambda: Dropped(2) in events["bob"], what="Bob to hear Carol left")
        wait_until(lambda: carol.socket is None, what="Carol's session to close")
        back = PeerSession(carol.profile, resume=tmp_path / "carol.dtt", timing=carol.timing,
                           on_event=events["carol"].append)
        back.connect()
        in_thread(back)
        seats.append(back)
        wait_until(lambda: Returned(2) in events["bob"], what="Bob to hear Carol is back")
        assert running.server.away  # the host's genuine word, kept by the relay
        refused = bob.link.refused
        running.server.orders.put(replay_away)
        wait_until(lambda: bob.link.refused > refused, what="the replay to reach Bob")
        time.sleep(2 * FAST.heartbeat)
        assert kinds(events["bob"], Dropped, Returned) == [Dropped(2), Returned(2)]
    finally:
        for session in seats:
            session.stop()
        running.stop()


# -- the relay speaking for a seat (the joiner's packets, tagged the other way) ----------------------
class Replaying(RelayServer):
    """A relay that keeps every packet the joiners send their host and, on the test's word, sends
    the host again what `pick(peer, op, data)` makes of each: the packet as it was (a replay), or altered.
    A seat's packets to its host are sealed once its hello is answered: the relay sees `tagged`, not
    what is inside (net/table/host_packets.py)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kept: list[tuple[bytes, str, bytes]] = []  # (joiner connection, its op as the relay sees it, the packet)
        self.orders: queue.SimpleQueue = queue.SimpleQueue()
        self.replayed = 0
        self.dialled: dict[bytes, bytes] = {}  # joiner connection -> its table (kept after it closes: the relay forgets it)

    def _to_host(self, peer, conn, data, now):
        self.kept.append((peer, unpack(data)[0], data))
        self.dialled[peer] = conn.table
        super()._to_host(peer, conn, data, now)

    def step(self, timeout):
        super().step(timeout)
        while not self.orders.empty():
            pick = self.orders.get()
            for peer, op, data in list(self.kept):
                forged = pick(peer, op, data)
                if forged is not None:
                    self.replayed += 1
                    self.send(self.tables[self.dialled[peer]].host, "from", {"peer": peer, "data": forged})


@contextmanager
def replaying_table(tmp_path, timing):
    """`table_of_three` through a Replaying relay: (the relay, the sessions, their events); all stopped after."""
    running = Running(Replaying(curve_keypair()[1], "127.0.0.1", 0))
    seats = []
    try:
        seats, events = table_of_three(running, tmp_path, timing)
        yield running.server, seats, events
    finally:
        for session in seats:
            session.stop()
        running.stop()


def relay_faults(events) -> list[str]:
    return [e.said for e in kinds(events, Fault) if e.seat is None and "the relay at 127.0.0.1" in e.said]


@pytest.mark.slow
def test_a_relay_replaying_a_gone_seats_pings_and_hello_cannot_keep_it_present(tmp_path):
    """Carol pings (tagged) while the table waits for her move, then leaves for good; the relay replays
    her pings and her hello to the host, again and again for three graces: the host sees her away all
    the same, Ann and Bob claim her out (co-signed, FAIRNESS.md §4), and the host names the relay once.
    A move has no deadline here, so only her absence can end the wait."""
    timing = replace(FAST, grace=1.5, answer_deadline=60.0, reveal_deadline=60.0)
    with replaying_table(tmp_path, timing) as (relay, (host, bob, carol), events):
        gone = carol.socket.routing_id
        wait_until(lambda: sum(p == gone and op == "tagged" for p, op, _ in relay.kept) >= 5,
                   what="a few of Carol's (sealed) pings")
        carol.stop()
        wait_until(lambda: carol.socket is None, what="Carol's session to close")
        end = time.monotonic() + 3 * timing.grace + timing.drop_after
        while time.monotonic() < end and 2 not in host.replica.out:
            relay.orders.put(lambda peer, op, data: data if peer == gone and op in ("tagged", "hello") else None)
            time.sleep(timing.heartbeat)
        wait_until(lambda: 2 in host.replica.out and 2 in bob.replica.out, timeout=30, what="Carol claimed out")
        assert relay.replayed >= 20
        assert Dropped(2) in events["ann"]
        assert Returned(2) not in events["ann"]
        claims = [c for c in host.replica.claims if c.against == 2]  # a loaded machine may have made her
        assert claims[-1].state == "out" and len(claims[-1].signers) == 2, claims  # late once: answered
        (said,) = relay_faults(events["ann"])
        assert "seat 2 (carol)" in said and "replayed" in said, said


@pytest.mark.slow
def test_a_replayed_or_altered_submit_is_never_ordered_and_the_relay_is_named_once(tmp_path):
    """The relay sends the host every packet Bob sealed again (his submits among them), then his
    counters and tags around a packet he never sent, then his ordered frames plain. Nothing is ordered
    twice, nothing is refused in Bob's name (no refusal recorded, none told), and the host names the
    relay once."""
    with replaying_table(tmp_path, replace(FAST, answer_deadline=60.0, reveal_deadline=60.0)) as \
            (relay, (host, bob, carol), events):
        own = bob.socket.routing_id
        sealed = [data for peer, op, data in relay.kept if peer == own and op == "tagged"]
        mine = [r.frame for r in host.replica.log if r.seat == 1]  # what the relay saw ordered, in the entries
        assert sealed and mine
        refusals, length, unopened = len(host.refusals), len(host.replica.log), host.door.unopened

        def altered(peer, op, data):  # Bob's tag and counter around a packet he never sent
            body = unpack(data)[1] if peer == own and op == "tagged" else None
            return None if body is None else pack("tagged", {**body, "packet": pack("ping", {"next": 0})})

        for pick in (lambda peer, op, data: data if peer == own and op == "tagged" else None, altered,
                     lambda peer, op, data: pack("submit", {"frames": mine}) if peer == own and op == "tagged" else None):
            relay.orders.put(pick)
        wait_until(lambda: relay.replayed >= 3 * len(sealed), what="the replays to be sent")
        wait_until(lambda: relay_faults(events["ann"]), what="the host to name the relay")
        wait_until(lambda: host.door.unopened - unopened >= relay.replayed, what="every replay handled by the host")
        frames = [r.frame for r in host.replica.log]
        assert len(frames) == len(set(frames)) and len(host.replica.log) == length
        assert len(host.refusals) == refusals and not kinds(events["ann"], Refused)
        assert not kinds(events["bob"], Refused)
        (said,) = relay_faults(events["ann"])
        assert "seat 1 (bob)" in said, said
        carol.chooser = bot_chooser(BREAKER, "greedy", 3)  # the table goes on
        wait_until(lambda: len(host.replica.log) > length + 5, timeout=30, what="the table to go on")


def test_a_seats_packets_open_at_the_host_once_each_and_only_as_sent():
    """The other direction (`HostLink.seal`, `Tagger.take`): plain before the hello is answered (the host
    asks again), tagged after; a replay, an altered packet, a host-direction tag or a plain packet once
    the key is in use is Forged; an earlier hello's key opens what was sent before the newer answer
    came, until a packet under the newer key arrives."""
    tagger, link, _ = pair()
    assert link.seal("ping", {"next": 0}) == ("ping", {"next": 0})  # no answer yet: plain
    assert tagger.take("ping", {"next": 0}) is None
    link.open(tagger.seal("welcome", {"seat": 1}))
    op, first = link.seal("ping", {"next": 1})
    op, second = link.seal("submit", {"frame": b"move"})
    assert op == "tagged" and tagger.take(op, second) == ("submit", {"frame": b"move"})
    assert tagger.take(op, first) == ("ping", {"next": 1})  # held back past a later one: taken, once
    for replayed in (first, second):
        with pytest.raises(host_packets.Forged):
            tagger.take(op, replayed)
    _, third = link.seal("ping", {"next": 2})
    for bad in ({**third, "packet": pack("ping", {"next": 9})}, {**third, "n": third["n"] + 1},
                tagger.seal("ping", {"next": 2})):  # altered, moved, or the host's own direction
        with pytest.raises(host_packets.Forged):
            tagger.take("tagged", bad)
    with pytest.raises(host_packets.Forged):
        tagger.take("ping", {"next": 2})  # plain, once the seat tags
    assert tagger.take("tagged", third) == ("ping", {"next": 2})
    host = Profile.generate("ann")  # a second hello on the same connection: the first key, until the second is used
    joiner_key = Profile.generate("bob").public_key
    link = host_packets.HostLink(TABLE, bytes(host_packets.host_box(host, False).public_key))
    old = host_packets.Tagger.answering(host_packets.host_box(host, False), link.box_for(CHALLENGE, joiner_key), TABLE,
                                   CHALLENGE, joiner_key)
    link.open(old.seal("welcome", {"seat": 1}))
    new = host_packets.Tagger.answering(host_packets.host_box(host, False), link.box_for(b"\x01" * 32, joiner_key), TABLE,
                                   b"\x01" * 32, joiner_key)
    new.keep([old])
    before, held = link.seal("ping", {"next": 3})[1], link.seal("ping", {"next": 3})[1]  # before the second answer
    assert new.take("tagged", before) == ("ping", {"next": 3})
    link.open(new.seal("welcome", {"seat": 1}))
    assert new.take(*link.seal("ping", {"next": 4})) == ("ping", {"next": 4}) and not new.older
    assert new.take("tagged", held) is host_packets.LATE  # held back past the second key's first packet: the
    # first key takes nothing now; stale, the seat's own, blamed on nobody


def test_a_relay_never_reads_a_seats_answer_before_the_host_orders_it(tmp_path):
    """A relay carries each seat's unordered reveals to the host: were they readable on the way, it could
    read a seat's reveal and then drop all of that seat's packets (PROTOCOL.md §19 point 2), deciding the
    roll. They go sealed: no reveal, nor any frame a seat submitted, is in what the relay carried from
    the seats, though all of them are in the log."""
    with replaying_table(tmp_path, replace(FAST, answer_deadline=60.0, reveal_deadline=60.0)) as \
            (relay, (host, bob, carol), events):
        wait_until(lambda: any(r.kind == "reveal" and r.seat == 1 for r in host.replica.log), timeout=30,
                   what="a reveal of Bob's in the log")
        theirs = [r.frame for r in host.replica.log if r.seat in (1, 2)]
        assert any(wire.decode(f).kind == "reveal" for f in theirs)
        carried = [data for _, op, data in relay.kept if op == "tagged"]
        assert carried and not [f for f in theirs for data in carried if f in data]
