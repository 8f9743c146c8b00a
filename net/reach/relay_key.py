"""A relay's key for the asking: `HOST:PORT` is enough to reach a relay (PROTOCOL.md §12.1, §12.6).

A relay's CurveZMQ port takes only clients that already know its key, so a person once had to pass
on the whole 72-character line `HOST:PORT/KEY`. Beside that port, on the next one (`key_port`), the
relay answers any plain TCP connection with one line and closes it:

    dicetable-relay-key/v1 KEY\n        KEY: the relay's 32-byte public key in lower-case base32, no padding

It reads nothing from the caller, so the port gives nothing but that line, however it is used. A
player who types `HOST:PORT` learns the key there on first contact and pins it (tui/tables/relay_setting.py
keeps it in relay.txt beside the address); a relay that answers with another key later is refused
with one line that says so (`explain_wrong_key`).

Why learning the key unauthenticated is safe: the relay is trusted for delivery only (net/reach/relay.py).
A short code's SPAKE2 exchange authenticates the host to the joiner end to end (net/reach/codes.py), the
invite travels sealed, and the table's frames are signed by their seats; so whoever answered the
first contact, the real relay or someone on the path, can at worst fail to deliver, which is all a
relay can do anyway (PROTOCOL.md §19 point 10 says what a relay posing as the host may try, with any key).
"""

from __future__ import annotations

import base64
import ipaddress
import selectors
import socket
import threading
import time
from pathlib import Path

import zmq
from zmq.utils import z85

from dicetable.net.reach.transport import TransportError, curve_keypair

KEY_PORT_OFFSET = 1  # the key is answered on the relay's port + 1
LINE_PREFIX = b"dicetable-relay-key/v1 "
MAX_LINE = 128  # bytes read at most from a key port
LEARN_TIMEOUT = 3.0  # seconds a first contact may take


class NoKey(Exception):
    """No relay key could be learned at an address; the message is one line for a person."""


def key_port(port: int) -> int:
    return port + KEY_PORT_OFFSET


def key_line(public_key: bytes) -> bytes:
    return LINE_PREFIX + base64.b32encode(public_key).decode().rstrip("=").lower().encode() + b"\n"


def split_where(text: str) -> tuple[str, int]:
    """(host, port) from `HOST:PORT` (`[IPv6]:PORT`, or a host name), or NoKey saying what is wrong."""
    text = "".join(str(text).split())
    host, colon, port_text = text.rpartition(":")
    if not colon or not host or not port_text.isdigit() or not 1 <= int(port_text) < 65535:
        raise NoKey(f"{text[:80]!r} is not a relay's HOST:PORT (a port from 1 to 65534) nor its line HOST:PORT/KEY")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise NoKey(f"{host[:60]!r} is not an IPv6 address") from None
    return host, int(port_text)


def learn_key(host: str, port: int, timeout: float = LEARN_TIMEOUT) -> bytes:
    """The key the relay at `host:port` answers on its key port, or NoKey in one line."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    data = b""
    try:
        with socket.create_connection((host, key_port(port)), timeout=timeout) as conn:
            deadline = time.monotonic() + timeout
            while b"\n" not in data and len(data) < MAX_LINE and time.monotonic() < deadline:
                conn.settimeout(max(deadline - time.monotonic(), 0.01))
                chunk = conn.recv(MAX_LINE - len(data))
                if not chunk:
                    break
                data += chunk
    except OSError as error:
        why = "no answer in time" if isinstance(error, TimeoutError) else (error.strerror or str(error))
        raise NoKey(f"the relay at {where} did not tell its key on port {key_port(port)} ({why}): "
                    "is it running? Or give its whole line HOST:PORT/KEY once") from None
    line = data.split(b"\n", 1)[0]
    if not line.startswith(LINE_PREFIX):
        raise NoKey(f"{where} answered something that is not a relay's key on port {key_port(port)}; "
                    "give the relay's whole line HOST:PORT/KEY once")
    text = line[len(LINE_PREFIX):].decode("ascii", "replace").upper()
    try:
        key = base64.b32decode(text + "=" * (-len(text) % 8))
    except ValueError:
        key = b""
    if len(key) != 32:
        raise NoKey(f"the key the relay at {where} told is not 32 bytes of base32; give its whole line HOST:PORT/KEY once")
    return key


def explain_wrong_key(host: str, port: int, pinned: bytes) -> str:
    """One line for a relay that refused our handshake: the key it tells now, if another, or why not."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        now = learn_key(host, port, timeout=2.0)
    except NoKey:
        return f"the relay at {where} does not hold the key in its address (wrong relay line?)"
    if now == pinned:  # the same key told: the handshake failed for another reason
        return f"the relay at {where} refused the encrypted handshake with its own key (try again)"
    line = f"{where}/{base64.b32encode(now).decode().rstrip('=').lower()}"
    return (f"the relay at {where} now has another key than the one kept for it (relay.txt, or the line given): "
            f"refused. If its operator made a new key, give its new line once: {line}")


class KeyService:
    """The relay's key port: each connection gets `key_line` and is closed, on a thread of its own
    so the relay's loop is untouched (its only state is the key, which never changes)."""

    def __init__(self, public_key: bytes, bind: str, port: int):
        host = "" if bind in ("*", "0.0.0.0") else bind.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.line = key_line(public_key)
        self.port = port
        self.listener = socket.create_server((host, port), family=family, backlog=128)  # OSError when taken
        self.listener.setblocking(False)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"relay-key-{port}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.listener, selectors.EVENT_READ)
            while not self._stop.is_set():
                if not selector.select(0.2):
                    continue
                for _ in range(64):  # a burst of callers, then look at the stop flag again
                    try:
                        conn, _ = self.listener.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError:
                        if self._stop.is_set():
                            return
                        break  # out of descriptors, say: the next select tries again
                    try:
                        conn.setblocking(False)
                        conn.send(self.line)  # ~80 bytes: fits any socket buffer at once, never blocks
                    except OSError:
                        pass
                    finally:
                        conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        self.listener.close()


def bind_beside(router, bind: str, port: int, public_key: bytes, bind_router) -> tuple[int, KeyService]:
    """Bind the relay's ROUTER with `bind_router(router, bind, port)` (it returns the port) and the key
    port beside it; with port 0, a free pair. TransportError in one line when it cannot."""
    chosen = bind_router(router, bind, port)
    for attempt in range(20):
        try:
            if chosen >= 65535:
                raise OSError(0, "the relay's port is the last one: none is left after it")
            return chosen, KeyService(public_key, bind, key_port(chosen))
        except OSError as error:
            if attempt == 19 or (port and chosen >= 65535):
                router.close(0)
                raise TransportError(f"cannot open the relay's key port {key_port(chosen)} on {bind} "
                                     f"(the port after the relay's own): {error.strerror or error}") from None
            if port:  # a restart: the old key port may be closing still
                time.sleep(0.25)
                continue
            router.unbind(router.getsockopt_string(zmq.LAST_ENDPOINT))  # port 0: another free pair
            chosen = bind_router(router, bind, 0)
    raise AssertionError("unreachable")


def load_relay_key(path: Path) -> bytes:
    """The relay's CurveZMQ secret key from `path`, made there (0600) the first time."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        secret = curve_keypair()[1]
        temp = path.with_name(path.name + ".new")
        temp.write_bytes(z85.encode(secret))
        temp.chmod(0o600)
        temp.replace(path)
        return secret
    except OSError as error:
        raise TransportError(f"cannot read the relay key {path}: {error.strerror}") from None
    try:
        secret = z85.decode(data.strip())
    except Exception:  # z85 raises several types on garbage
        secret = b""
    if len(secret) != 32:
        raise TransportError(f"{path} is not a relay key (40 Z85 characters); move it away to make a new one")
    return secret
