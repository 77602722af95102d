"""Visit hand-off from the redirect: the message goes where the stored visit will come from.

Nothing is parsed and nothing is written to the database here. A redirect answered from the
process's own link cache appends the message to this process's spool file (analytics.spool):
without Redis (embedded mode) the node's background runner stores it; with Redis the runner
forwards it to the buffer (analytics.buffer) in batches (forward_spooled_visits) and the worker
stores it. A redirect that asked Redis for its link pushed the visit in that same call. Should
the spool not be writable the message is RPUSHed, and should that fail too it is stored right
away in-process. No click is lost and the redirect never fails because of analytics.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from redis.exceptions import RedisError

from analytics import services, spool

# A capped link's bots use up none of its visits (serving.gates).
from analytics.bots import detect_bot as detect_bot

# A link with a social preview answers preview fetchers with its page (serving.gates).
from analytics.bots import is_link_preview as is_link_preview
from analytics.buffer import VISITS_KEY

# Services mode, the node's runner: spooled visits onto the Redis buffer (analytics.forward: a
# module of its own, so that a service may forward them too without importing this one).
from analytics.forward import forward_spooled_visits as forward_spooled_visits
from analytics.messages import MAX_USER_AGENT, encode_visit, encode_visit_without_link

# Requests that reached no link, counted in memory (the 404 path does no I/O for them).
from analytics.orphans import OrphanKind as OrphanKind
from analytics.orphans import note_orphan as note_orphan

# The redirect drops the QR code's marker from the query string it passes on; the message of
# such a visit says it came through the QR code (analytics.messages).
from core.channels import QR_MARKER as QR_MARKER
from core.channels import without_qr_marker as without_qr_marker
from core.node_state import local_redirects
from core.redis_conn import live_redis_client, redis_failed, uses_redis

logger = logging.getLogger(__name__)


# What serving/gates.py asks of a visitor for rules and variants, computed as the enrichment does
# (links use analytics through this module only). Imported on first use: the parsers load their
# tables then, and a process serving plain links never does.


def visitor_agent(user_agent: str):
    """analytics.enrich.parse_user_agent (cached per User-Agent): device_type, os_type, …"""
    from analytics.enrich import parse_user_agent

    return parse_user_agent(user_agent[:MAX_USER_AGENT])


def visitor_place(ip: str) -> tuple[str, str]:
    """(ISO country code, city) of an address, from the enrichment's GeoIP reader: the city as
    the stats name it (GEOIP_LANGUAGE, else English); "" for what is unknown."""
    from analytics.enrich import geo_lookup

    if not ip:
        return "", ""
    place = geo_lookup(ip)
    return place.country_code, place.city


def visitor_client_id(ip: str, user_agent: str) -> str:
    """The client id the stored visit will have (analytics.enrich.client_id): people are
    counted by it, so a variant chosen by it is one variant per person in the stats."""
    from django.conf import settings

    from analytics.enrich import client_id

    return client_id(
        ip,
        user_agent[:MAX_USER_AGENT],
        anonymize=settings.ANONYMIZE_IP,
        key=settings.SECRET_KEY,
    )


def new_event_id() -> str:
    """The visit's idempotency key, chosen once per click by the redirect: 128 random bits as
    32 hex digits (what uuid4().hex gave, at a sixth of its cost on the hot path)."""
    return os.urandom(16).hex()


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
    if local_redirects():
        try:
            spool.append(message)  # the node's runner stores or forwards it
            return
        except OSError:
            logger.exception("The visit spool cannot be written; handing the visit on directly")
    if not uses_redis():
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
