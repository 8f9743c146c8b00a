"""Profiles on disk: keys made once and kept, secrets 0600, fingerprints, signatures."""

from __future__ import annotations

import re
import stat

import pytest
import zmq

from dicetable.net import identity
from dicetable.net.identity import Profile, ProfileError, fingerprint, load, load_or_create, verify_signature


def test_profile_made_on_first_use_and_kept(home):
    assert load() is None
    first = load_or_create("alice")
    assert first.path == home and (home / identity.KEYS_FILE).exists()
    again = load_or_create()
    assert again.name == "alice"
    assert again.public_key == first.public_key
    assert again.curve_secret == first.curve_secret and again.fingerprint == first.fingerprint


def test_secret_file_is_private(home):
    load_or_create("alice")
    mode = stat.S_IMODE((home / identity.KEYS_FILE).stat().st_mode)
    assert mode == 0o600


def test_renaming_keeps_the_keys(home):
    first = load_or_create("alice")
    renamed = load_or_create("alicia")
    assert renamed.name == "alicia" and renamed.public_key == first.public_key
    assert load().name == "alicia"


def test_fingerprint_is_short_grouped_and_distinct():
    a, b = Profile.generate("a"), Profile.generate("b")
    assert re.fullmatch(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){3}", a.fingerprint)
    assert a.fingerprint != b.fingerprint
    assert fingerprint(a.public_key) == a.fingerprint


def test_signatures_cover_exact_bytes_and_key():
    a, b = Profile.generate("a"), Profile.generate("b")
    signature = a.sign(b"hello")
    assert verify_signature(a.public_key, b"hello", signature)
    assert not verify_signature(a.public_key, b"hellp", signature)
    assert not verify_signature(b.public_key, b"hello", signature)
    assert not verify_signature(a.public_key, b"hello", signature[:-1] + bytes([signature[-1] ^ 1]))
    assert not verify_signature(a.public_key[:31], b"hello", signature)


def test_curve_keys_are_a_zmq_pair():
    profile = Profile.generate("a")
    assert len(profile.curve_public_z85) == 40
    assert zmq.curve_public(profile.curve_secret_z85) == profile.curve_public_z85


@pytest.mark.parametrize("name", ["", " padded", "x" * 33, "tab\there"])
def test_bad_names_refused(name):
    with pytest.raises(ProfileError):
        Profile.generate(name)


def test_damaged_key_file_is_one_clear_error(home):
    load_or_create("alice")
    (home / identity.KEYS_FILE).write_bytes(b"short")
    with pytest.raises(ProfileError, match="damaged"):
        load()


def test_default_home_is_the_platform_data_dir(monkeypatch):
    import platformdirs

    monkeypatch.delenv("DICETABLE_HOME")
    assert identity.home() == identity.Path(platformdirs.user_data_dir("dicetable", appauthor=False))


def test_a_new_profile_directory_is_the_users_alone(tmp_path):
    from dicetable.net.identity import Profile

    Profile.generate("ann").save(tmp_path / "ann")
    assert (tmp_path / "ann").stat().st_mode & 0o777 == 0o700  # a shared host's other users see none of it


def test_the_saved_name_is_read_without_the_keys_or_any_cryptography(home):
    import json
    import os
    import subprocess
    import sys

    assert identity.saved_name() is None  # no profile yet
    made = load_or_create("alice")
    assert identity.saved_name() == made.name == load().name
    (home / identity.PROFILE_FILE).write_text(json.dumps({"name": " bad "}))
    assert identity.saved_name() == load().name == "player"  # the same fallback as `load`
    (home / identity.PROFILE_FILE).write_text("{not json")
    with pytest.raises(ProfileError, match="cannot read the profile"):
        identity.saved_name()
    (home / identity.PROFILE_FILE).write_text(json.dumps({"name": "alice"}))
    # An offline game's first frame loads no nacl (17 ms of it): the app's name for its player.
    probe = ("import sys; from dicetable.tui.app import player_name; print(player_name()); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nacl'))")
    out = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "DICETABLE_HOME": str(home)},
                         capture_output=True, text=True, timeout=60, check=True).stdout.split("\n")
    assert out[:2] == ["alice", "[]"], out
