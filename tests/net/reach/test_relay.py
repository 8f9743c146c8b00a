"""Tables through a relay (net/reach/relay.py) on 127.0.0.1: a game played by seats that all dial out, the
relay line read and refused as a person types it, and the relay as the attacker — one that seats a
joiner at a table of its own making, one that drops or moves packets — caught, never trusted. The
host seat leaving and coming back, and the relay restarting mid-game, lose nothing."""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import replace

import pytest

from dicetable.core import registry
from dicetable.net.table import deputies
from dicetable.net.reach import transport
from dicetable.net.cards.table_deals import TableDeals
from dicetable.net.reach.mailbox import ALLOCATIONS_BURST, ALLOCATIONS_EVERY, CODES_PER_SOURCE, CODES_PER_TABLE
from dicetable.net.table.events import CodeOffered, Failed, Fault, Refused
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.reach.invite import Invite
from dicetable.net.table.joiner import PeerSession
from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.relay_address import BadRelay, RelayAddress
from dicetable.net.reach.relay_key import load_relay_key
from dicetable.net.reach.relay_link import RelayHostSocket, RelayRefused, RelayTaken
from dicetable.net.log.replica import Replica
from dicetable.net.table.session import SessionError, bot_chooser
from dicetable.net.reach.transport import curve_keypair
from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from net_helpers import FAST, Running, in_thread, stop_all, wait_until
from stranger import hoard, second_source

TRICE = registry.get("trice")


@pytest.fixture
def relay():
    running = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0))
    yield running
    running.stop()


def verified(path):
    verdict = verify(path)
    assert verdict.valid, verdict.line()
    return verdict.replica.result


def host_through(relay_line: str, tmp_path, name="host", seed=1, profile=None) -> HostSession:
    host = HostSession(profile or Profile.generate(name), "trice", 2, {}, timing=FAST, relay=relay_line,
                       transcript=tmp_path / f"{name}.dtt")
    host.chooser = bot_chooser(TRICE, "greedy", seed)
    return host


def joiner(invite, tmp_path, name="bob", seed=2) -> PeerSession:
    peer = PeerSession(Profile.generate(name), invite, timing=FAST, transcript=tmp_path / f"{name}.dtt")
    peer.chooser = bot_chooser(TRICE, "greedy", seed)
    return peer


def play_in_thread(peer: PeerSession):
    """The joiner plays on in its own thread; `done["result"]` once its game ends."""
    done: dict = {}
    runner = threading.Thread(target=lambda: done.setdefault("result", peer.run()), daemon=True)
    runner.start()
    return done, runner


def assert_alice_gets_a_code(relay_line: str, tmp_path) -> None:
    """Alice, at 127.0.0.1, serves a table at the relay and is offered a short code (after a stranger's flood)."""
    events = []
    host = HostSession(Profile.generate("alice"), "trice", 2, {}, timing=FAST, relay=relay_line,
                       transcript=tmp_path / "alice.dtt", on_event=events.append)
    host.open()
    in_thread(host)
    try:
        wait_until(lambda: [e for e in events if isinstance(e, (CodeOffered, Failed))], what="alice's code, or why not")
        assert [type(e) for e in events if isinstance(e, (CodeOffered, Failed))][0] is CodeOffered, events
    finally:
        stop_all(host)


def test_the_relay_line_reads_back_and_bad_lines_say_what_is_wrong():
    address = RelayAddress("relay.example.org", 7070, bytes(range(32)))
    line = address.encode()
    assert RelayAddress.decode(line) == address and RelayAddress.decode(f"relay: {line}") == address
    six = RelayAddress("::1", 7070, bytes(32))
    assert RelayAddress.decode(six.encode()) == six
    for bad, says in (("example.org:7070", "HOST:PORT/KEY"), (line.replace(":7070", ":70700"), "port"),
                      (line[:-4], "cut short"), (line[:-1] + "!", "base32")):
        with pytest.raises(BadRelay, match=says):
            RelayAddress.decode(bad)


def test_the_relay_key_is_kept_private_and_the_same_across_restarts(tmp_path):
    path = tmp_path / "relay" / "relay_key"
    first = load_relay_key(path)
    assert path.stat().st_mode & 0o777 == 0o600 and load_relay_key(path) == first
    path.write_text("not a key")
    with pytest.raises(transport.TransportError, match="not a relay key"):
        load_relay_key(path)


def test_a_game_through_the_relay_reaches_its_end_and_both_transcripts_verify(relay, tmp_path):
    host = host_through(relay.line, tmp_path)
    invite = host.open()
    assert invite.startswith("dr1-") and Invite.decode(invite).owner == host.profile.public_key
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    peer = joiner(invite, tmp_path)
    peer.connect()
    result = peer.run()
    thread.join(10)
    assert result is not None and result == host.replica.result
    assert relay.server.forwarded > 10  # the packets went through the relay, not around it
    for name in ("host", "bob"):
        assert verified(tmp_path / f"{name}.dtt") == result


def test_a_relay_that_seats_a_joiner_at_a_table_of_its_own_making_is_caught(relay, tmp_path):
    """The relay (or anyone it lets in first) serves the invite's table id under its own key: the
    joiner reaches a table, but its packets are not tagged by the owner the invite names, so it leaves."""
    victim = Profile.generate("alice")
    table = bytes(range(16))
    fake = HostSession(Profile.generate("mallory"), "trice", 2, {}, timing=FAST, relay=relay.line,
                       transcript=tmp_path / "mallory.dtt")
    fake.own.replica = Replica(table, claim_check=fake.own.defaults.check_claim, deal_handler=TableDeals(seat=0))
    fake.open()
    thread = threading.Thread(target=fake.run, daemon=True)
    thread.start()
    relay_address = RelayAddress.decode(relay.line)
    invite = Invite(relay_address.address, relay_address.port, relay_address.key, table, owner=victim.public_key)
    peer = joiner(invite, tmp_path)
    with pytest.raises(SessionError, match=r"does not answer with the host's key .* left it"):
        peer.connect()
    fake.stop()
    thread.join(5)


def test_one_address_holds_at_most_four_codes_however_many_connections_it_uses(relay, tmp_path):
    """Issue 32's hoarder, at 127.0.0.2: ten connections each serve a table of their own with a fresh
    key and ask for three codes each, then one connection that serves nothing asks for ten thousand.
    The relay gives four codes in all, at numbers nobody could have told in advance, and refuses the
    rest in one line each; Alice, at 127.0.0.1, opens a table and gets her code."""
    second_source()
    answers = hoard(relay.line, tables=10, each=3, bare=10_000)
    granted = [body["nameplate"] for op, body in answers if op == "mb_allocated"]
    assert len(granted) == CODES_PER_SOURCE and sorted(granted) != list(range(1, CODES_PER_SOURCE + 1))
    reasons = {body["reason"] for op, body in answers if op == "mb_error"}
    assert reasons == {
        f"this table holds {CODES_PER_TABLE} open codes at this relay already; one frees when it is used, burned or expires",
        f"your address holds {CODES_PER_SOURCE} open codes at this relay already; one frees when it is used, burned or expires",
        "only the host of a table served at this relay takes a code (serve the table first)",
    }, reasons
    assert_alice_gets_a_code(relay.line, tmp_path)


def test_taking_and_burning_codes_in_a_loop_cannot_fill_the_relay(relay, tmp_path):
    """A stranger at 127.0.0.2 serves a table and takes a code, burns it, takes the next, five
    thousand times: each burned box frees its place among the open ones but stays readable a while,
    so without a budget the relay's 10,000 boxes fill and nobody gets a code. The relay gives it
    ALLOCATIONS_BURST codes and then one every ALLOCATIONS_EVERY s, refusing the rest in one line;
    Alice, at 127.0.0.1, gets her code."""
    second_source()
    started = time.monotonic()
    answers = hoard(relay.line, tables=1, each=5000, bare=0, burn=True)
    took = time.monotonic() - started
    granted = sum(op == "mb_allocated" for op, _ in answers)
    assert granted <= ALLOCATIONS_BURST + took / ALLOCATIONS_EVERY + 1, (granted, took)
    reasons = {body["reason"].rsplit(" in ", 1)[0] for op, body in answers if op == "mb_error"}
    assert reasons == {"too many codes taken from your address; try again"}, reasons
    assert len(relay.server.boxes.boxes) <= granted
    assert_alice_gets_a_code(relay.line, tmp_path)


def test_one_address_holds_at_most_sixteen_tables_so_it_cannot_fill_the_relay(monkeypatch, tmp_path):
    """A stranger at 127.0.0.2 serves table after table with fresh keys to fill the relay's table cap
    (20,000 here made 40), so that no host gets a table, nor a code. The relay holds at most 16 of
    its tables while they are served and refuses the rest in one line; once they go silent, its new
    tables take the place of its own oldest. Alice, at 127.0.0.1, serves her table and gets her code."""
    from dicetable.net.reach import relay as relay_module

    second_source()
    monkeypatch.setattr(relay_module, "MAX_TABLES", 40)
    running = Running(RelayServer(curve_keypair()[1], "127.0.0.1", 0, host_away=0.5))
    try:
        first = hoard(running.line, tables=40, each=0, bare=0)
        assert len(first) == 40 - relay_module.TABLES_PER_SOURCE
        assert {body["reason"] for _, body in first} == {
            f"your address serves {relay_module.TABLES_PER_SOURCE} tables at this relay already; close one first"}
        old = set(running.server.tables)
        server = running.server
        wait_until(lambda: not any(server._host_present(server.tables[t], time.monotonic()) for t in old),
                   what="its hosts silent past host_away")
        assert hoard(running.line, tables=40, each=0, bare=0) == first  # 16 more served in place of its own
        assert len(server.tables) == relay_module.TABLES_PER_SOURCE and not old & set(server.tables)
        assert_alice_gets_a_code(running.line, tmp_path)
    finally:
        running.stop()


def test_a_second_key_cannot_take_over_a_served_table(relay, tmp_path):
    host = host_through(relay.line, tmp_path)
    host.open()
    thief = HostSession(Profile.generate("thief"), "trice", 2, {}, timing=FAST, relay=relay.line,
                        transcript=tmp_path / "thief.dtt")
    thief.own.replica = Replica(host.replica.table, claim_check=thief.own.defaults.check_claim, deal_handler=TableDeals(seat=0))
    with pytest.raises(SessionError, match="belongs to another key"):
        thief.open()
    host.close()


class Tampering(RelayServer):
    """A relay that moves the host's entries: every entries packet after the first few is sent one
    index earlier than the host said (inside the host's tag), so each frame would land on another
    entry of the seat's log."""

    tampered = 0

    def _send_raw(self, peer, data):
        op, body = transport.unpack(data, limit=transport.MAX_PACKET + 1024)
        if op == "tagged":
            inner_op, inner = transport.unpack(body["packet"])
            if inner_op == "entries" and inner["start"] > 6:
                self.tampered += 1
                moved = transport.pack("entries", {**inner, "start": inner["start"] - 1})
                data = transport.pack("tagged", {**body, "packet": moved})
        super()._send_raw(peer, data)


def test_a_relay_that_moves_entries_is_named_and_never_followed(tmp_path):
    """The moved entries do not open under the host's tag (net/table/host_packets.py): the seat drops them as
    it would lost ones, says the relay carried packets that are not the host's, and keeps the
    host's true log."""
    running = Running(Tampering(curve_keypair()[1], "127.0.0.1", 0))
    events = []
    try:
        host = host_through(running.line, tmp_path)
        invite = host.open()
        thread = in_thread(host)
        peer = joiner(invite, tmp_path)
        peer.on_event = events.append
        peer.connect()
        in_thread(peer)
        wait_until(lambda: running.server.tampered >= 3 and any(isinstance(e, Fault) for e in events),
                   what="moved entries, and the seat saying so")
        (said,) = [e.said for e in events if isinstance(e, Fault)]
        assert "the relay at" in said and "not the host's" in said, said
        assert peer.socket is not None and not [e for e in events if isinstance(e, Refused)]  # nobody blamed, nothing left
        peer.stop()
        host.stop()
        thread.join(5)
        wait_until(lambda: peer.socket is None, what="the seat to close")
        kept, true = read(tmp_path / "bob.dtt").frames, read(tmp_path / "host.dtt").frames
        assert 6 <= len(kept) <= len(true) and kept == true[:len(kept)]  # it kept the host's true log, nothing else
    finally:
        running.stop()


class Dropping(RelayServer):
    """A lossy relay: it drops one packet in six it carries, either way, at random (a relay that drops
    one seat's packets on purpose makes that seat late instead: its claims and disputes then name the
    seat late by whose clock, as any cut link would)."""

    chance = random.Random(7)
    dropped = 0

    def _send_raw(self, peer, data):
        if self.chance.random() < 1 / 6:
            self.dropped += 1
            return
        super()._send_raw(peer, data)


def test_a_relay_that_drops_packets_only_slows_the_game(tmp_path):
    running = Running(Dropping(curve_keypair()[1], "127.0.0.1", 0))
    try:
        host = host_through(running.line, tmp_path)
        host.timing = peer_timing = replace(FAST, connect_timeout=15.0)
        invite = host.open()
        thread = threading.Thread(target=host.run, daemon=True)
        thread.start()
        peer = joiner(invite, tmp_path)
        peer.timing = peer_timing
        peer.connect()
        result = peer.run()
        thread.join(10)
        assert running.server.dropped > 10
        assert result is not None and verified(tmp_path / "bob.dtt") == result
        assert verified(tmp_path / "host.dtt") == result
    finally:
        running.stop()


def test_the_relay_restarts_mid_game_and_the_table_goes_on(tmp_path):
    key_file = tmp_path / "relay_key"
    first = Running(RelayServer(load_relay_key(key_file), "127.0.0.1", 0))
    port = first.server.port
    host = host_through(first.line, tmp_path)
    host.chooser = bot_chooser(TRICE, "greedy", 1)
    invite = host.open()
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    peer = joiner(invite, tmp_path)
    peer.own.think = 0.05
    host.own.think = 0.05
    peer.connect()
    done, runner = play_in_thread(peer)
    wait_until(lambda: len(peer.replica.log) > 8, what="a few moves through the first relay")
    first.stop()
    again = Running(RelayServer(load_relay_key(key_file), "127.0.0.1", port))  # same line: same key, same port
    try:
        runner.join(60)
        thread.join(10)
        assert done.get("result") is not None and done["result"] == host.replica.result
        assert again.server.forwarded > 0  # the rest of the game went through the restarted relay
        assert verified(tmp_path / "bob.dtt") == done["result"]
    finally:
        again.stop()


def test_the_host_seat_leaves_and_comes_back_through_the_relay(relay, tmp_path):
    host = host_through(relay.line, tmp_path, seed=1)
    host.own.think = 0.05
    invite = host.open()
    thread = threading.Thread(target=host.run, daemon=True)
    thread.start()
    peer = joiner(invite, tmp_path)
    peer.own.think = 0.05
    peer.connect()
    done, runner = play_in_thread(peer)
    wait_until(lambda: len(host.replica.log) > 8, what="a few moves")
    host.stop()
    thread.join(5)
    wait_until(lambda: peer.orderer_presence.away_since is not None, what="the joiner to see the host gone")
    back = HostSession(host.profile, resume=tmp_path / "host.dtt", timing=FAST)  # the relay is in its seat file
    back.chooser = bot_chooser(TRICE, "greedy", 1)
    back.open()
    thread = threading.Thread(target=back.run, daemon=True)
    thread.start()
    runner.join(60)
    thread.join(10)
    assert done.get("result") is not None and done["result"] == back.replica.result
    assert verified(tmp_path / "host.dtt") == done["result"]


def test_a_restarted_relay_learns_the_owners_signed_deputies_back_and_refuses_any_other_list(tmp_path):
    """The owner serves with its signed list of seats (net/table/deputies.py); the relay restarts (same key,
    same port) while the owner is away and knows no table: the seat shows it the owner's list and
    serves once the relay has given the owner time to come back; the owner coming back is told a seat
    serves. A stranger with that list, a list signed by another key, one for another table, and the
    owner's list with a stranger's key slipped in are refused; the serving seat cannot name a stranger."""
    host_away = 0.5
    key_file = tmp_path / "relay_key"
    first = Running(RelayServer(load_relay_key(key_file), "127.0.0.1", 0, host_away=host_away))
    owner, seat, stranger = (Profile.generate(name) for name in ("ann", "bob", "mallory"))
    table, other_table = os.urandom(16), os.urandom(16)
    listing = deputies.sign(owner, table, [seat.public_key])
    address = RelayAddress.decode(first.line)
    RelayHostSocket(owner, address, table, timeout=3.0, listing=listing).close()  # the owner served, then went
    assert first.server.tables[table].deputies == {seat.public_key}
    first.stop()
    again = Running(RelayServer(load_relay_key(key_file), "127.0.0.1", first.server.port, host_away=host_away))
    try:
        assert not again.server.tables
        forged = {"another key signed it": deputies.sign(stranger, table, [seat.public_key]),
                  "for another table": deputies.sign(owner, other_table, [seat.public_key]),
                  "a stranger slipped in": {**listing, "keys": sorted([seat.public_key, stranger.public_key])}}
        for why, bad in forged.items():  # at a relay that does not know the table yet
            if why != "another key signed it":  # (that one's signer could be the table's owner, for all it knows)
                with pytest.raises(RelayRefused, match="not signed for this table"):
                    RelayHostSocket(seat, address, table, timeout=3.0, listing=bad)
        started = time.monotonic()
        serving = RelayHostSocket(seat, address, table, timeout=3.0, listing=listing)
        assert time.monotonic() - started > host_away / 2  # the relay made it wait for the owner first
        entry = again.server.tables[table]
        assert (entry.owner, entry.server, entry.deputies) == (owner.public_key, seat.public_key, {seat.public_key})
        with pytest.raises(RelayTaken):  # the owner's key is the owner's again, and a seat serves now
            RelayHostSocket(owner, address, table, timeout=3.0, listing=listing)
        for why, bad in forged.items():  # at a relay that knows the table's owner
            with pytest.raises(RelayRefused, match="not signed"):
                RelayHostSocket(seat, address, table, timeout=3.0, listing=bad)
        with pytest.raises(RelayRefused, match="belongs to another key"):
            RelayHostSocket(stranger, address, table, timeout=3.0, listing=listing)
        serving.send_relay("deputies", deputies.sign(seat, table, [stranger.public_key]))  # not the owner's word
        serving.send_relay("deputies", forged["a stranger slipped in"])
        sent = time.monotonic()
        serving.send_relay("relay_ping", {})  # handled after them: the relay's clock is this one
        wait_until(lambda: again.server.tables[table].host_seen > sent, what="the serving seat's ping")
        assert again.server.tables[table].deputies == {seat.public_key}
        serving.close()
    finally:
        again.stop()
