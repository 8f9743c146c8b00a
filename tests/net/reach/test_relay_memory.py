"""A relay gives back the memory of connections that closed (net/reach/relay_memory.py): real CurveZMQ
connections to a real RelayServer on 127.0.0.1, closed again, and the process's resident memory read
from /proc before and after the relay's sweep."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import zmq
from zmq.utils import z85

from dicetable.net.reach import relay_memory
from dicetable.net.reach.relay import RelayServer
from dicetable.net.reach.transport import curve_keypair, fresh_routing_id, pack, unpack
from net_helpers import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc")


def resident_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def connect(server: RelayServer, count: int) -> list:
    """`count` CurveZMQ connections to `server`, each once answered (so each is set up on both sides)."""
    dealers = []
    for _ in range(count):
        public, secret = curve_keypair()
        dealer = server.context.socket(zmq.DEALER)
        dealer.linger = 0
        dealer.curve_serverkey, dealer.curve_publickey, dealer.curve_secretkey = (
            z85.encode(server.public_key), z85.encode(public), z85.encode(secret))
        dealer.setsockopt(zmq.ROUTING_ID, fresh_routing_id())  # the relay answers only ids of a seat's form
        dealer.connect(f"tcp://127.0.0.1:{server.port}")
        dealer.send(pack("relay_hello", {}))
        dealers.append(dealer)
    waiting = set(dealers)

    def answered() -> bool:
        server.step(0.01)
        for dealer in list(waiting):
            if dealer.poll(0):
                assert unpack(dealer.recv())[0] == "relay_who"
                waiting.discard(dealer)
        return not waiting

    wait_until(answered, 60.0, f"{count} connections answered")
    return dealers


def test_the_sweep_gives_back_what_closed_connections_held():
    """The relay hears the 600 connections close (its own monitor, net/reach/relay_presence.py) and forgets
    them; its sweep then gives their memory back."""
    now = [1000.0]
    server = RelayServer(curve_keypair()[1], "127.0.0.1", 0, context=zmq.Context(), clock=lambda: now[0])
    gone, kept = [], []
    try:
        gone += connect(server, 600)
        kept += connect(server, 20)  # after the others: what they freed is not at the heap's top, which glibc gives back itself
        assert len(server.connections) == 620
        for dealer in gone:
            dealer.close(0)

        def all_closed() -> bool:
            server.step(0.01)
            return server.presence.closings >= len(gone)

        wait_until(all_closed, 30.0, "the relay to hear the closed connections close")
        assert len(server.connections) == len(kept)  # forgotten at once, not after CONNECTION_IDLE
        held = resident_mb()
        server.sweep(now[0] + 1.0)  # within TRIM_EVERY of the start: nothing is trimmed yet
        assert resident_mb() > held - 4
        now[0] += relay_memory.TRIM_EVERY
        server.sweep(now[0])
        assert resident_mb() < held - 12, "600 closed connections' memory (some 60 KB each, both ends) stayed resident"
        assert server._trimmer.last == now[0]
    finally:
        for dealer in gone + kept:
            dealer.close(0)
        context = server.context
        server.close()
        context.term()


def test_the_trimmer_trims_at_most_every_so_often():
    trimmer = relay_memory.Trimmer(0.0, every=30.0)
    if trimmer._trim is None:
        pytest.skip("no glibc malloc_trim here")
    assert not trimmer.maybe(29.0)
    assert trimmer.maybe(30.0)
    assert not trimmer.maybe(59.0)
    assert trimmer.maybe(61.0)
