"""scripts/lan_demo.sh: a host and two joiners in network namespaces find each other by mDNS and
play to the end; every transcript verifies and nothing the demo made is left behind."""

from __future__ import annotations

import re

import pytest

from net_helpers import namespaces, run_demo


@pytest.mark.slow
def test_lan_demo_plays_a_game_found_by_discovery():
    out, before = run_demo("lan_demo.sh", "network namespaces", timeout=300)
    game = "dicebreaker" if "ok: dicebreaker" in out else "trice"
    seats = 3 if game == "dicebreaker" else 2
    assert f"lan demo: ok: {game} with {seats} seats" in out
    found = re.findall(r"^joiner \d found: .* at 10\.231\.0\.1:\d+ after [\d.]+ s", out, re.M)
    assert len(found) == seats - 1, out  # every joiner found the table, at the host's bridge address
    verified = re.findall(rf"^verified \w+\.dtt: valid: {game}, \d+ moves, result: ", out, re.M)
    assert len(verified) == seats, out
    seen = re.search(r"^discovery: table on a joiner's list ([\d.]+) s after the host started \(.*$", out, re.M)
    assert seen and 0 < float(seen.group(1)) < 30, out
    print(seen.group(0))  # the figure the issue asks for, in the test log
    # The demo removed what it made (its namespaces are named dtlan<pid>-*; other tests running at
    # the same time may hold namespaces of their own).
    assert not {n for n in namespaces() - before if n.startswith("dtlan")}
