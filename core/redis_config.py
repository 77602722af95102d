"""Where Redis is, read once from the environment's words: a plain server or cluster node
(REDIS_URL), or a master found through Redis Sentinel (REDIS_SENTINELS). The settings build the
cache and the broker from these helpers, and the start-up check (core.checks) reports what they
could not use, so the rule lives here alone.

Plain Python, no Django: the settings module imports it while Django is still loading.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

DEFAULT_MASTER = "mymaster"
DEFAULT_SENTINEL_PORT = 26379


def parse_sentinels(value: str) -> tuple[list[tuple[str, int]], list[str]]:
    """REDIS_SENTINELS ("h1:26379,h2:26379", spaces allowed) → ([(host, port), ...], the
    entries that are not host:port). A port may be left out (26379, Sentinel's own)."""
    sentinels: list[tuple[str, int]] = []
    malformed: list[str] = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        host, colon, port = entry.rpartition(":")
        if not colon:
            host, port = entry, str(DEFAULT_SENTINEL_PORT)
        host = host.removeprefix("[").removesuffix("]")  # [::1]:26379
        if not host or "/" in host or not port.isdigit() or not 0 < int(port) < 65536:
            malformed.append(entry)
            continue
        sentinels.append((host, int(port)))
    return sentinels, malformed


def _database_and_password(redis_url: str) -> tuple[int, str]:
    """REDIS_URL's database number and password: with Sentinel they are all it still says (the
    host is the master's name, found through the sentinels)."""
    if not redis_url:
        return 0, ""
    parts = urlsplit(redis_url)
    path = parts.path.strip("/")
    return (int(path) if path.isdigit() else 0), unquote(parts.password or "")


def sentinel_cache_location(master: str, redis_url: str) -> str:
    """The cache's LOCATION for django-redis's SentinelConnectionFactory: its host is the name
    the sentinels know the master by (redis://mymaster/0), with REDIS_URL's password and db."""
    db, password = _database_and_password(redis_url)
    auth = f":{quote(password, safe='')}@" if password else ""
    return f"redis://{auth}{master}/{db}"


def sentinel_broker_url(sentinels: list[tuple[str, int]], redis_url: str) -> str:
    """kombu's Sentinel transport URL, every sentinel named (sentinel://h1:p1/0;sentinel://...)
    so that one of them down does not stop a worker starting; the master's password and
    database come from REDIS_URL as for the cache."""
    db, password = _database_and_password(redis_url)
    auth = f":{quote(password, safe='')}@" if password else ""
    return ";".join(
        f"sentinel://{auth}{f'[{host}]' if ':' in host else host}:{port}/{db}"
        for host, port in sentinels
    )


def sentinel_kwargs(password: str) -> dict[str, object]:
    """How the sentinels themselves are asked: under the same 1 s timeouts as the master (they
    are asked on every reconnection), with their own password when they have one."""
    return {
        "socket_connect_timeout": 1,
        "socket_timeout": 1,
        **({"password": password} if password else {}),
    }


def redis_cache(
    *,
    location: str,
    key_prefix: str,
    sentinels: list[tuple[str, int]] | None = None,
    sentinel_password: str = "",
    cluster: bool = False,
) -> dict[str, object]:
    """The default cache on Redis: one server, a cluster node, or the master behind sentinels
    (then `location` is sentinel_cache_location()'s)."""
    options: dict[str, object] = {
        "CLIENT_CLASS": "django_redis.client.DefaultClient",
        # A Redis outage degrades pages to the database instead of failing them.
        "IGNORE_EXCEPTIONS": True,
        "SOCKET_CONNECT_TIMEOUT": 1,
        "SOCKET_TIMEOUT": 1,
    }
    if sentinels:
        # django-redis's Sentinel pool, behind the DefaultClient rather than its SentinelClient:
        # that one reads from replicas, and a replica a moment behind would answer an entry
        # just revoked or a pool code just taken. Reads and writes both go to the master.
        options.update(
            CONNECTION_FACTORY="django_redis.pool.SentinelConnectionFactory",
            SENTINELS=sentinels,
            SENTINEL_KWARGS=sentinel_kwargs(sentinel_password),
        )
    elif cluster:
        # `location` names any node of a Redis Cluster; the broker must be a plain Redis or
        # RabbitMQ (CELERY_BROKER_URL), which Celery needs.
        options["CONNECTION_FACTORY"] = "core.redis_conn.ClusterConnectionFactory"
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": location,
        "KEY_PREFIX": key_prefix,
        "OPTIONS": options,
    }


def sentinel_broker_options(*, master: str, sentinel_password: str) -> dict[str, object]:
    """CELERY_BROKER_TRANSPORT_OPTIONS for a sentinel:// broker: kombu asks the sentinels for
    this master when it connects, and again on every reconnection."""
    return {"master_name": master, "sentinel_kwargs": sentinel_kwargs(sentinel_password)}


def sentinel_problems(*, sentinels: str, cluster: bool) -> list[str]:
    """Why REDIS_SENTINELS cannot be used as written (empty when it can, or is unset)."""
    if not sentinels.strip():
        return []
    found, malformed = parse_sentinels(sentinels)
    problems = []
    if cluster:
        problems.append(
            "REDIS_SENTINELS and REDIS_CLUSTER are both set: a Redis Cluster fails over by "
            "itself and takes no sentinels. Unset one of them."
        )
    if malformed:
        problems.append(
            f"REDIS_SENTINELS has entries that are not host:port: {', '.join(malformed)}."
        )
    elif not found:
        problems.append("REDIS_SENTINELS names no sentinel.")
    return problems
