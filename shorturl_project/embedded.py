"""The node's background runners: threads in the web processes of each server.

Each runner thread is elected by a lock file in the node's state dir (core.node_state),
so one process of the node runs each set of jobs. Without Redis (embedded mode) the `runner`
and `webhooks` threads run the periodic jobs beat has Celery run in services mode, from the
same list (shorturl_project.jobs: store spooled visits, roll up hours, refill the code pool, end
interrupted imports, deliver due webhooks, check links' destinations, each of the last two in a
thread of its own); the runner also builds the node's code filter
(links.cache.code_filter) when it starts. With Redis, the `runner` forwards spooled visits to the
Redis buffer and keeps the set of generated codes loaded, and the `sync` applies other nodes'
link changes to the generation table and the code filter (and sends the Redis part of changes
made while Redis was out of reach) every NODE_SYNC_SECONDS, in a thread of its own so that a
long forward never holds it up. The kernel drops a lock when its process dies, and another
process takes over within a couple of seconds (meanwhile the node's processes ask Redis on
every redirect).
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils.module_loading import import_string
from redis.exceptions import RedisError

from analytics.capture import forward_spooled_visits
from core.node_state import state_dir
from core.redis_conn import redis_failed, uses_redis
from links import cache as link_cache
from links import selectors as link_selectors
from links import visit_caps
from links.imports import service as link_imports
from shorturl_project.jobs import LINK_CHECKS, PERIODIC_JOBS, RUNNER, WEBHOOKS

logger = logging.getLogger("shorturl.embedded")


RUNNER_LOCK = RUNNER
SYNC_LOCK = "sync"
WEBHOOKS_LOCK = WEBHOOKS
LINK_CHECKS_LOCK = LINK_CHECKS

# --- Background jobs -------------------------------------------------------------------------


@dataclass
class Job:
    name: str
    every: float  # seconds between runs
    run: Callable[[], object]
    next_run: float = 0.0
    # The job waits by itself (a blocking read) and is run again at once, with no pause.
    waits_itself: bool = False


def _node_runners() -> dict[str, list[Job]]:
    """{lock name: its jobs}: one runner thread per entry, each elected on its own lock."""
    if uses_redis():
        return {
            # Its own thread: a long forward (a backlog after an outage, or one that cannot keep
            # up under load) must never hold up the sync that the workers' trust depends on.
            SYNC_LOCK: [
                Job(
                    "apply other nodes' changes",
                    0.0,
                    # Each run waits up to NODE_SYNC_SECONDS for a change on the stream and
                    # returns as soon as one comes. Once its sync is NODE_SYNC_MAX_LAG old, the
                    # node asks Redis (or the database) on every redirect until Redis is back.
                    _unless_redis_fails(
                        functools.partial(
                            link_cache.apply_remote_changes, wait=settings.NODE_SYNC_SECONDS
                        ),
                        "redirects are not answered from the workers' memory",
                    ),
                    waits_itself=True,
                )
            ],
            RUNNER_LOCK: [
                Job("forward spooled visits", settings.NODE_SYNC_SECONDS, forward_spooled_visits),
                Job("save visit caps", VISIT_CAPS_SAVE_SECONDS, visit_caps.save_counts),
                Job(
                    "complete the code set",
                    CODE_SET_CHECK_SECONDS,
                    _unless_redis_fails(
                        link_cache.ensure_code_set, "made-up codes are looked up in the database"
                    ),
                ),
            ],
        }
    runners: dict[str, list[Job]] = {
        RUNNER_LOCK: [
            # First, so that a backlog of visits stored at start does not hold it up.
            Job("build the code filter", CODE_SET_CHECK_SECONDS, link_cache.ensure_code_filter),
        ],
    }
    # What beat has Celery run in services mode (shorturl_project.jobs), run here: each in the
    # thread its job names (RUNNER, WEBHOOKS, LINK_CHECKS), one thread per name.
    for job in PERIODIC_JOBS:
        runners.setdefault(job.runner, []).append(
            Job(
                job.name,
                job.seconds(embedded=True),
                functools.partial(import_string(job.function), **job.kwargs),
            )
        )
    runners[RUNNER_LOCK] += [
        Job("save visit caps", VISIT_CAPS_SAVE_SECONDS, visit_caps.save_counts),
        Job("start uploaded imports", IMPORT_CHECK_SECONDS, start_queued_imports),
    ]
    return runners


# How often a node checks that the set of generated codes is loaded, and (embedded mode) that
# its code filter is complete (see links.cache).
CODE_SET_CHECK_SECONDS = 30.0
# How often a node writes its visit cap counters back to the link rows (links.visit_caps): what
# a lost counter can cost is the visits taken since.
VISIT_CAPS_SAVE_SECONDS = 2.0
# How often the embedded runner looks for files uploaded on the import page (someone is
# watching the page: seconds, not minutes).
IMPORT_CHECK_SECONDS = 2.0

_import_thread: threading.Thread | None = None


def start_queued_imports() -> None:
    """Embedded mode: start the node's import thread when uploads wait and it is not running.
    A thread of its own: an import takes minutes, and the runner's other jobs (storing visits)
    must not wait for it."""
    global _import_thread
    if _import_thread is not None and _import_thread.is_alive():
        return
    if not link_selectors.link_imports_waiting():
        return
    _import_thread = threading.Thread(
        target=_run_imports, name="shorturl-node-imports", daemon=True
    )
    _import_thread.start()


def _run_imports() -> None:
    try:
        link_imports.link_import_run_queued()
    except Exception:
        logger.exception("Running the uploaded imports failed; they are tried again shortly")
    finally:
        connections.close_all()  # this thread's own connection


def _unless_redis_fails(job: Callable[[], object], consequence: str) -> Callable[[], bool]:
    """`job`, with a Redis failure noted once (and Redis paused) instead of a logged traceback
    every NODE_SYNC_SECONDS."""

    def run() -> bool:
        try:
            job()
        except RedisError as exc:
            redis_failed(exc, consequence=consequence)
            return False  # the runner pauses before a job that waits by itself runs again
        return True

    return run


class Runner(threading.Thread):
    """Runs its jobs in whichever process holds its lock; the others wait to take over."""

    RETRY_LOCK_SECONDS = 2.0
    FAILED_PAUSE_SECONDS = 0.5

    def __init__(self, jobs: list[Job], *, lock: str = RUNNER_LOCK):
        super().__init__(name=f"shorturl-node-{lock}", daemon=True)
        self.jobs = jobs
        self.lock = lock
        self.stopping = threading.Event()
        # Between passes: none when a job waits by itself (its blocking read is the pause).
        self.least_pause = 0.0 if any(job.waits_itself for job in jobs) else 0.05

    def run(self) -> None:
        lock_fd = os.open(state_dir() / f"{self.lock}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        while not self.stopping.is_set():
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.stopping.wait(self.RETRY_LOCK_SECONDS)
                continue
            logger.info("Process %s runs the node's %s jobs", os.getpid(), self.lock)
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
                failed = False
                try:
                    failed = job.run() is False
                except Exception:
                    logger.exception("Background job %r failed; it runs again shortly", job.name)
                    failed = True
                finally:
                    close_old_connections()
                if failed and job.waits_itself:
                    # It did not wait: run it again only after a pause, not in a busy loop.
                    job.next_run = time.monotonic() + self.FAILED_PAUSE_SECONDS
            wait = min(job.next_run for job in jobs) - time.monotonic()
            self.stopping.wait(max(wait, self.least_pause))


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
