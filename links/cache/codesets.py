"""The sets of codes that let a made-up code be a 404 without a query: every custom alias (a
Redis set, and this process's copy of it) and every generated code (a Redis set loaded whole by
one node's runner, and the node's own code filter, built here from the database). What a
create adds to them, and a dropped alias set, are announced in changes.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError
from redis.exceptions import RedisError

from core.node_state import local_entries_trusted
from core.redis_conn import live_redis_client, redis_failed, sadd_all, uses_cluster, uses_redis
from links.cache import code_filter
from links.cache.keys import (
    _ALIASES_GENERATION,
    ALIAS_SET_COMPLETE,
    ALIAS_SET_KEY,
    CODE_SET_EPOCH,
    CODE_SET_KEY,
    CODE_SET_LOCK,
    code_of_key,
    link_key,
)
from links.cache.local import database_reads, generation_before_read, process_cache
from links.models import CodeType, UrlLink

logger = logging.getLogger(__name__)


def set_of_kind(alias_shaped: bool) -> str:
    """The Redis set that knows every code of this shape: the aliases, or the generated codes."""
    return ALIAS_SET_KEY if alias_shaped else CODE_SET_KEY


def set_member(key: str, alias_shaped: bool) -> str:
    """What the set of the key's kind holds for it: the alias set holds keys, the code set bare
    codes (generated codes are unique across domains)."""
    return key if alias_shaped else code_of_key(key)


def alias_may_exist(key: str) -> bool:
    """False when `key` is certainly no custom alias's (so no query is needed to say 404)."""
    if not uses_redis():
        return key in _process_aliases()
    if local_entries_trusted() and _certainly_no_alias(key):
        return False
    client = live_redis_client()
    if client is None:
        return True  # the set is out of reach: let the database decide
    try:
        complete, member = set_lookup(client, ALIAS_SET_KEY, key)
        if not complete:
            _load_alias_set(client)
            complete, member = set_lookup(client, ALIAS_SET_KEY, key)
    except RedisError as exc:
        redis_failed(exc, consequence="links are read from the database")
        return True
    return member or not complete


def set_lookup(client, key: str, code: str) -> tuple[bool, bool]:
    """(the set is complete, it holds `code`) for the alias set or the code set."""
    with client.pipeline(transaction=False) as pipe:
        pipe.sismember(key, ALIAS_SET_COMPLETE)
        pipe.sismember(key, code)
        complete, member = pipe.execute()
    return bool(complete), bool(member)


def _alias_keys():
    """Every custom alias's key (an alias on an extra domain is `alias@<domain id>`)."""
    database_reads["count"] += 1  # also on the redirect path (see load_entry)
    aliases = UrlLink.objects.filter(code_type=CodeType.CUSTOM).values_list("code", "domain_id")
    return (link_key(code, domain_id) for code, domain_id in aliases.iterator(chunk_size=5000))


def _load_alias_set(client) -> None:
    """Every alias from the database into the set, then the marker that it is complete. An
    alias created meanwhile is added by its own create, so none is missed. The set lives a
    cache TTL, so an alias whose add was lost to a Redis failure is found within a day."""
    sadd_all(client, ALIAS_SET_KEY, _alias_keys())
    client.sadd(ALIAS_SET_KEY, ALIAS_SET_COMPLETE)
    client.expire(ALIAS_SET_KEY, settings.SHORTURL_CACHE_TTL)


def _generated_codes():
    return (
        UrlLink.objects.exclude(code_type=CodeType.CUSTOM)
        .values_list("code", flat=True)
        .iterator(chunk_size=5000)
    )


def ensure_code_set() -> bool:
    """Services mode, the node's runner: load the code set whole unless it is complete (one
    node at a time, under a Redis lock). Returns True when it loaded it. (A create that could
    not add its codes leaves them to send_pending_changes, which marks the set incomplete.)"""
    client = live_redis_client() if uses_redis() else None
    if client is None:
        return False
    if client.sismember(CODE_SET_KEY, ALIAS_SET_COMPLETE):
        return False
    token = uuid.uuid4().hex
    if not client.set(CODE_SET_LOCK, token, nx=True, ex=600):
        return False  # another node loads it
    try:
        epoch = (client.get(CODE_SET_EPOCH) or b"0").decode()
        sadd_all(client, CODE_SET_KEY, _generated_codes())
        # Loaded again daily: bounds how long a code whose add was lost (with its node) hides.
        return _mark_code_set_complete(client, epoch)
    finally:
        if client.get(CODE_SET_LOCK) == token.encode():
            client.delete(CODE_SET_LOCK)


def _mark_code_set_incomplete(client) -> None:
    with client.pipeline(transaction=not uses_cluster()) as pipe:
        pipe.incr(CODE_SET_EPOCH)
        pipe.srem(CODE_SET_KEY, ALIAS_SET_COMPLETE)
        pipe.execute()


# KEYS: code set, epoch. ARGV: epoch read before the load, marker, ttl.
_MARK_CODE_SET_COMPLETE = """
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


def _mark_code_set_complete(client, epoch: str) -> bool:
    """Set the marker unless the set was marked incomplete since `epoch` was read."""
    done = client.eval(
        _MARK_CODE_SET_COMPLETE,
        2,
        CODE_SET_KEY,
        CODE_SET_EPOCH,
        epoch,
        ALIAS_SET_COMPLETE,
        settings.SHORTURL_CACHE_TTL,
    )
    return bool(done)


_aliases_loaded = {"at": -1e9}
# With Redis an alias created on any node makes every process of every node reload the set;
# between two reloads a process asks Redis's alias set instead (see _certainly_no_alias).
_ALIAS_RELOAD_SECONDS = 1.0


def _process_aliases(*, throttled: bool = False) -> frozenset[str] | None:
    """This process's copy of every alias, reloaded after any alias change; None when it is
    out of date and `throttled` holds its reload back for now."""
    aliases = process_cache.get(_ALIASES_GENERATION)
    if aliases is None:
        now = time.monotonic()
        if throttled and now - _aliases_loaded["at"] < _ALIAS_RELOAD_SECONDS:
            return None
        _aliases_loaded["at"] = now
        generation = generation_before_read(_ALIASES_GENERATION)
        aliases = frozenset(_alias_keys())
        process_cache.put(
            _ALIASES_GENERATION, aliases, ttl=settings.SHORTURL_CACHE_TTL, generation=generation
        )
    return aliases


def _certainly_no_alias(code: str) -> bool:
    """With trusted local entries: True when this process's alias set is current and lacks
    `code`, so an unknown alias-shaped code costs no round trip and no query."""
    aliases = _process_aliases(throttled=True)
    return aliases is not None and code not in aliases


# --- The node's code filter (code_filter) ----------------------------------------------------

# After a failed build (the database out of reach), the next try waits this long.
_FILTER_RETRY_SECONDS = 30.0
_filter_build: dict[str, float | bool] = {"next_try": 0.0, "built_since_start": False}


def _generated_code_count() -> int:
    return UrlLink.objects.exclude(code_type=CodeType.CUSTOM).count()


def _build_code_filter(meanwhile: Callable[[], object] | None = None) -> bool:
    """Build the node's code filter from the database; False when it could not (for now)."""
    if time.monotonic() < float(_filter_build["next_try"]):
        return False
    try:
        code_filter.build(_generated_codes, expected=_generated_code_count(), meanwhile=meanwhile)
    except DatabaseError as exc:
        _filter_build["next_try"] = time.monotonic() + _FILTER_RETRY_SECONDS
        logger.warning(
            "The code filter could not be built (%s); made-up codes are looked up as without "
            "it until it is",
            exc,
        )
        return False
    return True


def ensure_code_filter() -> bool:
    """Embedded mode, the node's runner: build the node's code filter when the runner starts
    in this process and again whenever it is incomplete, full or a day old. Returns True when
    it built it."""
    if not _filter_build["built_since_start"]:
        # Rows may have come while no runner ran (a database restored from a backup, links
        # created with another state dir): the old filter is not used until this build.
        code_filter.mark_incomplete()
    elif not code_filter.needs_build(max_age=settings.SHORTURL_CACHE_TTL):
        return False
    built = _build_code_filter()
    if built:
        _filter_build["built_since_start"] = True
    return built
