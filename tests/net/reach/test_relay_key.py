"""A relay reached by `HOST:PORT` alone (issue 34): its key is told on the next port (net/reach/relay_key.py),
learned on first contact and pinned in relay.txt (tui/tables/relay_setting.py); a relay that shows
another key later is refused in one line. Real `dicetable relay`, `host` and `join` processes, every
socket on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess

import pytest

from dicetable.net.reach import relay_key
from dicetable.net.reach.relay_address import BadRelay, RelayAddress
from dicetable.tui.tables.relay_setting import known, resolve
from net_helpers import dicetable, last_line, line_of, spawn


def start_relay(tmp_path, who: str, *args: str) -> tuple[subprocess.Popen, str, str]:
    """A `dicetable relay` process: it, its whole line and the `HOST:PORT` it says is enough."""
    process = spawn(tmp_path, who, "relay", *args)
    line = line_of(process, "relay: ")
    address = line_of(process, "address: ").split()[0]
    return process, line, address


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(10)


def test_the_key_port_tells_the_relays_key_in_one_line_and_reads_nothing(tmp_path):
    relay, line, address = start_relay(tmp_path, "relay", "--port", "0")
    try:
        assert address == line.rpartition("/")[0]
        host, port = relay_key.split_where(address)
        assert relay_key.learn_key(host, port) == RelayAddress.decode(line).key
        with socket.create_connection((host, port + 1), timeout=5) as conn:  # a caller that says nothing
            told = conn.makefile("rb").read()  # the line, then the relay closes
        assert told == relay_key.key_line(RelayAddress.decode(line).key) and len(told) < relay_key.MAX_LINE
        with socket.create_connection((host, port + 1), timeout=5) as conn:  # one that sends garbage first
            conn.sendall(b"key?\n" * 1000)
            assert conn.makefile("rb").readline() == told
    finally:
        stop(relay)


def test_a_friend_joins_by_code_with_the_relays_host_port_alone(tmp_path, home):
    """Neither the host nor the joiner has met this relay: both type `127.0.0.1:PORT`, learn its key
    from the relay itself, play a game by code, and keep the relay's whole line for next time."""
    relay, line, address = start_relay(tmp_path, "relay", "--port", "0")
    host = spawn(tmp_path, "host", "host", "trice", "--relay", address, "--bot", "greedy", "--seed", "1")
    try:
        code = line_of(host, "code: ", timeout=30)
        joined = dicetable("join", code, "--relay", address, "--bot", "greedy", "--name", "bob", timeout=120)
        assert joined.returncode == 0, joined.stderr
        host.wait(30)
        assert last_line(host.stdout.read(), "result:") == last_line(joined.stdout, "result:")
    finally:
        host.kill()
        host.wait(10)
        stop(relay)
    for who in (home, tmp_path / "host"):  # the key learned, pinned beside the address
        assert known(who)[0] == RelayAddress.decode(line).encode()


def test_a_relay_whose_key_changed_is_refused_in_one_line_and_the_pin_stays(tmp_path, home):
    """First contact pins the relay's key; the relay restarts on the same port with another key (a
    new operator, or someone in the path): `join CODE --relay HOST:PORT` is refused in one line that
    says the key changed, and relay.txt keeps the first key."""
    relay, first_line, address = start_relay(tmp_path, "relay", "--port", "0", "--key", str(tmp_path / "first.key"))
    try:
        pinned = resolve(None, address)  # the joiner's first contact
    finally:
        stop(relay)
    assert pinned == RelayAddress.decode(first_line) and known(None) == [first_line]
    port = address.rpartition(":")[2]
    relay, second_line, again = start_relay(tmp_path, "relay", "--port", port, "--key", str(tmp_path / "second.key"))
    try:
        assert again == address and second_line != first_line
        refused = dicetable("join", "7-orbit-lantern", "--relay", address, "--bot", "greedy", timeout=60)
        assert refused.returncode == 2
        said = refused.stderr.strip()
        assert len(said.splitlines()) == 1 and "now has another key" in said and "refused" in said, said
        assert second_line in said  # the new line, for a person who knows the operator changed it
        assert "Traceback" not in refused.stderr
        assert known(None) == [first_line]  # the pin stays: nothing the relay told replaced it
        assert resolve(None, second_line) == RelayAddress.decode(second_line)  # its whole line, given: taken
    finally:
        stop(relay)


def test_an_address_with_no_relay_behind_it_is_one_line(tmp_path, home):
    with socket.create_server(("127.0.0.1", 0)) as taken:  # a port pair where no relay answers
        port = taken.getsockname()[1] - 1
    joined = dicetable("join", "7-orbit-lantern", "--relay", f"127.0.0.1:{port}", "--bot", "greedy", timeout=60)
    assert joined.returncode == 2 and len(joined.stderr.strip().splitlines()) == 1
    assert f"did not tell its key on port {port + 1}" in joined.stderr and "HOST:PORT/KEY" in joined.stderr
    assert known(None) == []  # nothing pinned


def test_a_relay_whose_key_port_is_taken_says_so_in_one_line(tmp_path):
    for _ in range(20):  # a port pair whose first is free and whose second this test holds
        holder = socket.create_server(("127.0.0.1", 0))
        port = holder.getsockname()[1] - 1
        try:
            socket.create_server(("127.0.0.1", port)).close()
            break
        except OSError:
            holder.close()
    with holder:
        started = spawn(tmp_path, "relay", "relay", "--port", str(port))
        out, err = started.communicate(timeout=60)
    assert started.returncode == 2 and "relay: " not in out and len(err.strip().splitlines()) == 1
    assert f"cannot open the relay's key port {port + 1}" in err and "Traceback" not in err


@pytest.mark.parametrize("typed, says", [
    ("relay.example", "not a relay's HOST:PORT"),
    ("127.0.0.1:65535", "a port from 1 to 65534"),
    ("[not-v6]:7070", "not an IPv6 address"),
])
def test_a_mistyped_host_port_is_one_line_and_asks_nobody(typed, says, home):
    with pytest.raises(BadRelay, match=says):
        resolve(None, typed)


class Impostor:
    """A key port on 127.0.0.1 that tells `told` whatever it is asked (a relay that lies about its key)."""

    def __init__(self, told: bytes):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1] - 1
        self.told = told

    def answer_one(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            conn.sendall(self.told)


@pytest.mark.parametrize("told", [b"HTTP/1.1 400 Bad Request\r\n\r\n", relay_key.LINE_PREFIX + b"abc\n",
                                  relay_key.LINE_PREFIX + b"a" * 500])
def test_a_key_port_that_tells_no_key_is_refused(told, home):
    import threading

    impostor = Impostor(told)
    with impostor.server:
        threading.Thread(target=impostor.answer_one, daemon=True).start()
        with pytest.raises(BadRelay, match="HOST:PORT/KEY"):
            resolve(None, f"127.0.0.1:{impostor.port}")
    assert known(None) == []
