"""LAN discovery: a hosted table announces itself by mDNS / DNS-SD; joiners browse for open tables.

Service type `_dicetable._tcp.local.`; one service instance per table, with the table's addresses
(A records), its port (SRV) and the signed TXT record of net/reach/announcement.py, which also says
how far a joiner trusts what it hears.

The advertiser announces while seats are free, republishes the seat count, and withdraws when the
table is full, started or closed; it works in its own thread so a session loop never waits on mDNS.
IPv4 only. Interfaces are chosen by name (`--interface eth0`); a host bound to one address answers
on that address's interface and announces that address only, so a multi-homed host does not
announce addresses its LAN cannot reach. A browser limited to interfaces lists only tables with an
address on their networks (and dials only those addresses).

"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from dataclasses import asdict, replace
from typing import Callable

from dicetable.net.identity import Profile
from dicetable.net.reach.announcement import Announcement, KnownHosts, choose, parse, properties
from dicetable.net.reach.local_networks import DiscoveryError, networks_of

SERVICE_TYPE = "_dicetable._tcp.local."


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

    def __init__(self, profile: Profile, table: bytes, game: str, seats: int, port: int, addresses: list[str],
                 queue: bool = False) -> None:
        self.profile, self.table, self.game, self.total, self.port = profile, table, game, seats, port
        self.queue = queue  # announced as waiting for whoever asks for its game (announcement.py)
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
                 addresses: list[str], interface_addresses: list[str] | None = None, queue: bool = False) -> None:
        self.service = f"{_instance(profile.name, game, table)}.{SERVICE_TYPE}"
        self._zc = _zeroconf(interface_addresses or list(addresses))
        self._shown: int | None = None  # what is on the network now
        self._info = None
        super().__init__(profile, table, game, seats, port, addresses, queue)

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
            properties=properties(self.profile, self.game, taken, self.total, self.table, self.port, self.queue),
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
                 advertiser=Advertiser, queue: bool = False) -> None:
        self.session, self.addresses, self.interface_addresses = session, list(addresses), interface_addresses
        self.queue = queue  # a table of "play whoever is waiting"
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
                                                self.interface_addresses, queue=self.queue)
                except DiscoveryError as error:
                    self.errors.append(str(error))
                    return
            taken = sum(seat is not None for seat in session.replica.seats)
            free = session.replica.phase == "new" or bool(session.replica.membership.free_seats())  # an open room too
            self.advertiser.update(taken, free and not session.finished)
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
        self.networks = networks_of(interface_addresses) if interface_addresses else None
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
