"""A stranger at another address of this machine, for the tests of limits per source (net/reach/sources.py):
its connections still go to 127.0.0.1, but leave from 127.0.0.2 (every 127/8 address is loopback on
Linux), so the relay and the host count it apart from the honest players on 127.0.0.1. `HoldLoop` is
a squatter that takes a free seat with fresh keys again and again (tests/net/table/test_cheats_seats.py),
`hoard` asks a relay for every short code it will give (tests/net/reach/test_relay.py).

Run as a script, it is the code flood of tests/system/test_relay_codes.py: wrong guesses at a relay's
short codes, `RATE` a second, from 127.0.0.2, at the number it was told and at every number an old
relay would hand out next (the smallest free) and at random ones, answering every host that answers
with a wrong confirmation (each one burns that code). It prints a line of counts four times a second.

    python tests/stranger.py RELAY_LINE NAMEPLATE RATE
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import time
from dataclasses import asdict, dataclass

import pytest

from dicetable.net.reach.invite import Invite

SECOND_SOURCE = "127.0.0.2"


def second_source() -> str:
    """127.0.0.2, or skip the test where this machine cannot send from it."""
    try:
        with socket.socket() as probe:
            probe.bind((SECOND_SOURCE, 0))
    except OSError as error:
        pytest.skip(f"cannot send from {SECOND_SOURCE} here ({error.strerror}): limits per source need a second address")
    return SECOND_SOURCE


@dataclass(frozen=True, slots=True)
class FromSource(Invite):
    """An invite whose connections leave from `source` (libzmq's `tcp://SOURCE:0;HOST:PORT`)."""

    source: str = SECOND_SOURCE

    @property
    def endpoint(self) -> str:
        return f"tcp://{self.source}:0;{self.address}:{self.port}"


def from_source(invite: Invite, source: str = SECOND_SOURCE) -> FromSource:
    return FromSource(**asdict(invite), source=source)


# -- a squatter with fresh keys -----------------------------------------------------------------
class HoldLoop:
    """Takes a table's free seat with a hello, never joins, and as soon as the hold runs out takes it
    again with a fresh key on a fresh connection, from `source` (directly, or through the relay a
    `dr1-` invite names): `holds` counts the holds it got, `refusals` what the host said instead."""

    def __init__(self, invite: Invite, source: str = SECOND_SOURCE):
        self.invite, self.source = invite, source
        self.holds = 0
        self.refusals: list[str] = []

    def run(self, seconds: float, enough: int = 2) -> "HoldLoop":
        """Loop for `seconds`, or until refused `enough` times for what its address did."""
        from dicetable.net.identity import Profile
        from dicetable.net.reach.transport import PeerSocket, pack
        from net_helpers import hello_body, host_link, host_packet

        relayed = self.invite.owner is not None
        end = time.monotonic() + seconds
        while time.monotonic() < end and sum("your address" in r for r in self.refusals) < enough:
            greeting = pack("dial", {"table": self.invite.table_id}) if relayed else None
            link, seen = host_link(self.invite), None
            connection = PeerSocket(from_source(self.invite, self.source), greeting=greeting)
            try:
                connection.connect(3.0)
                connection.send(*link.seal("ping", {"next": 0}))  # a connection the host does not know: it asks who
                while time.monotonic() < end:
                    data = connection.recv(0.5)
                    if data is None:
                        continue
                    op, body = host_packet(link, data)
                    if op == "who":
                        hello = hello_body(Profile.generate("mallory"), self.invite, link, body["nonce"])
                        connection.send("hello", hello)
                    elif op == "welcome":
                        self.holds += 1  # the seat is held for its join, which never comes
                    elif op == "full":
                        seen = str(body.get("reason"))
                        break
            finally:
                connection.close()
            if seen is not None and not seen.startswith("your hold on seat"):
                self.refusals.append(seen)
                time.sleep(0.1)
        return self


# -- hoarding codes at a relay ------------------------------------------------------------------
def hoard(relay_line: str, tables: int, each: int, bare: int, source: str = SECOND_SOURCE,
          burn: bool = False) -> list[tuple[str, dict]]:
    """Ask a relay for as many short codes as it gives, from `source`: on `tables` connections that
    each serve a table of their own (a fresh key each), `each` codes per table (with `burn`, each
    burned as soon as it is given, to ask for the next), then `bare` codes on one connection that
    serves nothing. Returns the relay's answers to the asks (and its refusals of serves)."""
    import zmq
    from zmq.utils import z85

    from dicetable.net.identity import Profile
    from dicetable.net.reach.relay import serve_bytes
    from dicetable.net.reach.relay_address import RelayAddress
    from dicetable.net.reach.transport import curve_keypair, fresh_routing_id, pack, unpack

    relay = RelayAddress.decode(relay_line)
    context = zmq.Context.instance()
    answers: list[tuple[str, dict]] = []

    def dial():
        link = context.socket(zmq.DEALER)
        link.setsockopt(zmq.LINGER, 0)
        link.setsockopt(zmq.ROUTING_ID, fresh_routing_id())
        public, secret = curve_keypair()
        link.curve_serverkey, link.curve_publickey, link.curve_secretkey = (
            z85.encode(relay.key), z85.encode(public), z85.encode(secret))
        link.connect(f"tcp://{source}:0;{relay.address}:{relay.port}")
        return link

    def answer(link, ops: set[str]) -> tuple[str, dict]:
        assert link.poll(5000), f"the relay did not answer (waiting for {ops})"
        op, body = unpack(link.recv())
        return (op, body) if op in ops else answer(link, ops)

    links = []
    for _ in range(tables):
        link = dial()
        links.append(link)
        link.send(pack("relay_hello", {}))
        _, who = answer(link, {"relay_who"})
        key, table = Profile.generate("hoarder"), secrets.token_bytes(16)
        link.send(pack("serve", {"table": table, "key": key.public_key,
                                 "proof": key.sign(serve_bytes(table, relay.key, who["nonce"]))}))
        served = answer(link, {"serving", "relay_refused"})
        if served[0] != "serving":  # the relay's cap on tables per source (test_relay.py counts these)
            answers.append(served)
            continue
        for _ in range(each):
            link.send(pack("mb_allocate", {"ttl": 86400, "uses": "table"}))
            answers.append(answer(link, {"mb_allocated", "mb_error"}))
            if burn and answers[-1][0] == "mb_allocated":
                link.send(pack("mb_burn", {"nameplate": answers[-1][1]["nameplate"], "owner": answers[-1][1]["owner"]}))
    link = dial()
    links.append(link)
    for start in range(0, bare, 500):  # as fast as the relay answers (its queue to one peer holds 1000)
        asks = min(500, bare - start)
        for _ in range(asks):
            link.send(pack("mb_allocate", {"ttl": 86400, "uses": "table"}))
        answers += [answer(link, {"mb_allocated", "mb_error"}) for _ in range(asks)]
    for link in links:
        link.close()
    return answers


# -- the code flood ------------------------------------------------------------------------------
def flood(relay_line: str, known: int, rate: float, connections: int = 8) -> None:
    import zmq
    from spake2 import SPAKE2_A
    from zmq.utils import z85

    from dicetable.net.reach.relay_address import RelayAddress
    from dicetable.net.reach.transport import curve_keypair, fresh_routing_id, pack, unpack

    relay = RelayAddress.decode(relay_line)
    context = zmq.Context.instance()
    public, secret = curve_keypair()

    def dial():
        link = context.socket(zmq.DEALER)
        link.setsockopt(zmq.LINGER, 0)
        link.setsockopt(zmq.ROUTING_ID, fresh_routing_id())
        link.curve_serverkey, link.curve_publickey, link.curve_secretkey = (
            z85.encode(relay.key), z85.encode(public), z85.encode(secret))
        link.connect(f"tcp://{SECOND_SOURCE}:0;{relay.address}:{relay.port}")
        return link

    links = [dial() for _ in range(connections)]
    pake = SPAKE2_A(b"a guess", idA=b"a", idB=b"b").start()  # any point: a host answers it all the same
    watched = [known, *range(1, 64)]  # the number it was told, and an old relay's next numbers
    waiting: dict[int, tuple[bytes, int, float]] = {}  # box -> (our side in it, its connection, since): one guess at a time
    counts = dict.fromkeys(("guesses", "confirms", "refused", "throttled", "new connections"), 0)
    started = last_report = last_fetch = last_dial = time.monotonic()
    sent = 0
    while True:
        now = time.monotonic()
        for n in [n for n, (_, _, since) in waiting.items() if now - since > 2.0]:
            del waiting[n]  # no answer: guess there again
        due = int((now - started) * rate)
        free = [n for n in watched if n not in waiting]
        while sent < due:
            target = free.pop(0) if free and sent % 2 == 0 else 1 + secrets.randbelow(99_999)
            side = secrets.token_bytes(16)
            index = 0 if target == known else 1 + sent % (len(links) - 1)  # the known box keeps one connection
            if target in watched:
                waiting[target] = (side, index, now)
            links[index].send(pack("mb_post", {"nameplate": target, "side": side, "to": None, "phase": "pake",
                                               "body": pake}), zmq.NOBLOCK)
            counts["guesses"] += 1
            sent += 1
        if now - last_fetch >= 0.02:  # the hosts' answers to our guesses
            last_fetch = now
            for n, (side, index, _) in waiting.items():
                links[index].send(pack("mb_fetch", {"nameplate": n, "side": side, "after": 0}), zmq.NOBLOCK)
        if now - last_dial >= 0.1:  # a fresh connection ten times a second: limits per connection are not enough
            last_dial = now
            index = 1 + counts["new connections"] % (len(links) - 1)
            links[index].close()
            links[index] = dial()
            counts["new connections"] += 1
        for link in links:
            while link.poll(0):
                op, body = unpack(link.recv())
                n = body.get("nameplate")
                if op == "mb_mail" and n in waiting:
                    side, index, _ = waiting[n]
                    for number, host, to, phase, data in body["messages"]:
                        if phase == "pake" and to == side:  # the host answered: a wrong confirmation burns its code
                            links[index].send(pack("mb_post", {"nameplate": n, "side": side, "to": host,
                                                               "phase": "confirm", "body": os.urandom(32)}), zmq.NOBLOCK)
                            counts["confirms"] += 1
                            del waiting[n]
                            break
                elif op == "mb_error":
                    throttled = "too many" in body["reason"] or "tries at most" in body["reason"]
                    counts["throttled" if throttled else "refused"] += 1
                    if n in waiting and body["reason"].startswith("no code"):
                        del waiting[n]  # no code there now: guess again later, when a new one may take the number
        if now - last_report >= 0.25:
            last_report = now
            print(" ".join(f"{k.replace(' ', '_')}={v}" for k, v in counts.items()), f"seconds={now - started:.2f}",
                  flush=True)
        time.sleep(0.002)


if __name__ == "__main__":
    flood(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
