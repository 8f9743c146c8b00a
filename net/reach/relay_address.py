"""A relay's address: where it listens and its CurveZMQ key, as `dicetable relay` prints it (PROTOCOL.md §12.1)."""

from __future__ import annotations

import base64
import ipaddress
from dataclasses import dataclass


class BadRelay(ValueError):
    """A relay address that cannot be read; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class RelayAddress:
    """Where a relay listens and its CurveZMQ key: printed as `HOST:PORT/KEY` (KEY in base32)."""

    address: str
    port: int
    key: bytes

    def encode(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}/{base64.b32encode(self.key).decode().rstrip('=').lower()}"

    @property
    def endpoint(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"tcp://{host}:{self.port}"

    @classmethod
    def decode(cls, text: str) -> "RelayAddress":
        text = "".join(str(text).split())
        if text.lower().startswith("relay:"):
            text = text[len("relay:"):]
        where, slash, key_text = text.rpartition("/")
        if not slash or not where:
            raise BadRelay("a relay looks like HOST:PORT/KEY, as `dicetable relay` prints it")
        host, colon, port_text = where.rpartition(":")
        if not colon or not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise BadRelay(f"the relay's {where!r} is not HOST:PORT with a port from 1 to 65535")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
            try:
                ipaddress.IPv6Address(host)
            except ValueError:
                raise BadRelay(f"{host!r} is not an IPv6 address") from None
        try:
            key = base64.b32decode(key_text.upper() + "=" * (-len(key_text) % 8))
        except ValueError:
            raise BadRelay("the relay's key is not base32 (copy the whole relay line again)") from None
        if len(key) != 32:
            raise BadRelay("the relay's key is cut short or too long (copy the whole relay line again)")
        return cls(host, int(port_text), key)
