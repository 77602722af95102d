"""Where Redis is, read once from the environment's words: a plain server or cluster node
(REDIS_URL), or a master found through Redis Sentinel (REDIS_SENTINELS). The settings build the
cache and the broker from these helpers, and the start-up check (core.checks) reports what they
could not use, so the rule lives here alone.

Plain Python, no Django: the settings module imports it while Django is still loading.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

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
    return (int(path) if path.isdigit() else 0), (parts.password or "")


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
