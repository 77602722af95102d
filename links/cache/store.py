"""A link's entry as the redirect reads it (this process's answer, then Redis's entry) and as it
is filled after a miss (from the database, into this process and Redis, its absence too).

With Redis, entries are plain strings under raw keys (`shorturl:link:{<code>}`) rather than
pickles behind the Django cache, so that one Lua call can read an entry and push the visit in a
single round trip (serving.fused_read, the redirect's own read).
"""

from __future__ import annotations

from django.conf import settings
from redis.exceptions import RedisError

from core.node_state import local_entries_trusted
from core.redis_conn import live_redis_client, redis_failed, uses_redis
from links.cache import code_filter
from links.cache.codesets import _certainly_no_alias
from links.cache.entries import _MISSING, LinkEntry, decode_entry
from links.cache.keys import code_of_key, domain_of_key, entry_key, version_key
from links.cache.local import database_reads, generation_before_read, keep_here, process_cache
from links.models import UrlLink


def answer_here(key: str, *, alias_shaped: bool) -> LinkEntry | bool | None:
    """What this process can say about the link `key` without a round trip or a query, once
    its node's memory is trusted: its own entry; False for a code no link has (not in this
    process's alias set, or not in the node's code filter, which leaves no negative entry: a
    flood of made-up codes would push real entries out of the cache); None when Redis or the
    database must say."""
    local = process_cache.get(key)
    if local is not None:
        return local
    if alias_shaped:
        return False if _certainly_no_alias(key) else None
    return False if code_filter.certainly_absent(code_of_key(key)) else None


def get_entry(key: str, *, alias_shaped: bool = False) -> LinkEntry | bool | None:
    """The cached entry, False when the link is known not to exist, None when not cached."""
    if local_entries_trusted():
        local = answer_here(key, alias_shaped=alias_shaped)
        if local is not None or not uses_redis():
            return local
    client = live_redis_client()
    if client is None:
        return None  # Redis paused after a failure: straight to the database
    try:
        return decode_entry(key, client.get(entry_key(key)))
    except RedisError as exc:
        redis_failed(exc, consequence="links are read from the database")
        return None


# Stores a Redis entry only if no change to the code happened since its version was read
# (before the database read): a redirect that read the old row must not put it back after the
# change's DEL. KEYS: entry, version. ARGV: value, ttl, version read.
_PUT_IF_UNCHANGED = """
if (redis.call('GET', KEYS[2]) or '0') == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
end
return 0
"""
_put_if_unchanged_script = None


def redis_version_before_read(code: str) -> str | None:
    """Services mode: the code's change counter in Redis, read before a database read whose
    result is to be cached there; None without Redis (or while it is paused)."""
    client = live_redis_client() if uses_redis() else None
    if client is None:
        return None
    try:
        return (client.get(version_key(code)) or b"0").decode()
    except RedisError as exc:
        redis_failed(exc, consequence="links are not cached")
        return None


def _put(key: str, value: str, ttl: int, version: str | None) -> None:
    client = live_redis_client()
    if client is None:
        return
    global _put_if_unchanged_script
    try:
        if version is None:  # the caller knows of no concurrent change (a fresh row)
            client.set(entry_key(key), value, ex=ttl)
            return
        if _put_if_unchanged_script is None:
            _put_if_unchanged_script = client.register_script(_PUT_IF_UNCHANGED)
        _put_if_unchanged_script(
            keys=[entry_key(key), version_key(key)],
            args=[value, ttl, version],
            client=client,
        )
    except RedisError as exc:
        redis_failed(exc, consequence="links are not cached")


def store_entry(
    entry: LinkEntry, *, generation: int | None = None, version: str | None = None
) -> None:
    """Cache `entry`: in this process when `generation` (generation_before_read's tag) is
    given, and in Redis, unless the code changed since `version` (redis_version_before_read)."""
    keep_here(entry.key, entry, generation)
    if uses_redis():
        _put(entry.key, entry.serialize(), settings.SHORTURL_CACHE_TTL, version)


def store_missing(key: str, *, generation: int | None = None, version: str | None = None) -> None:
    keep_here(key, False, generation)
    if uses_redis():
        _put(key, _MISSING, settings.SHORTURL_NEGATIVE_CACHE_TTL, version)


def load_entry(key: str) -> LinkEntry | None:
    """The link for `key` from the database, cached (its absence too); None when unknown."""
    generation = generation_before_read(key)
    version = redis_version_before_read(key)
    database_reads["count"] += 1
    link = UrlLink.objects.filter(code=code_of_key(key), domain_id=domain_of_key(key)).first()
    if link is None:
        store_missing(key, generation=generation, version=version)
        return None
    return cache_link(link, generation=generation, version=version)


def cache_link(
    link: UrlLink, *, generation: int | None = None, version: str | None = None
) -> LinkEntry:
    entry = LinkEntry.from_link(link)
    store_entry(entry, generation=generation, version=version)
    return entry
