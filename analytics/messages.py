"""A visit on its way to the database: the compact JSON message the redirect hands off.

One vocabulary from the redirect to the model: a decoded message has VisitRecord's field names
(event_id, link_id, code, visit_time, client_ip, user_agent, referrer, channel). On the wire each
field has a one-letter key (WIRE_KEYS) to keep the Redis buffer and the spool small.

`channel` is on the wire only for a QR scan (`"q":"qr"`): a message without it is a click on the
short link, which is also what every message spooled or buffered before QR scans were told
apart says. `destination` likewise is there only when a link's rule or variant sent the visitor
somewhere else than its long URL (`"d":"https://…"`); absent, as in every older message, the
visitor went to the long URL. `link_state` (`"s":"expired"`) is there only for a visit of a
stopped link that was sent to its fallback (UrlLink.expired_url or the domain's
expired_redirect) instead of the 410 page; such a visit always has its destination too.
`do_not_track` (`"p":"gpc"` or `"p":"dnt"`) is there only when the browser asked not to be
tracked: the flush then stores the click without its details (analytics.services.privacy).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from json.encoder import encode_basestring as _json_string

from core.channels import CHANNELS, LINK, QR, is_qr_scan
from core.client_ip import canonical_ip, client_ip
from links.models import FALLBACK_STATES

# VisitRecord's max_lengths (client_ip's is client_ip.MAX_IP_LENGTH); a test keeps them in step
# with the model.
MAX_EVENT_ID = 32
MAX_CODE = 32
MAX_USER_AGENT = 512
MAX_REFERRER = 1024
MAX_DESTINATION = 2048  # SHORTURL_MAX_URL_LENGTH's default: a rule's or variant's Location

WIRE_KEYS = {
    "event_id": "e",  # the idempotency key, chosen once per click
    "link_id": "l",
    "code": "c",
    "visit_time": "t",  # UTC epoch seconds, ms precision
    "client_ip": "i",
    "user_agent": "u",
    "referrer": "r",
    "channel": "q",  # core.channels; absent: the short link
    "destination": "d",  # a rule's or variant's location (serving/gates.py); absent: the long URL
    "link_state": "s",  # sent to the link's fallback: its state (serving/redirect.py); absent: ""
    "do_not_track": "p",  # "gpc" (Sec-GPC: 1) or "dnt" (DNT: 1); absent: the browser asked neither
}
# The states a visit sent to a fallback notes, as plain text (a message's "s").
_FALLBACK_STATES = frozenset(status.value for status in FALLBACK_STATES)
# The channel's part of a QR scan's message, written once.
_QR_SCAN = f',"q":{_json_string(QR)}'
# A browser's request not to be tracked, as the message says it (the flush decides: Sec-GPC is
# always honoured, DNT when ANALYTICS_HONOUR_DNT says so).
GPC, DNT = "gpc", "dnt"
_GPC = f',"p":{_json_string(GPC)}'
_DNT = f',"p":{_json_string(DNT)}'


def _wire_body(meta: Mapping[str, str], code: str, event_id: str) -> str:
    """The message after its link id: `"e":…,"c":…,"t":…,"i":…,"u":…,"r":…}`, with `,"q":"qr"`
    before the brace for a QR scan.

    Written out field by field with the json module's own string escaping: the same text as
    json.dumps of the dict (a test holds them equal) in ~2 µs instead of ~5 on the redirect.
    """
    query_string = meta.get("QUERY_STRING")  # the QR marker is looked for only when there is one
    return (
        f'"e":{_json_string(event_id)},"c":{_json_string(code)},'
        f'"t":{round(time.time(), 3)!r},"i":{_json_string(client_ip(meta))},'
        f'"u":{_json_string(meta.get("HTTP_USER_AGENT", "")[:MAX_USER_AGENT])},'
        f'"r":{_json_string(meta.get("HTTP_REFERER", "")[:MAX_REFERRER])}'
        f"{_QR_SCAN if query_string and is_qr_scan(query_string) else ''}"
        f"{_do_not_track(meta) if 'HTTP_SEC_GPC' in meta or 'HTTP_DNT' in meta else ''}}}"
    )


def _do_not_track(meta: Mapping[str, str]) -> str:
    if meta.get("HTTP_SEC_GPC", "").strip() == "1":
        return _GPC
    return _DNT if meta.get("HTTP_DNT", "").strip() == "1" else ""


def encode_visit(meta: Mapping[str, str], entry, *, event_id: str) -> str:
    """The message for one visit to the link of `entry` (a links.cache.LinkEntry). Pure.

    `meta` is the WSGI environ (request.META): client IP, User-Agent and referrer come from it.
    """
    body = _wire_body(meta, entry.code, event_id)
    if entry.destination:  # gated links only (links/gates.destination); plain ones pay a test
        body = f'{body[:-1]},"d":{_json_string(entry.destination[:MAX_DESTINATION])}}}'
        if entry.link_state:  # a stopped link's fallback (serving/redirect.py)
            body = f'{body[:-1]},"s":{_json_string(entry.link_state)}}}'
    return f'{{"l":{int(entry.link_id)},' + body


def encode_visit_without_link(meta: Mapping[str, str], code: str, event_id: str) -> str:
    """encode_visit without its opening `{"l":<id>,`: for the redirect's Lua call, which learns
    the link id only when it reads the cache entry, and prefixes it there."""
    return _wire_body(meta, code, event_id)


def decode_visit(message: bytes | str | dict) -> dict | None:
    """A message as a dict of VisitRecord field names, or None when it is malformed."""
    try:
        data = json.loads(message) if isinstance(message, bytes | str) else message
    except (ValueError, TypeError):
        return None
    return _visit_fields(data)


def decode_visits(messages: Sequence[bytes | str | dict]) -> list[dict | None]:
    """decode_visit of each message in a batch, in order.

    One json.loads of the whole batch as an array (~1 µs a visit against ~3 µs for a call per
    message, a twentieth of a flush's work); a batch that does not parse as exactly one value
    per message, which a malformed message causes, is decoded one message at a time instead.
    """
    kind = type(messages[0]) if messages else None
    if kind in (bytes, str) and all(type(message) is kind for message in messages):
        comma, brackets = (b",", b"[]") if kind is bytes else (",", "[]")
        try:
            values = json.loads(brackets[:1] + comma.join(messages) + brackets[1:])
        except ValueError:
            values = None
        if isinstance(values, list) and len(values) == len(messages):
            return [_visit_fields(data) for data in values]
    return [decode_visit(message) for message in messages]


# What every column and the roll-up's hour arithmetic take on each supported database (BIGINT
# link ids; MySQL's DATETIME ends at 9999): anything else in a message is no visit.
MAX_LINK_ID = 2**63 - 1
EARLIEST_VISIT = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_VISIT = datetime(9999, 1, 1, tzinfo=UTC)


def _text(value, limit: int) -> str:
    """`value` as text its column takes: at most `limit` characters (the columns count
    characters), no lone surrogates (a JSON escape like "\\ud800" decodes to one, and no
    database encoding takes it)."""
    text = str(value)[:limit]
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _visit_fields(data) -> dict | None:
    """The visit's fields, each checked or cut to what its VisitRecord column takes, so that
    one forged or garbled message can never fail the INSERT of its whole batch; None when a
    field cannot be made to fit (no link id, no event id, an impossible time)."""
    try:
        wire = data.get  # the keys are WIRE_KEYS' (spelt out: a worker decodes ~15,000 a second)
        event_id, link_id = wire("e"), int(wire("l"))
        visit_time = datetime.fromtimestamp(float(wire("t")), tz=UTC)
    except (ValueError, KeyError, TypeError, OverflowError, AttributeError, OSError):
        return None
    if (
        not event_id
        or not 0 < link_id <= MAX_LINK_ID
        or not EARLIEST_VISIT <= visit_time < LATEST_VISIT
    ):
        return None
    visit = {
        "event_id": _text(event_id, MAX_EVENT_ID),
        "link_id": link_id,
        "code": _text(wire("c"), MAX_CODE),
        "visit_time": visit_time,
        "client_ip": canonical_ip(str(wire("i") or "")),
        "user_agent": _text(wire("u") or "", MAX_USER_AGENT),
        "referrer": _text(wire("r") or "", MAX_REFERRER),
        # Anything but a known channel (absent in older messages) is the short link.
        "channel": channel if (channel := wire("q")) in CHANNELS else LINK,
        "destination": _text(wire("d") or "", MAX_DESTINATION),
        # Anything but a known state (absent in older messages) is a visit the link served.
        "link_state": state if (state := wire("s")) in _FALLBACK_STATES else "",
    }
    # The one field that is no column: it says how to store the others, so only when it is sent.
    if (signal := wire("p")) in (GPC, DNT):
        visit["do_not_track"] = signal
    return visit
