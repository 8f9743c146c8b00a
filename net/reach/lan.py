"""LAN discovery: a hosted table announces itself by mDNS / DNS-SD; joiners browse for open tables.

Service type `_dicetable._tcp.local.`; one service instance per table, with the table's addresses
(A records), its port (SRV) and these TXT keys:

    v      "1"                      format version
    game   game name                e.g. "trice"
    seats  "taken/total"            seats joined so far / seats of the table
    host   host's player name
    table  16-byte table id, hex
    curve  host's CurveZMQ public key, hex (the invite's key: the joiner's socket refuses any other)
    key    host's Ed25519 profile key, hex
    sig    Ed25519 signature by `key` over DOMAIN ‖ msgpack([game, taken, total, host, table, curve,
           key, port]) (the SRV port is signed too; the addresses are not: the curve key is what
           authenticates the host, wherever it is reached)

An announcement is a convenience, never an authority. What a person sees as its trust:

    verified    good signature and the Ed25519 key is pinned with this curve key (known_hosts.json in
                the profile directory), or it is this profile's own table
    unverified  good signature by a key never met: compare the fingerprint with the host's
    forged      bad signature, a pinned key announced with another curve key, or the name of a
                pinned host announced under another key; `join --lan` never follows it

A joiner connects with the curve key from the announcement, so the CurveZMQ handshake completes
only with the holder of that key's secret (a replayed announcement pointing elsewhere fails the
handshake); it then checks that the table's opening is signed by the announced Ed25519 key
(`opening_mismatch`). A forged announcement therefore cannot lead anyone to a table whose keys
differ from what it shows.

The advertiser announces while seats are free, republishes the seat count, and withdraws when the
table is full, started or closed; it works in its own thread so a session loop never waits on mDNS.
IPv4 only. Interfaces are chosen by name (`--interface eth0`); a host bound to one address answers
on that address's interface and announces that address only, so a multi-homed host does not
announce addresses its LAN cannot reach. A browser limited to interfaces lists only tables with an
address on their networks (and dials only those addresses).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

import msgpack

from dicetable.net.identity import Profile, fingerprint, home, verify_signature
from dicetable.net.reach.invite import Invite

SERVICE_TYPE = "_dicetable._tcp.local."
DOMAIN = b"dicetable/lan/v1\x00"
KNOWN_HOSTS = "known_hosts.json"
WILDCARDS = ("0.0.0.0", "", "*")
_TXT_VERSION = b"1"

VERIFIED, UNVERIFIED, FORGED = "verified", "unverified", "forged"


class DiscoveryError(Exception):
    """A discovery problem a person can meet (unknown interface, no table found): one sentence."""


# -- interfaces ---------------------------------------------------------------------------------
def interfaces() -> dict[str, list[tuple[str, int]]]:
    """IPv4 (address, prefix length) of every network interface, by interface name."""
    import ifaddr

    found: dict[str, list[tuple[str, int]]] = {}
    for adapter in ifaddr.get_adapters():
        found[adapter.nice_name] = [(ip.ip, ip.network_prefix) for ip in adapter.ips if isinstance(ip.ip, str)]
    return found


def interface_addresses(names: Iterable[str] | None) -> list[str]:
    """The IPv4 addresses of the named interfaces; an unknown or address-less name is an error."""
    table = interfaces()
    addresses: list[str] = []
    for name in names or ():
        if name not in table:
            raise DiscoveryError(f"no network interface named {name!r} (interfaces: {', '.join(sorted(table))})")
        if not table[name]:
            raise DiscoveryError(f"network interface {name!r} has no IPv4 address")
        addresses += [ip for ip, _ in table[name] if ip not in addresses]
    return addresses


def advertised_addresses(bind: str, names: Iterable[str] | None = None) -> list[str]:
    """What a host bound to `bind` announces: its bind address, or (bound to every address) the
    addresses of the chosen interfaces, else every non-loopback IPv4 address (loopback if none)."""
    chosen = interface_addresses(names) if names else None
    if bind not in WILDCARDS:
        try:
            ipaddress.IPv4Address(bind)
        except ValueError:
            raise DiscoveryError(f"LAN discovery needs an IPv4 bind address, not {bind!r}") from None
        if chosen is not None and bind not in chosen:
            raise DiscoveryError(f"the table is bound to {bind}, which is on none of the chosen interfaces")
        return [bind]
    if chosen is not None:
        return chosen
    everywhere = [ip for ips in interfaces().values() for ip, _ in ips]
    outside = [ip for ip in everywhere if not ipaddress.IPv4Address(ip).is_loopback]
    return outside or ["127.0.0.1"]


def _networks_of(addresses: Iterable[str]) -> list[ipaddress.IPv4Network]:
    """The networks (address/prefix of their interface) that `addresses` are on."""
    prefixes = {ip: prefix for ips in interfaces().values() for ip, prefix in ips}
    return [ipaddress.IPv4Network(f"{a}/{prefixes.get(a, 32)}", strict=False) for a in addresses]


def best_address(addresses: Iterable[str], local: Iterable[tuple[str, int]] | None = None) -> str:
    """The announced address to dial: the first one on a network this machine is on, else the first."""
    addresses = list(addresses)
    if not addresses:
        raise DiscoveryError("the announcement has no IPv4 address to connect to")
    local = list(local) if local is not None else [a for ips in interfaces().values() for a in ips]
    for address in addresses:
        for ip, prefix in local:
            if ipaddress.IPv4Address(address) in ipaddress.IPv4Network(f"{ip}/{prefix}", strict=False):
                return address
    return addresses[0]


# -- announcements --------------------------------------------------------------------------------
def signed_bytes(game: str, taken: int, total: int, host: str, table: bytes, curve: bytes, key: bytes, port: int) -> bytes:
    return DOMAIN + msgpack.packb([game, taken, total, host, table, curve, key, port], use_bin_type=True)


def properties(profile: Profile, game: str, taken: int, total: int, table: bytes, port: int) -> dict[bytes, bytes]:
    """The signed TXT record of a table hosted by `profile`."""
    data = signed_bytes(game, taken, total, profile.name, table, profile.curve_public, profile.public_key, port)
    return {
        b"v": _TXT_VERSION,
        b"game": game.encode(),
        b"seats": f"{taken}/{total}".encode(),
        b"host": profile.name.encode(),
        b"table": table.hex().encode(),
        b"curve": profile.curve_public.hex().encode(),
        b"key": profile.public_key.hex().encode(),
        b"sig": profile.sign(data).hex().encode(),
    }


@dataclass(frozen=True)
class Announcement:
    """One table as announced on the LAN (nothing in it is trusted until `assess` says so)."""

    service: str  # the DNS-SD instance name
    game: str
    seats_taken: int
    seats_total: int
    host_name: str
    table_id: bytes
    curve_key: bytes
    host_key: bytes
    port: int
    addresses: tuple[str, ...]
    signature_ok: bool
    seen_at: float = field(default_factory=time.time, compare=False)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.host_key)

    @property
    def open(self) -> bool:
        return self.seats_taken < self.seats_total

    def invite(self, address: str | None = None) -> Invite:
        """The invite this announcement stands for, dialling `address` (default: the best one)."""
        return Invite(address or best_address(self.addresses), self.port, self.curve_key, self.table_id)


def parse(service: str, props: dict, port: int, addresses: Iterable[str]) -> Announcement | None:
    """An Announcement from a service's TXT record, SRV port and A records; None if not ours."""

    def text(key: bytes) -> str:
        value = props.get(key)
        if not isinstance(value, bytes):
            raise ValueError(key)
        return value.decode("utf-8")

    try:
        if props.get(b"v") != _TXT_VERSION:
            return None
        game, host = text(b"game"), text(b"host")
        taken, _, total = text(b"seats").partition("/")
        taken_n, total_n = int(taken), int(total)
        table, curve, key = (bytes.fromhex(text(k)) for k in (b"table", b"curve", b"key"))
        signature = bytes.fromhex(text(b"sig"))
    except (ValueError, UnicodeDecodeError):
        return None
    if len(table) != 16 or len(curve) != 32 or len(key) != 32 or not 0 <= taken_n <= total_n <= 64:
        return None
    if not 1 <= port <= 65535:
        return None
    ok = verify_signature(key, signed_bytes(game, taken_n, total_n, host, table, curve, key, port), signature)
    ipv4 = tuple(a for a in addresses if _is_ipv4(a))
    return Announcement(service, game, taken_n, total_n, host, table, curve, key, port, ipv4, ok)


def _is_ipv4(address: str) -> bool:
    try:
        ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return True


# -- trust ---------------------------------------------------------------------------------------
class KnownHosts:
    """Hosts this profile has pinned: Ed25519 key -> (name, curve key), in known_hosts.json."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (Path(directory) if directory is not None else home()) / KNOWN_HOSTS
        self.hosts: dict[bytes, dict] = {}
        try:
            data = json.loads(self.path.read_text())
            for entry in data.get("hosts", []):
                self.hosts[bytes.fromhex(entry["key"])] = {"name": entry["name"], "curve": bytes.fromhex(entry["curve"])}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise DiscoveryError(f"the known hosts file {self.path} is damaged (move it away to start afresh)") from None

    def pin(self, key: bytes, curve: bytes, name: str) -> None:
        self.hosts[key] = {"name": name, "curve": curve}
        entries = [
            {"name": v["name"], "key": k.hex(), "curve": v["curve"].hex(), "fingerprint": fingerprint(k)}
            for k, v in self.hosts.items()
        ]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".new")
        tmp.write_text(json.dumps({"hosts": entries}, indent=2) + "\n")
        os.replace(tmp, self.path)

    def named(self, name: str) -> list[bytes]:
        return [k for k, v in self.hosts.items() if v["name"] == name]


def assess(ann: Announcement, known: KnownHosts, own: Profile | None = None) -> tuple[str, str]:
    """(trust, why) of an announcement: VERIFIED, UNVERIFIED or FORGED, with one sentence."""
    if not ann.signature_ok:
        return FORGED, "its signature does not match what it announces"
    if own is not None and ann.host_key == own.public_key:
        if ann.curve_key != own.curve_public:
            return FORGED, "it carries your own key with a curve key that is not yours"
        return VERIFIED, "your own table"
    pinned = known.hosts.get(ann.host_key)
    if pinned is not None:
        if pinned["curve"] != ann.curve_key:
            return FORGED, f"its curve key is not the one pinned for {pinned['name']}"
        return VERIFIED, f"the host you know as {pinned['name']}"
    if known.named(ann.host_name):
        return FORGED, f"it calls itself {ann.host_name} but its key {ann.fingerprint} is not the {ann.host_name} you know"
    return UNVERIFIED, f"first meeting with this host: compare the fingerprint {ann.fingerprint} with theirs"


def choose(
    tables: Iterable[Announcement],
    known: KnownHosts,
    own: Profile | None = None,
    table: str | None = None,
    game: str | None = None,
    host_fingerprint: str | None = None,
) -> tuple[Announcement, str, str] | None:
    """The open table to join among `tables` (verified first, then the earliest seen), with its trust.

    `table` matches a host name, an instance name or a table id prefix. Forged announcements are
    never chosen: if only forged ones match, DiscoveryError says why; no match at all is None.
    """
    matching, forged = [], []
    for ann in tables:
        if not ann.open or (game and ann.game != game):
            continue
        if table and table not in (ann.host_name, ann.service.split(".")[0]) and not ann.table_id.hex().startswith(table.lower()):
            continue
        if host_fingerprint and ann.fingerprint.replace("-", "") != host_fingerprint.replace("-", "").upper():
            continue
        trust, why = assess(ann, known, own)
        (forged if trust == FORGED else matching).append((ann, trust, why))
    if matching:
        matching.sort(key=lambda m: (m[1] != VERIFIED, m[0].seen_at))
        return matching[0]
    if forged:
        ann, _, why = forged[0]
        raise DiscoveryError(f"the only matching table announced ({ann.service.split('.')[0]}) is forged: {why}; not joining it")
    return None


def opening_mismatch(session, ann: Announcement) -> str | None:
    """Why the connected table's opening is not signed by the announced keys, or None when it is
    (`join --lan` and the app's LAN list both check this before trusting a host)."""
    seats = session.replica.seats
    host = seats[0] if seats else None
    if host is None or host.key != ann.host_key or (host.curve is not None and host.curve != ann.curve_key):
        return f"the table reached is not opened by the key {ann.fingerprint} its announcement showed; left it"
    return None


# -- zeroconf ------------------------------------------------------------------------------------
def _zeroconf(addresses: list[str] | None):
    from zeroconf import InterfaceChoice, IPVersion, Zeroconf

    try:
        return Zeroconf(interfaces=addresses or InterfaceChoice.All, ip_version=IPVersion.V4Only)
    except OSError as error:
        raise DiscoveryError(f"cannot start LAN discovery: {error.strerror or error}") from None


def _instance(host: str, game: str, table: bytes) -> str:
    name = f"{host} {game} {table.hex()[:8]}"
    while len(name.encode()) > 63:  # a DNS label's limit
        host = host[:-1]
        name = f"{host} {game} {table.hex()[:8]}"
    return name


class Announcing:
    """What both announcers share (mDNS here, this machine's lobby in net/reach/same_machine.py): the seat
    count to show, set cheaply from any thread, and a thread of their own that shows it (`_run`).
    A subclass sets its own fields before calling this `__init__`, which starts the thread."""

    thread_name = "dicetable-advertiser"

    def __init__(self, profile: Profile, table: bytes, game: str, seats: int, port: int, addresses: list[str]) -> None:
        self.profile, self.table, self.game, self.total, self.port = profile, table, game, seats, port
        self.addresses = list(addresses)
        self.errors: list[str] = []
        self._want: int | None = 0  # seats taken to announce; None: withdrawn
        self._changed = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def _run(self) -> None:  # pragma: no cover - each announcer shows the count its own way
        raise NotImplementedError

    def update(self, taken: int, open_: bool = True) -> None:
        """Announce `taken` seats joined; withdraw when the table is full or no longer open."""
        want = taken if open_ and taken < self.total else None
        if want != self._want:
            self._want = want
            self._changed.set()

    def withdraw(self) -> None:
        self.update(self.total, False)

    def close(self) -> None:
        """Withdraw and stop; waits (up to 5 s) until the withdrawal is shown."""
        self.withdraw()
        self._done = True
        self._changed.set()
        self._thread.join(timeout=5)


class Advertiser(Announcing):
    """Announces one table on the LAN by mDNS while it has free seats."""

    def __init__(self, profile: Profile, table: bytes, game: str, seats: int, port: int,
                 addresses: list[str], interface_addresses: list[str] | None = None) -> None:
        self.service = f"{_instance(profile.name, game, table)}.{SERVICE_TYPE}"
        self._zc = _zeroconf(interface_addresses or list(addresses))
        self._shown: int | None = None  # what is on the network now
        self._info = None
        super().__init__(profile, table, game, seats, port, addresses)

    def close(self) -> None:
        """Withdraw (goodbye packets) and stop; waits for the goodbye to go out."""
        super().close()
        self._zc.close()

    def _info_for(self, taken: int):
        from zeroconf import ServiceInfo

        return ServiceInfo(
            SERVICE_TYPE,
            self.service,
            addresses=[socket.inet_aton(a) for a in self.addresses],
            port=self.port,
            properties=properties(self.profile, self.game, taken, self.total, self.table, self.port),
            server=f"dicetable-{self.table.hex()[:12]}.local.",
        )

    def _run(self) -> None:
        while True:
            self._changed.wait()
            self._changed.clear()
            want = self._want
            try:
                self._apply(want)
            except Exception as error:  # mDNS is a convenience: a failure must not end the table
                self.errors.append(str(error) or type(error).__name__)
            if self._done and self._want == self._shown:
                return

    def _apply(self, want: int | None) -> None:
        if want == self._shown:
            return
        if want is None:
            self._zc.unregister_service(self._info)
        else:
            info = self._info_for(want)
            if self._shown is None:
                self._zc.register_service(info, allow_name_change=True)
                self.service = info.name
            else:
                self._zc.update_service(info)
            self._info = info
        self._shown = want


class SessionAnnouncer:
    """Announces a HostSession's table for as long as it is open to joiners: waits for the session
    to bind, follows its seat count, withdraws when it is full, started, finished or closed. It only
    reads the session (from its own thread), so the session needs no hook of its own."""

    def __init__(self, session, addresses: list[str], interface_addresses: list[str] | None = None,
                 advertiser=Advertiser) -> None:
        self.session, self.addresses, self.interface_addresses = session, list(addresses), interface_addresses
        self.make = advertiser  # Advertiser, or net/reach/same_machine.py's for a table on loopback
        self.advertiser: Advertiser | None = None
        self.errors: list[str] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dicetable-announcer", daemon=True)
        self._thread.start()

    def _closed(self) -> bool:
        session = self.session
        socket_ = getattr(session, "socket", None)
        return session.stopped or (socket_ is not None and socket_.socket.closed)

    def _run(self) -> None:
        session = self.session
        while not self._done.wait(0.1):
            if self._closed():
                break
            if session.socket is None or session.replica is None:
                continue  # not bound yet
            if self.advertiser is None:
                try:
                    self.advertiser = self.make(session.profile, session.replica.table, session.game_name,
                                                session.seat_count, session.socket.port, self.addresses,
                                                self.interface_addresses)
                except DiscoveryError as error:
                    self.errors.append(str(error))
                    return
            taken = sum(seat is not None for seat in session.replica.seats)
            self.advertiser.update(taken, session.replica.phase in ("new", "joining") and not session.finished)
        if self.advertiser is not None:
            self.advertiser.close()

    def close(self) -> None:
        """Withdraw now and wait for the goodbye to go out."""
        self._done.set()
        self._thread.join(timeout=10)


class Browser:
    """Watches the LAN for tables; `tables()` is the current list, `on_change` hears every change."""

    def __init__(self, interface_addresses: list[str] | None = None,
                 on_change: Callable[[list[Announcement]], None] | None = None) -> None:
        from zeroconf import ServiceBrowser

        self.on_change = on_change
        # A multicast socket hears groups joined on any interface (Linux's IP_MULTICAST_ALL), so
        # "only these interfaces" is kept by address: a table must be on one of their networks.
        self.networks = _networks_of(interface_addresses) if interface_addresses else None
        self._tables: dict[str, Announcement] = {}
        self._lock = threading.Lock()
        self._zc = _zeroconf(interface_addresses)
        self._browser = ServiceBrowser(self._zc, SERVICE_TYPE, handlers=[self._handle])

    def _handle(self, zeroconf, service_type: str, name: str, state_change) -> None:
        from zeroconf import ServiceStateChange

        if state_change is ServiceStateChange.Removed:
            with self._lock:
                self._tables.pop(name, None)
        else:
            info = zeroconf.get_service_info(service_type, name, timeout=1500)
            if info is None:
                return
            ann = parse(name, info.properties, info.port or 0, info.parsed_addresses())
            if ann is not None and self.networks is not None:
                near = tuple(a for a in ann.addresses if any(ipaddress.IPv4Address(a) in n for n in self.networks))
                ann = replace(ann, addresses=near) if near else None
            with self._lock:
                if ann is None:
                    self._tables.pop(name, None)
                else:
                    first = self._tables.get(name)
                    if first is not None:  # keep when it was first seen: the join order prefers it
                        ann = Announcement(**{**asdict(ann), "seen_at": first.seen_at})
                    self._tables[name] = ann
        if self.on_change is not None:
            self.on_change(self.tables())

    def tables(self) -> list[Announcement]:
        with self._lock:
            return sorted(self._tables.values(), key=lambda a: a.seen_at)

    def close(self) -> None:
        self._browser.cancel()
        self._zc.close()


def browse(timeout: float, interface_addresses: list[str] | None = None) -> list[Announcement]:
    """Every table announced within `timeout` seconds (open or not)."""
    browser = Browser(interface_addresses)
    try:
        time.sleep(timeout)
        return browser.tables()
    finally:
        browser.close()


def find(
    timeout: float,
    known: KnownHosts,
    own: Profile | None = None,
    interface_addresses: list[str] | None = None,
    browsers: list | None = None,
    **match,
) -> tuple[Announcement, str, str]:
    """Browse until an open table matching `match` (see `choose`) is announced, or raise DiscoveryError.
    `browsers` (closed here) replace the mDNS one, e.g. with net/reach/same_machine.py's."""
    browsers = browsers if browsers is not None else [Browser(interface_addresses)]
    deadline = time.monotonic() + timeout
    error: DiscoveryError | None = None
    try:
        while True:
            try:
                found = choose([ann for browser in browsers for ann in browser.tables()], known, own, **match)
            except DiscoveryError as forged:
                found, error = None, forged  # a real table may still be announced
            if found is not None:
                return found
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
    finally:
        for browser in browsers:
            browser.close()
    if error is not None:
        raise error
    wanted = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in match.items() if v)
    what = f"open table matching {wanted}" if wanted else "open table"
    raise DiscoveryError(f"no {what} was announced on the LAN within {timeout:g} s (is the host running with --lan?)")
