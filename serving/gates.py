"""The redirect of a gated link: one with a password, a visit cap, rules, variants, a social
preview, an app deep link, conversion tracking, or a failover under way (a broken destination
with a fallback_url).

Plain links never come here: their redirect is the fused read-and-count of serving/redirect.py.
A gated link's cache entry carries everything needed (LinkEntry: the password's hash, the cap,
the rules and variants with their locations), so deciding costs no database query; its visit
is recorded here, once the click is known to go through and where it goes.

The order, for a GET (HEAD is answered the same way and never counted):
0. a link with a social preview asked for by a link-preview fetcher (analytics.bots:
   is_link_preview) → 200 and the preview page (PREVIEW), counted as that bot's visit; its 410
   first when its visit cap is used up;
1. a password the visitor has not given → the unlock page (UNLOCK: Django's view answers it
   with its form; nothing is counted), unless the link's visit cap is used up already: then
   its 410 first (looked at, nothing taken), so nobody types a password for a dead link;
2. a visit cap reached → 410 (people's clicks use it up), or a 302 to the link's fallback
   (serving/fallback.py: counted, noted limit_reached, taking nothing from the cap); while
   visits are left, a click that would not use one (a bot's, a HEAD) → 403 and a page that
   names no destination (HELD): a cap protects a limited offer, so only the people it counts
   are sent on;
3. the destination: the link's failover URL while its destination is broken (links.services.
   health), else the first rule whose every condition matches, else the link's app deep
   link for the visitor's OS (ios_url on iOS and iPadOS, android_url on Android), else a
   variant picked for this visitor, else the long URL;
4. the visit, with the destination it got; for a link that tracks conversions, the visit's
   event id goes on to a web destination as the click id (CLICK_ID, with_click_id).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import ipaddress
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from urllib.parse import parse_qsl

from analytics.capture import (
    detect_bot,
    is_link_preview,
    record_visit,
    visitor_agent,
    visitor_client_id,
    visitor_place,
)
from core.client_ip import client_ip
from links import visit_caps
from links.cache import LinkEntry
from links.models import CLICK_ID_PARAM, LinkStatus
from links.services.targeting import DEVICES, accept_language, os_name
from serving import fallback

UNLOCK = 200  # the password form, answered by Django's view (CSRF, templates), not counted

# The WSGI environ key serving/unlock.py sets, to the link's password hash, once the password the
# request carries (form or X-Link-Password) has been checked. A header cannot set it: headers
# arrive as HTTP_* keys. The hash, not True: a password changed meanwhile is not unlocked.
UNLOCKED = "shorturl.unlocked"
# Set in the environ when the click is refused because the cap is used up: the 410 page then
# says so (serving.redirect.page_for), rather than "expired or switched off".
CAP_REACHED = "shorturl.cap_reached"
# A capped link asked for by a bot (link checker, preview fetcher, curl) or with HEAD while
# visits are left. These take no visit (a mail scanner must not use up a limited offer), so
# they are not sent on either: with the Location, any script could follow a capped link as often
# as it liked, and the offer's URL would leak past its cap. Forbidden, with its own page.
HELD = 403
# A link with a social preview (LinkEntry.preview) asked for by a link-preview fetcher: 200 and
# the preview page (serving.previews), no destination named. decide answers it with no entry
# (UNLOCK, also 200, always has one) and the entry in the environ under PREVIEW_OF; page_for
# then picks the preview page. The fetch is recorded as a visit: the bot's, never a click.
PREVIEW = 200
PREVIEW_OF = "shorturl.preview_of"
# Set in the environ, to the click's id (its event id), when decide sends a click of a link that
# tracks conversions to a web location: the Location gets it (with_click_id, from
# serving.redirect.redirect_location_for and the fast path's inlined copy). A key in the environ
# rather than a new entry with that location: building one costs ~15 µs a click.
CLICK_ID = "shorturl.click_id"


def needs_password(entry: LinkEntry, meta: Mapping[str, str]) -> bool:
    """The link has a password and this request does not carry it (checked).

    The check itself (~0.3 s of PBKDF2, after the per-client throttle) is serving/unlock.py's,
    in Django's view: every request to a password-protected link goes there, the fast path
    hands it on (UNLOCK), and the view decides again with UNLOCKED set.
    """
    return meta.get(UNLOCKED) != entry.password_hash


@functools.lru_cache(maxsize=4096)
def _is_bot_agent(user_agent: str) -> bool:
    # ~38 µs per detection, on every click of a capped link: a crowd's few thousand distinct
    # User-Agents are worked out once per process (~4096 × 200 bytes at most).
    return detect_bot(user_agent) is not None


def _is_bot(meta: Mapping[str, str]) -> bool:
    return _is_bot_agent(meta.get("HTTP_USER_AGENT", ""))


# Asked only for links with a social preview; per distinct User-Agent, as _is_bot_agent.
_is_preview_agent = functools.lru_cache(maxsize=4096)(is_link_preview)


def cap_reached(entry: LinkEntry, meta: Mapping[str, str], *, counted: bool) -> bool:
    """The link's visit cap is used up (taking one of its visits when this click counts: a
    person's GET, as decide tells).

    links/visit_caps.py keeps the count where the redirect is (Redis, or the node's files in
    the embedded mode) and takes atomically there: however many clicks race, exactly
    max_visits people get through. Bots, and HEAD requests, look without taking one (decide
    then holds them back: HELD).
    """
    reached = not visit_caps.take(entry.link_id, entry.max_visits, counted=counted)
    if reached:
        # The environ is the WSGI server's dict: adding a key to it is how WSGI layers talk.
        meta[CAP_REACHED] = "1"  # type: ignore[index]
    return reached


class _Visitor:
    """What rules ask of one request, each worked out on first use: a link whose rules name only
    countries never parses the User-Agent, one with only variants never looks up the address,
    one whose rules ask for a query parameter parses the query string once, if there is one."""

    __slots__ = (
        "_address",
        "_address_read",
        "_agent",
        "_city",
        "_country",
        "_meta",
        "_now",
        "_params",
    )

    def __init__(self, meta: Mapping[str, str]) -> None:
        self._meta = meta
        self._agent = None
        self._country: str | None = None
        self._city: str | None = None
        self._address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
        self._address_read = False
        self._params: dict[str, list[str]] | None = None
        self._now: float | None = None

    def _user_agent(self):
        if self._agent is None:
            # The enrichment's own parser (cached per User-Agent), so a rule and the stats call
            # a device the same.
            self._agent = visitor_agent(self._meta.get("HTTP_USER_AGENT", ""))
        return self._agent

    def _ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        if not self._address_read:
            # The address the visit is stored with (X-Forwarded-For only as far as NUM_PROXIES
            # proxies go), an IPv4 client of a dual-stack socket as IPv4.
            self._address = _address(client_ip(self._meta))
            self._address_read = True
        return self._address

    def os(self) -> str:
        """The visitor's OS as rules name it (targeting.OS_NAMES: "iOS" for iPadOS too)."""
        return os_name(self._user_agent().os_type)

    def _query(self) -> dict[str, list[str]]:
        if self._params is None:
            self._params = _query_params(self._meta.get("QUERY_STRING", ""))
        return self._params

    def matches(self, key: str, wanted) -> bool:
        """Whether this visitor meets one stored condition (links.services.targeting's
        spellings). A condition this code does not know never matches."""
        if key == "after" or key == "before":
            if self._now is None:
                self._now = time.time()
            moment = _epoch(wanted)
            return self._now > moment if key == "after" else self._now < moment
        if key == "query":
            params = self._query()
            for name, value in wanted.items():
                given = params.get(name)
                if given is None or (value is not None and value not in given):
                    return False
            return True
        if key == "language":
            return accept_language(self._meta.get("HTTP_ACCEPT_LANGUAGE", "")) == wanted
        if key == "device":
            return self._user_agent().device_type == DEVICES.get(wanted)
        if key == "os":
            return self.os() == wanted
        if key == "ip":
            address = self._ip()
            return address is not None and address in _network(wanted)
        if key == "country":
            return self._place()[0] == wanted
        if key == "city":
            return self._place()[1] == wanted.casefold()  # the stats' name, in any case
        return False

    def _place(self) -> tuple[str, str]:
        if self._country is None or self._city is None:
            # The enrichment's GeoIP lookup: an in-process mmdb read, cached per address; one
            # for both the country and the city.
            country, city = visitor_place(client_ip(self._meta))
            self._country, self._city = country, city.casefold()
        return self._country, self._city


# The cheap conditions first: a rule that fails on its dates or query costs no User-Agent parse
# and no GeoIP read.
_MATCH_ORDER = ("after", "before", "query", "language", "ip", "device", "os", "country", "city")
# What a cached rule may hold. A rule with anything else (a condition of a newer version, read by
# this process during an upgrade) never matches: better the long URL than a rule half checked.
_KNOWN_KEYS = frozenset((*_MATCH_ORDER, "location"))


@functools.lru_cache(maxsize=1024)
def _epoch(moment: str) -> float:
    return datetime.fromisoformat(moment).timestamp()


@functools.lru_cache(maxsize=1024)
def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(text, strict=False)


@functools.lru_cache(maxsize=4096)
def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if not text:
        return None
    address = ipaddress.ip_address(text)  # client_ip gives canonical addresses only
    mapped = address.ipv4_mapped if address.version == 6 else None
    return mapped or address


def _query_params(query_string: str) -> dict[str, list[str]]:
    """The visitor's query parameters, decoded as a query string is ("+" and %20 a space), with
    every value each name has ("" for `?debug` and `?debug=`). The QR code's `qr=1` marker is
    among them: a rule may send the people who scanned the code elsewhere."""
    if not query_string:
        return {}
    if not query_string.isascii():
        # WSGI hands the raw bytes over as latin-1 (PEP 3333); browsers send UTF-8.
        with contextlib.suppress(UnicodeError):
            query_string = query_string.encode("latin-1").decode("utf-8")
    params: dict[str, list[str]] = {}
    for name, value in parse_qsl(query_string, keep_blank_values=True):
        params.setdefault(name, []).append(value)
    return params


def _matches(rule: dict, visitor: _Visitor) -> bool:
    if not _KNOWN_KEYS.issuperset(rule):
        return False
    for key in _MATCH_ORDER:
        wanted = rule.get(key)
        if wanted is not None and not visitor.matches(key, wanted):
            return False
    return True


def variant_bucket(link_id: int, meta: Mapping[str, str]) -> int:
    """0–99, the same for one visitor of one link in every process and on every node: from the
    visitor's client id as the stats count people (analytics.enrich.client_id of the address and
    User-Agent), hashed with the link so that one visitor's variants of two links are unrelated.
    SHA-1, not hash(): Python salts that per process."""
    visitor = visitor_client_id(client_ip(meta), meta.get("HTTP_USER_AGENT", ""))
    digest = hashlib.sha1(f"{link_id}&{visitor}".encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big") % 100


def _app_location(entry: LinkEntry, visitor: _Visitor) -> str:
    """The link's app deep link for this visitor's OS, "" for none (or another OS)."""
    system = visitor.os()
    if system == "iOS":
        return entry.ios_location
    if system == "Android":
        return entry.android_location
    return ""


def destination(entry: LinkEntry, meta: Mapping[str, str]) -> LinkEntry:
    """`entry` with the location this visitor goes to (the failover while the link's destination
    is broken, else a rule's, the app link for their OS, a variant's, or its own)."""
    if entry.failover:
        # links.services.health: a broken destination's visitors go to the link's fallback_url,
        # whatever rule or variant would have sent them to it; the visit records where.
        return replace(entry, location=entry.failover, destination=entry.failover)
    apps = entry.ios_location or entry.android_location
    if not entry.rules and not entry.variants and not apps:
        return entry
    if entry.rules or apps:
        visitor = _Visitor(meta)  # works nothing out until a condition asks
    for rule in entry.rules:
        if _matches(rule, visitor):
            location = rule["location"]
            return replace(entry, location=location, destination=location)
    if apps:
        location = _app_location(entry, visitor)
        if location:
            # The visitor's query string goes on to a universal link as to any web page; an
            # app's own scheme, mailto: or tel: gets the link as the marketer wrote it.
            web = location.startswith(("https:", "http:"))
            return replace(
                entry,
                location=location,
                destination=location,
                pass_query=entry.pass_query and web,
            )
    if entry.variants:
        bucket = variant_bucket(entry.link_id, meta)
        for location, weight in entry.variants:
            bucket -= weight
            if bucket < 0:
                return replace(entry, location=location, destination=location)
        # Weights add up to 100 (links.services.targeting): not reached; the last one if so.
        location = entry.variants[-1][0]
        return replace(entry, location=location, destination=location)
    return entry


def _limit_reached(
    entry: LinkEntry, meta: Mapping[str, str], *, event_id: str, counted: bool
) -> tuple[int, LinkEntry | None]:
    """410 for a link whose cap is used up, or a 302 to its fallback (serving/fallback.py): that
    visit is counted as the link's, noted limit_reached, and takes nothing from the cap."""
    return fallback.stopped(
        entry, meta, LinkStatus.LIMIT_REACHED, event_id=event_id, counted=counted
    )


def decide(
    entry: LinkEntry, meta: Mapping[str, str], *, event_id: str, counted: bool
) -> tuple[int, LinkEntry | None]:
    """(status, entry to redirect to) for an active gated link, as serving.redirect.resolve."""
    if entry.preview and _is_preview_agent(meta.get("HTTP_USER_AGENT", "")):
        # A preview fetcher gets the preview page before any password or cap: it names no
        # destination. A link whose visits are used up answers 410 to fetchers too.
        if entry.max_visits and cap_reached(entry, meta, counted=False):
            return 410, None
        meta[PREVIEW_OF] = entry  # type: ignore[index]  # the environ, as CAP_REACHED
        if counted:
            record_visit(meta, entry, event_id=event_id)
        return PREVIEW, None
    if entry.password_hash and needs_password(entry, meta):
        # The limit is told before the password is asked for (a look: no visit is taken).
        if entry.max_visits and cap_reached(entry, meta, counted=False):
            return _limit_reached(entry, meta, event_id=event_id, counted=counted)
        return UNLOCK, entry
    if entry.max_visits:
        taking = counted and not _is_bot(meta)
        if cap_reached(entry, meta, counted=taking):
            return _limit_reached(entry, meta, event_id=event_id, counted=counted)
        if not taking:
            return HELD, None
    chosen = destination(entry, meta)
    if counted:
        record_visit(meta, chosen, event_id=event_id)
        # A web location only: an app's own scheme, mailto: or tel: gets the link as the
        # marketer wrote it. Only for a counted click (a GET): a HEAD stores no visit, so its id
        # would name no click.
        if entry.track_conversions and chosen.location.startswith(("https:", "http:")):
            meta[CLICK_ID] = event_id  # type: ignore[index]  # the environ, as CAP_REACHED
    return chosen.redirect_type, chosen


def with_click_id(location: str, click_id: str) -> str:
    """`location` with the click's id (CLICK_ID_PARAM=click_id) in its query, before its
    fragment, for a link that tracks conversions: the landing page hands it back with a lead
    (analytics.services.conversions). The visitor's query string is added after it, and its own
    CLICK_ID_PARAM, if any, is dropped there (the location's keys win): nobody picks a click's
    id."""
    rest, hash_mark, fragment = location.partition("#")
    joiner = "&" if "?" in rest else "?"
    if rest.endswith(("?", "&")):
        joiner = ""
    return f"{rest}{joiner}{CLICK_ID_PARAM}={click_id}{hash_mark}{fragment}"
