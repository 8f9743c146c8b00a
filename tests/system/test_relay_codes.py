"""Short codes through a relay, as people type them: `dicetable relay`, `host --relay` printing
`code: ...`, `join CODE --relay` (and the code alone once the relay is known) — a right code seats the joiner and the game verifies on both sides;
a wrong code fails at once (exit 2) and burns the code, which the host replaces, saying so in the
same line; an expired code and a code for a fair roll. Then a stranger's flood of a thousand wrong
guesses a second: the joiner with the right code still gets in. Every process is real and every
socket on 127.0.0.1 (the stranger's leave from 127.0.0.2: tests/stranger.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

import pytest

from dicetable.core import registry
from dicetable.net.reach.codes import CodeError
from dicetable.net.table.events import CodeGone, CodeOffered, Joined
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.reach.relay_address import RelayAddress
from dicetable.net.reach.relay_link import invite_for_code
from dicetable.net.table.session import bot_chooser
from net_helpers import FAST, ROOT, dicetable, in_thread, last_line, line_of, spawn, stop_all, wait_until
from stranger import second_source

CODE = re.compile(r"^\d{1,5}-[a-z]{3,8}-[a-z]{3,8}$")


def burned(events) -> list[str]:
    """What the host said of each code burned (with the next code)."""
    return [e.said for e in events if isinstance(e, CodeGone) and e.how == "burned"]


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
        told = line_of(host, "burned: ")  # one line, with the new code in it
        fresh = told.removeprefix("someone tried a wrong code; the new code is ")
        assert CODE.match(fresh) and fresh != code, told
        assert line_of(host, "code: ") == fresh
        again = dicetable("join", code, "--relay", relay, "--bot", "greedy", "--name", "bob", timeout=60)
        assert again.returncode == 2 and f"no code {number} at this relay" in again.stderr  # burned for good
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
                       (["join", "7-orbit-lantern"], "no relay used before: give the relay's HOST:PORT"),
                       (["join", "7-orbit-lantern", "--relay", "127.0.0.1:1"], "did not tell its key on port 2"),
                       (["host", "trice", "--relay", relay[:-3], "--bot", "greedy"], "bad relay")):
        done = dicetable(*args, "--bot", "greedy") if args[0] == "join" else dicetable(*args)
        assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_relay_used_once_is_remembered_so_the_code_alone_joins(relay, tmp_path):
    """issue 34: read the code out to a friend who has used this relay before: `join CODE` and no
    more; the host names the relay by HOST:PORT alone the second time."""
    address = relay.rpartition("/")[0]
    for game, (hosting, joining) in enumerate((((relay,), ("--relay", relay)), ((address,), ()))):
        host = spawn(tmp_path, "host", "host", "trice", "--relay", *hosting, "--bot", "greedy", "--seed", str(game))
        try:
            code = line_of(host, "code: ")
            joined = dicetable("join", code, *joining, "--bot", "greedy", "--name", "bob", timeout=120)
            assert joined.returncode == 0, joined.stderr
            host.wait(30)
            assert last_line(host.stdout.read(), "result:") == last_line(joined.stdout, "result:")
        finally:
            host.kill()
            host.wait(10)
    for who in (tmp_path / "home", tmp_path / "host"):  # the relay's whole line, kept for next time
        assert (who / "relay.txt").read_text().splitlines()[0] == RelayAddress.decode(relay).encode()


def test_join_asks_for_the_code_at_a_terminal_and_tab_completes_its_words(relay, tmp_path):
    """`dicetable join` with no invite, at a terminal: a prompt where Tab completes each code word
    from its first letters (as magic-wormhole's), on a real pseudo-terminal."""
    import os
    import pty

    from dicetable.net.reach.codes import WORDS
    from net_helpers import COMMAND

    def shortest(word: str) -> str:  # the letters that name one code word alone
        return next(word[:k] for k in range(1, len(word) + 1) if sum(w.startswith(word[:k]) for w in WORDS) == 1)

    host = spawn(tmp_path, "host", "host", "trice", "--relay", relay, "--bot", "greedy")
    try:
        number, first, second = line_of(host, "code: ").split("-")
        pid, terminal = pty.fork()
        if pid == 0:  # the joiner, at a terminal of its own
            os.environ["DICETABLE_HOME"] = str(tmp_path / "bob")
            os.execv(str(COMMAND), [str(COMMAND), "join", "--relay", relay, "--bot", "greedy"])
        seen = b""

        def until(text: bytes) -> None:
            nonlocal seen
            deadline = time.monotonic() + 60
            while text not in seen and time.monotonic() < deadline:
                try:
                    seen += os.read(terminal, 4096)
                except OSError:  # the joiner ended
                    break
            assert text in seen, seen.decode(errors="replace")

        until(b"code (Tab completes a word): ")
        os.write(terminal, f"{number}-{shortest(first)}\t".encode())
        until(f"{number}-{first}-".encode())
        os.write(terminal, f"{shortest(second)}\t".encode())
        until(f"{number}-{first}-{second}".encode())
        os.write(terminal, b"\r")
        until(b"result: ")
        assert os.waitpid(pid, 0)[1] == 0
    finally:
        host.kill()
        host.wait(10)


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


GUESSES = 1000.0  # wrong guesses a second, as issue 32 asks
IN_WITHIN = 10.0  # seconds for a joiner with the right code to get in


def test_a_thousand_wrong_guesses_a_second_keep_no_joiner_out(relay, tmp_path):
    """A stranger at 127.0.0.2 is told the table's first code's number and then guesses a thousand
    times a second, over fresh connections, at that number, at the numbers an old relay would hand
    out next (the smallest free) and at random ones, answering every host that answers with a wrong
    confirmation. Its first guess burns the code it knew; the host says so in one line that gives the
    new code, drawn at random; the relay lets that address try only a few codes, the same refusal
    whether a code exists or not; and Bob, told the host's code now, is seated within 10 s."""
    second_source()
    events, at = [], {}
    trice = registry.get("trice")

    def seen(event):
        if isinstance(event, Joined):
            at.setdefault(event.seat, time.monotonic())
        events.append(event)

    host = HostSession(Profile.generate("alice"), "trice", 2, {}, timing=FAST, relay=relay,
                       transcript=tmp_path / "alice.dtt", on_event=seen)
    host.chooser = bot_chooser(trice, "greedy", 1)
    host.open()
    in_thread(host)
    shown = lambda: [e.code for e in events if isinstance(e, CodeOffered)]
    wait_until(lambda: shown(), what="the host's first code")
    first = shown()[0]
    stranger = subprocess.Popen([sys.executable, str(ROOT / "tests" / "stranger.py"), relay, first.split("-")[0],
                                 str(GUESSES)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reports: list[tuple[float, dict]] = []

    def read_reports():
        for line in stranger.stdout:
            reports.append((time.monotonic(), {k: float(v) for k, v in (f.split("=") for f in line.split())}))

    threading.Thread(target=read_reports, daemon=True).start()
    bob = None
    try:
        wait_until(lambda: burned(events), timeout=30, what="the known code burned")
        wait_until(lambda: reports and reports[-1][1]["seconds"] >= 2, timeout=30, what="two seconds of guesses")
        started = time.monotonic()
        invite, tries = None, []
        while invite is None and time.monotonic() < started + 60:  # generous: the bound is checked below
            code = shown()[-1]  # what the host shows now
            tries.append(code)
            try:
                invite = invite_for_code(RelayAddress.decode(relay), code, timeout=30)
            except CodeError as error:  # burned meanwhile: the host shows the next one
                tries[-1] += f" ({error})"
                end = time.monotonic() + 20
                while shown()[-1] == code and time.monotonic() < end:
                    time.sleep(0.02)
        assert invite is not None, f"no code let bob in: {tries}; the host said {events[-6:]}"
        bob = PeerSession(Profile.generate("bob"), invite, timing=FAST, transcript=tmp_path / "bob.dtt")
        bob.chooser = bot_chooser(trice, "greedy", 2)
        in_thread(bob)
        wait_until(lambda: 1 in at, timeout=60, what="bob seated")
        seated = at[1]
        wait_until(lambda: reports[-1][0] >= seated, what="the stranger's count after bob got in")
        window = [r for t, r in reports if t <= started][-1:] + [next(r for t, r in reports if t >= seated)]
    finally:
        stranger.kill()
        stranger.wait(10)
        stop_all(*(s for s in (bob, host) if s is not None))
    took = seated - started
    rate = (window[-1]["guesses"] - window[0]["guesses"]) / (window[-1]["seconds"] - window[0]["seconds"])
    print(f"bob seated {took:.2f} s after he started, with {len(tries)} code(s) tried, "
          f"under {rate:.0f} wrong guesses a second; the stranger's counts: {window[-1]}")
    assert rate >= 0.8 * GUESSES, f"the stranger managed only {rate:.0f} guesses a second here (a busy machine?)"
    assert took <= IN_WITHIN, f"bob got in only after {took:.1f} s under {rate:.0f} guesses a second: {tries}"
    # The host always showed a working code: each burn was told with the next code, in one line.
    told = burned(events)
    codes = shown()
    for line in told:
        new = re.fullmatch(r"someone tried a wrong code; the new code is (\S+)", line)
        assert new and new.group(1) in codes, (line, codes)
    assert codes[0] == first and len(set(codes)) == len(codes)
    assert len(told) <= 3, told  # the relay let the stranger burn almost nothing: it tries few codes
