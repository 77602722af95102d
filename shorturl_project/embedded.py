"""The embedded mode's background runner: the jobs Celery runs in services mode, in one web
process of the node.

Whichever process holds `runner.lock` (in the node's state dir, shorturl_project.node_state)
stores spooled visits, rolls up hours and refills the code pool. The kernel drops the lock when
its process dies, and another process takes over within a couple of seconds.
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

from analytics import services as analytics_services
from links.codes import pool

from .node_state import state_dir

logger = logging.getLogger("shorturl.embedded")


# --- Background jobs -------------------------------------------------------------------------


@dataclass
class Job:
    name: str
    every: float  # seconds between runs
    run: Callable[[], object]
    next_run: float = 0.0


def _default_jobs() -> list[Job]:
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
        self.started = False
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self.started = False

    def __call__(self, environ, start_response):
        if not self.started:
            ensure_runner()
            self.started = True
        return self.application(environ, start_response)
