"""Each pytest-xdist worker of the services pass gets Redis database numbers of its own.

Loaded with `-p tests.worker_backends` (make test-services), so it runs before pytest-django
reads the settings. pytest-django already gives each worker its own test database
(test_<name>_gw0, _gw1, ...); Redis has no such thing, and the tests flush their cache database
and run an in-process Celery worker on their broker database, so two workers sharing one would
wipe each other's cache and take each other's tasks. Worker N moves both numbers down by 2N:
gw0 keeps REDIS_URL's /15 and the broker's /14, gw1 takes /13 and /12, and so on. A URL it
cannot give a number of its own (no database number, another broker) stops the run instead of
being shared.
"""

from __future__ import annotations

import os
import re

DATABASE_NUMBER = re.compile(r"^(rediss?://[^/?#]*)/(\d+)(\?.*)?$")
FIRST_DATABASE_LEFT_FREE = 2  # 0 and 1 stay for development (README: REDIS_URL=…/0)


class SharedBackend(RuntimeError):
    """Two workers would share a Redis database: the run stops before any test."""


def worker_index() -> int | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else None


def database_number(url: str) -> int | None:
    match = DATABASE_NUMBER.match(url)
    return int(match.group(2)) if match else None


def moved(url: str, index: int) -> str:
    if index == 0:
        return url
    match = DATABASE_NUMBER.match(url)
    if not match:
        raise SharedBackend(
            f"{url} names no Redis database number for worker gw{index} to move: give one "
            "(redis://host:6379/15) or run the services pass in one process (SERVICES_WORKERS=0)"
        )
    number = int(match.group(2)) - 2 * index
    if number < FIRST_DATABASE_LEFT_FREE:
        raise SharedBackend(
            f"too many test workers for {url}: worker gw{index} would take Redis database "
            f"{number}; use fewer workers (SERVICES_WORKERS) or higher database numbers"
        )
    return f"{match.group(1)}/{number}{match.group(3) or ''}"


def check_apart(cache_url: str, broker_url: str) -> None:
    """Moving both by 2N keeps them apart only if their numbers differ by an odd amount (15
    and 14): an even gap (15 and 13) puts one worker's broker on another's cache."""
    cache, broker = database_number(cache_url), database_number(broker_url)
    if cache is not None and broker is not None and (cache - broker) % 2 == 0:
        raise SharedBackend(
            f"the cache's Redis database {cache} and the broker's {broker} differ by an even "
            "number, so one worker's broker would be another's cache: use numbers next to each "
            "other (…/15 and …/14)"
        )


def _apply() -> None:
    index = worker_index()
    if index is None:
        return
    cache, broker = os.environ.get("REDIS_URL", ""), os.environ.get("CELERY_BROKER_URL", "")
    if cache and broker and broker != cache:
        check_apart(cache, broker)
    for name, url in (("REDIS_URL", cache), ("CELERY_BROKER_URL", broker)):
        if url:
            os.environ[name] = moved(url, index)


_apply()
