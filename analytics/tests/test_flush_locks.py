"""The visit buffer's locks (issue #12, row 16): a flush whose worker was SIGKILLed holds up its
lane for a few seconds at most, and a live flush keeps its lock however long its batch takes."""

import os
import signal
import subprocess
import sys
import time

import pytest

from analytics import buffer, services
from analytics.models import VisitRecord
from analytics.tests.visits import visit_message
from core.redis_conn import redis_client

# The tests' bound on "a few seconds" (a dead holder's lock used to stall its lane for 60 s).
FEW_SECONDS = 15


@pytest.fixture
def client(requires_redis):
    return redis_client()


def _flush_until_stored(expected: int) -> int:
    """Flush as beat does (every 0.2 s here) until `expected` visits are stored or FEW_SECONDS
    pass; returns how many are stored."""
    deadline = time.monotonic() + FEW_SECONDS
    while VisitRecord.objects.count() < expected and time.monotonic() < deadline:
        services.flush_pending(max_seconds=0)
        time.sleep(0.2)
    return VisitRecord.objects.count()


def _sigkilled_holder(client, key: str) -> None:
    """A process takes `key` the way a flush does, and is SIGKILLed while it holds it."""
    connection = client.connection_pool.connection_kwargs
    script = (
        "import os, signal, redis\n"
        "from analytics import buffer\n"
        f"client = redis.Redis(host={connection['host']!r}, port={connection['port']},"
        f" db={connection.get('db', 0)})\n"
        f"token = buffer.acquire(client, {key!r})\n"
        "assert token\n"
        "print('holding', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert "holding" in child.stdout
    assert client.exists(key), "the dead holder's lock is left behind"


@pytest.mark.django_db
def test_a_flush_proceeds_within_seconds_after_its_lock_holder_was_sigkilled(client, make_link):
    link = make_link()
    # The holder died mid-flush: its batch is in the lane's processing list, the lock is taken.
    batch = [visit_message(link, ip=f"198.51.100.{n}") for n in range(20)]
    client.rpush(buffer.lane(0).processing, *batch)
    client.rpush(buffer.VISITS_KEY, *[visit_message(link) for _ in range(5)])
    _sigkilled_holder(client, buffer.lane(0).lock)
    assert services.flush_pending(max_seconds=0) == 0, "the lock still counts at first"

    assert _flush_until_stored(25) == 25
    assert VisitRecord.objects.values("event_id").distinct().count() == 25


@pytest.mark.django_db
def test_an_aggregation_proceeds_within_seconds_after_its_holder_was_sigkilled(client, make_link):
    link = make_link()
    services.store_visits(messages=[visit_message(link)])
    client.sadd(buffer.HOURS_KEY, *[f"{link.pk}:{3600 * n}" for n in range(3)])
    _sigkilled_holder(client, buffer.AGGREGATE_LOCK_KEY)
    assert services.aggregate_hourly() == 0, "the lock still counts at first"
    deadline = time.monotonic() + FEW_SECONDS
    while client.exists(buffer.HOURS_KEY) and time.monotonic() < deadline:
        services.aggregate_hourly()
        time.sleep(0.2)
    assert not client.exists(buffer.HOURS_KEY)


def test_a_live_holder_keeps_its_lock_past_its_lifetime(client):
    key = buffer.lane(3).lock
    token = buffer.acquire(client, key)
    assert token
    try:
        with buffer.kept_alive(client, key, token):
            time.sleep(buffer.LOCK_SECONDS + 1.5 * buffer.RENEW_SECONDS)
            assert client.get(key) == token.encode(), "still ours"
            assert buffer.acquire(client, key) is None
    finally:
        buffer.release(client, key, token)
    assert not client.exists(key)


def test_renewing_never_takes_back_a_lock_another_flush_holds(client):
    key = buffer.lane(4).lock
    token = buffer.acquire(client, key)
    with buffer.kept_alive(client, key, token):
        client.set(key, "another-flush", px=int(buffer.LOCK_SECONDS * 1000))
        time.sleep(1.5 * buffer.RENEW_SECONDS)
        assert client.get(key) == b"another-flush"
    client.delete(key)
