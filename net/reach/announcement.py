"""A table's signed announcement, and how far a joiner trusts it: what LAN discovery (net/reach/lan.py)
puts in its TXT record and this machine's lobby (net/reach/same_machine.py) in its files.

The record (an mDNS TXT record's keys; the addresses and the port travel beside it):

    v      "1"                      format version
    game   game name                e.g. "trice"
    seats  "taken/total"            seats joined so far / seats of the table
    host   host's player name
    table  16-byte table id, hex
    curve  host's CurveZMQ public key, hex (the invite's key: the joiner's socket refuses any other)
    key    host's Ed25519 profile key, hex
    queue  "1" on a table of "play whoever is waiting" (tui/tables/queue.py); absent otherwise
    sig    Ed25519 signature by `key` over DOMAIN ‖ msgpack([game, taken, total, host, table, curve,
           key, port]) (the SRV port is signed too; the addresses are not: the curve key is what
           authenticates the host, wherever it is reached); a queue table's list ends with `true`,
           so the mark cannot be put on or taken off another's table

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
"""

from __future__ import annotations

import ipaddress
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import msgpack

from dicetable.net.identity import Profile, fingerprint, home, verify_signature
from dicetable.net.reach.invite import Invite
from dicetable.net.reach.local_networks import DiscoveryError, best_address

DOMAIN = b"dicetable/lan/v1\x00"
KNOWN_HOSTS = "known_hosts.json"
_TXT_VERSION = b"1"
_QUEUE, _QUEUED = b"queue", b"1"  # the mark of a table waiting for whoever asks for its game

VERIFIED, UNVERIFIED, FORGED = "verified", "unverified", "forged"


# -- announcements --------------------------------------------------------------------------------
def signed_bytes(game: str, taken: int, total: int, host: str, table: bytes, curve: bytes, key: bytes, port: int,
                 queue: bool = False) -> bytes:
    fields = [game, taken, total, host, table, curve, key, port] + ([True] if queue else [])
    return DOMAIN + msgpack.packb(fields, use_bin_type=True)


def properties(profile: Profile, game: str, taken: int, total: int, table: bytes, port: int,
               queue: bool = False) -> dict[bytes, bytes]:
    """The signed TXT record of a table hosted by `profile` (`queue`: one waiting for whoever asks)."""
    data = signed_bytes(game, taken, total, profile.name, table, profile.curve_public, profile.public_key, port, queue)
    return {
        b"v": _TXT_VERSION,
        b"game": game.encode(),
        b"seats": f"{taken}/{total}".encode(),
        b"host": profile.name.encode(),
        b"table": table.hex().encode(),
        b"curve": profile.curve_public.hex().encode(),
        b"key": profile.public_key.hex().encode(),
        b"sig": profile.sign(data).hex().encode(),
        **({_QUEUE: _QUEUED} if queue else {}),
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
    queue: bool = False  # a table of "play whoever is waiting" (signed with the rest)
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
        queue = props.get(_QUEUE) == _QUEUED
    except (ValueError, UnicodeDecodeError):
        return None
    if len(table) != 16 or len(curve) != 32 or len(key) != 32 or not 0 <= taken_n <= total_n <= 64:
        return None
    if not 1 <= port <= 65535:
        return None
    ok = verify_signature(key, signed_bytes(game, taken_n, total_n, host, table, curve, key, port, queue), signature)
    ipv4 = tuple(a for a in addresses if _is_ipv4(a))
    return Announcement(service, game, taken_n, total_n, host, table, curve, key, port, ipv4, ok, queue)


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
