"""The node's background runner: a thread in one web process of each server.

Whichever process holds `runner.lock` (in the node's state dir, shorturl_project.node_state)
runs the node's jobs. Without Redis (embedded mode) those are the jobs Celery runs in services
mode: store spooled visits, roll up hours, refill the code pool. With Redis and
SHORTURL_LOCAL_REDIRECTS they keep the node in step with the others: forward spooled visits to
the Redis buffer and apply other nodes' link changes to the generation table, every
NODE_SYNC_SECONDS. The kernel drops the lock when its process dies, and another process takes
over within a couple of seconds (meanwhile the node's processes ask Redis on every redirect).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import close_old_connections
from redis.exceptions import RedisError

from analytics import services as analytics_services
from analytics.capture import forward_spooled_visits
from links import cache as link_cache
from links.codes import pool

from .node_state import state_dir
from .redis_conn import redis_failed, uses_redis

logger = logging.getLogger("shorturl.embedded")


RUNNER_LOCK = "runner"
SYNC_LOCK = "sync"

# --- Background jobs -------------------------------------------------------------------------


@dataclass
class Job:
    name: str
    every: float  # seconds between runs
    run: Callable[[], object]
    next_run: float = 0.0


def _node_runners() -> dict[str, list[Job]]:
    """{lock name: its jobs}: one runner thread per entry, each elected on its own lock."""
    if uses_redis():
        return {
            # Its own thread: a long forward (a backlog after an outage, or one that cannot keep
            # up under load) must never hold up the sync that the workers' trust depends on.
            SYNC_LOCK: [
                Job("apply other nodes' changes", settings.NODE_SYNC_SECONDS, _apply_remote_changes)
            ],
            RUNNER_LOCK: [
                Job("forward spooled visits", settings.NODE_SYNC_SECONDS, forward_spooled_visits),
                Job("complete the code set", CODE_SET_CHECK_SECONDS, _ensure_code_set),
            ],
        }
    return {
        RUNNER_LOCK: [
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
    }


def _apply_remote_changes() -> None:
    try:
        link_cache.apply_remote_changes()
    except RedisError as exc:
        # The node's processes stop trusting their entries once the sync is NODE_SYNC_MAX_LAG
        # old, so they ask Redis (or the database) on every redirect until it is back.
        redis_failed(exc, consequence="redirects are not answered from the workers' memory")


# How often a node checks that the set of generated codes is loaded (see links.cache).
CODE_SET_CHECK_SECONDS = 30.0


def _ensure_code_set() -> None:
    try:
        link_cache.ensure_code_set()
    except RedisError as exc:
        redis_failed(exc, consequence="made-up codes are looked up in the database")


class Runner(threading.Thread):
    """Runs the jobs in whichever process holds `runner.lock`; the others wait to take over."""

    RETRY_LOCK_SECONDS = 2.0

    def __init__(self, jobs: list[Job], *, lock: str = RUNNER_LOCK):
        super().__init__(name=f"shorturl-node-{lock}", daemon=True)
        self.jobs = jobs
        self.lock = lock
        self.stopping = threading.Event()

    def run(self) -> None:
        lock_fd = os.open(state_dir() / f"{self.lock}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        while not self.stopping.is_set():
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.stopping.wait(self.RETRY_LOCK_SECONDS)
                continue
            logger.info("Process %s runs the node's %s jobs", os.getpid(), self.lock)
            if self.lock == SYNC_LOCK:
                link_cache.forget_sync_position()  # whatever an earlier sync read, start afresh
            try:
                self._run_jobs()  # returns only when stopping
            except Exception:
                logger.exception("The background runner stopped; it starts again shortly")
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)  # another process may take over meanwhile
            self.stopping.wait(self.RETRY_LOCK_SECONDS)

    def _run_jobs(self) -> None:
        jobs = self.jobs
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


_runners: dict[str, Runner] = {}
_runners_lock = threading.Lock()


def ensure_runner() -> None:
    """Start this process's runner threads unless they run already (each waits for its lock)."""
    with _runners_lock:
        for lock, jobs in _node_runners().items():
            runner = _runners.get(lock)
            if runner is None or not runner.is_alive():
                _runners[lock] = Runner(jobs, lock=lock)
                _runners[lock].start()


class WithBackgroundJobs:
    """WSGI wrapper that starts the runner in each process on its first request.

    On the first request rather than at import, so that a server which imports the app before
    forking its workers still gets a runner in every worker (threads do not survive a fork).
    """

    def __init__(self, application):
        self.application = application
        self.started = False
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self.started = False

    def __call__(self, environ, start_response):
        if not self.started:
            ensure_runner()
            self.started = True
        return self.application(environ, start_response)
