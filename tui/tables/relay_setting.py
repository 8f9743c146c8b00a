"""The relays a player has used, remembered in its profile directory (`relay.txt`, one relay line a
line, the last used first) once a table was hosted or joined through one — so a joiner types the
code alone (`dicetable join 7-orbit-lantern`, or the app's one field), and `HOST:PORT` stands for a
relay met before.

Remembering a relay's key is safe because a relay is trusted for nothing but delivery: the code's
SPAKE2 exchange (net/reach/codes.py) authenticates the host end to end, so a wrong relay can at
worst fail to deliver. A relay never met needs its whole line once (`dicetable relay` prints it,
and the host's screen shows it): its CurveZMQ key cannot be learned on its one port without it."""

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
    from dicetable.net.reach.relay import BadRelay, RelayAddress

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
    from dicetable.net.reach.relay import RelayAddress

    relay = RelayAddress.decode(line)
    others = [k for k in known(directory) if RelayAddress.decode(k).endpoint != relay.endpoint]
    path = _path(directory)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join([relay.encode(), *others][:KEPT]) + "\n")
    except OSError:
        pass  # a convenience: the player types it again next time


def resolve(directory: Path | None, text: str | None):
    """The RelayAddress that `text` names: a whole relay line; `HOST:PORT` of a relay used before; or,
    with nothing typed, the last relay used. BadRelay says what to give instead."""
    from dicetable.net.reach.relay import BadRelay, RelayAddress

    text = (text or "").strip()
    lines = known(directory)
    if not text:
        if not lines:
            raise BadRelay("no relay used before: give the relay's line HOST:PORT/KEY once "
                           "(the host's relay prints it); it is remembered")
        return RelayAddress.decode(lines[0])
    if "/" in text:
        return RelayAddress.decode(text)
    for line in lines:
        relay = RelayAddress.decode(line)
        if text.lower() in (f"{relay.address}:{relay.port}".lower(), f"[{relay.address}]:{relay.port}".lower()):
            return relay
    raise BadRelay(f"{text} is not a relay used before: give its whole line HOST:PORT/KEY once "
                   "(the host's relay prints it); it is remembered")
