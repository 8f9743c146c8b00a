"""TRIAD over real sockets on 127.0.0.1 (issue 6, "Must show"): two `dicetable` processes finish a
game whose transcripts verify (the app at a hosted TRIAD table: tests/tui/test_tui_net_games.py).
"""

from __future__ import annotations

import pytest

from dicetable.net.log.transcript import read
from dicetable.net.log.verify import verify
from net_helpers import dicetable, host_and_join, last_line


@pytest.mark.slow
def test_two_processes_finish_a_triad_game_whose_transcripts_verify(tmp_path):
    (host, out_h, err_h), (joiner, out_j, err_j) = host_and_join(
        tmp_path, ("triad", "--port", "0", "--bind", "127.0.0.1", "--bot", "search", "--seed", "1", "--name", "alice",
                   "--transcript", str(tmp_path / "alice.dtt")),
        ("--bot", "greedy", "--seed", "2", "--name", "bob", "--transcript", str(tmp_path / "bob.dtt")))
    assert joiner.returncode == 0, err_j
    assert host.returncode == 0, err_h
    assert "joined: seat 1 bob" in out_h and "started" in out_j
    result = last_line(out_h, "result:")
    assert result == last_line(out_j, "result:")
    assert "took off a third die" in result or "draw" in result
    # Both transcripts hold the same log, and each verifies on its own.
    logs = []
    for name in ("alice", "bob"):
        path = tmp_path / f"{name}.dtt"
        verdict = verify(path)
        assert verdict.valid, verdict.line()
        logs.append(read(path).frames)
        check = dicetable("verify", str(path))
        assert check.returncode == 0, check.stderr
        assert check.stdout.startswith("valid: triad,") and "moves, result:" in check.stdout
    assert logs[0] == logs[1]
    assert verdict.line() == check.stdout.strip()  # the command says what the module found
