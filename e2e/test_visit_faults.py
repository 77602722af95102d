"""Faults on the visit pipeline (issue #12, rows 11 and 16), the way a deployment meets them.

A poisoned X-Forwarded-For entry among good clicks (both modes), and a Celery worker SIGKILLed
while it stores a batch (services mode): every visit is counted, once, within seconds.
"""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import harness
import pytest
import redis
from harness import get_fresh, visitor_headers

# An IPv6 link-local address with a made-up zone id of 300 characters, as the one proxy in front
# (NUM_PROXIES=1) passes on whatever the client wrote.
POISONED_FORWARDED_FOR = "fe80::1%" + "z" * 300
CLIENTS = 16


def _click(dep: harness.Deployment, code: str, indexes: range) -> None:
    def one(index: int) -> int:
        return get_fresh(dep.port, f"/{code}", visitor_headers(index)).status

    with ThreadPoolExecutor(CLIENTS) as pool:
        statuses = list(pool.map(one, indexes))
    assert statuses == [302] * len(indexes), f"answers: {sorted(set(statuses))}"


def test_a_poisoned_forwarded_for_among_good_clicks_is_counted_with_them(deployment):
    """300 clicks and one whose X-Forwarded-For holds a 300-character zone id: all 301 are
    counted (it used to fail its whole batch three times, then go to the dead list)."""
    code = harness.create_link(deployment, harness.unique_url("poisoned-xff"))["code"]
    _click(deployment, code, range(150))
    poisoned = {**visitor_headers(150), "X-Forwarded-For": POISONED_FORWARDED_FOR}
    answer = get_fresh(deployment.port, f"/{code}", poisoned)
    assert answer.status == 302
    _click(deployment, code, range(151, 301))

    seen = harness.wait_for_visits(deployment, code, 301, timeout=40)
    harness.note(
        deployment,
        "poisoned X-Forwarded-For",
        f"{seen.stored} of 301 counted after {seen.seconds:.1f} s; progress {seen.history}",
    )
    assert seen.stored == 301, (
        f"the stats show {seen.stored} of 301 visits after {seen.seconds:.1f} s; "
        f"progress (s, count): {seen.history}"
    )


# --- A worker SIGKILLed mid-flush (services mode) ------------------------------------------------

FLUSH_LOCK = "analytics:{buffer}:lock:flush"  # lane 0's lock (docs/analytics.md)
BACKLOG = 3000


def _start_worker(dep: harness.Deployment, name: str, **env: str) -> harness.Proc:
    proc = harness.start_process(
        name,
        harness.make_command("worker"),
        env={**dep.env, **env},
        log_path=dep.log_dir / f"{name}.log",
    )
    harness._wait_log(proc, r"celery@\S+ ready\.", timeout=90, dep=dep)
    return proc


def _sigkill(proc: harness.Proc) -> None:
    os.killpg(proc.pgid, signal.SIGKILL)
    proc.popen.wait(timeout=10)
    harness.wait_until(
        lambda: not harness.group_alive(proc.pgid), timeout=10, what="the killed worker to go"
    )


def test_a_worker_sigkilled_mid_flush_holds_up_the_visits_for_seconds_only(deployment):
    """The worker is SIGKILLed while it holds a flush lane's lock (a batch half stored); another
    worker stores every visit, none twice, within seconds (the dead lock used to stall the lane
    for 60 s)."""
    if deployment.mode != "services":
        pytest.skip("the embedded mode has no Celery worker (its runner's locks are flock()s)")
    port = int(deployment.env["REDIS_URL"].rsplit(":", 1)[1].split("/")[0])
    buffer = redis.Redis(host=harness.HOST, port=port, db=0)
    code = harness.create_link(deployment, harness.unique_url("sigkill-flush"))["code"]

    # A backlog, while no worker stores anything.
    deployment.procs.pop("worker").stop()
    _click(deployment, code, range(BACKLOG))
    harness.wait_until(
        lambda: buffer.llen("analytics:{buffer}:visits") >= BACKLOG,
        timeout=30,
        what="the node to forward the backlog to Redis",
    )

    # Small batches on one lane: the worker holds the lock nearly all the time it flushes.
    killed_at, lock_ttl = None, -2
    for attempt in range(3):
        slow = _start_worker(
            deployment,
            f"worker-to-kill-{attempt}",
            ANALYTICS_BATCH_SIZE="20",
            ANALYTICS_FLUSH_LANES="1",
        )
        deadline = time.monotonic() + 60
        while not buffer.exists(FLUSH_LOCK) and time.monotonic() < deadline:
            time.sleep(0.0005)
        _sigkill(slow)
        lock_ttl = buffer.pttl(FLUSH_LOCK)
        if lock_ttl > 0:  # died holding it, mid-batch
            killed_at = time.monotonic()
            break
    assert killed_at is not None, "could not catch the worker holding a flush lock"

    deployment.procs["worker"] = _start_worker(deployment, "worker-after-kill")
    seen = harness.wait_for_visits(deployment, code, BACKLOG, timeout=40)
    since_kill = time.monotonic() - killed_at
    harness.note(
        deployment,
        "worker SIGKILLed mid-flush",
        f"the dead worker's lock had {lock_ttl} ms to live; {seen.stored} of {BACKLOG} counted "
        f"{since_kill:.1f} s after the kill (a replacement worker's start included)",
    )
    assert seen.stored == BACKLOG, (
        f"the stats show {seen.stored} of {BACKLOG} visits {since_kill:.1f} s after the kill; "
        f"progress (s, count): {seen.history}"
    )
