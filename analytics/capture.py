"""Visit hand-off from the redirect: one compact JSON record pushed onto a Redis list.

Nothing is parsed and nothing is written to the database here while Redis is up: the worker's
flush_visits (analytics.services) enriches and stores the records in batches. Without Redis
(embedded default) or while Redis is down, the visit is stored right away in-process instead,
so no click is ever lost and the redirect never fails because of analytics.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import time
import uuid

from django.conf import settings
from django.http import HttpRequest
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# Raw Redis keys (not behind the cache's KEY_PREFIX: the worker and a Lua script read them as is).
VISITS_KEY = "analytics:visits"  # list: JSON visit records, RPUSHed by redirects
PROCESSING_KEY = "analytics:visits:processing"  # list: the batch a flush is storing
ATTEMPTS_KEY = "analytics:visits:attempts"  # int: how often the processing batch was retried
DEAD_KEY = "analytics:visits:dead"  # list: records that could not be stored (kept for a human)
HOURS_KEY = "analytics:hours"  # set: "link_id:hour_epoch" pairs waiting for aggregation
AGGREGATING_KEY = "analytics:hours:aggregating"  # set: the pairs an aggregation is recomputing
FLUSH_LOCK_KEY = "analytics:lock:flush"
AGGREGATE_LOCK_KEY = "analytics:lock:aggregate"

# VisitRecord.user_agent / .referrer max_length; a test keeps them in step with the model.
MAX_USER_AGENT = 512
MAX_REFERRER = 1024
_WARN_EVERY = 60.0  # seconds between two "Redis is down" warnings
_last_warning = 0.0
# After a failed push, Redis is left alone this long: an unreachable (not refusing) server would
# otherwise cost every redirect its connect timeout.
_PAUSE_AFTER_ERROR = 5.0
_redis_paused_until = 0.0


def uses_redis() -> bool:
    """True when the cache is django-redis: then Redis also holds the visit buffer."""
    return settings.CACHES["default"]["BACKEND"].startswith("django_redis")


def redis_client():
    """The raw Redis client behind the default cache, or None without Redis."""
    if not uses_redis():
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default")


def client_ip(request: HttpRequest) -> str:
    """The visitor's address: X-Forwarded-For trusted only as far as NUM_PROXIES proxies go.

    Each trusted proxy appends the address it saw, so the client is the NUM_PROXIES-th entry
    from the right; anything left of it may have been written by the client and is ignored.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.NUM_PROXIES
    if proxies > 0:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        entries = [entry.strip() for entry in forwarded.split(",")] if forwarded else []
        if len(entries) >= proxies:
            try:
                return str(ipaddress.ip_address(entries[-proxies]))
            except ValueError:
                pass  # a proxy that writes something else: fall back to the socket
    return remote[:45]


def build_visit_record(request: HttpRequest, link) -> str:
    """The compact JSON record of one visit to `link` (a links.cache.LinkEntry). Pure: no I/O.

    Keys: e event id (idempotency key), l link id, c code, t UTC epoch seconds, i client IP,
    u User-Agent, r referrer.
    """
    meta = request.META
    record = {
        "e": uuid.uuid4().hex,
        "l": link.link_id,
        "c": link.code,
        "t": round(time.time(), 3),
        "i": client_ip(request),
        "u": meta.get("HTTP_USER_AGENT", "")[:MAX_USER_AGENT],
        "r": meta.get("HTTP_REFERER", "")[:MAX_REFERRER],
    }
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def _warn_redis_down(exc: Exception) -> None:
    global _last_warning
    now = time.monotonic()
    if now - _last_warning >= _WARN_EVERY:
        _last_warning = now
        logger.warning(
            "Redis is unreachable (%s): visits are stored directly in the database until it is "
            "back (this warning repeats at most once a minute)",
            exc,
        )


def _store_now(record: str) -> None:
    from . import services

    try:
        services.store_visits(records=[record])
    except Exception:
        # The redirect has been decided already; a failed analytics write must not turn it into
        # an error page. The visit is lost, and the log says so.
        logger.exception("A visit could not be stored: %s", record)


def push_failed(record: str, exc: Exception) -> None:
    """Keep a record whose push raised (Redis down): stored directly, Redis paused for a while.

    For a redirect that pushes the record itself (e.g. fused with its cache read in one Lua
    call) and must fall back exactly as record_visit does.
    """
    global _redis_paused_until
    _redis_paused_until = time.monotonic() + _PAUSE_AFTER_ERROR
    _warn_redis_down(exc)
    _store_now(record)


def redis_paused() -> bool:
    """True for a few seconds after a failed push: store directly instead of trying Redis."""
    return time.monotonic() < _redis_paused_until


def record_visit(request: HttpRequest, link) -> None:
    """Keep one click on `link` (a links.cache.LinkEntry); must never slow or fail the redirect."""
    record = build_visit_record(request, link)
    if not uses_redis() or redis_paused():
        _store_now(record)  # embedded default: no worker, so stored (and counted) in-process
        return
    try:
        redis_client().rpush(VISITS_KEY, record)  # the only I/O of the hand-off: one round trip
    except RedisError as exc:
        push_failed(record, exc)
