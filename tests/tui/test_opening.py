"""The one opening place of network tables (tui/tables/opening.py): the `Where` both the CLI's flags
and the app's host form fill, and the seats a hosted table has. Tables opened through it are played
by the CLI, app and system tests."""

from __future__ import annotations

import pytest

from dicetable.net.reach import local_networks
from dicetable.net.reach.local_networks import DiscoveryError
from dicetable.tui.tables.opening import Where, hosting_seats, is_invite


def test_a_table_on_every_address_names_its_first_announced_address(monkeypatch):
    monkeypatch.setattr(local_networks, "advertised_addresses", lambda bind, names=None: ["192.0.2.7", "198.51.100.2"])
    assert Where(bind="0.0.0.0", lan=True).dialled().advertise == "192.0.2.7"
    assert Where(bind="0.0.0.0", lan=True, advertise="table.example").dialled().advertise == "table.example"
    assert Where(bind="0.0.0.0").dialled() == Where(bind="0.0.0.0")  # not announced: the session says what is missing
    assert Where(bind="192.0.2.7", lan=True).dialled().advertise is None  # its bind address is dialled


def test_only_an_announced_table_looks_for_addresses():
    assert Where(bind="::1").announced_at() == []
    with pytest.raises(DiscoveryError, match="IPv4"):
        Where(bind="::1", lan=True).announced_at()


def test_the_host_session_gets_the_whole_where():
    where = Where(bind="0.0.0.0", port=4000, advertise="table.example", relay="r", code_uses="one", code_minutes=2)
    assert where.session_args() == {"bind": "0.0.0.0", "port": 4000, "advertise": "table.example", "relay": "r",
                                    "code_uses": "one", "code_ttl": 120}


@pytest.mark.parametrize("game, asked, seats", [("diceroom", 1, 1), ("diceroom", 2, 2), ("diceroom", 8, 8), ("dicebreaker", 6, 6),
                                                ("trice", 5, None), ("triad", 0, None)])
def test_the_seats_of_a_hosted_table(game, asked, seats):
    assert hosting_seats(game, asked) == seats


@pytest.mark.parametrize("game, asked, why", [("diceroom", 0, "A dice room starts with 1 to 8 people; more join while it is open."),
                                              ("diceroom", 9, "A dice room starts with 1 to 8 people; more join while it is open."),
                                              ("dicebreaker", 7, "Dice Breaker is played by 2 to 6.")])
def test_seats_a_hosted_table_cannot_have(game, asked, why):
    with pytest.raises(ValueError) as error:
        hosting_seats(game, asked)
    assert str(error.value) == why


def test_an_invite_is_told_from_a_short_code():
    assert is_invite("dt1-abc") and is_invite(" DR1-abc") and is_invite("invite:abc")
    assert not is_invite("7-orbit-lantern")
