"""A worker that stays up but stops consuming is replaced (shorturl_project/worker_watchdog.py).

A real `celery worker` under scripts/keep-running (as `make worker` starts it), on a throw-away
redis-server, is told by Celery's own remote control to stop consuming its queue: the process
stays up and takes nothing, as kombu has left workers after a broker restart. Tasks queued then
must still run: the watchdog ends the stuck worker and keep-running starts a fresh one.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import redis_servers

pytestmark = [pytest.mark.services, pytest.mark.worker]

ROOT = Path(__file__).resolve().parent.parent
STALL_SECONDS = 3
TASKS = 5


STOP_CONSUMING_AND_QUEUE = """
import sys
from shorturl_project.celery import app
name, tasks = sys.argv[1], int(sys.argv[2])
print(app.control.cancel_consumer("celery", destination=[name], reply=True, timeout=10))
for number in range(tasks):
    app.send_task("celery.accumulate", args=(number,))
"""


def _queued(port: int) -> int:
    return int(redis_servers.cli(port, "-n", "0", "LLEN", "celery") or 0)


def _ran(log: Path) -> int:
    text = log.read_text(errors="replace")
    return sum("succeeded" in line for line in text.splitlines() if "celery.accumulate[" in line)


def test_a_worker_that_stops_consuming_is_replaced_and_the_queued_tasks_run(tmp_path):
    redis_servers.require("redis-server", "redis-cli")
    (port,) = redis_servers.free_ports(1)
    redis = redis_servers.start(tmp_path / "redis", port)
    log = tmp_path / "worker.log"
    name = f"watch-{os.getpid()}@{socket.gethostname()}"
    env = {
        **{k: v for k, v in os.environ.items() if k not in {"REDIS_CLUSTER", "REDIS_SENTINELS"}},
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
        "REDIS_URL": f"redis://127.0.0.1:{port}/1",
        "WORKER_STALL_SECONDS": str(STALL_SECONDS),
        "SHOW_DEV_WARNING": "0",
        "PYTHONUNBUFFERED": "1",
    }
    worker = subprocess.Popen(
        [
            *(str(ROOT / "scripts" / "keep-running"), sys.executable, "-m", "celery"),
            *("-A", "shorturl_project", "worker", "--queues", "celery", "--concurrency", "1"),
            *("--hostname", name, "--loglevel", "info", "--without-gossip", "--without-mingle"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        redis_servers.wait_answering([port])
        redis_servers.wait_until(
            lambda: "ready." in log.read_text(errors="replace"), timeout=30, what="worker ready"
        )
        assert "Watching for a stalled consumer (celery; 3 s)" in log.read_text()
        # The project's own app, as `celery -A shorturl_project control` would use it.
        told = subprocess.run(
            [sys.executable, "-c", STOP_CONSUMING_AND_QUEUE, name, str(TASKS)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert told.returncode == 0 and "no longer consuming" in told.stdout, told
        time.sleep(1.0)
        # The premise: alive, and not consuming.
        assert _queued(port) == TASKS
        assert worker.poll() is None and _ran(log) == 0

        took = redis_servers.wait_until(
            lambda: _ran(log) == TASKS, timeout=STALL_SECONDS + 40, what="the queued tasks run"
        )
        text = log.read_text(errors="replace")
        assert "Stopped consuming: no task taken for" in text
        assert "keep-running:" in text and "starting it again" in text
        assert _queued(port) == 0
        print(f"queued tasks ran {took:.1f} s after the worker stopped consuming")
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
        redis.terminate()
        redis.wait(timeout=10)
