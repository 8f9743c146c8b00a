"""The invite: one copy-pasteable line `dt1-...` that tells a joiner where the table is and who hosts it.

Layout (before base32, lower case, no padding):

    addr_kind (1 byte: 4 = IPv4, 6 = IPv6, 0 = host name)
    address   (4 or 16 bytes, or 1 length byte + UTF-8 host name)
    port      (2 bytes, big-endian)
    host_key  (32 bytes: the host's CurveZMQ public key; the joiner's socket refuses any other host)
    table_id  (16 bytes)
    owner     (32 bytes, relay invites `dr1-` only: the host's Ed25519 key)
    fallback  (relay invites only, optional: a second relay's address kind, address, port and curve
               key, laid out as the first's: where the table moves if its relay dies; net/reach/relay_link.py)
    check     (4 bytes: SHA-256 of all the above, so a mistyped or cut invite is caught as such)

The curve key makes a direct invite the host's authentication: a joiner can only complete the
encrypted handshake with the server that holds the matching secret key. A relay invite (`dr1-`,
net/reach/relay.py) names the relay's address and curve key instead, which authenticate only the relay;
the host is then authenticated by `owner`: the joiner leaves a table whose opening another key
signed (net/table/joiner.py), so a relay cannot seat anyone at a table of its own making.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
from dataclasses import dataclass, replace

PREFIX = "dt1-"
RELAY_PREFIX = "dr1-"  # the same fields, then the owner key: a table reached through a relay
_CHECK = 4
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


class BadInvite(ValueError):
    """An invite that cannot be read; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Invite:
    address: str
    port: int
    host_key: bytes  # 32-byte CurveZMQ public key (raw, not Z85)
    table_id: bytes  # 16 bytes
    owner: bytes | None = None  # through a relay: the host's Ed25519 key (its curve key is the relay's)
    fallback: tuple[str, int, bytes] | None = None  # through a relay: a second relay (address, port, curve key)

    def __post_init__(self) -> None:
        if not 1 <= self.port <= 65535:
            raise BadInvite(f"port {self.port} is not between 1 and 65535")
        if len(self.host_key) != 32:
            raise BadInvite("the host key is not 32 bytes")
        if len(self.table_id) != 16:
            raise BadInvite("the table id is not 16 bytes")
        if self.owner is not None and len(self.owner) != 32:
            raise BadInvite("the owner key is not 32 bytes")
        if self.fallback is not None and (self.owner is None or not 1 <= self.fallback[1] <= 65535 or len(self.fallback[2]) != 32):
            raise BadInvite("a second relay needs a relay invite, a port from 1 to 65535 and a 32-byte key")

    @property
    def endpoint(self) -> str:
        """The ZeroMQ endpoint to connect to."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"tcp://{host}:{self.port}"

    def moved(self) -> "Invite":
        """The same table at its second relay, with the first as the second now (net/reach/relay_link.py)."""
        address, port, key = self.fallback
        return replace(self, address=address, port=port, host_key=key, fallback=(self.address, self.port, self.host_key))

    def encode(self) -> str:
        raw = _address_bytes(self.address) + self.port.to_bytes(2, "big") + self.host_key + self.table_id
        raw += self.owner or b""
        if self.fallback is not None:
            address, port, key = self.fallback
            raw += _address_bytes(address) + port.to_bytes(2, "big") + key
        raw += hashlib.sha256(raw).digest()[:_CHECK]
        return (PREFIX if self.owner is None else RELAY_PREFIX) + base64.b32encode(raw).decode("ascii").rstrip("=").lower()

    @classmethod
    def decode(cls, text: str) -> "Invite":
        code = "".join(text.split())  # a line wrapped by a chat window still reads
        if code.lower().startswith("invite:"):
            code = code[len("invite:"):]
        relayed = code.lower().startswith(RELAY_PREFIX)
        if not relayed and not code.lower().startswith(PREFIX):
            raise BadInvite(f"an invite starts with {PREFIX!r} or {RELAY_PREFIX!r}; this one does not")
        body = code[len(PREFIX):].upper()
        stray = sorted(set(body) - set(_ALPHABET))
        if stray:
            shown = "".join(stray[:5])
            raise BadInvite(f"the invite has characters that are not in an invite code ({shown!r}): copy it again")
        try:
            raw = base64.b32decode(body + "=" * (-len(body) % 8))
        except (ValueError, TypeError):
            raise BadInvite("the invite is cut short or has extra characters (copy it again)") from None
        if len(raw) < 1 + 4 + 2 + 32 + 16 + _CHECK:
            raise BadInvite("the invite is too short (was it cut off when copied?)")
        payload, check = raw[:-_CHECK], raw[-_CHECK:]
        if hashlib.sha256(payload).digest()[:_CHECK] != check:
            raise BadInvite("the invite is damaged: its checksum does not match (copy it again)")
        address, rest = _read_address(payload)
        fixed = 2 + 32 + 16 + (32 if relayed else 0)
        fallback = None
        if relayed and len(rest) > fixed:  # a second relay follows the owner key
            second, tail = _read_address(rest[fixed:])
            if len(tail) != 2 + 32:
                raise BadInvite("the invite's second relay has the wrong length for its address kind")
            fallback = (second, int.from_bytes(tail[:2], "big"), tail[2:])
        elif len(rest) != fixed:
            raise BadInvite("the invite has the wrong length for its address kind")
        port = int.from_bytes(rest[:2], "big")
        return cls(address, port, rest[2:34], rest[34:50], rest[50:82] if relayed else None, fallback)


def _address_bytes(address: str) -> bytes:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        name = address.encode("utf-8")
        if not 0 < len(name) < 256:
            raise BadInvite(f"host name {address!r} is empty or too long") from None
        return b"\x00" + bytes([len(name)]) + name
    return (b"\x04" if ip.version == 4 else b"\x06") + ip.packed


def _read_address(payload: bytes) -> tuple[str, bytes]:
    kind = payload[0]
    if kind == 4:
        return str(ipaddress.IPv4Address(payload[1:5])), payload[5:]
    if kind == 6:
        if len(payload) < 17:
            raise BadInvite("the invite is too short for an IPv6 address")
        return str(ipaddress.IPv6Address(payload[1:17])), payload[17:]
    if kind == 0:
        size = payload[1]
        name = payload[2:2 + size]
        try:
            return name.decode("utf-8"), payload[2 + size:]
        except UnicodeDecodeError:
            raise BadInvite("the invite's host name is not valid text") from None
    raise BadInvite(f"the invite has an unknown address kind {kind} (made by a newer dicetable?)")
