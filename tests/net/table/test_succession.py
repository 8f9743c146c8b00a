"""The table outlives its host (issue 16, net/table/succession.py): on a relay on 127.0.0.1, the host seat's
session is killed for good mid-game; after the grace a successor seat orders the log through the same
relay, the other seats reconnect to it, the game finishes or a checked claim ends it, and every copy
verifies and agrees. The host seat comes back as a seat. The attacks — a key with no seat taking over
at the relay, a successor whose log forks from a seat's copy, one that moves a seat's entries, one that
drops a seat's frames — are made through the real classes and caught."""

from __future__ import annotations

import queue
import secrets
import threading
import time
from dataclasses import replace

import pytest

from dicetable.core import registry
from dicetable.net.table import host_packets
from dicetable.net.table import deputies
from dicetable.net.table import succession
from dicetable.net.log import wire
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.table.events import ClaimDisputed, Claimable, Cut, Dropped, Fault, Ordering, Refused
from dicetable.net.table.host import HostSession, TakenOver
from dicetable.net.identity import Profile, load_or_create
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.orderer import Orderer
from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_link import RelayHostSocket, RelayRefused, RelayTaken
from dicetable.net.log.replica import Replica
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.log.transcript import TranscriptWriter, read
from dicetable.net.reach.transport import BadPacket, curve_keypair, pack, unpack
from dicetable.net.log.verify import compare, verify
from net_helpers import FAST, Running, dicetable, last_line, spawn, wait_until

# Clocks short enough to see a hand-over in seconds; the relay forgets a silent host after HOST_AWAY.
# Answers get 3 s: at 0.5 s a loaded CI machine let a seat claim another late for an answer whose own
# clock said it was not yet due, and the other disputed (right, but no test here is about answers).
QUICK = replace(FAST, grace=2.0, answer_deadline=3.0)
HOST_AWAY = 1.0
DICEBREAKER = {"mode": "battle", "target": 3}


@pytest.fixture
def relay(monkeypatch):
    monkeypatch.setattr(succession, "HOST_AWAY", HOST_AWAY)  # the seats know the relay's clock
    running = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0, host_away=HOST_AWAY))
    yield running
    running.stop()


class Seat:
    """One seat's session playing in its own thread: its events, its result or the error that ended it."""

    def __init__(self, session):
        self.session, self.events, self.result, self.error = session, [], None, None
        session.on_event = self.events.append
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            self.result = self.session.run()
        except SessionError as error:
            self.error = error

    def start(self) -> "Seat":
        self.thread.start()
        return self

    def end(self, timeout: float = 60.0) -> "Seat":
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the seat's game did not end"
        return self

    def said(self, kind: type) -> list[str]:
        return [e.said for e in self.events if isinstance(e, kind)]


def open_table(relay, tmp_path, game: str, names: list[str], options=None, profile=None, timing=QUICK, **peer_options):
    """A host seat and its joiners through `relay`, bots at every seat, all playing in threads."""
    info = registry.get(game)
    host = HostSession(profile or Profile.generate(names[0]), game, len(names), options or {}, timing=timing,
                       relay=relay.line, transcript=tmp_path / f"{names[0]}.dtt",
                       chooser=bot_chooser(info, "greedy", 1), think=0.05)
    invite = host.open()
    seats = [Seat(host).start()]
    for n, name in enumerate(names[1:], start=2):
        peer = PeerSession(Profile.generate(name), invite, timing=timing, transcript=tmp_path / f"{name}.dtt",
                           chooser=bot_chooser(info, "greedy", n), think=0.05, **peer_options)
        peer.connect()
        seats.append(Seat(peer).start())
    return seats


def kill_host(seats, after: int) -> None:
    """The host seat's session dies for good once the log holds `after` entries (its sockets close unsaid)."""
    host = seats[0].session
    wait_until(lambda: len(host.replica.log) > after, 20, "a few moves")
    host.stop()
    seats[0].end(5)


def verified(tmp_path, *names, dead=()):
    """Every surviving copy verifies, the `dead` ones end unfinished where their seat died, and
    `dicetable verify` says all the copies agree (each a prefix of the longest)."""
    paths = [tmp_path / f"{name}.dtt" for name in names]
    for name, path in zip(names, paths):
        verdict = verify(path)
        assert verdict.valid or (name in dead and verdict.fault_kind == "unfinished"), verdict.line()
    agreement = compare([read(path) for path in paths])
    assert agreement.fork is None, agreement.line()
    check = dicetable("verify", *map(str, paths))
    assert "copies agree" in check.stdout and check.returncode == (1 if dead else 0), check.stdout + check.stderr
    for name in names:
        assert f"{name}.dtt: {'invalid' if name in dead else 'valid'}:" in check.stdout, check.stdout


@pytest.mark.slow
def test_two_seats_the_successor_orders_and_its_claim_ends_the_game(relay, tmp_path):
    ann, bob = open_table(relay, tmp_path, "trice", ["ann", "bob"])
    kill_host([ann, bob], after=8)
    bob.end()
    assert bob.error is None and bob.session.successor is not None
    assert any("orders the log now" in text for text in bob.said(Ordering))
    result = bob.result
    assert result is not None and result.winners == (1,) and "seat 0 in default" in result.reason
    ending = bob.session.replica.ending
    assert (ending.seat, ending.against, ending.state) == (1, 0, "out")
    assert relay.server.tables[bob.session.replica.table].server == bob.session.profile.public_key
    assert read(tmp_path / "ann.dtt").result is None  # the host's copy ends where it died
    verified(tmp_path, "ann", "bob", dead=("ann",))


@pytest.mark.slow
def test_three_seats_the_lowest_seat_orders_the_other_reconnects_and_a_cosigned_claim_puts_the_host_out(relay, tmp_path):
    ann, bob, cy = open_table(relay, tmp_path, "dicebreaker", ["ann", "bob", "cy"], DICEBREAKER)
    kill_host([ann, bob, cy], after=12)
    for seat in (bob, cy):
        seat.end(90)
        assert seat.error is None, seat.error
    assert bob.session.successor is not None and cy.session.successor is None  # seat 1 first, seat 2 follows it
    assert cy.said(Ordering)  # seat 2 reached the new orderer through the relay
    assert bob.result is not None and bob.result == cy.result
    replica = bob.session.replica
    against_host = [c for c in replica.claims if c.against == 0 and c.state in ("out", "answered")]
    assert against_host and all(len(c.signers) == 2 for c in against_host)  # co-signed: FAIRNESS.md §4
    verified(tmp_path, "ann", "bob", "cy", dead=("ann",))


class Muting(RelayServer):
    """A relay that stops carrying anything to the connections in `muted` (a link cut one way)."""

    muted: set = set()

    def _send_raw(self, peer, data):
        if peer not in self.muted:
            super()._send_raw(peer, data)


@pytest.mark.slow
def test_a_successor_behind_another_seat_takes_the_entries_it_lacks_from_that_seats_copy(monkeypatch, tmp_path):
    """The host ordered entries that reached seat 2 but not seat 1, then died: seat 1 orders behind seat 2's
    copy, asks seat 2 for what it lacks, checks each frame with its own replica, and the table goes on."""
    monkeypatch.setattr(succession, "HOST_AWAY", HOST_AWAY)
    running = Running(Muting(curve_keypair()[1], "127.0.0.1", 0, host_away=HOST_AWAY))
    try:
        ann, bob, cy = open_table(running, tmp_path, "dicebreaker", ["ann", "bob", "cy"], DICEBREAKER)
        wait_until(lambda: len(ann.session.replica.log) > 12, 20, "a few throws")
        running.server.muted = {bob.session.socket.routing_id}
        wait_until(lambda: len(cy.session.replica.log) > len(bob.session.replica.log), 20, "seat 2 to be ahead")
        behind = len(bob.session.replica.log)  # muted, it learns nothing more until it orders (soon after the kill)
        kill_host([ann, bob, cy], after=0)
        assert len(read(tmp_path / "ann.dtt").frames) > behind  # the entries only the dead host and seat 2 held
        for seat in (bob, cy):
            seat.end(90)
            assert seat.error is None, seat.error
        assert bob.session.successor is not None and bob.result == cy.result is not None
        verified(tmp_path, "ann", "bob", "cy", dead=("ann",))  # seat 1's copy holds them now, as they were
    finally:
        running.stop()


@pytest.mark.slow
def test_a_key_with_no_seat_cannot_take_over_and_the_host_comes_back_as_a_seat(relay, tmp_path, home):
    """The table waits for the host seat (nobody claims); a stranger's key is refused at the relay;
    the host's own `dicetable host --resume` finds a seat ordering and plays on as seat 0, nothing lost."""
    profile = load_or_create("ann")  # the profile a `dicetable` process of this home uses
    ann, bob = open_table(relay, tmp_path, "trice", ["ann", "bob"], profile=profile, auto_claim=False)
    kill_host([ann, bob], after=8)
    wait_until(lambda: bob.session.successor is not None, 20, "seat 1 to take over ordering")
    table, address, mallory = bob.session.replica.table, RelayAddress.decode(relay.line), Profile.generate("mallory")
    named = relay.server.tables[table].deputies
    bob.session.successor.socket.send_relay("deputies", deputies.sign(bob.session.profile, table, [mallory.public_key]))  # only the owner names seats
    sent = time.monotonic()  # the relay's clock: packets of one connection are handled in order
    bob.session.successor.socket.send_relay("relay_ping", {})  # handled after the list (an idle host sends nothing)
    wait_until(lambda: relay.server.tables[table].host_seen > sent, 10, "the successor's ping after the list")
    with pytest.raises(RelayRefused, match="belongs to another key"):
        RelayHostSocket(mallory, address, table, timeout=3.0)
    assert relay.server.tables[table].deputies == named == {bob.session.profile.public_key}
    back = spawn(tmp_path, "home", "host", "--resume", str(tmp_path / "ann.dtt"), "--bot", "greedy", "--seed", "3")
    try:
        out, err = back.communicate(timeout=90)
    finally:
        if back.poll() is None:
            back.kill()
    assert back.returncode == 0, err
    assert "rejoining the table as seat 0" in out
    bob.end()
    assert bob.result is not None and last_line(out, "result:") == bob.session.describe_result()
    assert not bob.session.replica.claims  # nobody claimed: the host seat played its own moves again
    verified(tmp_path, "ann", "bob")


def own_unrelayed_frame(host, frames: int) -> bytes:
    """A valid frame of the host seat's own on the first `frames` entries of its log: a chat it wrote
    into its last batch and never relayed (killed between the fsync and the relay)."""
    replica = Replica(host.replica.table, deal_handler=TableDeals(seat=0))
    for record in host.replica.log[:frames]:
        replica.accept(record.frame)
    return wire.make_frame(host.profile, replica.table, 0, replica.next_seq(0), "chat",
                           wire.chat_body("written, never relayed"), replica.head)


def rejoin(host, seed: int = 7) -> Seat:
    """The dead host seat resumed in this process: it finds a seat ordering at the relay and rejoins as seat 0."""
    back = HostSession(host.profile, resume=host.transcript_path, timing=QUICK, think=0.05,
                       chooser=bot_chooser(registry.get(host.game_name), "greedy", seed))
    with pytest.raises(TakenOver):
        back.open()
    return Seat(PeerSession.rejoining(back, timing=QUICK, think=0.05, chooser=back.chooser)).start()  # run connects


def table_moved_on(bob, past: int) -> None:
    """Seat 1 orders the log and its log holds an entry of its own at index `past` (a chat)."""
    wait_until(lambda: bob.session.successor is not None and bob.session.successor.reclaim.awaiting is None, 20,
               "seat 1 to take over ordering")
    bob.session.chat("the table goes on")
    wait_until(lambda: len(bob.session.replica.log) > past, 20, "seat 1 to order an entry past the host's copy")


@pytest.mark.slow
def test_a_host_killed_before_relaying_its_batch_cuts_that_tail_when_it_rejoins_and_plays_on(relay, tmp_path, home):
    """The host seat wrote a frame of its own and died before relaying it; seat 1 took over and ordered
    another entry in that place. The host's `dicetable host --resume` cuts its unrelayed tail (kept as
    evidence), rejoins as seat 0 and plays to the end; every copy verifies and agrees."""
    profile = load_or_create("ann")  # the profile a `dicetable` process of this home uses
    ann, bob = open_table(relay, tmp_path, "trice", ["ann", "bob"], profile=profile, auto_claim=False)
    kill_host([ann, bob], after=8)
    host, path = ann.session, tmp_path / "ann.dtt"
    relayed = len(read(path).frames)
    wait_until(lambda: len(bob.session.replica.log) == relayed, 10, "seat 1 to hold all the host relayed")
    unrelayed = own_unrelayed_frame(host, relayed)
    writer, _ = TranscriptWriter.reopen(path)
    with writer:
        writer.append_frame(unrelayed)
    table_moved_on(bob, relayed)
    back = spawn(tmp_path, "home", "host", "--resume", str(path), "--bot", "greedy", "--seed", "3")
    try:
        out, err = back.communicate(timeout=90)
    finally:
        if back.poll() is None:
            back.kill()
    assert back.returncode == 0, out + err
    assert "rejoining the table as seat 0" in out and f"cut: 1 entries of this seat's copy from entry {relayed + 1} on" in out
    bob.end()
    assert bob.result is not None and last_line(out, "result:") == bob.session.describe_result()
    copy = read(path)
    assert unrelayed not in copy.frames and copy.frames[relayed] == bob.session.replica.log[relayed].frame
    assert [(frame, reason.startswith("cut on rejoining")) for frame, reason in copy.refused] == [(unrelayed, True)]
    assert not list(tmp_path.glob("*.cutting"))  # the rewrite's temporary file was renamed over the copy
    verified(tmp_path, "ann", "bob")


def resume_owner(host, seed: int = 5) -> Seat:
    """The dead host seat resumed in this process once the relay has nobody serving its table (its
    successor gone too): it orders again as the host."""
    deadline = time.monotonic() + 15
    while True:
        back = HostSession(host.profile, resume=host.transcript_path, timing=QUICK, think=0.05,
                           chooser=bot_chooser(registry.get(host.game_name), "greedy", seed))
        try:
            back.open()
            return Seat(back).start()
        except TakenOver:  # the relay still counts the successor as serving (HOST_AWAY)
            back.close()
            assert time.monotonic() < deadline, "the relay never let the owner serve its table again"
            time.sleep(0.2)


@pytest.mark.slow
def test_two_failures_in_a_row_the_owner_takes_back_what_the_dead_successor_ordered_from_seat_2(relay, tmp_path):
    """The host seat dies; seat 1 takes over and orders entries the host's copy lacks (seat 2 holds
    them); seat 1 dies too. The owner's resume serves the table again, asks seat 2 for its longer copy,
    checks and takes each entry, and only then orders; seat 1 is claimed in default (co-signed), the
    game ends by its rules, and every copy verifies and agrees."""
    ann, bob, cy = open_table(relay, tmp_path, "dicebreaker", ["ann", "bob", "cy"], DICEBREAKER, auto_claim=False)
    kill_host([ann, bob, cy], after=12)
    host = ann.session
    table_moved_on(bob, len(read(host.transcript_path).frames))
    ordered = len(bob.session.replica.log)
    wait_until(lambda: len(cy.session.replica.log) >= ordered, 10, "seat 2 to hold what seat 1 ordered")
    bob.session.stop()
    bob.end(10)
    assert len(read(host.transcript_path).frames) < ordered  # the owner's copy lacks what seat 1 ordered
    back = resume_owner(host)
    cy.session.own.defaults.auto_claim = True  # seat 1 is gone for good: seat 2 claims it too, or co-signs the owner's claim
    for seat in (back, cy):
        seat.end(120)
        assert seat.error is None, seat.error
    assert cy.session.successor is None  # the owner, not seat 2, ordered after seat 1
    assert back.result is not None and back.result == cy.result
    assert [r.frame for r in back.session.replica.log[:ordered]] == [r.frame for r in cy.session.replica.log[:ordered]]
    assert not [text for text in back.said(Refused) if "copy of the log does not fit" in text]
    ending = [c for c in back.session.replica.claims if c.against == 1 and c.state == "out"]
    assert ending and all(len(c.signers) == 2 for c in ending)
    verified(tmp_path, "ann", "bob", "cy", dead=("bob",))


@pytest.mark.slow
def test_a_rejoining_host_cannot_cut_what_the_table_holds_from_before_the_hand_over(relay, tmp_path):
    """The host seat's copy differs from the successor's at an entry the successor's log held when it took
    over (the host relayed it there): the cut would rewrite what another seat has seen, so the fork is
    named and the host seat leaves with its copy, nothing cut."""
    ann, bob = open_table(relay, tmp_path, "trice", ["ann", "bob"], auto_claim=False)
    kill_host([ann, bob], after=8)
    host, path = ann.session, tmp_path / "ann.dtt"
    relayed = len(read(path).frames)
    forked_at = relayed - 2
    other = own_unrelayed_frame(host, forked_at)  # another frame of its own where seat 1 holds the relayed one
    writer, _ = TranscriptWriter.reopen(path)
    writer.cut(forked_at, "the test rewrites the host's copy")
    with writer:
        writer.append_frame(other)
    table_moved_on(bob, relayed)
    back = rejoin(host).end(30)
    assert back.error is not None and "ordering the log in the host seat's place" in str(back.error), back.error
    assert not back.said(Cut)
    copy = read(path)
    assert copy.frames[forked_at] == other and len(copy.frames) == forked_at + 1  # nothing cut
    assert not any(reason.startswith("cut on rejoining") for _, reason in copy.refused)
    bob.session.stop()
    bob.end(30)


@pytest.mark.slow
def test_a_seat_cannot_take_the_table_from_its_present_host(relay, tmp_path):
    ann, bob = open_table(relay, tmp_path, "trice", ["ann", "bob"])
    table = ann.session.replica.table
    wait_until(lambda: relay.server.tables[table].deputies == {bob.session.profile.public_key}, 10,
               "the host to name its seat at the relay")
    with pytest.raises(RelayTaken):
        RelayHostSocket(bob.session.profile, RelayAddress.decode(relay.line), table, timeout=3.0)
    assert relay.server.tables[table].server == ann.session.profile.public_key
    for seat in (ann, bob):
        seat.end()
        assert seat.error is None and seat.result is not None  # the game went on under its host
    assert bob.session.successor is None


class Forking(Orderer):
    """A successor that rewrites history: once a seat has told it how long its copy is and its own
    log covers that copy (at once, or after taking a longer copy in), it drops that copy's last entry
    from its own, orders frames of its own in its place, and never takes the seat's copy back in."""

    forked, chats = False, 0

    def _fork(self):
        held = max((self.acked.get(seat, 0) for seat in self.routes.values()), default=0)  # from hellos
        if not self.forked and 0 < held <= len(self.replica.log):
            self.forked = True
            forked = Replica(self.replica.table, claim_check=self.own.defaults.check_claim)
            for record in list(self.replica.log)[:held - 1]:
                forked.accept(record.frame)
            self.own.replica, self.own.unordered, self.reclaim.awaiting = forked, {}, None
            self.own.transcript.writer, self.own.transcript.path = None, self.transcript_path.with_name("forked.dtt")

    def handle_packet(self, peer, seat, op, body, now):
        if not (self.forked and op == "give"):  # once forked, the seat's copy is not taken back in
            super().handle_packet(peer, seat, op, body, now)

    def step(self, timeout):
        super().step(timeout)
        self._fork()
        if self.forked and self.chats < 8:
            self.chats += 1
            self.own.author("chat", wire.chat_body(f"another history {self.chats}"))


class Shifting(Orderer):
    """A successor that moves a seat's entries: each packet lands one index earlier than it belongs."""

    def order(self, frame, origin):
        super().order(frame, origin)
        if len(self.replica.log) > self.shift_from:
            for peer in self.routes:
                self.tell(peer, "entries", {"start": len(self.replica.log) - 2, "frames": [frame]})  # under its own tag

    def took_over(self):
        super().took_over()
        self.shift_from = len(self.replica.log)


@pytest.mark.slow
@pytest.mark.parametrize("attacker", [Forking, Shifting], ids=["forks", "moves-entries"])
def test_a_successor_whose_log_does_not_fit_a_seats_copy_is_named_and_left(relay, tmp_path, monkeypatch, attacker):
    monkeypatch.setattr(succession, "Orderer", attacker)  # the seat that takes over is the attacker
    ann, bob, cy = open_table(relay, tmp_path, "dicebreaker", ["ann", "bob", "cy"], DICEBREAKER)
    kill_host([ann, bob, cy], after=12)
    wait_until(lambda: bob.session.successor is not None, 20, "seat 1 to take over ordering")
    cy.end(60)
    said = str(cy.error)
    assert "seat 1 (bob), ordering the log in the host seat's place," in said and "cannot be trusted" in said, \
        (said, cy.result)
    kept = read(tmp_path / "cy.dtt")
    assert kept.refused  # the frame that does not fit is kept as evidence
    assert verify(tmp_path / "cy.dtt").fault_kind == "unfinished"  # a true log, cut where it left: nothing of the attacker's
    true = read(tmp_path / "ann.dtt").frames
    assert kept.frames[:len(true)] == true[:len(kept.frames)]
    bob.session.stop()
    bob.end(10)


class Dropping(Orderer):
    """A successor that never orders seat 2's frames once the host seat is out of the game, whoever
    brings them: nor the reveals seat 2 boxed to it, which an honest seat carries to the log itself
    (PROTOCOL.md §10.10); and it forgets holding them, so its clock claims."""

    def order(self, frame, origin):
        if 0 in self.replica.out and (self.routes.get(origin) == 2 or wire.decode(frame).seat == 2):
            self.dropped = getattr(self, "dropped", 0) + 1
            return
        super().order(frame, origin)

    def step(self, timeout: float) -> None:
        if 0 in self.replica.out:
            self.own.held.held.pop(2, None)
        super().step(timeout)


@pytest.mark.slow
def test_a_successor_that_drops_a_seats_frames_is_disputed_with_the_seats_own_frames(relay, tmp_path, monkeypatch):
    monkeypatch.setattr(succession, "Orderer", Dropping)
    ann, bob, cy = open_table(relay, tmp_path, "dicebreaker", ["ann", "bob", "cy"], DICEBREAKER,
                              timing=replace(QUICK, reveal_deadline=2.0, turn_deadline=2.0))
    kill_host([ann, bob, cy], after=12)
    cy.end(90)
    assert cy.error is not None and "disputes it" in str(cy.error), (cy.error, cy.result, [str(e)[:90] for e in cy.events][-12:])  # what ended it, if not the dispute
    assert any("claims this seat is in default" in text for text in cy.said(ClaimDisputed))
    kept = read(tmp_path / "cy.dtt")
    dispute = [wire.decode(f) for f in kept.frames if wire.decode(f).kind == "dispute"][-1]
    assert dispute.seat == 2 and dispute.body["evidence"]  # its own frames the successor never ordered
    verdict = verify(tmp_path / "cy.dtt")
    assert verdict.fault_kind == "disputed" and "seat 2 (cy) disputes seat 1" in verdict.fault, verdict.line()
    assert bob.session.successor.dropped > 0
    bob.session.stop()
    bob.end(10)


# -- tagged control packets around a hand-over (net/table/host_packets.py) --------------------------------------
class Speaking(RelayServer):
    """A relay that speaks as an orderer with a key it holds (a seat's, in league with it, or a
    stranger's): it reads every hello a joiner sends, and on the test's word sends that joiner
    packets tagged under each of its hellos with that key. Asked to, it first says `who` with a
    nonce of its own and keeps the answering hello from the orderer (so no orderer ever answers it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.orders: queue.SimpleQueue = queue.SimpleQueue()
        self.hellos: dict[bytes, list[tuple[bytes, dict]]] = {}  # joiner connection -> (table, hello), oldest first
        self.own_nonces: set[bytes] = set()
        self.spoken = 0

    def _to_host(self, peer, conn, data, now):
        try:
            op, body = unpack(data)
        except BadPacket:
            op, body = "", {}
        if op == "hello" and type(body.get("box")) is bytes:
            self.hellos.setdefault(peer, []).append((conn.table, body))
            if body.get("nonce") in self.own_nonces:
                return  # the answer to the relay's own `who`: the orderer never hears it
        super()._to_host(peer, conn, data, now)

    def step(self, timeout):
        super().step(timeout)
        while not self.orders.empty():
            key, profile, packets = self.orders.get()  # to the joiner whose hellos carry `key`, tagged by `profile` if any
            for peer, hellos in list(self.hellos.items()):
                for table, hello in hellos:
                    if hello["key"] != key:
                        continue
                    if packets == "who" or profile is None:  # a challenge of its own, or plain lies: once
                        nonce = secrets.token_bytes(wire.NONCE_BYTES)
                        self.own_nonces.add(nonce)
                        for op, body in [("who", {"nonce": nonce})] if packets == "who" else packets:
                            self._send_raw(peer, pack(op, body))
                        break
                    tagger = host_packets.Tagger.answering(host_packets.host_box(profile, True), hello["box"], table,
                                                      hello["nonce"], hello["key"])
                    for op, body in packets:
                        self.spoken += 1
                        self._send_raw(peer, pack("tagged", tagger.seal(op, body)))


def orderer_lies(seats: int) -> list[tuple[str, dict]]:
    """What an orderer's word could do to a seat: everyone away, its frame refused, a log a million
    entries long, its whole copy asked for."""
    lies = [("presence", {"seat": seat, "here": False}) for seat in range(seats)]
    return lies + [("refused", {"seat": 1, "reason": "forged"}), ("pong", {"length": 10**6}), ("ask", {"next": 0})]


def speaking_table(monkeypatch, tmp_path, names=("ann", "bob", "cy"), **options):
    monkeypatch.setattr(succession, "HOST_AWAY", HOST_AWAY)
    running = Running(Speaking(curve_keypair()[1], "127.0.0.1", 0, host_away=HOST_AWAY))
    return running, open_table(running, tmp_path, "dicebreaker", list(names), DICEBREAKER, **options)


def told(seat: Seat, *kinds: type) -> list:
    return [e for e in seat.events if isinstance(e, kinds)]


@pytest.mark.slow
def test_while_the_host_is_here_a_relay_in_league_with_seat_2_cannot_speak_as_an_orderer(monkeypatch, tmp_path):
    """Seat 2 may order after a hand-over, so its key could tag an orderer's packets; while the host
    is present, Bob takes no tag of Cy's: not under the hello the host answered, nor under a fresh
    hello the relay prompted and kept from the host. Nothing is followed; Bob names the relay once."""
    running, (ann, bob, cy) = speaking_table(monkeypatch, tmp_path, auto_claim=False)
    try:
        wait_until(lambda: len(bob.session.replica.log) > 8 and bob.session.welcomed, 20, "a few moves")
        key, accomplice = bob.session.profile.public_key, cy.session.profile
        running.server.orders.put((key, accomplice, "who"))
        wait_until(lambda: len(running.server.hellos.get(bob.session.socket.routing_id, ())) > 1, 10,
                   "Bob's hello to the relay's own challenge")
        refused = bob.session.link.refused
        end = time.monotonic() + 2 * QUICK.drop_after
        while time.monotonic() < end:  # as often as the seats ping, for longer than a drop takes
            running.server.orders.put((key, accomplice, orderer_lies(3)))
            time.sleep(QUICK.heartbeat)
        wait_until(lambda: bob.session.link.refused >= refused + 2 * len(orderer_lies(3)), 10, "the lies to reach Bob")
        assert bob.session.link.orderer == 0  # every packet Bob took was the host's
        assert not told(bob, Dropped, Claimable, Refused, Ordering), bob.events
        assert bob.session.gave_at == float("-inf")  # no copy uploaded on an orderer's `ask` it never had
        (said,) = told(bob, Fault)
        assert said.seat is None and "the relay at 127.0.0.1" in said.said and "not the host's" in said.said, said
        for seat in (ann, bob, cy):
            seat.end(90)
            assert seat.error is None and seat.result is not None, seat.error  # the game ran on under its host
        assert bob.session.successor is None and cy.session.successor is None
    finally:
        for seat in (ann, bob, cy):
            seat.session.stop()
        running.stop()
    verified(tmp_path, "ann", "bob", "cy")


@pytest.mark.slow
def test_after_a_hand_over_the_relay_cannot_speak_for_the_seat_that_orders(monkeypatch, tmp_path):
    """Bob orders in Ann's place and Cy follows him under Bob's tag; the relay, in league with Dee (seat
    3, who might have ordered), then prompts a fresh hello from Cy and tells Cy that Bob (and everyone)
    is away: tagged by Dee's key, by a key with no seat, and plain. Cy ignores it all, names the relay,
    and the game ends by its rules, every copy agreeing."""
    running, seats = speaking_table(monkeypatch, tmp_path, names=["ann", "bob", "cy", "dee"])
    ann, bob, cy, dee = seats
    try:
        kill_host(seats, after=16)
        wait_until(lambda: bob.session.successor is not None and cy.session.link.orderer == 1, 30,
                   "Cy to follow Bob's tagged packets")
        assert any("seat 1 (bob) orders the log" in text for text in cy.said(Ordering))
        victim = cy.session.profile.public_key
        hellos = len(running.server.hellos.get(cy.session.socket.routing_id, ()))
        running.server.orders.put((victim, None, "who"))
        wait_until(lambda: len(running.server.hellos.get(cy.session.socket.routing_id, ())) > hellos, 10,
                   "Cy's hello to the relay's own challenge")
        refused, liars = cy.session.link.refused, (dee.session.profile, Profile.generate("mallory"), None)
        end = time.monotonic() + 2 * QUICK.drop_after
        while time.monotonic() < end:
            for liar in liars:
                running.server.orders.put((victim, liar, orderer_lies(4)))
            time.sleep(QUICK.heartbeat)
        wait_until(lambda: cy.session.link.refused >= refused + 3 * len(orderer_lies(4)), 10, "the lies to reach Cy")
        assert cy.session.link.orderer == 1 and cy.session.gave_at == float("-inf")
        assert not [e for e in told(cy, Dropped) if e.seat == 1] and not told(cy, ClaimDisputed)
        faults = [e.said for e in told(cy, Fault) if e.seat is None]
        assert any("the relay at 127.0.0.1" in text and "not the ordering seat's" in text for text in faults), faults
        for seat in seats[1:]:
            seat.end(120)
            assert seat.error is None, seat.error
        assert bob.result is not None and bob.result == cy.result == dee.result
    finally:
        for seat in seats:
            seat.session.stop()
        running.stop()
    verified(tmp_path, "ann", "bob", "cy", "dee", dead=("ann",))


@pytest.mark.slow
def test_the_relay_restarts_while_the_host_is_away_a_seat_takes_over_and_the_host_comes_back_as_a_seat(
        monkeypatch, tmp_path):
    """The relay restarts (a new RelayServer, same port and key) while the host seat is dead: it knows no
    table. Seat 1 shows it the owner's signed list (net/table/deputies.py), which the host gave every seat, and
    orders; the relay learns the table's owner from it, so the host seat coming back is told a seat
    orders and rejoins as seat 0. Nobody claims, the game ends by its rules, and both copies agree."""
    monkeypatch.setattr(succession, "HOST_AWAY", HOST_AWAY)
    secret = curve_keypair()[1]
    first = Running(RelayServer(secret, "127.0.0.1", 0, host_away=HOST_AWAY))
    ann, bob = open_table(first, tmp_path, "trice", ["ann", "bob"], auto_claim=False)
    owner, seat, table = ann.session.profile.public_key, bob.session.profile.public_key, ann.session.replica.table
    wait_until(lambda: bob.session.listing is not None, 10, "seat 1 to hold the owner's list")
    assert deputies.read(bob.session.listing, table) == (owner, {seat})
    kill_host([ann, bob], after=8)
    first.stop()
    again = Running(RelayServer(secret, "127.0.0.1", first.server.port, host_away=HOST_AWAY))
    try:
        wait_until(lambda: bob.session.successor is not None, 30, "seat 1 to take over at the restarted relay")
        entry = again.server.tables[table]
        assert (entry.owner, entry.server, entry.deputies) == (owner, seat, {seat})
        back = rejoin(ann.session)  # TakenOver: the table is the owner's, served by seat 1
        for one in (back, bob):
            one.end(90)
            assert one.error is None, one.error
        assert bob.result is not None and back.result == bob.result and not bob.session.replica.claims
    finally:
        again.stop()
    verified(tmp_path, "ann", "bob")
    # A seat keeps only the owner's list for its table naming exactly its other seats (PeerSession.listing).
    replica, mallory = bob.session.replica, Profile.generate("mallory")
    listing = bob.session.listing
    assert deputies.fits(listing, replica, owner)
    for bad in (deputies.sign(mallory, table, [seat]), deputies.sign(ann.session.profile, bytes(16), [seat]),
                deputies.sign(ann.session.profile, table, [seat, mallory.public_key]),
                {**listing, "keys": [mallory.public_key]}, {**listing, "proof": bytes(64)}, {"keys": [seat]}):
        assert not deputies.fits(bad, replica, owner)
