"""scripts/internet_demo.sh in its real NAT mode: two homes behind masquerading routers that let in
nothing unasked, a relay on the "internet"; a direct join across is blocked, a 4-seat game and a fair
roll by short codes go through the relay, every transcript verifies, and no namespace is left."""

from __future__ import annotations

import re

import pytest

from net_helpers import namespaces, run_demo


@pytest.mark.slow
def test_internet_demo_plays_by_codes_through_the_relay_between_two_nated_homes():
    out, before = run_demo("internet_demo.sh", "network namespaces and NAT routers", timeout=600)
    last = out.strip().splitlines()[-1]
    assert last == ("internet demo (nat): passed: direct join blocked=yes; 4-seat game by code through the relay: "
                    "4/4 transcripts valid, same result=yes; fair roll by code: yes; namespaces left: 0"), out
    assert re.search(r"^direct join from home 2 to a table in home 1 \(no port forwarding\): blocked=yes \(.*no table answered",
                     out, re.M), out  # the routers really drop what nobody asked for
    assert len(re.findall(r"^h[12][ab]: valid: dicebreaker, \d+ moves, result: ", out, re.M)) == 4, out
    print(last)
    assert not {n for n in namespaces() - before if n.startswith("dtnet")}
