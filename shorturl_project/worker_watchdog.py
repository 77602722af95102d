"""A Celery worker that stays up but takes no task ends itself, so that its supervisor starts a
fresh one (scripts/keep-running under `make worker`; systemd's Restart=, compose's restart
policy).

Why: after its Redis broker went away and came back, kombu's transport has been seen to leave a
worker connected in appearance and consuming nothing (reported upstream for Celery 5.2 to 5.6:
celery/celery#8030, #10205, #10302), or to hang in its own shutdown after an "Unrecoverable
error". Either way the visits wait in Redis and are never stored, and a supervisor sees a
process that is still running (CI: e2e/test_faults.py's Redis restart, then every later visit
uncounted).

Stuck, not idle: for WORKER_STALL_SECONDS in a row the broker answered and held messages in this
worker's queues, and the worker received none and held none. Beat queues a flush every
ANALYTICS_FLUSH_SECONDS, so a healthy worker takes one within a second or so; a broker that does
not answer resets the clock (no fresh worker could consume from it either), and so does a full
pool (its tasks are running; their own time limits bound them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time

from celery import Celery
from celery.signals import task_received, worker_ready
from celery.worker import state
from django.conf import settings

logger = logging.getLogger(__name__)

# How long the worker's own warm shutdown may take before the process leaves without it: the
# shutdown itself is what has been seen to hang.
SHUTDOWN_GRACE_SECONDS = 15.0
# Each question to the broker has this deadline (connect and reply): a frozen Redis must not
# freeze the watch.
PROBE_TIMEOUT_SECONDS = 3.0


class _Clock:
    """When this worker last made progress: a task received, or nothing it could have taken."""

    def __init__(self) -> None:
        self.at = time.monotonic()

    def touch(self) -> None:
        self.at = time.monotonic()

    def idle(self) -> float:
        return time.monotonic() - self.at


_progress = _Clock()


def waiting_in(app: Celery, queues: list[str]) -> int | None:
    """Messages waiting in `queues` on the broker; None when the broker does not answer."""
    deadline = {
        "socket_timeout": PROBE_TIMEOUT_SECONDS,
        "socket_connect_timeout": PROBE_TIMEOUT_SECONDS,
    }
    connection = app.connection_for_read(transport_options=deadline)
    try:
        with connection:
            channel = connection.default_channel
            total = 0
            for name in queues:
                # Redis holds no empty list: a queue it does not have has nothing waiting.
                with contextlib.suppress(*connection.channel_errors):
                    total += channel.queue_declare(queue=name, passive=True).message_count
            return total
    except (*connection.connection_errors, *connection.channel_errors, OSError) as error:
        logger.debug("watchdog: the broker did not answer (%s)", error)
        return None


def _end_this_worker(idle: float, waiting: int, queues: list[str]) -> None:
    logger.critical(
        "Stopped consuming: no task taken for %.0f s while %d message(s) wait in %s; ending this "
        "worker for its supervisor to start a fresh one",
        idle,
        waiting,
        ", ".join(queues),
    )
    os.kill(os.getpid(), signal.SIGTERM)  # a warm shutdown first: nothing is running
    time.sleep(SHUTDOWN_GRACE_SECONDS)
    logger.critical("The worker did not end within %.0f s; leaving now", SHUTDOWN_GRACE_SECONDS)
    logging.shutdown()
    os._exit(1)


def _watch(app: Celery, queues: list[str], stall_seconds: float) -> None:
    check_every = max(0.5, min(5.0, stall_seconds / 5))
    while True:
        time.sleep(check_every)
        if state.reserved_requests or state.active_requests:
            _progress.touch()
            continue
        waiting = waiting_in(app, queues)
        if not waiting:
            _progress.touch()
        elif _progress.idle() >= stall_seconds:
            _end_this_worker(_progress.idle(), waiting, queues)
            return


@task_received.connect
def _task_received(**kwargs) -> None:
    _progress.touch()


@worker_ready.connect
def _start_watching(sender, **kwargs) -> None:
    """Started once the worker consumes (the consumer's `ready`), in its main process."""
    stall_seconds = settings.WORKER_STALL_SECONDS
    if not stall_seconds:
        return
    app = sender.app
    queues = sorted(app.amqp.queues.consume_from or app.amqp.queues)
    _progress.touch()
    threading.Thread(
        target=_watch, args=(app, queues, stall_seconds), name="stall-watchdog", daemon=True
    ).start()
    logger.info("Watching for a stalled consumer (%s; %.0f s)", ", ".join(queues), stall_seconds)
