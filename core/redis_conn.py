"""The raw Redis client behind the default cache, shared by the link cache, the code pool and the
visit buffer, and one policy for when Redis is down.

After a failure Redis is left alone for a few seconds: an unreachable (not refusing) server would
otherwise cost every redirect its connect timeout. The warning repeats at most once a minute.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django_redis.pool import ConnectionFactory
from redis.cluster import RedisCluster

logger = logging.getLogger("shorturl.redis")

WARN_EVERY = 60.0
PAUSE_AFTER_ERROR = 5.0
_state = {"paused_until": 0.0, "last_warning": 0.0}


_mode: dict[str, bool] = {}


@receiver(setting_changed)
def _settings_changed(**kwargs) -> None:
    _mode.clear()  # tests switch backends; a running server never does


def uses_redis() -> bool:
    """True when the cache is django-redis: then Redis also holds the pool, counter and buffer."""
    value = _mode.get("redis")
    if value is None:
        value = _mode["redis"] = settings.CACHES["default"]["BACKEND"].startswith("django_redis")
    return value


class ClusterConnectionFactory(ConnectionFactory):
    """django-redis's client on a Redis Cluster (REDIS_CLUSTER=1): REDIS_URL names any node,
    the client learns the others and routes each key to its slot."""

    _clusters: dict[str, RedisCluster] = {}

    def connect(self, url: str) -> RedisCluster:
        client = self._clusters.get(url)
        if client is None:
            client = self._clusters[url] = RedisCluster.from_url(
                url,
                socket_connect_timeout=self.options.get("SOCKET_CONNECT_TIMEOUT", 1),
                socket_timeout=self.options.get("SOCKET_TIMEOUT", 1),
            )
        return client

    def disconnect(self, connection) -> None:
        connection.close()


def uses_cluster() -> bool:
    """True on a Redis Cluster: multi-key scripts stay within one hash tag, and the redirect
    reads its entry and pushes its visit in separate calls (they live in different slots)."""
    value = _mode.get("cluster")
    if value is None:
        factory = settings.CACHES["default"].get("OPTIONS", {}).get("CONNECTION_FACTORY", "")
        value = _mode["cluster"] = uses_redis() and factory.endswith("ClusterConnectionFactory")
    return value


def redis_client():
    """The raw client behind the default cache, or None without Redis (embedded mode)."""
    if not uses_redis():
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default")


def redis_paused() -> bool:
    """True for a few seconds after a failure: callers take their no-Redis path instead."""
    return time.monotonic() < _state["paused_until"]


def live_redis_client():
    """redis_client(), or None also while Redis is paused after a failure."""
    return None if redis_paused() else redis_client()


def redis_failed(exc: Exception, *, consequence: str) -> None:
    """Note a Redis failure: pause Redis for a while and warn (at most once a minute)."""
    now = time.monotonic()
    _state["paused_until"] = now + PAUSE_AFTER_ERROR
    if now - _state["last_warning"] >= WARN_EVERY:
        _state["last_warning"] = now
        logger.warning(
            "Redis is unreachable (%s): %s until it is back "
            "(this warning repeats at most once a minute)",
            exc,
            consequence,
        )


def reset_redis_state() -> None:
    """Forget any pause and warning (tests, and a worker that has just reconnected)."""
    _state.update(paused_until=0.0, last_warning=0.0)


def sadd_all(client, key: str, members: Iterable[str], *, chunk: int = 5000) -> int:
    """SADD every member of a (database) iterator in chunks; returns how many were sent."""
    sent = 0
    batch: list[str] = []
    for member in members:
        batch.append(member)
        if len(batch) == chunk:
            client.sadd(key, *batch)
            sent, batch = sent + len(batch), []
    if batch:
        client.sadd(key, *batch)
        sent += len(batch)
    return sent
