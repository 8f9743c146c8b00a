"""`dicetable relay [--bind ADDR] [--port P] [--advertise ADDR] [--key FILE]`: a relay for tables behind NAT.

Prints `relay: HOST:PORT/KEY` when ready, then `address: HOST:PORT`: players pass either as `--relay`
to `host`, `join` and `roll` (with HOST:PORT alone, the key is learned from the relay's key port, PORT + 1,
on first contact and pinned: net/reach/relay_key.py). The relay's key is made once and kept (0600), so the
line stays the same across restarts.
Runs until SIGINT or SIGTERM (net/reach/relay.py says what it is trusted for: delivery only).
"""

from __future__ import annotations

import signal
from pathlib import Path

from dicetable.tui.commands.args import CommandError


def add_parser(sub) -> None:
    parser = sub.add_parser("relay", help="relay tables for players behind NAT (they all dial out to it)")
    parser.add_argument("--bind", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every network)")
    parser.add_argument("--port", type=int, default=7070,
                        help="TCP port (default 7070; 0: any free port); the relay also tells its key on the next port")
    parser.add_argument("--advertise", default=None, metavar="ADDR",
                        help="the address players dial, put in the relay line (default: the --bind address)")
    parser.add_argument("--key", default=None, metavar="FILE",
                        help="the relay's key, made on first use and kept (default: DATA/relay_key)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dicetable.net.identity import home
    from dicetable.net.reach.relay import RelayServer
    from dicetable.net.reach.relay_key import load_relay_key
    from dicetable.net.reach.transport import TransportError

    if not 0 <= args.port <= 65534:
        raise CommandError(f"--port {args.port} is not between 0 and 65534 (the relay tells its key on the next port)")
    if args.bind in ("0.0.0.0", "::", "*", "") and not args.advertise:
        raise CommandError("a relay bound to every address needs --advertise ADDR: the address players dial")
    key_file = Path(args.key) if args.key else home() / "relay_key"
    try:
        server = RelayServer(load_relay_key(key_file), args.bind, args.port)
    except TransportError as error:
        raise CommandError(str(error)) from None

    def stop(signum, frame):
        server.stopped = True

    signal.signal(signal.SIGTERM, stop)
    try:
        address = server.address(args.advertise)
        print(f"relay: {address.encode()}", flush=True)
        where = address.encode().rpartition("/")[0]
        print(f"address: {where} (enough for players: the key is told on port {server.key_service.port}; "
              "a player's first contact pins it)", flush=True)
    except BaseException:  # Ctrl+C as soon as the line is out: the server's port is closed still
        server.close()
        raise
    server.run()  # until SIGTERM, or Ctrl+C (the CLI ends the command then: one line, exit 130)
    return 0
