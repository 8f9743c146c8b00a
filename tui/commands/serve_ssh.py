"""`dicetable serve-ssh [--bind ADDR] [--port P] [--host-key FILE]`: the app served to any SSH client.

Every SSH session gets the app in a pseudo-terminal of its own, its player known by the public key
(tui/ssh_server.py); a lobby shows who is here and invites with one key; the same key downloads
its own folder (transcripts, saves) read only with sftp or scp (tui/ssh_files.py). Each app's memory, CPU and
idle time are bounded, and each key's disk and files (tui/ssh_quota.py), with a reserve of free disk
no number of keys can take. Prints `ssh: listening on ADDR:P` when ready; runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

from pathlib import Path

from dicetable.tui.commands.args import CommandError


def add_parser(sub) -> None:
    from dicetable.tui.ssh_server import Limits, default_max_sessions

    parser = sub.add_parser("serve-ssh", help="serve the app over SSH: any key logs in, the key is the player")
    parser.add_argument("--bind", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every network)")
    parser.add_argument("--port", type=int, default=2222, help="TCP port (default 2222; 0: any free port)")
    parser.add_argument("--host-key", default=None, metavar="FILE",
                        help="the server's host key, made on first use and kept (default: DATA/host_key)")
    parser.add_argument("--data", default=None, metavar="DIR",
                        help="where players' profiles, games and the lobby live (default: the data directory's serve-ssh)")
    sessions = default_max_sessions()
    parser.add_argument("--max-sessions", type=int, default=sessions, metavar="N",
                        help=f"players connected at once (default {sessions}: half this machine's memory, "
                             "48 MB a player)")
    parser.add_argument("--memory-mb", type=int, default=Limits.memory_mb, metavar="MB",
                        help=f"address space of each player's app (default {Limits.memory_mb})")
    parser.add_argument("--cpu-seconds", type=int, default=Limits.cpu_seconds, metavar="S",
                        help=f"CPU time of each player's app over its connection (default {Limits.cpu_seconds})")
    parser.add_argument("--idle", type=float, default=Limits.idle_seconds, metavar="S",
                        help=f"seconds without a key (a download: without a request) before a connection is closed "
                             f"(default {Limits.idle_seconds:g})")
    parser.add_argument("--disk-mb", type=int, default=Limits.disk_mb, metavar="MB",
                        help=f"disk each key's games and saves may take (default {Limits.disk_mb})")
    parser.add_argument("--files", type=int, default=Limits.files, metavar="N",
                        help=f"files each key may keep (default {Limits.files})")
    parser.add_argument("--min-free-mb", type=int, default=Limits.min_free_mb, metavar="MB",
                        help=f"disk the server keeps free: below it no app runs (default {Limits.min_free_mb})")
    parser.add_argument("--downloads", type=int, default=Limits.downloads, metavar="N",
                        help=f"SFTP or scp sessions one key may have open at once to download its own folder (default {Limits.downloads})")
    parser.add_argument("--no-preload", dest="preload", action="store_false",
                        help="start each app as a fresh Python instead of forking it from a preloaded parent "
                             "(slower logins, about three times the memory per player)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dicetable.net.identity import home
    from dicetable.tui.ssh_server import Limits, serve

    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port {args.port} is not between 0 and 65535")
    for flag, value in (("--max-sessions", args.max_sessions), ("--memory-mb", args.memory_mb),
                        ("--cpu-seconds", args.cpu_seconds), ("--idle", args.idle), ("--disk-mb", args.disk_mb),
                        ("--files", args.files), ("--downloads", args.downloads)):
        if value <= 0:
            raise CommandError(f"{flag} must be above 0")
    if args.min_free_mb < 0:
        raise CommandError("--min-free-mb must be 0 or more")
    data = Path(args.data) if args.data else home() / "serve-ssh"
    key = Path(args.host_key) if args.host_key else data / "host_key"
    limits = Limits(max_sessions=args.max_sessions, memory_mb=args.memory_mb, cpu_seconds=args.cpu_seconds,
                    idle_seconds=args.idle, disk_mb=args.disk_mb, files=args.files, min_free_mb=args.min_free_mb,
                    downloads=args.downloads, preload=args.preload)
    try:
        return serve(args.bind, args.port, key, data, limits)
    except OSError as error:
        raise CommandError(f"cannot serve on {args.bind}:{args.port}: {error.strerror or error}") from None
    except ValueError as error:  # asyncssh's KeyImportError: a host key file it cannot read
        raise CommandError(f"cannot use the host key {key}: {error}") from None
