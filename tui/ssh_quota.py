"""What one SSH key may keep on a `dicetable serve-ssh` server's disk, and the server's own reserve.

Each key's app writes only in the key's own directory (its profile, transcripts, seat files and
saves: tui/ssh_server.py gives it that directory as its home). The server measures that directory
when the key logs in and every `CHECK_EVERY` seconds while its app runs: past `disk_mb` of disk or
`files` files and folders, the app does not start, or is closed, with one line saying why. A single
file is capped by RLIMIT_FSIZE too, so a key overshoots its share by at most what its app writes
in `CHECK_EVERY` seconds. Keys cost nothing, so a share per key alone would not keep one person with
many keys from filling the disk: the server also keeps `min_free_mb` free on the data directory's
file system, and while less is free no app starts and running ones are closed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CHECK_EVERY = 2.0  # seconds between measures of a running app's directory
MB = 1024 * 1024


@dataclass(frozen=True)
class Usage:
    bytes: int  # of disk, in blocks actually taken (a sparse file counts what it holds)
    files: int  # files, folders and links
    whole: bool  # False when the count stopped early, past a cap


def usage(path: Path, most_bytes: int, most_files: int) -> Usage:
    """Disk and files under `path`, symbolic links not followed; the walk stops once past either cap."""
    size = files = 0
    folders = [path]
    while folders:
        try:
            entries = os.scandir(folders.pop())
        except OSError:  # gone meanwhile, or not readable: nothing of it to count
            continue
        with entries:
            for entry in entries:
                try:
                    stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                files += 1
                size += stat.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                if size > most_bytes or files > most_files:
                    return Usage(size, files, False)
    return Usage(size, files, True)


def refusal(home: Path, data: Path, disk_mb: int, most_files: int, min_free_mb: int) -> str | None:
    """Why a key whose directory is `home` may save nothing more on this server, or None."""
    try:
        stats = os.statvfs(data)
        free = stats.f_bavail * stats.f_frsize
    except OSError:
        free = None
    if free is not None and free < min_free_mb * MB:
        return (f"the server's disk is almost full ({free // MB} MB free; it keeps {min_free_mb} MB): nothing more "
                "can be saved here, so the app does not run now. Try again later.")
    used = usage(home, disk_mb * MB, most_files)
    if used.bytes > disk_mb * MB or used.files > most_files:
        over = f"{disk_mb} MB" if used.bytes > disk_mb * MB else f"{most_files} files"
        return (f"this key's games and saves have reached this server's cap of {over} per key (at least "
                f"{used.bytes / MB:.1f} MB in {used.files} files): nothing more can be saved, so the app does not run. "
                "Ask the server's operator to make room.")
    return None
