"""Visit hand-off from the redirect: one compact JSON record pushed onto a Redis list.

Nothing is parsed and nothing is written to the database here while Redis is up: the worker's
flush_visits (analytics.services) enriches and stores the records in batches. Without Redis
(embedded default) the record is appended to this process's spool file instead (analytics.spool)
and the node's background runner stores it; while a configured Redis is down, the visit is
stored right away in-process. No click is lost and the redirect never fails because of
analytics.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Mapping

from redis.exceptions import RedisError

from shorturl_project.client_ip import client_ip
from shorturl_project.redis_conn import (  # noqa: F401 - redis_client/uses_redis re-exported
    live_redis_client,
    redis_client,
    redis_failed,
    uses_redis,
)

from . import spool

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


def new_event_id() -> str:
    """The visit's idempotency key, chosen once per click by the redirect."""
    return uuid.uuid4().hex


def _visit_fields(meta: Mapping[str, str], code: str, event_id: str) -> dict:
    return {
        "e": event_id,
        "c": code,
        "t": round(time.time(), 3),
        "i": client_ip(meta),
        "u": meta.get("HTTP_USER_AGENT", "")[:MAX_USER_AGENT],
        "r": meta.get("HTTP_REFERER", "")[:MAX_REFERRER],
    }


def build_visit_record(meta: Mapping[str, str], link, *, event_id: str | None = None) -> str:
    """The compact JSON record of one visit to `link` (a links.cache.LinkEntry). Pure: no I/O.

    Keys: l link id, e event id (idempotency key), c code, t UTC epoch seconds, i client IP,
    u User-Agent, r referrer.
    """
    fields = _visit_fields(meta, link.code, event_id or new_event_id())
    return json.dumps({"l": link.link_id, **fields}, separators=(",", ":"), ensure_ascii=False)


def visit_record_body(meta: Mapping[str, str], code: str, event_id: str) -> str:
    """build_visit_record without `{"l":<id>,` — for the redirect's Lua call, which knows the
    link id only once it has read the cache entry, and prefixes it there."""
    fields = _visit_fields(meta, code, event_id)
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False)[1:]


def _store_now(record: str) -> None:
    from . import services

    try:
        services.store_visits(records=[record])
    except Exception:
        # The redirect has been decided already; a failed analytics write must not turn it into
        # an error page. The visit is lost, and the log says so.
        logger.exception("A visit could not be stored: %s", record)


def push_failed(record: str, exc: Exception) -> None:
    """Keep a record whose push raised (Redis down): stored directly, Redis paused for a while."""
    redis_failed(exc, consequence="visits are stored directly in the database")
    _store_now(record)


def record_visit(meta: Mapping[str, str], link, *, event_id: str | None = None) -> None:
    """Keep one click on `link` (a links.cache.LinkEntry); must never slow or fail the redirect.

    `meta` is the WSGI environ (request.META). Pass the `event_id` a failed fused push already
    used: if that push did land after all, the flush sees the same id and keeps one visit.
    """
    record = build_visit_record(meta, link, event_id=event_id)
    if not uses_redis():
        try:
            spool.append(record)  # embedded default: the node's runner stores it
        except OSError:
            logger.exception("The visit spool cannot be written; storing the visit directly")
            _store_now(record)
        return
    client = live_redis_client()
    if client is None:
        _store_now(record)  # Redis paused after a failure
        return
    try:
        client.rpush(VISITS_KEY, record)  # the only I/O of the hand-off: one round trip
    except RedisError as exc:
        push_failed(record, exc)
