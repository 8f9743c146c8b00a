"""Short codes through a relay, as people type them: `dicetable relay`, `host --relay` printing
`code: ...`, `join CODE --relay` — a right code seats the joiner and the game verifies on both sides;
a wrong code fails at once (exit 2) and burns the code, which the host replaces; an expired code and
a code for a fair roll. Every process is real and every socket on 127.0.0.1."""

from __future__ import annotations

import re

import pytest

from net_helpers import dicetable, last_line, line_of, spawn

CODE = re.compile(r"^\d{1,5}-[a-z]{3,8}-[a-z]{3,8}$")


@pytest.fixture
def relay(tmp_path):
    process = spawn(tmp_path, "relay", "relay", "--port", "0")
    try:
        yield line_of(process, "relay: ")
    finally:
        process.terminate()
        process.wait(10)


def test_a_game_by_code_through_the_relay_and_a_wrong_code_burns(relay, tmp_path):
    host = spawn(tmp_path, "host", "host", "trice", "--relay", relay, "--bot", "greedy", "--seed", "1")
    try:
        code = line_of(host, "code: ")
        assert CODE.match(code) and len(code) <= 24
        number, first, second = code.split("-")
        wrong = f"{number}-{second}-{first}" if first != second else f"{number}-{first}-{'lantern' if first != 'lantern' else 'orbit'}"
        guess = dicetable("join", wrong, "--relay", relay, "--bot", "greedy", "--name", "eve", timeout=60)
        assert guess.returncode == 2 and guess.stderr.strip().endswith("ask the host for a new one")
        assert len(guess.stderr.strip().splitlines()) == 1
        assert "burned" in line_of(host, "burned: ")
        again = dicetable("join", code, "--relay", relay, "--bot", "greedy", "--name", "bob", timeout=60)
        assert again.returncode == 2 and f"no code {number} at this relay" in again.stderr  # burned for good
        fresh = line_of(host, "code: ")
        assert CODE.match(fresh) and fresh != code
        joined = dicetable("join", fresh.upper().replace("-", " "), "--relay", relay, "--bot", "greedy",
                           "--name", "bob", timeout=120)  # as read aloud: any case, spaces
        assert joined.returncode == 0, joined.stderr
        host.wait(30)
        result = last_line(joined.stdout, "result:")
        assert last_line(host.stdout.read(), "result:") == result
        for out in (joined.stdout,):
            transcript = last_line(out, "transcript:")
            checked = dicetable("verify", transcript)
            assert checked.returncode == 0 and checked.stdout.startswith("valid: trice")
    finally:
        host.kill()
        host.wait(10)


def test_an_expired_code_and_bad_input_are_one_line_each(relay, tmp_path):
    host = spawn(tmp_path, "host", "host", "trice", "--relay", relay, "--bot", "greedy", "--code-minutes", "0.02")
    try:
        code = line_of(host, "code: ")
        assert "expired" in line_of(host, "expired: ")  # after 1.2 s the host withdraws it
        late = dicetable("join", code, "--relay", relay, "--bot", "greedy", timeout=60)
        assert late.returncode == 2 and "no code" in late.stderr
    finally:
        host.kill()
        host.wait(10)
    for args, says in ((["join", "7-orbit", "--relay", relay], "a code looks like"),
                       (["join", "7-orbit-lantern"], "give --relay RELAY"),
                       (["join", "7-orbit-lantern", "--relay", "example.org:7070"], "bad relay"),
                       (["host", "trice", "--relay", relay[:-3], "--bot", "greedy"], "bad relay")):
        done = dicetable(*args, "--bot", "greedy") if args[0] == "join" else dicetable(*args)
        assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_fair_roll_by_code(relay, tmp_path):
    host = spawn(tmp_path, "host", "roll", "3d6", "--host", "--seats", "2", "--relay", relay)
    try:
        code = line_of(host, "code: ")
        joined = dicetable("roll", "--join", code, "--relay", relay, timeout=60)
        assert joined.returncode == 0, joined.stderr
        host.wait(30)
        assert last_line(host.stdout.read(), "result:") == last_line(joined.stdout, "result:")
    finally:
        host.kill()
        host.wait(10)
