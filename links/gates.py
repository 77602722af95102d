"""The redirect of a gated link: one with a password, a visit cap, rules or variants.

Plain links never come here: their redirect is the fused read-and-count of links/redirect.py.
A gated link's cache entry carries everything needed (LinkEntry: the password's hash, the cap,
the rules and variants with their locations), so deciding costs no database query; its visit
is recorded here, once the click is known to go through and where it goes.

The order, for a GET (HEAD is answered the same way and never counted):
1. a password the visitor has not given → the unlock page (UNLOCK: Django's view answers it
   with its form; nothing is counted);
2. a visit cap reached → 410 (people's clicks use it up; bots never count);
3. the destination: the first rule whose every condition matches, else a variant picked for
   this visitor, else the long URL;
4. the visit, with the destination it got.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import replace

from django.db.models import F, Q

from analytics.capture import (
    detect_bot,
    record_visit,
    visitor_agent,
    visitor_client_id,
    visitor_country,
)
from shorturl_project.client_ip import client_ip

from .cache import LinkEntry, database_reads
from .models import UrlLink
from .services.targeting import CONDITIONS, DEVICES, accept_language, os_name

UNLOCK = 200  # the password form, answered by Django's view (CSRF, templates), not counted

# The WSGI environ key links/unlock.py sets, to the link's password hash, once the password the
# request carries (form or X-Link-Password) has been checked. A header cannot set it: headers
# arrive as HTTP_* keys. The hash, not True: a password changed meanwhile is not unlocked.
UNLOCKED = "shorturl.unlocked"
# Set in the environ when the click is refused because the cap is used up: the 410 page then
# says so (links.redirect.page_for), rather than "expired or switched off".
CAP_REACHED = "shorturl.cap_reached"


def needs_password(entry: LinkEntry, meta: Mapping[str, str]) -> bool:
    """The link has a password and this request does not carry it (checked).

    The check itself (~0.3 s of PBKDF2, after the per-client throttle) is links/unlock.py's,
    in Django's view: every request to a password-protected link goes there, the fast path
    hands it on (UNLOCK), and the view decides again with UNLOCKED set.
    """
    return meta.get(UNLOCKED) != entry.password_hash


def _is_bot(meta: Mapping[str, str]) -> bool:
    return detect_bot(meta.get("HTTP_USER_AGENT", "")) is not None


def cap_reached(entry: LinkEntry, meta: Mapping[str, str], *, counted: bool) -> bool:
    """The link's visit cap is used up (taking one of its visits when this click counts).

    The truth is the link row's `visits_used`, in both modes: one conditional UPDATE takes a
    visit only while some are left, so however many clicks race, exactly max_visits people get
    through (the database serialises the row's updates). Bots, and HEAD requests, read it
    without taking one: they pass while visits are left and are refused once none are.
    The cap in `entry` is the one cached; the row's own cap is compared, so a PATCH is seen
    on the next click even before the cache drop reaches every process.
    """
    # A cap removed since the entry was cached lets everyone through (and still counts them).
    open_row = UrlLink.objects.filter(
        Q(max_visits__isnull=True) | Q(visits_used__lt=F("max_visits")), pk=entry.link_id
    )
    database_reads["count"] += 1  # the fast path then recycles the connection, as Django would
    if not counted or _is_bot(meta):
        reached = not open_row.exists()
    else:
        reached = open_row.update(visits_used=F("visits_used") + 1) == 0
    if reached:
        # The environ is the WSGI server's dict: adding a key to it is how WSGI layers talk.
        meta[CAP_REACHED] = "1"  # type: ignore[index]
    return reached


class _Visitor:
    """What rules ask of one request, each worked out on first use: a link whose rules name only
    countries never parses the User-Agent, one with only variants never looks up the address."""

    __slots__ = ("_agent", "_country", "_meta")

    def __init__(self, meta: Mapping[str, str]) -> None:
        self._meta = meta
        self._agent = None
        self._country: str | None = None

    def _user_agent(self):
        if self._agent is None:
            # The enrichment's own parser (cached per User-Agent), so a rule and the stats call
            # a device the same.
            self._agent = visitor_agent(self._meta.get("HTTP_USER_AGENT", ""))
        return self._agent

    def condition(self, key: str) -> str:
        if key == "device":
            return self._user_agent().device_type
        if key == "os":
            return os_name(self._user_agent().os_type)
        if key == "country":
            if self._country is None:
                # The enrichment's GeoIP lookup: an in-process mmdb read, cached per address.
                self._country = visitor_country(client_ip(self._meta))
            return self._country
        return accept_language(self._meta.get("HTTP_ACCEPT_LANGUAGE", ""))


def _matches(rule: dict, visitor: _Visitor) -> bool:
    for key in CONDITIONS:
        wanted = rule.get(key)
        if wanted is None:
            continue
        value = visitor.condition(key)
        if key == "device":
            wanted = DEVICES.get(wanted)
        if value != wanted:
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


def destination(entry: LinkEntry, meta: Mapping[str, str]) -> LinkEntry:
    """`entry` with the location this visitor goes to (a rule's, a variant's, or its own)."""
    if not entry.rules and not entry.variants:
        return entry
    if entry.rules:
        visitor = _Visitor(meta)
        for rule in entry.rules:
            if _matches(rule, visitor):
                location = rule["location"]
                return replace(entry, location=location, destination=location)
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


def decide(
    entry: LinkEntry, meta: Mapping[str, str], *, event_id: str, counted: bool
) -> tuple[int, LinkEntry | None]:
    """(status, entry to redirect to) for an active gated link, as links.redirect.resolve."""
    if entry.password_hash and needs_password(entry, meta):
        return UNLOCK, entry
    if entry.max_visits and cap_reached(entry, meta, counted=counted):
        return 410, None
    chosen = destination(entry, meta)
    if counted:
        record_visit(meta, chosen, event_id=event_id)
    return chosen.redirect_type, chosen
