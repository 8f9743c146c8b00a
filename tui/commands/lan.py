"""`dicetable lan [--interface IF] [--timeout S] [--json] [--trust FINGERPRINT]`: open tables on the LAN.

Lists the tables announced by mDNS (net/reach/lan.py) and, unless only other interfaces are chosen,
the tables hosted on this machine's loopback (its lobby, net/reach/same_machine.py; `--interface lo`:
those alone) within the timeout, each with its trust
(verified / unverified / forged), game, seats, host, host fingerprint, address and table id.
`--trust FINGERPRINT` pins the host announcing with that fingerprint, so its tables show verified
and anyone else using its name shows forged.

Also the LAN flags of `host` (`--lan`: announce the table while it has free seats) and `join`
(`--lan [--table NAME] [--game GAME] [--fingerprint FP]`: find the table by discovery instead of
a typed invite), kept here so that discovery lives in one place.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time

from dicetable.net.reach import announcement, lan, local_networks, same_machine
from dicetable.net.reach.local_networks import DiscoveryError
from dicetable.tui.commands.args import CommandError


def add_parser(sub) -> None:
    parser = sub.add_parser("lan", help="list the open tables announced on the LAN")
    add_interface_flag(parser)
    parser.add_argument("--timeout", type=float, default=3.0, metavar="S", help="seconds to listen (default 3)")
    parser.add_argument("--json", action="store_true", help="print the tables as JSON")
    parser.add_argument("--trust", default=None, metavar="FINGERPRINT",
                        help="pin the host announcing with this fingerprint (compare it with the host first)")
    parser.set_defaults(func=run)


def add_interface_flag(parser) -> None:
    parser.add_argument("--interface", action="append", metavar="IF",
                        help="use only this network interface for discovery (repeatable; default: all)")


def _own_profile():
    from dicetable.net import identity

    try:
        return identity.load()
    except identity.ProfileError:
        return None


def _interface_addresses(args) -> list[str] | None:
    try:
        return local_networks.interface_addresses(args.interface) if args.interface else None
    except DiscoveryError as error:
        raise CommandError(str(error)) from None


def _browsers(addresses: list[str] | None) -> list:
    """Who hears announcements: mDNS unless only loopback is chosen, this machine's lobby unless
    only other interfaces are (mDNS does not run on loopback; the lobby serves it)."""
    here = same_machine.on_loopback(addresses) if addresses else None
    browsers = [same_machine.Browser()] if here is not False else []
    if not here:
        try:
            browsers.append(lan.Browser(addresses))
        except DiscoveryError as error:
            for browser in browsers:
                browser.close()
            raise CommandError(str(error)) from None
    return browsers


def _known() -> announcement.KnownHosts:
    try:
        return announcement.KnownHosts()
    except DiscoveryError as error:
        raise CommandError(str(error)) from None


def row(ann: announcement.Announcement, trust: str, why: str, local=None) -> dict:
    return {
        "trust": trust,
        "why": why,
        "game": ann.game,
        "seats_taken": ann.seats_taken,
        "seats_total": ann.seats_total,
        "host": ann.host_name,
        "fingerprint": ann.fingerprint,
        "addresses": list(ann.addresses),
        "address": local_networks.best_address(ann.addresses, local) if ann.addresses else None,
        "port": ann.port,
        "table": ann.table_id.hex(),
        "service": ann.service.split(".")[0],
        "invite": ann.invite(local_networks.best_address(ann.addresses, local)).encode() if ann.addresses else None,
    }


def _local_networks(args):
    if not args.interface:
        return None
    table = local_networks.interfaces()
    return [a for name in args.interface for a in table.get(name, [])]


def run(args) -> int:
    if args.timeout <= 0:
        raise CommandError("--timeout must be above 0")
    addresses = _interface_addresses(args)
    known, own = _known(), _own_profile()
    browsers = _browsers(addresses)
    try:
        if not args.json:  # a person waiting sees that it listens (Ctrl+C ends it: one line, exit 130)
            print(f"listening {args.timeout:g} s for the tables announced on the LAN", flush=True)
        time.sleep(args.timeout)
        tables = sorted((a for browser in browsers for a in browser.tables()), key=lambda a: a.seen_at)
    finally:
        for browser in browsers:
            browser.close()
    rows = [row(a, *announcement.assess(a, known, own), _local_networks(args)) for a in tables if a.addresses]
    if args.trust:
        wanted = args.trust.replace("-", "").upper()
        match = [a for a in tables if a.fingerprint.replace("-", "") == wanted and a.signature_ok]
        if not match:
            raise CommandError(f"no host with fingerprint {args.trust} announced a table within {args.timeout:g} s")
        known.pin(match[0].host_key, match[0].curve_key, match[0].host_name)
        print(f"pinned: {match[0].host_name} {match[0].fingerprint}", file=sys.stderr)
        rows = [row(a, *announcement.assess(a, known, own), _local_networks(args)) for a in tables if a.addresses]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no tables announced on the LAN within {args.timeout:g} s")
        return 0
    print(f"{'TRUST':<11} {'GAME':<12} {'SEATS':<6} {'HOST':<16} {'FINGERPRINT':<20} {'ADDRESS':<21} TABLE")
    for r in rows:
        where = f"{r['address']}:{r['port']}"
        print(f"{r['trust']:<11} {r['game']:<12} {r['seats_taken']}/{r['seats_total']:<4} {r['host'][:16]:<16} "
              f"{r['fingerprint']:<20} {where:<21} {r['table'][:8]}")
    return 0


# -- host --lan ----------------------------------------------------------------------------------
def add_host_flags(parser) -> None:
    parser.add_argument("--lan", action="store_true",
                        help="announce the table on the LAN (mDNS) while it has free seats; bound to "
                             "127.0.0.1, to the other users of this machine (its lobby)")
    add_interface_flag(parser)


@contextlib.contextmanager
def advertise_table(session, where):
    """Announce `session`'s table while the block runs, where `where` says (a no-op without --lan)."""
    from dicetable.tui.tables.opening import announce

    addresses = where.announced_at()  # checked with the flags (tui/commands/host.py where_from)
    if not addresses:
        yield None
        return
    try:
        announcer = announce(session, where)
    except DiscoveryError as error:
        raise CommandError(str(error)) from None
    lobby = " (this machine's lobby)" if same_machine.on_loopback(addresses) else ""
    print(f"lan: announcing {session.profile.name} {session.game_name} {session.replica.table.hex()[:8]} "
          f"on {', '.join(addresses)}{lobby}", flush=True)
    try:
        yield announcer
    finally:
        announcer.close()


# -- join --lan ----------------------------------------------------------------------------------
def add_join_flags(parser) -> None:
    parser.add_argument("--lan", action="store_true", help="find the table by LAN discovery instead of an invite")
    parser.add_argument("--table", default=None, metavar="NAME", help="with --lan: the host's name, table name or table id")
    parser.add_argument("--game", default=None, help="with --lan: the first open table of this game")
    parser.add_argument("--fingerprint", default=None, metavar="FP", help="with --lan: only a host with this fingerprint")
    add_interface_flag(parser)


def lan_invite(args) -> str | None:
    """With --lan: browse for the table, print what was found, and return its invite code."""
    if not getattr(args, "lan", False):
        if any(getattr(args, n, None) for n in ("table", "game", "fingerprint", "interface")):
            raise CommandError("--table, --game, --fingerprint and --interface need --lan")
        return args.invite
    if args.invite is not None:
        raise CommandError("give an invite or --lan, not both")
    if args.timeout <= 0:
        raise CommandError("--timeout must be above 0")
    start = time.monotonic()
    known, own = _known(), _own_profile()
    try:
        addresses = _interface_addresses(args)
        ann, trust, why = lan.find(
            args.timeout, known, own, addresses, browsers=_browsers(addresses),
            table=args.table, game=args.game, host_fingerprint=args.fingerprint,
        )
        address = local_networks.best_address(ann.addresses, _local_networks(args))
    except DiscoveryError as error:
        raise CommandError(str(error)) from None
    args.lan_found = (ann, trust)
    print(f"found: {ann.service.split('.')[0]} at {address}:{ann.port} after {time.monotonic() - start:.2f} s "
          f"({trust}: {why})", flush=True)
    return ann.invite(address).encode()


def confirm_host(session, args) -> None:
    """With --lan: the table reached must be opened by the announced key; pin that host."""
    from dicetable.net.table.session import SessionError
    from dicetable.tui.tables.opening import announced_check

    found = getattr(args, "lan_found", None)
    if found is None:
        return
    ann, trust = found
    try:
        announced_check(ann, trust)(session)
    except SessionError as error:
        raise CommandError(str(error)) from None
    if trust != announcement.VERIFIED:
        print(f"pinned: {ann.host_name} {ann.fingerprint}", flush=True)
