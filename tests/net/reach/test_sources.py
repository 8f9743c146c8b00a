"""Sources and their budgets (net/reach/sources.py): an address is counted as itself (IPv4) or by its /64
(IPv6), a budget refills at its pace and bounds its memory, a backoff doubles after the free lapses."""

from __future__ import annotations

from dicetable.net.reach.sources import Backoff, Budget, source_of


def test_an_address_is_counted_as_itself_or_by_its_64():
    assert source_of("203.0.113.7") == source_of(b"203.0.113.7") == "203.0.113.7"
    assert source_of("::ffff:203.0.113.7") == "203.0.113.7"  # an IPv4 peer on a dual-stack socket
    assert source_of("2001:db8:1:2:aaaa::1") == source_of("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert source_of("2001:db8:1:3::1") != source_of("2001:db8:1:2::1")
    assert source_of("[2001:db8:1:2::1]") == source_of("2001:db8:1:2::1%eth0") == "2001:db8:1:2::/64"
    assert source_of("") == source_of(None) == "?"


def test_a_budget_gives_a_burst_then_one_try_per_period():
    now = [0.0]
    budget = Budget(burst=3, every=2.0, clock=lambda: now[0])
    assert [budget.spend("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert budget.spend("a") == 2.0 and budget.spend("b") == 0.0  # one source's budget is its own
    now[0] += 1.0
    assert budget.spend("a") == 1.0
    now[0] += 1.0
    assert budget.spend("a") == 0.0 and budget.spend("a") == 2.0


def test_a_budget_remembers_a_bounded_number_of_sources():
    now = [0.0]
    budget = Budget(burst=1, every=1.0, sources=2, clock=lambda: now[0])
    assert budget.spend("a") == budget.spend("b") == 0.0
    assert budget.spend("c") == 1.0  # full, and both still counted: the newest waits
    now[0] += 1.0
    assert budget.spend("c") == 0.0  # a and b have filled up again: forgotten, room for c


def test_a_backoff_waits_after_the_free_lapses_and_doubles():
    backoff = Backoff(free=1, first=60.0, most=150.0)
    assert backoff.lapse("a", 0.0) == 0.0 and backoff.wait("a", 0.0) == 0.0
    assert backoff.lapse("a", 1.0) == 60.0 and backoff.wait("a", 31.0) == 30.0
    assert backoff.lapse("a", 61.0) == 120.0 and backoff.lapse("a", 181.0) == 150.0
    assert backoff.wait("b", 0.0) == 0.0
