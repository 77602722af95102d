"""The embedded mode's node-local state, shared by every process of one server (no Redis).

Without Redis, several web processes (`make serve`) run side by side on one machine. They agree
through files in EMBEDDED_STATE_DIR (beside the SQLite file by default):

- `generations`: a table of counters in shared memory (an mmap'd file). A change to a link bumps
  its code's counter after the commit; every process tags what it caches with the counter it
  read *before* the database read, and treats a cached entry whose tag no longer matches as a
  miss. So an edit or a revoke is seen by every process on its very next redirect, at the cost
  of one memory read per redirect.
- `visits-*.jsonl`: the visit spool (analytics.spool), one append-only file per process.
- `*.lock`: node-wide locks (node_lock), among them the background runner's
  (shorturl_project.embedded).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

SLOTS = 1 << 14  # 16,384 counters, 128 KiB; codes sharing a slot only cost each other a re-read
_COUNTER = struct.Struct("<Q")


def state_dir() -> Path:
    path = Path(settings.EMBEDDED_STATE_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


class GenerationTable:
    """Counters in a file mapped into every process: reads are memory reads, bumps take a lock."""

    def __init__(self, path: Path):
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self._fd).st_size < SLOTS * _COUNTER.size:
            os.ftruncate(self._fd, SLOTS * _COUNTER.size)
        self._map = mmap.mmap(self._fd, SLOTS * _COUNTER.size, mmap.MAP_SHARED)
        # The map keeps the file; the descriptor is kept only for the bump's lock.

    @staticmethod
    def _offset(key: str) -> int:
        return (zlib.crc32(key.encode()) % SLOTS) * _COUNTER.size

    def read(self, key: str) -> int:
        return _COUNTER.unpack_from(self._map, self._offset(key))[0]

    def bump(self, key: str) -> None:
        offset = self._offset(key)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            value = _COUNTER.unpack_from(self._map, offset)[0]
            _COUNTER.pack_into(self._map, offset, value + 1)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)


_table: dict[str, object] = {"dir": None, "table": None}
# A forked child opens its own: the parent's descriptor would share the parent's flock.
os.register_at_fork(after_in_child=lambda: _table.update(dir=None, table=None))


def generations() -> GenerationTable:
    """This process's view of the node's generation table (opened once per process and dir)."""
    if _table["dir"] != settings.EMBEDDED_STATE_DIR:
        _table["table"] = GenerationTable(state_dir() / "generations")
        _table["dir"] = settings.EMBEDDED_STATE_DIR
    return _table["table"]


@contextmanager
def node_lock(name: str) -> Iterator[None]:
    """An exclusive lock shared by every process of the node (waits for it)."""
    fd = os.open(state_dir() / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
