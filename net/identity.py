"""A player's profile: name, long-term Ed25519 signing key, CurveZMQ key pair, short fingerprint.

Stored in the user data directory (platformdirs; env DICETABLE_HOME overrides it, tests always set
it): `profile.json` holds the public part (name, public keys), `keys` holds the two 32-byte secrets
(Ed25519 seed ‖ Curve25519 secret) and is created with mode 0600 (FAIRNESS.md §6).

The fingerprint people compare is the first 10 bytes of SHA-256(Ed25519 public key) in base32,
grouped by four: `ABCD-EFGH-IJKL-MNOP`.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nacl.signing import SigningKey

# nacl is imported where keys are used, not here: a game against bots reads only the profile's name
# (`saved_name`), and loading nacl was 17 ms of the app's first frame (scripts/bench_tui.py). In
# `verify_signature` the import is a dictionary lookup, some 0.5 us beside a 40 us check.

KEY_BYTES = 32
SIGNATURE_BYTES = 64
NAME_MAX = 32
PROFILE_FILE = "profile.json"
KEYS_FILE = "keys"


class ProfileError(Exception):
    """A profile that cannot be read or made (bad name, damaged or unreadable files)."""


def home() -> Path:
    """The directory holding the profile, transcripts and seat secrets."""
    override = os.environ.get("DICETABLE_HOME")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir("dicetable", appauthor=False))


def fingerprint(public_key: bytes) -> str:
    """A short human string for an Ed25519 public key, e.g. `K3QF-7XTA-2M4D-UVBN`."""
    text = base64.b32encode(hashlib.sha256(public_key).digest()[:10]).decode()
    return "-".join(text[i : i + 4] for i in range(0, len(text), 4))


def check_name(name: str) -> str:
    """A player name: 1 to 32 printable characters, no surrounding spaces."""
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX:
        raise ProfileError(f"a player name has 1 to {NAME_MAX} characters, not {name!r:.40}")
    if not name.isprintable() or name != name.strip():
        raise ProfileError(f"a player name is printable text without surrounding spaces: {name!r:.40}")
    return name


def login_name() -> str:
    """The login name when it makes a player name, else "": $USER (the SSH server sets it for a served
    player), or else `getpass.getuser()` ($LOGNAME, $LNAME, $USERNAME, then the password database), so
    a shell without $USER still offers one."""
    try:
        return check_name((os.environ.get("USER") or getpass.getuser())[:NAME_MAX])
    except (ProfileError, KeyError, OSError):  # no name anywhere (a uid the password database does not know)
        return ""


def verify_signature(public_key: bytes, data: bytes, signature: bytes) -> bool:
    """True when `signature` is `public_key`'s Ed25519 signature over exactly `data`."""
    if len(public_key) != KEY_BYTES or len(signature) != SIGNATURE_BYTES:
        return False
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    try:
        VerifyKey(public_key).verify(data, signature)
    except (BadSignatureError, ValueError, TypeError):
        return False
    return True


@dataclass(frozen=True)
class Profile:
    name: str
    signing_key: SigningKey
    curve_secret: bytes  # raw Curve25519 secret, as CurveZMQ uses it (z85 below)
    curve_public: bytes
    path: Path | None = None  # the directory it lives in; None for an in-memory profile

    @property
    def public_key(self) -> bytes:
        return bytes(self.signing_key.verify_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    @property
    def curve_public_z85(self) -> bytes:
        from zmq.utils import z85

        return z85.encode(self.curve_public)

    @property
    def curve_secret_z85(self) -> bytes:
        from zmq.utils import z85

        return z85.encode(self.curve_secret)

    def sign(self, data: bytes) -> bytes:
        return self.signing_key.sign(data).signature

    @classmethod
    def generate(cls, name: str) -> "Profile":
        """A fresh in-memory profile (in-process seats, tests); `save` it to keep it."""
        from nacl.public import PrivateKey
        from nacl.signing import SigningKey

        curve = PrivateKey.generate()
        return cls(check_name(name), SigningKey.generate(), bytes(curve), bytes(curve.public_key))

    def save(self, directory: Path | None = None) -> "Profile":
        """Write the profile; the secrets file is created 0600 and never rewritten in place."""
        directory = Path(directory) if directory is not None else home()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # a shared host's other users see none of it
        keys = directory / KEYS_FILE
        tmp = directory / (KEYS_FILE + ".new")
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(bytes(self.signing_key) + self.curve_secret)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, keys)
        public = {
            "name": self.name,
            "ed25519": self.public_key.hex(),
            "curve": self.curve_public.hex(),
            "fingerprint": self.fingerprint,
        }
        (directory / PROFILE_FILE).write_text(json.dumps(public, indent=2) + "\n")
        return Profile(self.name, self.signing_key, self.curve_secret, self.curve_public, directory)

    def renamed(self, name: str) -> "Profile":
        """The same keys under a new name, saved when the profile lives on disk."""
        profile = Profile(check_name(name), self.signing_key, self.curve_secret, self.curve_public, self.path)
        if self.path is not None:
            (self.path / PROFILE_FILE).write_text(
                json.dumps(
                    {
                        "name": profile.name,
                        "ed25519": profile.public_key.hex(),
                        "curve": profile.curve_public.hex(),
                        "fingerprint": profile.fingerprint,
                    },
                    indent=2,
                )
                + "\n"
            )
        return profile


def load(directory: Path | None = None) -> Profile | None:
    """The stored profile, or None when there is none yet."""
    directory = Path(directory) if directory is not None else home()
    name = saved_name(directory)
    if name is None:
        return None
    keys = directory / KEYS_FILE
    try:
        secret = keys.read_bytes()
    except OSError as error:
        raise ProfileError(f"cannot read the profile in {directory}: {error}") from None
    if len(secret) != 2 * KEY_BYTES:
        raise ProfileError(f"the key file {keys} is damaged ({len(secret)} bytes, expected 64)")
    from nacl.public import PrivateKey
    from nacl.signing import SigningKey

    signing = SigningKey(secret[:KEY_BYTES])
    curve = PrivateKey(secret[KEY_BYTES:])
    return Profile(name, signing, bytes(curve), bytes(curve.public_key), directory)


def saved_name(directory: Path | None = None) -> str | None:
    """The stored profile's name, read without its keys (`load` reads it so too); None when there is no
    profile yet, "player" when profile.json holds no name that makes a player name; a ProfileError
    when it cannot be read."""
    directory = Path(directory) if directory is not None else home()
    if not (directory / KEYS_FILE).exists():
        return None
    public = directory / PROFILE_FILE
    try:
        info = json.loads(public.read_text()) if public.exists() else {}
    except (OSError, ValueError) as error:
        raise ProfileError(f"cannot read the profile in {directory}: {error}") from None
    try:
        return check_name(info.get("name") if isinstance(info, dict) else None)
    except ProfileError:
        return "player"


def load_or_create(name: str | None = None, directory: Path | None = None) -> Profile:
    """The stored profile, made on first use (named `name`, or after the login name)."""
    profile = load(directory)
    if profile is None:
        try:
            default = check_name(name[:NAME_MAX]) if name else login_name() or "player"
        except ProfileError:
            default = "player"
        profile = Profile.generate(default).save(directory)
    elif name and name != profile.name:
        profile = profile.renamed(name)
    return profile
