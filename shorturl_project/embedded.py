"""The embedded mode's node-local state, shared by every process of one server.

Without Redis, several web processes (`make serve`) run side by side on one machine. They agree
through files in EMBEDDED_STATE_DIR (beside the SQLite file by default):

- `generations`: a table of counters in shared memory (an mmap'd file). A change to a link bumps
  its code's counter after the commit; every process tags what it caches with the counter it
  read *before* the database read, and treats a cached entry whose tag no longer matches as a
  miss. So an edit or a revoke is seen by every process on its very next redirect, at the cost
  of one memory read per redirect.
- `visits-*.jsonl`: the visit spool (analytics.spool), one append-only file per process.
- `runner.lock`: whichever process holds this lock runs the background jobs Celery runs in
  services mode (storing spooled visits, hourly roll-ups, code-pool refills). The kernel drops
  the lock when its process dies, and another process takes over within a couple of seconds.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger("shorturl.embedded")

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


_table: dict[str, object] = {"key": None, "table": None}


def generations() -> GenerationTable:
    """This process's view of the node's generation table (opened once per process and dir)."""
    key = (os.getpid(), settings.EMBEDDED_STATE_DIR)
    if _table["key"] != key:
        _table["table"] = GenerationTable(state_dir() / "generations")
        _table["key"] = key
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


# --- Background jobs -------------------------------------------------------------------------


@dataclass
class Job:
    name: str
    every: float  # seconds between runs
    run: Callable[[], object]
    next_run: float = 0.0


def _default_jobs() -> list[Job]:
    from analytics import services as analytics_services
    from links.codes import pool

    return [
        Job(
            "store spooled visits",
            settings.EMBEDDED_FLUSH_SECONDS,
            analytics_services.flush_pending,
        ),
        Job(
            "hourly roll-up",
            settings.EMBEDDED_AGGREGATE_SECONDS,
            analytics_services.aggregate_hourly,
        ),
        Job("code pool refill", settings.SHORTURL_POOL_CHECK_SECONDS, pool.pool_refill_if_low),
    ]


class Runner(threading.Thread):
    """Runs the jobs in whichever process holds `runner.lock`; the others wait to take over."""

    RETRY_LOCK_SECONDS = 2.0

    def __init__(self, jobs: list[Job] | None = None):
        super().__init__(name="shorturl-embedded-runner", daemon=True)
        self.jobs = jobs
        self.stopping = threading.Event()

    def run(self) -> None:
        lock_fd = os.open(state_dir() / "runner.lock", os.O_RDWR | os.O_CREAT, 0o600)
        while not self.stopping.is_set():
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.stopping.wait(self.RETRY_LOCK_SECONDS)
                continue
            logger.info("Process %s runs the background jobs (no Celery worker)", os.getpid())
            try:
                self._run_jobs()  # returns only when stopping
            except Exception:
                logger.exception("The background runner stopped; it starts again shortly")
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)  # another process may take over meanwhile
            self.stopping.wait(self.RETRY_LOCK_SECONDS)

    def _run_jobs(self) -> None:
        jobs = self.jobs if self.jobs is not None else _default_jobs()
        while not self.stopping.is_set():
            now = time.monotonic()
            for job in jobs:
                if now < job.next_run:
                    continue
                job.next_run = now + job.every
                try:
                    job.run()
                except Exception:
                    logger.exception("Background job %r failed; it runs again shortly", job.name)
                finally:
                    close_old_connections()
            wait = min(job.next_run for job in jobs) - time.monotonic()
            self.stopping.wait(max(wait, 0.05))


_runner: dict[str, Runner | None] = {"thread": None}
_runner_lock = threading.Lock()


def ensure_runner() -> None:
    """Start this process's runner unless it runs already."""
    with _runner_lock:
        if _runner["thread"] is None or not _runner["thread"].is_alive():
            _runner["thread"] = Runner()
            _runner["thread"].start()


class WithBackgroundJobs:
    """WSGI wrapper that starts the runner in each process on its first request.

    On the first request rather than at import, so that a server which imports the app before
    forking its workers still gets a runner in every worker (threads do not survive a fork).
    """

    def __init__(self, application):
        self.application = application
        self._started_in: int | None = None

    def __call__(self, environ, start_response):
        if self._started_in != os.getpid():
            ensure_runner()
            self._started_in = os.getpid()
        return self.application(environ, start_response)
