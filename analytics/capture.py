"""Visit hand-off from the redirect: the message goes where the stored visit will come from.

Nothing is parsed and nothing is written to the database here while Redis is up: the message is
RPUSHed onto the buffer (analytics.buffer) and the worker stores it. Without Redis (embedded
mode) it is appended to this process's spool file (analytics.spool) and the node's background
runner stores it; while a configured Redis is down, it is stored right away in-process. No click
is lost and the redirect never fails because of analytics.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping

from redis.exceptions import RedisError

from shorturl_project.redis_conn import live_redis_client, redis_failed, uses_redis

from . import services, spool
from .buffer import VISITS_KEY
from .messages import encode_visit, encode_visit_without_link

logger = logging.getLogger(__name__)


def new_event_id() -> str:
    """The visit's idempotency key, chosen once per click by the redirect."""
    return uuid.uuid4().hex


def fused_push(meta: Mapping[str, str], code: str, event_id: str) -> tuple[str, str]:
    """(buffer key, message without its link id) for a redirect that reads its cache entry and
    pushes the visit in one Lua call; the script prefixes the link id it reads."""
    return VISITS_KEY, encode_visit_without_link(meta, code, event_id)


def _store_now(message: str) -> None:
    try:
        services.store_visits(messages=[message])
    except Exception:
        # The redirect has been decided already; a failed analytics write must not turn it into
        # an error page. The visit is lost, and the log says so.
        logger.exception("A visit could not be stored: %s", message)


def push_failed(message: str, exc: Exception) -> None:
    """Keep a message whose push raised (Redis down): stored directly, Redis paused a while."""
    redis_failed(exc, consequence="visits are stored directly in the database")
    _store_now(message)


def record_visit(meta: Mapping[str, str], entry, *, event_id: str | None = None) -> None:
    """Keep one click on the link of `entry` (a links.cache.LinkEntry); must never slow or fail
    the redirect.

    `meta` is the WSGI environ (request.META). Pass the `event_id` a failed fused push already
    used: if that push did land after all, the flush sees the same id and keeps one visit.
    """
    message = encode_visit(meta, entry, event_id=event_id or new_event_id())
    if not uses_redis():
        try:
            spool.append(message)  # embedded default: the node's runner stores it
        except OSError:
            logger.exception("The visit spool cannot be written; storing the visit directly")
            _store_now(message)
        return
    client = live_redis_client()
    if client is None:
        _store_now(message)  # Redis paused after a failure
        return
    try:
        client.rpush(VISITS_KEY, message)  # the only I/O of the hand-off: one round trip
    except RedisError as exc:
        push_failed(message, exc)
