"""What the node writes to disk is readable by its own user alone.

The embedded SQLite file holds API key hashes, session keys and webhook secrets; the node's state
dir holds spooled visits (addresses, user agents) and link changes. With the usual umask (022)
they were created world-readable (0644), so any local account could copy sessions and secrets.
Every process of the node (web workers, the worker and beat, manage.py commands) passes here
once when Django starts (accounts.apps): from then on what it creates is 0600 (directories
0700), and the database, its -wal/-shm/-journal companions (SQLite gives them the database's
own mode) and the state dir's files that an older version or another tool left readable are
tightened.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

logger = logging.getLogger("shorturl.files")

# Group and others get nothing: files 0600, directories 0700.
PRIVATE_UMASK = 0o077
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def sqlite_files() -> list[Path]:
    """The embedded database's file and its companions' names (existing or not)."""
    database = settings.DATABASES["default"]
    name = str(database.get("NAME") or "")
    if database["ENGINE"] != "django.db.backends.sqlite3" or name.startswith((":memory:", "file:")):
        return []
    return [Path(name + suffix) for suffix in ("", *SQLITE_COMPANIONS)]


def _state_paths() -> Iterator[Path]:
    state = Path(settings.NODE_STATE_DIR)
    if not state.is_dir():
        return
    yield state
    for root, dirs, files in os.walk(state):
        for name in dirs + files:
            yield Path(root) / name


def make_node_files_private() -> None:
    """From now on this process creates owner-only files; existing ones are tightened."""
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)
    tightened = [path for path in [*sqlite_files(), *_state_paths()] if _tighten(path)]
    if tightened:
        logger.warning(
            "%d file(s) were readable by other users, now by this one alone: %s",
            len(tightened),
            ", ".join(str(path) for path in tightened[:5]) + (" …" if len(tightened) > 5 else ""),
        )


def _tighten(path: Path) -> bool:
    """Group and others' bits off; whether there were any."""
    try:
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode) or not mode & PRIVATE_UMASK:
            return False  # a link's target is not ours to change
        path.chmod(mode & ~PRIVATE_UMASK)
    except FileNotFoundError:
        return False
    except PermissionError:
        logger.warning("%s is readable by other users and not ours to change: fix it.", path)
        return False
    return True
