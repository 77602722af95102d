"""Node-local state, shared by every process of one server.

Several web processes (`make serve`) run side by side on one machine. They agree through files
in NODE_STATE_DIR:

- `generations`: a table of counters in shared memory (an mmap'd file). A change to a link bumps
  its code's counter after the commit; every process tags what it caches with the counter it
  read *before* the database (or Redis) read, and treats a cached entry whose tag no longer
  matches as a miss. So a change made on this node is seen by every process on its very next
  redirect, at the cost of one memory read per redirect. In services mode the node's runner
  bumps the counters of codes changed on other nodes (read from Redis), and writes the time it
  last did so into the table's last slot: a process trusts its cache only while that is recent.
- `codes.filter`: a Bloom filter of every generated code, mapped into every process
  (links.cache.code_filter), so that a made-up code is a 404 without a lookup.
- `visits-*.jsonl`: the visit spool (analytics.spool), one append-only file per process.
- `*.lock`: node-wide locks (node_lock), among them the background runner's
  (shorturl_project.embedded).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from core.redis_conn import uses_redis

SLOTS = 1 << 14  # 16,384 counters, 128 KiB; codes sharing a slot only cost each other a re-read
_COUNTER = struct.Struct("<Q")
_SYNCED_AT = struct.Struct("<d")  # after the counters: time.monotonic() of the last sync
_SIZE = SLOTS * _COUNTER.size + _SYNCED_AT.size


_flags: dict[str, object] = {}


@receiver(setting_changed)
def _settings_changed(**kwargs) -> None:
    # Tests switch modes and state dirs; a running server never does.
    _flags.clear()
    table = _table["table"]
    _table["table"] = None
    if table is not None:
        table.close()


def local_redirects() -> bool:
    """True when each web process answers redirects from its own link entries and spools their
    visits: always without Redis (embedded mode), with Redis when SHORTURL_LOCAL_REDIRECTS."""
    value = _flags.get("local")
    if value is None:
        value = _flags["local"] = not uses_redis() or settings.SHORTURL_LOCAL_REDIRECTS
    return value


def local_entries_trusted() -> bool:
    """May a redirect be answered from this process's own entries? Always without Redis; with
    Redis (and SHORTURL_LOCAL_REDIRECTS) only while the node's runner has applied the other
    nodes' changes within NODE_SYNC_MAX_LAG seconds."""
    if not uses_redis():
        return True
    max_lag = _flags.get("max_lag")
    if max_lag is None:
        local = settings.SHORTURL_LOCAL_REDIRECTS
        max_lag = _flags["max_lag"] = settings.NODE_SYNC_MAX_LAG if local else -1.0
    return max_lag >= 0 and generations().synced_within(max_lag)


def state_dir() -> Path:
    path = Path(settings.NODE_STATE_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


class GenerationTable:
    """Counters in a file mapped into every process: reads are memory reads, bumps take a lock."""

    def __init__(self, path: Path):
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self._fd).st_size < _SIZE:
            os.ftruncate(self._fd, _SIZE)
        self._map = mmap.mmap(self._fd, _SIZE, mmap.MAP_SHARED)
        self._threads = threading.Lock()
        # The map keeps the file; the descriptor is kept only for the bump's lock.

    @staticmethod
    def offset(key: str) -> int:
        """Where `key`'s counter is: a caller reading one key on every request works it out
        once (read_at)."""
        return (zlib.crc32(key.encode()) % SLOTS) * _COUNTER.size

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)

    def read(self, key: str) -> int:
        return _COUNTER.unpack_from(self._map, self.offset(key))[0]

    def read_at(self, offset: int) -> int:
        return _COUNTER.unpack_from(self._map, offset)[0]

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # flock excludes other processes only: this process's threads share the descriptor
        # (and one thread's unlock would drop another's lock), so they take a thread lock first.
        with self._threads:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def bump(self, key: str) -> None:
        offset = self.offset(key)
        with self._locked():
            value = _COUNTER.unpack_from(self._map, offset)[0]
            _COUNTER.pack_into(self._map, offset, value + 1)

    def bump_all(self) -> None:
        """Every cached entry of every process stops counting (changes may have been missed)."""
        with self._locked():
            counters = memoryview(self._map)[: SLOTS * _COUNTER.size].cast("Q")
            for slot in range(SLOTS):
                counters[slot] += 1
            counters.release()

    # CLOCK_MONOTONIC is one clock for every process of the machine, so times compare.
    def mark_synced(self, at: float) -> None:
        _SYNCED_AT.pack_into(self._map, SLOTS * _COUNTER.size, at)

    def synced_within(self, seconds: float) -> bool:
        synced_at = _SYNCED_AT.unpack_from(self._map, SLOTS * _COUNTER.size)[0]
        # A time ahead of the clock was written before the machine restarted (the clock starts
        # again near zero): no sync of this boot yet, and the file outlives the boot.
        return 0.0 <= time.monotonic() - synced_at <= seconds


_table: dict[str, GenerationTable | None] = {"table": None}
# A forked child opens its own: the parent's descriptor would share the parent's flock.
os.register_at_fork(after_in_child=lambda: _table.update(table=None))


def generations() -> GenerationTable:
    """This process's view of the node's generation table (opened once per process, and again
    after a settings change)."""
    table = _table["table"]
    if table is None:
        table = _table["table"] = GenerationTable(state_dir() / "generations")
    return table


class NodeLockBusy(TimeoutError):
    """Another process of the node held the lock for longer than the caller would wait."""


@contextmanager
def node_lock(name: str, *, timeout: float | None = None) -> Iterator[None]:
    """An exclusive lock shared by every process of the node: waits for it, or NodeLockBusy
    after `timeout` seconds (0: only if it is free now)."""
    fd = os.open(state_dir() / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            give_up = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= give_up:
                        raise NodeLockBusy(name) from None
                    time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # releases the lock
