"""The seat file: a seat's secrets beside its transcript (FAIRNESS.md §6).

`TRANSCRIPT.seat` holds, as msgpack, what a seat needs to resume that nobody else may see: its seat,
its hash chains' secrets (`chains`: [secret, length, first] each), its card-deal secrets (`deals`)
and what its session adds (a joiner's invite, a host's port and addresses), and `forgotten` once the
player set the game aside (`forget`). It is written 0600 and atomically (net/table/seat_transcript.py writes it
before any message that depends on a secret in it).
"""

from __future__ import annotations

import os
from pathlib import Path

import msgpack


class SeatFileError(Exception):
    """A seat file that cannot be read back (missing, damaged): one sentence for a person."""


def secrets_path(transcript: Path) -> Path:
    return Path(str(transcript) + ".seat")


def save_seat(transcript: Path, data: dict) -> None:
    """Write the seat file (chain secrets, seat, invite) 0600, atomically."""
    path = secrets_path(transcript)
    tmp = path.with_name(path.name + ".new")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(msgpack.packb(data, use_bin_type=True))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def forget(transcript: Path) -> None:
    """Mark the seat file so that its game is no longer offered to resume (the app's resume list); the
    transcript and the secrets stay (`dicetable join --resume` and `host --resume` still read them)."""
    save_seat(transcript, {**load_seat(transcript), "forgotten": True})


def load_seat(transcript: Path) -> dict:
    """The seat file beside `transcript`; SeatFileError when there is none or it is damaged."""
    if not Path(transcript).is_file():
        raise SeatFileError(f"{transcript} does not exist: give the transcript this seat wrote")
    path = secrets_path(transcript)
    try:
        data = msgpack.unpackb(path.read_bytes(), raw=False)
    except FileNotFoundError:
        raise SeatFileError(f"no seat file {path} beside the transcript: cannot resume without it") from None
    except Exception:
        raise SeatFileError(f"the seat file {path} is damaged: cannot resume") from None
    if not isinstance(data, dict) or "seat" not in data or "chains" not in data:
        raise SeatFileError(f"the seat file {path} is damaged: cannot resume")
    return data
