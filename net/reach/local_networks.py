"""This machine's network interfaces: which addresses a table announces, and which announced address
a joiner dials (IPv4 only; interfaces chosen by name, `--interface eth0`)."""

from __future__ import annotations

import ipaddress

from typing import Iterable

WILDCARDS = ("0.0.0.0", "", "*")


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


def networks_of(addresses: Iterable[str]) -> list[ipaddress.IPv4Network]:
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
