"""LAN discovery (net/reach/lan.py, `dicetable lan`, `host --lan`, `join --lan`).

The signing, trust and choice rules are tested directly; mDNS itself only runs inside network
namespaces on a private bridge (scripts/lan_netns.sh), never on this machine's own interfaces, so
those tests need root and are skipped with the reason elsewhere.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time

import pytest

from dicetable.net.reach import announcement, lan, local_networks
from dicetable.net.reach.announcement import FORGED, UNVERIFIED, VERIFIED, Announcement, KnownHosts
from dicetable.net.reach.local_networks import DiscoveryError
from dicetable.net.identity import Profile
from net_helpers import COMMAND, private_lan

TABLE = bytes(range(16))


def announce(profile: Profile, game="trice", taken=1, total=2, table=TABLE, port=40000, addresses=("10.231.0.1",),
             service=None, tamper=None) -> Announcement:
    """An announcement as a browser would parse it from `profile`'s signed TXT record."""
    props = announcement.properties(profile, game, taken, total, table, port)
    for key, value in (tamper or {}).items():
        props[key] = value
    name = service or f"{profile.name} {game} {table.hex()[:8]}.{lan.SERVICE_TYPE}"
    return announcement.parse(name, props, port, addresses)


@pytest.fixture
def host():
    return Profile.generate("Host")


@pytest.fixture
def known(tmp_path):
    return KnownHosts(tmp_path)


# -- the signed record -----------------------------------------------------------------------------
def test_a_signed_record_round_trips(host):
    ann = announce(host, "dicebreaker", 2, 3, port=41234, addresses=("10.231.0.1", "fe80::1", "10.231.5.1"))
    assert ann.signature_ok
    assert (ann.game, ann.seats_taken, ann.seats_total, ann.host_name) == ("dicebreaker", 2, 3, "Host")
    assert (ann.table_id, ann.curve_key, ann.host_key, ann.port) == (TABLE, host.curve_public, host.public_key, 41234)
    assert ann.addresses == ("10.231.0.1", "10.231.5.1")  # IPv4 only
    assert ann.fingerprint == host.fingerprint and ann.open
    invite = ann.invite("10.231.5.1")
    assert (invite.address, invite.port, invite.host_key, invite.table_id) == ("10.231.5.1", 41234, host.curve_public, TABLE)


@pytest.mark.parametrize("field, value", [
    (b"curve", bytes(32).hex().encode()),  # another curve key: the one thing a spoofer needs to change
    (b"seats", b"0/2"),
    (b"game", b"triad"),
    (b"host", b"Someone"),
    (b"table", bytes(16).hex().encode()),
])
def test_any_changed_field_breaks_the_signature(host, known, field, value):
    ann = announce(host, tamper={field: value})
    assert ann is not None and not ann.signature_ok
    assert announcement.assess(ann, known) == (FORGED, "its signature does not match what it announces")


def test_the_port_is_signed(host, known):
    props = announcement.properties(host, "trice", 1, 2, TABLE, 40000)
    ann = announcement.parse("x", props, 40001, ["10.231.0.1"])
    assert not ann.signature_ok and announcement.assess(ann, known)[0] == FORGED


@pytest.mark.parametrize("tamper", [{b"v": b"2"}, {b"table": b"zz"}, {b"seats": b"3/2"}, {b"curve": b"abcd"}, {b"host": b"\xff"}])
def test_records_that_are_not_ours_are_ignored(host, tamper):
    assert announce(host, tamper=tamper) is None


# -- trust -----------------------------------------------------------------------------------------
def test_trust_levels(host, known, tmp_path):
    ann = announce(host)
    trust, why = announcement.assess(ann, known)
    assert trust == UNVERIFIED and host.fingerprint in why
    known.pin(host.public_key, host.curve_public, "Host")
    assert announcement.assess(ann, KnownHosts(tmp_path)) == (VERIFIED, "the host you know as Host")  # pinned on disk
    assert announcement.assess(ann, known, own=host) == (VERIFIED, "your own table")


def test_a_forger_with_a_known_hosts_name_is_forged(host, known):
    known.pin(host.public_key, host.curve_public, "Host")
    forger = Profile.generate("Host")  # right name, wrong key
    trust, why = announcement.assess(announce(forger), known)
    assert trust == FORGED and "calls itself Host" in why and forger.fingerprint in why


def test_a_pinned_key_with_another_curve_key_is_forged(host, known):
    known.pin(host.public_key, bytes(32), "Host")
    assert announcement.assess(announce(host), known)[0] == FORGED


def test_a_damaged_known_hosts_file_is_one_clear_error(tmp_path):
    (tmp_path / announcement.KNOWN_HOSTS).write_text("{not json")
    with pytest.raises(DiscoveryError, match="is damaged"):
        KnownHosts(tmp_path)


# -- choosing a table ------------------------------------------------------------------------------
def test_join_prefers_verified_and_never_follows_forged(host, known):
    known.pin(host.public_key, host.curve_public, "Host")
    stranger = Profile.generate("Stranger")
    early = announce(stranger, table=bytes(16))
    real = announce(host)
    forged = announce(host, tamper={b"curve": bytes(32).hex().encode()}, service="Host trice swapped")
    ann, trust, _ = announcement.choose([forged, early, real], known)
    assert ann is real and trust == VERIFIED
    assert announcement.choose([early, forged], known)[0] is early  # unverified, but honest about its key
    with pytest.raises(DiscoveryError, match="is forged: its signature"):
        announcement.choose([forged], known, table="Host")
    assert announcement.choose([real], known, game="triad") is None
    assert announcement.choose([announce(host, taken=2, total=2)], known) is None  # a full table
    assert announcement.choose([early, real], known, host_fingerprint=stranger.fingerprint.lower())[0] is early
    assert announcement.choose([early, real], known, table=TABLE.hex()[:6])[0] is real


def test_the_address_on_a_local_network_is_dialled():
    local = [("192.168.7.20", 24), ("10.231.0.3", 24)]
    assert local_networks.best_address(["10.231.99.1", "10.231.0.1"], local) == "10.231.0.1"
    assert local_networks.best_address(["172.16.0.1", "172.16.0.2"], local) == "172.16.0.1"
    with pytest.raises(DiscoveryError):
        local_networks.best_address([], local)


def test_advertised_addresses():
    assert local_networks.advertised_addresses("127.0.0.1") == ["127.0.0.1"]
    assert local_networks.advertised_addresses("127.0.0.1", ["lo"]) == ["127.0.0.1"]
    assert local_networks.advertised_addresses("0.0.0.0", ["lo"]) == ["127.0.0.1"]
    with pytest.raises(DiscoveryError, match="no network interface named 'nosuch0'"):
        local_networks.advertised_addresses("0.0.0.0", ["nosuch0"])
    with pytest.raises(DiscoveryError, match="on none of the chosen interfaces"):
        local_networks.advertised_addresses("10.231.0.1", ["lo"])


# -- command line mistakes: one line, exit 2, nothing sent ----------------------------------------
@pytest.mark.parametrize("argv, says", [
    (["lan", "--timeout", "0"], "--timeout must be above 0"),
    (["lan", "--interface", "nosuch0", "--timeout", "0.1"], "no network interface named 'nosuch0'"),
    (["join", "--table", "Host", "--bot", "random"], "need --lan"),
    (["join", "dt1-abc", "--lan", "--bot", "random"], "not both"),
    (["host", "trice", "--port", "0", "--bot", "random", "--interface", "lo"], "--interface needs --lan"),
    (["host", "trice", "--port", "0", "--bot", "random", "--lan", "--bind", "10.231.0.1", "--interface", "lo"],
     "on none of the chosen interfaces"),
])
def test_mistakes_on_the_command_line(tmp_path, monkeypatch, capsys, argv, says):
    from dicetable.tui.cli import main

    monkeypatch.setenv("DICETABLE_HOME", str(tmp_path))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / announcement.KNOWN_HOSTS).exists()


# -- over mDNS, inside network namespaces -----------------------------------------------------------
@pytest.fixture
def namespaces():
    """Namespaces PREFIX-1..3 on a private bridge (net_helpers.private_lan)."""
    with private_lan(3, "LAN discovery is tested") as run:
        yield run


def read_until(process: subprocess.Popen, prefix: str, timeout: float = 30) -> str:
    """The first line `process` prints that starts with `prefix` (its output so far on failure)."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return line.strip()
    raise AssertionError(f"no {prefix!r} line; saw: {''.join(seen)}")


def lan_rows(run, k, home, **wait_for) -> list[dict]:
    """`dicetable lan --json` in namespace k, retried until a row matches `wait_for` (if given)."""
    for _ in range(8):
        out = run(k, home, "lan", "--json", "--timeout", "1")
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)
        if not wait_for or any(all(r[key] == value for key, value in wait_for.items()) for r in rows):
            return rows
    raise AssertionError(f"no table with {wait_for} announced; last list: {rows}")


FORGER = r"""
import os, socket, sys, time
from pathlib import Path
from zeroconf import IPVersion, ServiceInfo, Zeroconf
from dicetable.net.identity import load
from dicetable.net.reach import announcement, lan
from dicetable.net.reach.transport import HostSocket

forger, real_key = load(Path(sys.argv[1])), bytes.fromhex(sys.argv[2])
me = "10.231.0.2"
zc = Zeroconf(interfaces=[me], ip_version=IPVersion.V4Only)
browser = lan.Browser([me])
while not any(a.host_key == real_key for a in browser.tables()):
    time.sleep(0.05)
real = next(a for a in browser.tables() if a.host_key == real_key)
captured = zc.get_service_info(lan.SERVICE_TYPE, real.service)  # the real TXT record, verbatim

def announce(name, props, port):
    zc.register_service(ServiceInfo(lan.SERVICE_TYPE, f"{name}.{lan.SERVICE_TYPE}",
        addresses=[socket.inet_aton(me)], port=port, properties=props, server=f"f{len(name)}.local."),
        cooperating_responders=True)

# 1. its own keys under the real host's name
announce("Host dicebreaker f1f1f1f1", announcement.properties(forger, "dicebreaker", 1, 3, os.urandom(16), 40001), 40001)
# 2. the real record with the forger's curve key swapped in
swapped = dict(captured.properties)
swapped[b"curve"] = forger.curve_public.hex().encode()
announce("Host dicebreaker swapped", swapped, captured.port)
# 3. the real record replayed verbatim, pointing at the forger's own server
server = HostSocket(forger.curve_secret, me, captured.port)
announce("Host dicebreaker replay", dict(captured.properties), captured.port)
print("ready", flush=True)
sys.stdin.read()
zc.close(); browser.close(); server.close()
"""


@pytest.mark.slow
def test_forged_announcements_are_shown_and_lead_nowhere(namespaces, tmp_path):
    homes = {name: tmp_path / name for name in ("host", "forger", "joiner", "second")}
    host = Profile.generate("Host").save(homes["host"])
    forger = Profile.generate("Host").save(homes["forger"])  # right name, wrong key
    Profile.generate("Joiner").save(homes["joiner"])  # made before three commands share it
    KnownHosts(homes["joiner"]).pin(host.public_key, host.curve_public, "Host")  # met before

    # A multi-homed host (eth0 and side0) bound to every address, announcing on eth0 only.
    hosting = namespaces(1, homes["host"], "host", "dicebreaker", "--seats", "3", "--port", "0", "--bind", "0.0.0.0",
                  "--lan", "--interface", "eth0", "--bot", "random", "--think", "1", "--transcript",
                  str(tmp_path / "host.dtt"), background=True)
    assert read_until(hosting, "lan: ").endswith(" on 10.231.0.1")
    forging = namespaces(2, homes["forger"], "-c", FORGER, str(homes["forger"]), host.public_key.hex(),
                  background=True, stdin=subprocess.PIPE, python=True)
    read_until(forging, "ready")

    rows = lan_rows(namespaces, 3, homes["joiner"], service="Host dicebreaker replay")
    by_service = {r["service"]: r for r in rows}
    real = next(r for r in rows if r["address"] == "10.231.0.1")
    assert (real["trust"], real["fingerprint"], real["seats_taken"], real["seats_total"]) == (VERIFIED, host.fingerprint, 1, 3)
    assert real["addresses"] == ["10.231.0.1"]  # not side0's 10.231.99.1
    own_keys = by_service["Host dicebreaker f1f1f1f1"]
    assert own_keys["trust"] == FORGED and own_keys["fingerprint"] == forger.fingerprint and "calls itself Host" in own_keys["why"]
    assert by_service["Host dicebreaker swapped"]["trust"] == FORGED
    replay = by_service["Host dicebreaker replay"]  # the real record, so it shows the real key...
    assert (replay["trust"], replay["address"], replay["fingerprint"]) == (VERIFIED, "10.231.0.2", host.fingerprint)

    # ...and still cannot seat anyone at a table with another key: the handshake needs the secret.
    # Meanwhile the joiner that knows the host takes a seat at the real table, and a listing
    # limited to the loopback interface hears none of it.
    only_lo = namespaces(3, homes["joiner"], "lan", "--json", "--interface", "lo", "--timeout", "1", background=True)
    to_replay = namespaces(3, homes["joiner"], "join", "--lan", "--table", "Host dicebreaker replay", "--bot", "random",
                    "--timeout", "2", background=True)
    to_forger = namespaces(3, homes["joiner"], "join", "--lan", "--fingerprint", forger.fingerprint, "--bot", "random",
                    "--timeout", "2", background=True)
    first = namespaces(3, homes["joiner"], "join", "--lan", "--table", real["service"], "--bot", "random",
                "--transcript", str(tmp_path / "joiner.dtt"), "--timeout", "20", background=True)
    out = to_replay.communicate(timeout=60)[0]
    assert to_replay.returncode == 2 and "failed the secure handshake" in out, out
    out = to_forger.communicate(timeout=60)[0]
    assert to_forger.returncode == 2 and "is forged" in out and "calls itself Host" in out, out
    assert "(verified: the host you know as Host)" in read_until(first, "found: ")
    out = only_lo.communicate(timeout=60)[0]
    assert only_lo.returncode == 0 and json.loads(out) == [], out
    forging.communicate("", timeout=30)  # the forger withdraws

    # Seats go 1/3, 2/3, full; a first-timer takes the last seat and pins the host.
    lan_rows(namespaces, 2, homes["second"], service=real["service"], seats_taken=2)
    second = namespaces(2, homes["second"], "join", "--lan", "--game", "dicebreaker", "--fingerprint", host.fingerprint,
                 "--bot", "random", "--transcript", str(tmp_path / "second.dtt"), "--timeout", "20", background=True)
    assert "at 10.231.0.1:" in read_until(second, "found: ")
    assert read_until(second, "pinned: ") == f"pinned: Host {host.fingerprint}"  # first meeting: now known
    read_until(second, "started")
    for _ in range(6):  # full: withdrawn while the host still plays
        if not [r for r in lan_rows(namespaces, 3, homes["joiner"]) if r["service"] == real["service"]]:
            break
    else:
        raise AssertionError("the full table is still announced")
    assert hosting.poll() is None
    assert KnownHosts(homes["second"]).hosts[host.public_key]["curve"] == host.curve_public


@pytest.mark.slow
def test_the_app_announces_a_lan_table_and_joins_it_from_its_lan_list(namespaces, tmp_path):
    """Two apps in tmux, each in its own namespace: Ann hosts on her LAN address from the host
    screen; Bob opens LAN tables (Ctrl+L on the join screen), sees hers appear and presses Enter."""
    from ssh_terminal import Tmux

    tmux = Tmux(tmp_path)
    try:
        def app(k: int, name: str):
            home = shlex.quote(str(tmp_path / name))
            return tmux.pane(f"ip netns exec {namespaces.prefix}-{k} env DICETABLE_HOME={home} USER={name} {COMMAND}",
                             {"TERM": "xterm-256color"})

        ann, bob = app(1, "Ann"), app(2, "Bob")
        ann.give_name("Ann")
        bob.give_name("Bob")
        ann.wait_for("Host a table")
        for attempt in range(3):  # a key that lands before the screen has settled: start over
            ann.press("h", "Open the table")
            time.sleep(0.5)  # the screen puts the focus on its first choice once mounted
            # From the game past the seats, to the address.
            ann.send("Tab", "Tab")
            try:
                ann.type_into_field("10.231.0.1", tries=2)
                if "▊  127.0.0.1" not in ann.screen():  # it was the address field, not another
                    break
            except AssertionError:
                pass
            assert attempt < 2, ann.screen()
            ann.press("Escape", "Play against a bot")
        ann.send("Enter")
        ann.wait_for("dt1-")
        row = next(r for r in lan_rows(namespaces, 3, tmp_path / "Cy", host="Ann") if r["host"] == "Ann")
        assert (row["trust"], row["address"], row["seats_taken"], row["seats_total"]) == (UNVERIFIED, "10.231.0.1", 1, 2)
        bob.wait_for("Join a table")
        bob.press("j", "Paste the invite")
        bob.press("C-l", "Tables on your LAN")
        listed = bob.wait_for("Ann", timeout=30)
        assert "unverified" in listed and row["fingerprint"] in listed
        bob.send("Enter")
        ann.wait_for("Moves", timeout=30)  # both at the TRICE table
        bob.wait_for("Moves", timeout=30)
        for _ in range(6):  # the table is full: no longer announced
            if not [r for r in lan_rows(namespaces, 3, tmp_path / "Cy") if r["host"] == "Ann"]:
                break
        else:
            raise AssertionError("the full table is still announced")
        pinned = KnownHosts(tmp_path / "Bob").hosts  # Bob met Ann: her key is pinned now
        assert [v["name"] for v in pinned.values()] == ["Ann"]
    finally:
        tmux.close()
