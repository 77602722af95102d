"""Each pytest-xdist worker of the services pass gets Redis database numbers of its own.

Loaded with `-p tests.worker_backends` (make test-services), so it runs before pytest-django
reads the settings. pytest-django already gives each worker its own test database
(test_<name>_gw0, _gw1, ...); Redis has no such thing, and the tests flush their cache database
and run an in-process Celery worker on their broker database, so two workers sharing one would
wipe each other's cache and take each other's tasks. Worker N moves both numbers down by 2N:
gw0 keeps REDIS_URL's /15 and the broker's /14, gw1 takes /13 and /12, and so on.
"""

from __future__ import annotations

import os
import re

DATABASE_NUMBER = re.compile(r"^(redis://[^/]*)/(\d+)$")
FIRST_DATABASE_LEFT_FREE = 2  # 0 and 1 stay for development (README: REDIS_URL=…/0)


def worker_index() -> int | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else None


def moved(url: str, index: int) -> str:
    match = DATABASE_NUMBER.match(url)
    if not match or index == 0:
        return url
    number = int(match.group(2)) - 2 * index
    if number < FIRST_DATABASE_LEFT_FREE:
        raise RuntimeError(
            f"too many test workers for {url}: worker gw{index} would take Redis database "
            f"{number}; use fewer workers (TEST_WORKERS) or higher database numbers"
        )
    return f"{match.group(1)}/{number}"


def _apply() -> None:
    index = worker_index()
    if index is None:
        return
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        if os.environ.get(name):
            os.environ[name] = moved(os.environ[name], index)


_apply()
