"""The redirect of a gated link: one with a password, a visit cap, rules or variants.

Plain links never come here: their redirect is the fused read-and-count of serving/redirect.py.
A gated link's cache entry carries everything needed (LinkEntry: the password's hash, the cap,
the rules and variants with their locations), so deciding costs no database query; its visit
is recorded here, once the click is known to go through and where it goes.

The order, for a GET (HEAD is answered the same way and never counted):
1. a password the visitor has not given → the unlock page (UNLOCK: Django's view answers it
   with its form; nothing is counted), unless the link's visit cap is used up already: then
   its 410 first (looked at, nothing taken), so nobody types a password for a dead link;
2. a visit cap reached → 410 (people's clicks use it up); while visits are left, a click that
   would not use one (a bot's, a HEAD) → 403 and a page that names no destination (HELD): a cap
   protects a limited offer, so only the people it counts are sent on;
3. the destination: the first rule whose every condition matches, else a variant picked for
   this visitor, else the long URL;
4. the visit, with the destination it got.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import replace

from analytics.capture import (
    detect_bot,
    record_visit,
    visitor_agent,
    visitor_client_id,
    visitor_country,
)
from core.client_ip import client_ip
from links import visit_caps
from links.cache import LinkEntry
from links.services.targeting import CONDITIONS, DEVICES, accept_language, os_name

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
    """(status, entry to redirect to) for an active gated link, as serving.redirect.resolve."""
    if entry.password_hash and needs_password(entry, meta):
        # The limit is told before the password is asked for (a look: no visit is taken).
        if entry.max_visits and cap_reached(entry, meta, counted=False):
            return 410, None
        return UNLOCK, entry
    if entry.max_visits:
        taking = counted and not _is_bot(meta)
        if cap_reached(entry, meta, counted=taking):
            return 410, None
        if not taking:
            return HELD, None
    chosen = destination(entry, meta)
    if counted:
        record_visit(meta, chosen, event_id=event_id)
    return chosen.redirect_type, chosen
