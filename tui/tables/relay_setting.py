"""The relays a player has used, remembered in its profile directory (`relay.txt`, one relay line a
line, the last used first) once a table was hosted or joined through one — so a joiner types the
code alone (`dicetable join 7-orbit-lantern`, or the app's one field), and `HOST:PORT` is enough.

`HOST:PORT` of a relay not met before: its key is learned on first contact, from the line the relay
tells on its key port (net/reach/relay_key.py), and pinned here beside the address; from then on that
key is the one used, and a relay that shows another one later is refused with one line that says so
(net/reach/relay_link.py). Learning and remembering a relay's key is safe because a relay is trusted for
nothing but delivery: the code's SPAKE2 exchange (net/reach/codes.py) authenticates the host end to end
and the table's frames are signed, so a wrong relay key can at worst fail to deliver."""

from __future__ import annotations

from pathlib import Path

FILE = "relay.txt"
MAX_LINE = 400  # characters: a relay line is about 80
KEPT = 8  # relays remembered


def _path(directory: Path | None) -> Path:
    from dicetable.net.identity import home

    return (directory or home()) / FILE


def known(directory: Path | None) -> list[str]:
    """The relay lines used from this profile, the last used first (lines that do not parse are
    skipped: the file is the player's to edit)."""
    from dicetable.net.reach.relay_address import BadRelay, RelayAddress

    try:
        lines = _path(directory).read_text()[: MAX_LINE * KEPT].splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    out = []
    for line in lines[:KEPT]:
        try:
            out.append(RelayAddress.decode(line).encode())
        except BadRelay:
            continue
    return out


def remembered(directory: Path | None) -> str:
    """The relay line last used from this profile, or ""."""
    lines = known(directory)
    return lines[0] if lines else ""


def remember(directory: Path | None, line: str) -> None:
    """`line` becomes the last used relay (a relay at the same HOST:PORT with an older key goes)."""
    from dicetable.net.reach.relay_address import RelayAddress

    relay = RelayAddress.decode(line)
    others = [k for k in known(directory) if RelayAddress.decode(k).endpoint != relay.endpoint]
    path = _path(directory)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join([relay.encode(), *others][:KEPT]) + "\n")
    except OSError:
        pass  # a convenience: the player types it again next time


def resolve(directory: Path | None, text: str | None, asking=None):
    """The RelayAddress that `text` names: a whole relay line; `HOST:PORT` of a relay used before (its
    pinned key) or not (its key learned on first contact, net/reach/relay_key.py, and pinned); or, with
    nothing typed, the last relay used. BadRelay says what to give instead. A first contact may take
    up to relay_key.LEARN_TIMEOUT seconds (call this off the app's UI thread); `asking()`, if given,
    is called just before it, so the person can be told what is waited for."""
    from dicetable.net.reach import relay_key
    from dicetable.net.reach.relay_address import BadRelay, RelayAddress

    text = (text or "").strip()
    lines = known(directory)
    if not text:
        if not lines:
            raise BadRelay("no relay used before: give the relay's HOST:PORT (or the line HOST:PORT/KEY "
                           "`dicetable relay` prints); it is remembered")
        return RelayAddress.decode(lines[0])
    if "/" in text:
        return RelayAddress.decode(text)
    for line in lines:
        relay = RelayAddress.decode(line)
        if text.lower() in (f"{relay.address}:{relay.port}".lower(), f"[{relay.address}]:{relay.port}".lower()):
            return relay  # pinned: the key learned (or given) the first time, never a new one told since
    try:
        host, port = relay_key.split_where(text)
        if asking is not None:
            asking()
        relay = RelayAddress(host, port, relay_key.learn_key(host, port))
    except relay_key.NoKey as error:
        raise BadRelay(str(error)) from None
    pin(directory, relay.encode())
    return relay


def pin(directory: Path | None, line: str) -> None:
    """Keep a relay's learned key beside its address, after the relays already used (the last used
    stays the default until this one is used)."""
    lines = known(directory)
    path = _path(directory)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join([*lines[:KEPT - 1], line]) + "\n")
    except OSError:
        pass  # a convenience: the key is learned again next time
