"""Faults while visitors click, services mode: Redis stopped and started again, Redis hung,
the database stopped and started again.

The deployment's own redis-server (AOF on, as docs/operations.md says to run it) is stopped or
frozen while 16 clients follow a short link. Every click must still be answered with its
redirect, and once Redis answers again every answered click must be counted exactly once, with
no manual step: the web nodes keep visits in their spools and forward them, the Celery worker
and beat reconnect to the broker by themselves. What the same faults cost without persistence
is in docs/security.md and docs/analytics.md.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import harness
import pytest

CLIENTS = 16
STATS_POLL_SECONDS = 60.0


def _click_through(dep: harness.Deployment, code: str, long_url: str, fault: Callable[[], None]):
    """Clients click `code` for a second, `fault()` runs meanwhile, then they click for two
    seconds more. Returns (redirects answered, connection errors, any other answers)."""
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as runner:
        clicking = runner.submit(harness.click_until, dep, code, long_url, stop, clients=CLIENTS)
        time.sleep(1.0)
        fault()
        time.sleep(2.0)
        stop.set()
        clicks = clicking.result(timeout=60)
    return clicks.answered, clicks.errors, clicks.other


def _redis_port(dep: harness.Deployment) -> int:
    return urlsplit(dep.env["REDIS_URL"]).port


@pytest.fixture
def services(deployment):
    if deployment.mode != "services":
        pytest.skip("the embedded mode has no Redis")
    return deployment


def _check_counted(dep, case: str, code: str, answered: int, errors: int, other: list[str]):
    assert not other, f"{len(other)} clicks answered something else: {other[:5]}"
    assert answered > 0, f"no click was answered ({errors} connection errors)"
    seen = harness.wait_for_visits(dep, code, answered, timeout=STATS_POLL_SECONDS)
    harness.note(
        dep,
        case,
        f"answered 302: {answered}, connection errors: {errors}; stats show {seen.stored} "
        f"after {seen.seconds:.1f} s; progress {seen.history}",
    )
    # Exactly once: a click whose answer was lost on the way (a connection error) may be
    # counted without having been "answered", nothing else.
    assert answered <= seen.stored <= answered + errors, (
        f"{answered} clicks answered ({errors} connection errors), {seen.stored} counted after "
        f"{seen.seconds:.1f} s; progress (s, count): {seen.history}"
    )


def test_redis_stopped_and_started_again_loses_and_doubles_no_click(services):
    """Redis is shut down for 3 s and started again from its append-only file while people
    click: every click is answered and, after Redis is back, counted once."""
    long_url = harness.unique_url("redis-restart")
    code = harness.create_link(services, long_url)["code"]
    port, redis_dir = _redis_port(services), services.workdir / "redis"
    log = services.log_dir / "redis.log"

    def restart_redis() -> None:
        services.procs["redis"].stop()  # SIGTERM: Redis writes its AOF and exits
        time.sleep(3.0)
        services.procs["redis"], _ = harness.start_redis(redis_dir, log, port=port)

    answered, errors, other = _click_through(services, code, long_url, restart_redis)
    _check_counted(services, "Redis stopped 3 s and started again", code, answered, errors, other)
    services.check_alive()  # worker and beat reconnected on their own


def test_redis_hung_loses_and_doubles_no_click(services):
    """Redis is frozen (SIGSTOP) for 3 s while people click: answers go on (from the worker's
    memory or the database after a 1 s timeout), and every click is counted once afterwards."""
    long_url = harness.unique_url("redis-hung")
    code = harness.create_link(services, long_url)["code"]
    pid = services.procs["redis"].popen.pid

    def freeze_redis() -> None:
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(3.0)
        finally:
            os.kill(pid, signal.SIGCONT)

    answered, errors, other = _click_through(services, code, long_url, freeze_redis)
    _check_counted(services, "Redis frozen (SIGSTOP) 3 s", code, answered, errors, other)
    services.check_alive()


@pytest.fixture(scope="module")
def own_database(own_deployment):
    """A services deployment of its own on a private MariaDB server that the case stops (the
    session's deployments and the machine's MariaDB are never touched)."""
    with own_deployment("services", name="services-own-db", own_database=True) as dep:
        yield dep


def test_database_down_cached_links_redirect_writes_503_and_no_click_is_lost(own_database):
    """The database stops for a while: links already in use keep redirecting, creating a link
    or reading the API answers 503 with Retry-After (JSON), a page a person opens answers a
    friendly 503 page; once the database is back every click made meanwhile is counted once."""
    dep = own_database
    long_url = harness.unique_url("db-down")
    code = harness.create_link(dep, long_url)["code"]
    person = harness.login(dep, "demo", "demo")
    warm = harness.burst(dep, code)  # every web worker process has the link in memory now
    assert {(a.status, a.location) for a in warm} == {(302, long_url)}

    database_dir = dep.workdir / "mariadb"
    dep.procs["mariadb"].stop()
    try:
        during = harness.burst(dep, code)
        with dep.api() as api:
            create = api.post(
                dep.url("/api/v1/links/"), json={"long_url": harness.unique_url("x")}, timeout=30
            )
            listing = api.get(dep.url("/api/v1/links/"), timeout=30)
        page = person.get(dep.url("/dashboard/"), timeout=30)
        time.sleep(8)  # several flushes fail meanwhile: their visits must wait, not be dropped
    finally:
        dep.procs["mariadb"], _ = harness.start_mariadb(
            database_dir, dep.log_dir / "mariadb.log", port=dep.db_port
        )
    assert {(a.status, a.location) for a in during} == {(302, long_url)}, Counter(
        (a.status, a.location) for a in during
    )
    seen = harness.wait_for_visits(dep, code, len(warm) + len(during), timeout=STATS_POLL_SECONDS)
    harness.note(
        dep,
        "database down",
        f"clicks before {len(warm)}, while down {len(during)}; stats show {seen.stored} after "
        f"{seen.seconds:.1f} s; progress {seen.history}",
    )
    assert seen.stored == len(warm) + len(during), seen.history
    for answer in (create, listing):
        assert answer.status_code == 503, (answer.status_code, answer.text[:300])
        assert answer.headers["Content-Type"].startswith("application/json")
        assert "detail" in answer.json()
        assert int(answer.headers["Retry-After"]) > 0
    assert page.status_code == 503, page.text[:300]
    assert page.headers["Content-Type"].startswith("text/html")
    assert "Traceback" not in page.text and "<title>" in page.text
