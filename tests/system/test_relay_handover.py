"""The table outlives its host, as people run it (issue 16, net/table/succession.py): `dicetable relay`, a host
and two joiners through it, all real processes on 127.0.0.1; the host's process is killed (SIGKILL) mid-game
and never comes back; a joiner takes over ordering through the relay, the other follows it, the host seat
is claimed out by a co-signed claim, the game ends by its rules, and `dicetable verify` finds the
surviving copies sound and in agreement; the dead host's copy is the same log up to where it died."""

from __future__ import annotations

import pytest

from dicetable.net.log import wire
from dicetable.net.log.transcript import read
from net_helpers import dicetable, frames_in, last_line, line_of, spawn, wait_until

GAME = ("dicebreaker", "--seats", "3", "--option", "mode=battle", "--option", "target=3")
# Seats take turns to try ordering, seat 1 first, each for a window of max(2 × drop_after, 5 × heartbeat,
# 1 s) (PROTOCOL.md §11.1): with a 0.2 s heartbeat seat 1 had 2 s to reach the restarted relay, which a
# busy machine overran, and seat 2 ordered. A 0.5 s heartbeat gives it 4 s.
CLOCKS = ("--grace", "3", "--heartbeat", "0.5", "--think", "0.1")


@pytest.mark.slow
@pytest.mark.parametrize("relay_restarts", [False, True], ids=["relay-stays", "relay-restarts"])
def test_the_host_process_is_killed_and_a_joiner_orders_the_rest_of_the_game(tmp_path, relay_restarts):
    """With `relay-restarts`, the relay's process is stopped too once the host is dead and started again
    on the same port with the same key (its file): it knows no table, and the seat that takes over shows
    it the host's signed list of seats (net/table/deputies.py)."""
    relay = spawn(tmp_path, "relay", "relay", "--port", "0")
    processes = [relay]
    try:
        line = line_of(relay, "relay: ")
        host = spawn(tmp_path, "ann", "host", *GAME, "--relay", line, "--bot", "greedy", "--seed", "1",
                     "--name", "ann", "--transcript", str(tmp_path / "ann.dtt"), *CLOCKS)
        processes.append(host)
        invite = line_of(host, "invite: ")
        joiners = [spawn(tmp_path, name, "join", invite, "--bot", "greedy", "--seed", str(seed), "--name", name,
                         "--transcript", str(tmp_path / f"{name}.dtt"), *CLOCKS)
                   for seed, name in ((2, "bob"), (3, "cy"))]
        processes += joiners
        wait_until(lambda: frames_in(tmp_path / "ann.dtt") > 12, 30, "a few throws")
        host.kill()
        host.wait(10)
        if relay_restarts:
            relay.terminate()
            relay.wait(10)
            relay = spawn(tmp_path, "relay", "relay", "--port", line.split("/")[0].rsplit(":", 1)[1])
            processes.append(relay)
            assert line_of(relay, "relay: ") == line  # the same line: same port, same key
        outputs = [process.communicate(timeout=120) for process in joiners]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    for process, (out, err) in zip(joiners, outputs):
        assert process.returncode == 0, out + err
    said = [out for out, _ in outputs]
    assert sum("ordering: seat 1 (" in out and "orders the log now" in out for out in said) == 1, said
    assert sum("ordering: seat 1 (" in out and "orders the log through the relay now" in out for out in said) == 1, said
    assert last_line(said[0], "result:") == last_line(said[1], "result:")
    paths = [str(tmp_path / f"{name}.dtt") for name in ("bob", "cy")]
    check = dicetable("verify", *paths)
    assert check.returncode == 0 and "copies agree: 2 copies" in check.stdout, check.stdout + check.stderr
    assert "ann in default (claim by " in check.stdout and "witnessed by " in check.stdout, check.stdout  # names (issue 34)
    # The killed host's copy is the table's log up to where it died, but for the last batch it wrote and
    # never got out (a host writes a batch before it relays it): its own frames there nobody else saw;
    # a joiner's frame there its author sent again to the new orderer, so the table holds it, elsewhere.
    host, table = read(tmp_path / "ann.dtt").frames, read(tmp_path / "bob.dtt").frames
    shared = next((i for i, (a, b) in enumerate(zip(host, table)) if a != b), len(host))
    tail = [(wire.decode(frame).seat, frame in table[shared:]) for frame in host[shared:]]
    assert host[:shared] == table[:shared] and all(seat == 0 or later for seat, later in tail), (shared, tail)
