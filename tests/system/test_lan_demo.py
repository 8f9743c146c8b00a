"""scripts/lan_demo.sh: a host and two joiners in network namespaces find each other by mDNS and
play to the end; every transcript verifies and nothing the demo made is left behind."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from net_helpers import namespaces

ROOT = Path(__file__).resolve().parents[2]
SKIP = 77  # the demo's exit code where namespaces cannot be made


@pytest.mark.slow
def test_lan_demo_plays_a_game_found_by_discovery():
    if os.geteuid() != 0:
        pytest.skip("the LAN demo makes network namespaces, which needs root")
    before = namespaces()
    demo = subprocess.run([str(ROOT / "scripts" / "lan_demo.sh")], capture_output=True, text=True, timeout=300)
    if demo.returncode == SKIP:
        pytest.skip(f"the LAN demo cannot run here: {demo.stderr.strip()}")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    out = demo.stdout
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
