"""A visit on its way to the database: the compact JSON message the redirect hands off.

One vocabulary from the redirect to the model: a decoded message has VisitRecord's field names
(event_id, link_id, code, visit_time, client_ip, user_agent, referrer). On the wire each field
has a one-letter key (WIRE_KEYS) to keep the Redis buffer and the spool small.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from shorturl_project.client_ip import client_ip

# VisitRecord.user_agent / .referrer max_length; a test keeps them in step with the model.
MAX_USER_AGENT = 512
MAX_REFERRER = 1024

WIRE_KEYS = {
    "event_id": "e",  # the idempotency key, chosen once per click
    "link_id": "l",
    "code": "c",
    "visit_time": "t",  # UTC epoch seconds, ms precision
    "client_ip": "i",
    "user_agent": "u",
    "referrer": "r",
}
# One encoder for every message: json.dumps with options builds a new one per call (~3x slower).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _wire_fields(meta: Mapping[str, str], code: str, event_id: str) -> dict:
    return {
        WIRE_KEYS["event_id"]: event_id,
        WIRE_KEYS["code"]: code,
        WIRE_KEYS["visit_time"]: round(time.time(), 3),
        WIRE_KEYS["client_ip"]: client_ip(meta),
        WIRE_KEYS["user_agent"]: meta.get("HTTP_USER_AGENT", "")[:MAX_USER_AGENT],
        WIRE_KEYS["referrer"]: meta.get("HTTP_REFERER", "")[:MAX_REFERRER],
    }


def encode_visit(meta: Mapping[str, str], entry, *, event_id: str) -> str:
    """The message for one visit to the link of `entry` (a links.cache.LinkEntry). Pure.

    `meta` is the WSGI environ (request.META): client IP, User-Agent and referrer come from it.
    """
    fields = _wire_fields(meta, entry.code, event_id)
    return _ENCODER.encode({WIRE_KEYS["link_id"]: entry.link_id, **fields})


def encode_visit_without_link(meta: Mapping[str, str], code: str, event_id: str) -> str:
    """encode_visit without its opening `{"l":<id>,`: for the redirect's Lua call, which learns
    the link id only when it reads the cache entry, and prefixes it there."""
    return _ENCODER.encode(_wire_fields(meta, code, event_id))[1:]


def decode_visit(message: bytes | str | dict) -> dict | None:
    """A message as a dict of VisitRecord field names, or None when it is malformed."""
    try:
        data = json.loads(message) if isinstance(message, bytes | str) else message
        wire = data.get  # the keys are WIRE_KEYS' (spelt out: a worker decodes ~10,000 a second)
        return {
            "event_id": str(wire("e"))[:32],
            "link_id": int(wire("l")),
            "code": str(wire("c"))[:32],
            "visit_time": datetime.fromtimestamp(float(wire("t")), tz=UTC),
            "client_ip": str(wire("i") or ""),
            "user_agent": str(wire("u") or "")[:MAX_USER_AGENT],
            "referrer": str(wire("r") or "")[:MAX_REFERRER],
        }
    except (ValueError, KeyError, TypeError, OverflowError, AttributeError):
        return None
