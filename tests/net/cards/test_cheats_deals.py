"""Cheats with card deals, performed through the real sessions over sockets on 127.0.0.1: a deck no
game step asked for (the TRICE attack), a flood of declarations, and a shown card that is not the
one committed to. Each is refused with the seat named, changes no honest peer's state, and every
other player hears of it at once (a `fault` event). Last, in process: an end-of-game opening that
breaks its commitment is a fault in the session the moment it lands, not only in `verify`."""

from __future__ import annotations

import time
from dataclasses import replace

from dicetable.core import registry
from dicetable.net.cards.points import Deck
from dicetable.net.cards.deal_book import declaration
from dicetable.net.table.deal_table import ID_CARDS
from dicetable.net.table.events import Failed, Fault, Refused
from dicetable.net.table.host import HostSession
from dicetable.net.identity import Profile
from dicetable.net.table.joiner import PeerSession
from dicetable.net.table.seat import Seat
from dicetable.net.table.session import bot_chooser
from net_helpers import FAST, in_thread, wait_until


class CheatingSeat(Seat):
    """A seat that plays as told and also signs and sends what the test puts in its queue."""

    def handle_command(self, name, arg) -> None:
        if name != "author":
            super().handle_command(name, arg)
            return
        kind, body = arg
        self.author(kind, body)
        self.unordered.clear()  # every frame of a burst takes the next free sequence number: refused for what it says


def kinds(events, kind: type, seat: int | None = None) -> list:
    return [e for e in events if isinstance(e, kind) and (seat is None or e.seat == seat)]


def snapshot(session):
    replica = session.replica
    return len(replica.log), replica.state, replica.pending, replica.waiting_for, dict(replica.deal_handler.deals)


def test_a_deck_at_a_trice_table_is_refused_and_the_joiner_cannot_claim_the_game():
    timing = replace(FAST, reveal_deadline=0.3)  # were the deck accepted, seat 0 would owe its shuffle within 0.3 s
    host_events, cheat_events = [], []
    host = HostSession(Profile.generate("alice"), "trice", 2, timing=timing, on_event=host_events.append)
    invite = host.open()
    in_thread(host)
    cheater = Cheater(Profile.generate("mallory"), invite, timing=timing, on_event=cheat_events.append)
    in_thread(cheater)
    try:
        wait_until(lambda: host.replica.phase == "playing" and len(cheater.replica.log) == len(host.replica.log)
                   and host.replica.waiting_for.action == "move", what="the first move due")
        before = snapshot(host)
        bogus = declaration(Deck(host.replica.table, "id", ID_CARDS))  # well-formed, bound to this table
        cheater.own.commands.put(("author", ("deal", bogus)))
        wait_until(lambda: kinds(cheat_events, Refused) and kinds(host_events, Fault), what="the refusal and the fault")
        [refusal] = kinds(cheat_events, Refused)
        assert refusal.seat == 1 and refusal.said == (
            "deal refused: seat 1: declared a deck: a game's decks come from its own steps"), refusal.said
        [fault] = kinds(host_events, Fault)  # the host is told, with the seat named
        assert fault.seat == 1 and fault.said == refusal.said
        assert snapshot(host) == before and host.replica.deal_handler.deals == {}
        assert "deal" not in host.replica.waiting_for.action and host.replica.deal_owing() == ()
        # Past the deadline the deck would have set, the joiner claims the game: refused, nothing changes.
        time.sleep(2 * timing.reveal_deadline)
        cheater.claim(0)
        # Not sent (seat 0 is not in default by the cheater's own clock: PROTOCOL.md §7.5), or refused
        # as not awaited (seat 1 is due) or by the host's own view of its own seat (FAIRNESS.md §4).
        wait_until(lambda: kinds(cheat_events, Refused)[1:] or kinds(cheat_events, Failed), what="the claim's refusal")
        claim = (kinds(cheat_events, Refused)[1:] or kinds(cheat_events, Failed))[0]
        assert str(claim.said).startswith(("bad claim: seat 1: seat 0 is not the seat the table waits for",
                                           "disputed: seat 1: seat 0 (alice) disputes seat 1 (mallory)'s claim",
                                           "seat 0 is not in default by this seat's clock")), claim.said
        assert host.replica.result is None and cheater.replica.result is None
        assert snapshot(host) == before
        assert [r.frame for r in cheater.replica.log] == [r.frame for r in host.replica.log]
    finally:
        cheater.stop()
        host.stop()


def test_a_flood_of_declarations_is_refused_and_changes_nothing():
    game = registry.get("dicebreaker")
    host_events, honest_events, cheat_events = [], [], []
    host = HostSession(Profile.generate("alice"), game.name, 3, timing=FAST, on_event=host_events.append)
    invite = host.open()
    in_thread(host)
    honest = PeerSession(Profile.generate("bob"), invite, timing=FAST, on_event=honest_events.append)
    in_thread(honest)
    wait_until(lambda: honest.seat == 1 and honest.replica.seats and honest.replica.seats[1], what="seat 1")
    cheater = Cheater(Profile.generate("mallory"), invite, timing=FAST, on_event=cheat_events.append)
    in_thread(cheater)
    try:
        sessions = (host, honest, cheater)
        wait_until(lambda: all(s.replica.phase == "playing" for s in sessions)
                   and len({len(s.replica.log) for s in sessions}) == 1
                   and host.replica.waiting_for.action == "move", what="the first move due")
        before = [snapshot(s) for s in (host, honest)]
        table = host.replica.table
        cards = tuple(f"card{n}" for n in range(1024))  # the largest deck a declaration may name
        flood = [declaration(Deck(table, "pile", cards, number)) for number in range(40)]
        flood += [{**declaration(Deck(table, "pile", ("a",))), "step": "shuffle"}]  # a deck never opened
        for body in flood:
            cheater.own.commands.put(("author", ("deal", body)))
        wait_until(lambda: len(kinds(cheat_events, Refused)) == len(flood), what="every refusal")
        refusals = kinds(cheat_events, Refused)
        assert all(r.seat == 2 and r.said.startswith("deal refused: seat 2: ") for r in refusals), refusals
        assert sum("declared a deck: a game's decks come from its own steps" in r.said for r in refusals) == 40
        assert [snapshot(s) for s in (host, honest)] == before  # nothing changed at any honest peer
        assert all(s.replica.deal_handler.deals == {} for s in sessions)
        # Every other player hears of it at once, each distinct fault once: not once per frame.
        wait_until(lambda: all(len(kinds(events, Fault)) >= 2 for events in (host_events, honest_events)),
                   what="the host and the honest seat told of both faults")
        for events in (host_events, honest_events):
            faults = kinds(events, Fault)
            assert len(faults) == 2 and {f.seat for f in faults} == {2}, faults
            assert "declared a deck" in faults[0].said
        assert kinds(honest_events, Refused) == []
    finally:
        for session in (cheater, honest, host):
            session.stop()


class Cheater(PeerSession):
    seat_type = CheatingSeat


class WrongShowSeat(CheatingSeat):
    """Plays Tricolor Line with a bot, and once it holds a card shows another one in its place."""

    bad: dict | None = None

    def act(self) -> None:
        super().act()
        replica, handler = self.replica, self.deals()
        if self.bad is not None or handler is None or self.unordered or replica.waiting_for.action != "move":
            return
        for d in handler.formed:
            deal, party = handler.deals[d], handler.parties.get(d)
            for j, (card, nonce) in sorted(party.held.items() if party else ()):
                if j in deal.commits and j not in deal.shown:
                    other = next(c for c in deal.deck.cards if c != card)
                    self.bad = {"deck": d, "step": "show", "position": j, "card": other, "nonce": nonce}
                    self.author("deal", self.bad)
                    return


class WrongShow(PeerSession):
    seat_type = WrongShowSeat


def test_a_shown_card_that_is_not_the_committed_one_is_a_fault_every_player_sees():
    game = registry.get("tricolor")
    host_events, honest_events, cheat_events = [], [], []
    host = HostSession(Profile.generate("alice"), game.name, 3, timing=FAST, on_event=host_events.append,
                       chooser=bot_chooser(game, "random", 1), think=1.0)  # a slow first move: the show lands in it
    invite = host.open()
    in_thread(host)
    honest = PeerSession(Profile.generate("bob"), invite, timing=FAST, on_event=honest_events.append,
                         chooser=bot_chooser(game, "random", 2), think=1.0)
    in_thread(honest)
    wait_until(lambda: honest.seat == 1 and honest.replica.seats and honest.replica.seats[1], what="seat 1")
    cheater = WrongShow(Profile.generate("mallory"), invite, timing=FAST, on_event=cheat_events.append,
                        chooser=bot_chooser(game, "random", 3), think=1.0)
    in_thread(cheater)
    try:
        wait_until(lambda: kinds(honest_events, Fault) and kinds(host_events, Fault) and kinds(cheat_events, Refused),
                   30, what="the fault told to the host and the honest seat, and the refusal to the cheater")
        bad = cheater.own.bad
        [refusal] = kinds(cheat_events, Refused)
        expected = (f"deal refused: seat 2: showed {bad['card']} at position {bad['position']}, "
                    "which does not open its commitment")
        assert refusal.said == expected, refusal.said
        for events in (host_events, honest_events):  # every other player, at once, the seat named
            [fault] = kinds(events, Fault)
            assert fault.seat == 2 and fault.said == expected
        for session in (host, honest):  # the card was never shown: no honest state took it
            deal = session.replica.deal_handler.deals[bad["deck"]]
            assert deal.shown.get(bad["position"]) != bad["card"]
            assert not any(r.kind == "deal" and r.envelope.body == bad for r in session.replica.log)
        assert honest.refusals[-1] == expected  # recorded beside the honest seat's transcript too
    finally:
        for session in (cheater, honest, host):
            session.stop()


def test_an_opening_that_breaks_its_commitment_is_a_fault_the_moment_it_lands():
    """The end-of-game replay of a deck runs live in every session, not only in `verify`."""
    import random

    from dicetable.net.cards.table_deals import TableDeals
    from dicetable.net.table.local_seats import Table

    game = registry.get("tricolor")
    table = Table(game, game.resolve_options({}), ["ann", "bob", "cy"])
    table.host.deal_handler = TableDeals()
    for s, peer in enumerate(table.peers):
        peer.deal_handler = TableDeals(seat=s)
    bots = [game.bots["random"](game, random.Random(s)) for s in range(3)]
    rng = random.Random(5)
    while len(table.host.deal_handler.formed) < 2 or table.host.waiting_for.action == "deal":
        if not table.deal_round(rng):
            table.step(bots, rng)
    table.post(table.seats[2].frame("resign", {}))  # the game ends: every deck is opened
    events = []
    seat = Seat(Profile.generate("ann"), on_event=events.append)
    seat.replica = table.peers[0]  # seat 0's own replica, as its seat holds it
    lied = None
    for s, peer in enumerate(table.peers):
        handler = peer.deal_handler
        for d in handler.formed:
            body = handler.parties[d].opening(handler.deals[d])
            if s == 1 and body["held"] and lied is None:  # seat 1 opens another card than it committed to
                j, card, nonce = body["held"][0]
                lied = (j, next(c for c in handler.deals[d].deck.cards if c != card))
                body["held"][0] = [j, lied[1], nonce]
            table.post(table.seats[s].frame("deal", body))
            seat.watch_deal()  # what `applied` does for each deal record
    [fault] = kinds(events, Fault)
    assert fault.seat == 1 and fault.said == (
        f"card deal: seat 1 opened {lied[1]} at position {lied[0]}, which does not match its commitment")
