"""The product on Redis Sentinel (REDIS_SENTINELS, docs/operations.md "Redis Sentinel"): one
master, two replicas and three sentinels started here on spare loopback ports (never the shared
Redis), the master killed with SIGKILL, and the same processes carrying on with the replica the
sentinels promote: the cache, the visit buffer and the change stream in this process, a real
Celery worker and a long-lived producer in processes of their own, none restarted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.core.cache import cache, caches
from django.test import Client

from analytics import buffer, services
from analytics.models import VisitRecord
from core.redis_config import redis_cache, sentinel_cache_location
from core.redis_conn import PAUSE_AFTER_ERROR, redis_client, reset_redis_state
from links import cache as link_cache
from links.services.change import link_revoke
from links.services.create import link_create
from links.tests.helpers import database_url
from tests import redis_servers

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000
# Seen here: the sentinels agree and promote about 2-4 s after the kill.
PROMOTION_SECONDS = 12


@dataclass
class SentinelGroup:
    name: str
    master: int
    replicas: list[int]
    sentinel_ports: list[int]
    processes: dict[int, subprocess.Popen] = field(default_factory=dict)

    @property
    def sentinels(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", port) for port in self.sentinel_ports]

    def env(self) -> dict[str, str]:
        """What a deployment sets: the sentinels and the master's name, nothing else of Redis."""
        return {
            "REDIS_SENTINELS": ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports),
            "REDIS_SENTINEL_MASTER": self.name,
        }

    def master_port(self, sentinel: int | None = None) -> int | None:
        """The master's port as a sentinel answers SENTINEL get-master-addr-by-name."""
        port = sentinel or self.sentinel_ports[0]
        answer = redis_servers.cli(port, "sentinel", "get-master-addr-by-name", self.name)
        lines = answer.split()
        return int(lines[1]) if len(lines) == 2 else None

    def _described(self, port: int) -> dict[str, str]:
        words = redis_servers.cli(port, "sentinel", "master", self.name).split("\n")
        return dict(zip(words[::2], words[1::2], strict=False))

    def ready(self) -> bool:
        """Every sentinel sees both replicas and the two other sentinels (a failover needs a
        majority of sentinels that know each other)."""
        return all(
            state.get("num-slaves") == "2" and state.get("num-other-sentinels") == "2"
            for state in map(self._described, self.sentinel_ports)
        )

    def kill_master(self) -> int:
        """SIGKILL the master (no shutdown, no goodbye to its clients); returns its port."""
        old = self.master
        self.processes[old].send_signal(signal.SIGKILL)
        self.processes[old].wait(timeout=10)
        return old

    def wait_for_promotion(self, old: int) -> float:
        """Until every sentinel names a replica as the master; returns the seconds it took."""

        def promoted() -> bool:
            return all(self.master_port(port) in self.replicas for port in self.sentinel_ports)

        took = redis_servers.wait_until(
            promoted, timeout=PROMOTION_SECONDS, what=f"a replica promoted after {old} died"
        )
        self.master = self.master_port()
        return took


@pytest.fixture
def sentinel_group(tmp_path) -> SentinelGroup:
    redis_servers.require("redis-server", "redis-sentinel", "redis-cli")
    master, *replicas = redis_servers.free_ports(6)
    replicas, sentinel_ports = replicas[:2], replicas[2:]
    # A name of its own per group: django-redis keeps its pools per LOCATION for the process.
    group = SentinelGroup(f"shorturl-{master}", master, replicas, sentinel_ports)
    try:
        group.processes[master] = redis_servers.start(tmp_path / "master", master)
        for port in replicas:
            group.processes[port] = redis_servers.start(
                tmp_path / f"replica-{port}", port, "--replicaof", "127.0.0.1", str(master)
            )
        redis_servers.wait_answering([master, *replicas])
        # The replicas in sync before the sentinels start: a sentinel reads the master's list of
        # replicas when it connects and then only every 10 s.
        redis_servers.wait_until(
            lambda: all(
                "master_link_status:up" in redis_servers.cli(port, "info", "replication")
                for port in replicas
            ),
            timeout=10,
            what="the replicas in sync",
        )
        for port in sentinel_ports:
            directory = tmp_path / f"sentinel-{port}"
            directory.mkdir()
            (directory / "sentinel.conf").write_text(
                f"sentinel monitor {group.name} 127.0.0.1 {master} 2\n"
                f"sentinel down-after-milliseconds {group.name} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {group.name} {FAILOVER_TIMEOUT_MS}\n"
            )
            group.processes[port] = redis_servers.start(
                directory, port, "sentinel.conf", program="redis-sentinel"
            )
        redis_servers.wait_answering(sentinel_ports)
        redis_servers.wait_until(group.ready, timeout=15, what="the sentinels discovering it all")
        yield group
    finally:
        redis_servers.stop(group.processes.values())


@pytest.fixture
def on_sentinels(sentinel_group, settings):
    """This process's settings as REDIS_SENTINELS makes them (the same helpers build them)."""
    settings.REDIS_URL = sentinel_cache_location(sentinel_group.name, "")
    settings.CACHES = {
        "default": redis_cache(
            location=settings.REDIS_URL, key_prefix="su", sentinels=sentinel_group.sentinels
        )
    }
    reset_redis_state()
    link_cache.forget_sync_position()
    link_cache.apply_remote_changes()
    yield sentinel_group
    link_cache.forget_sync_position()


def _serving_port() -> int:
    return int(redis_client().info("server")["tcp_port"])


def _replicated() -> None:
    """Both replicas have everything written so far (what a failover could otherwise lose is
    not this test's question). WAIT asks for less than the client's 1 s socket timeout."""
    redis_servers.wait_until(
        lambda: redis_client().execute_command("WAIT", 2, 500) == 2,
        timeout=5,
        what="both replicas acknowledging the writes",
    )


def test_cache_visit_buffer_and_change_stream_follow_a_failover(on_sentinels, user):
    group = on_sentinels
    the_cache = caches["default"]
    assert _serving_port() == group.master

    cache.set("sentinel-probe", "before", 60)
    assert cache.get("sentinel-probe") == "before"
    link = link_create(user=user, long_url="https://example.com/sentinel").link
    other = link_create(user=user, long_url="https://example.com/sentinel-2").link
    browser = Client()
    assert browser.get(f"/{link.code}")["Location"] == link.long_url
    assert redis_client().llen(buffer.VISITS_KEY) == 1  # the visit waits in the master's buffer
    link_revoke(code=other.code, user=user)
    assert link_cache.apply_remote_changes() >= 1  # read back from the stream
    _replicated()

    old = group.kill_master()
    # While no master answers, a redirect still answers and its visit is stored directly.
    assert browser.get(f"/{link.code}").status_code == 302
    group.wait_for_promotion(old)

    # The same cache object, never re-created, finds the new master by itself.
    def cache_round_trip() -> bool:
        cache.set("sentinel-probe", "after", 60)
        return cache.get("sentinel-probe") == "after"

    redis_servers.wait_until(cache_round_trip, timeout=5, what="the cache on the new master")
    assert caches["default"] is the_cache
    assert _serving_port() == group.master != old
    assert cache.get("sentinel-probe") == "after"

    # The visit buffer: after the short pause a Redis error starts, redirects push there again.
    def pushed_to_buffer() -> bool:
        browser.get(f"/{link.code}")
        return redis_client().llen(buffer.VISITS_KEY) >= 2

    redis_servers.wait_until(
        pushed_to_buffer, timeout=PAUSE_AFTER_ERROR + 3, what="a visit pushed to the new master"
    )
    while services.flush_pending():
        pass
    # The first visit (replicated), the one stored directly, and those pushed after.
    assert VisitRecord.objects.filter(link=link).count() >= 3
    assert redis_client().llen(buffer.VISITS_KEY) == 0

    # The change stream: a change written now is read back from the new master.
    link_revoke(code=link.code, user=user)
    assert link_cache.apply_remote_changes() >= 1
    assert browser.get(f"/{link.code}").status_code == 410


# --- Celery: a real worker and a long-lived producer, each in a process of its own ------------

TASK = "analytics.tasks.aggregate_hourly_task"  # reads Redis and the database, changes nothing here

PRODUCER = """
import sys
import django

django.setup()
from shorturl_project.celery import app

for line in sys.stdin:
    try:
        result = app.send_task(line.strip())
        print("sent", result.id, flush=True)
    except Exception as exc:
        print("failed", type(exc).__name__, exc, flush=True)
"""


def _process_env(group: SentinelGroup, tmp_path: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"REDIS_URL", "CELERY_BROKER_URL", "REDIS_CLUSTER"}
    }
    return {
        **env,
        **group.env(),
        "DATABASE_URL": database_url(),
        "NODE_STATE_DIR": str(tmp_path / "node"),
        "SHOW_DEV_WARNING": "0",
        "PYTHONUNBUFFERED": "1",
    }


@dataclass
class Producer:
    process: subprocess.Popen

    def send(self, task: str) -> str:
        """The task's id once the producer says it was sent, or what failed."""
        self.process.stdin.write(task + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()


def _sent(producer: Producer, worker_log: Path, *, timeout: float) -> float:
    """Send TASK until one is sent, then wait for the worker to finish it; returns the time."""
    started = time.monotonic()
    while True:
        answer = producer.send(TASK)
        if answer.startswith("sent "):
            break
        assert time.monotonic() - started < timeout, f"the producer could not send: {answer}"
        time.sleep(0.2)
    task_id = answer.split()[1]
    redis_servers.wait_until(
        lambda: f"{TASK}[{task_id}] succeeded" in worker_log.read_text(),
        timeout=max(1.0, timeout - (time.monotonic() - started)),
        what=f"the worker finishing task {task_id}",
    )
    return time.monotonic() - started


@pytest.mark.worker
def test_a_celery_worker_and_producer_follow_a_failover(sentinel_group, tmp_path, requires_mysql):
    group = sentinel_group
    env = _process_env(group, tmp_path)
    worker_log = tmp_path / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "shorturl_project", "worker"]
    worker = subprocess.Popen(
        [*command, "--pool", "solo", "--loglevel", "info", "--without-gossip", "--without-mingle"],
        cwd=ROOT,
        env=env,
        stdout=worker_log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    producer = Producer(
        subprocess.Popen(
            [sys.executable, "-c", PRODUCER],
            cwd=ROOT,
            env={**env, "DJANGO_SETTINGS_MODULE": "shorturl_project.settings"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    )
    try:
        redis_servers.wait_until(
            lambda: "ready." in worker_log.read_text(), timeout=20, what="the worker started"
        )
        assert "sentinel://" in worker_log.read_text()  # the broker is the sentinels' master
        _sent(producer, worker_log, timeout=10)

        old = group.kill_master()
        group.wait_for_promotion(old)
        took = _sent(producer, worker_log, timeout=20)
        assert worker.poll() is None  # the same worker, never restarted
        assert producer.process.poll() is None
        print(f"sent and consumed {took:.1f} s after the promotion")
    finally:
        for process in (producer.process, worker):
            process.terminate()
        for process in (producer.process, worker):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        print(worker_log.read_text()[-3000:])
