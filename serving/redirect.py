"""GET /<code>: the product's hottest path. Read it top to bottom; every step says its cost.

1. shape + check character (no I/O) → 404 for garbage;
2. link cache → the database only on a miss (then cached, negative entries too); with Redis the
   cache read and the visit push are one Lua call, so a cached redirect is one round trip;
3. revoked or expired → 410 (or a 302 to the link's or its domain's fallback, counted with its
   state: serving/fallback.py), unknown → 404 (real HTML pages), or 429 once the client has been
   answered too many 404s (serving/not_found_limit.py; only 404s are counted); before its start
   → 404 with the "not live yet" page, never cached, nothing counted (the start is compared
   with the time of the request, so a cached entry goes live by itself); a capped link a bot or
   a HEAD asks for → 403 (serving/gates.py: HELD);
4. the redirect (302 unless the link says otherwise), never cached by browsers, with the
   visitor's query string merged into the long URL's (links that pass it on; the long URL's
   own keys win) less the QR code's `qr=1` marker: parsing only when there is a query string;
5. the visit handed to analytics (already done in step 2 when Redis took it): nothing parsed or
   written to the database here; the message says "QR code" when the query string holds the
   marker (analytics.messages, a substring test when there is a query string at all).

`resolve` makes the decision for both entry points: the Django view below (tests, `runserver`)
and the WSGI fast path in serving/hotpath.py, which answers without Django's request machinery.
"""

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from urllib.parse import quote, unquote_plus

from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.html import escape

from analytics.capture import (
    QR_MARKER,
    OrphanKind,
    new_event_id,
    note_orphan,
    record_visit,
    without_qr_marker,
)
from links import cache as link_cache
from links import domains
from links.codes.aliases import ALIAS_RE
from links.codes.shape import check_character, is_generated_shape
from serving import fallback, fused_read, gates, not_found_limit

NOT_FOUND, GONE, TOO_MANY_REQUESTS = 404, 410, 429
SEE_OTHER = 303
# A capped link whose visits are used up: a 410 of its own wording (gates.CAP_REACHED).
CAP_REACHED_PAGE = "cap-reached"
# The bare root of an extra domain that sends it nowhere: a 404 of its own wording.
DOMAIN_ROOT_PAGE = "domain-root"
# A link before its start (LinkStatus.SCHEDULED): a 404, as Shlink answers a short URL not yet
# valid, with a page of its own saying when it starts.
NOT_YET_PAGE = "not-yet"
# A link with a social preview asked for by a preview fetcher (gates.PREVIEW): its preview page,
# rendered per link (serving.previews), not one of PAGES.
PREVIEW_PAGE = "preview"
# The WSGI environ key resolve sets, to the link's start (epoch seconds), when the link has not
# started: the 404 is then the "not live yet" page (page_for). As gates.CAP_REACHED.
STARTS_AT = "shorturl.starts_at"
PAGES = {
    NOT_FOUND: "links/not_found.html",
    GONE: "links/gone.html",
    TOO_MANY_REQUESTS: "links/too_many_requests.html",
    CAP_REACHED_PAGE: "links/cap_reached.html",
    gates.HELD: "links/cap_held.html",  # a capped link asked for by a bot or with HEAD
    DOMAIN_ROOT_PAGE: "links/domain_root.html",
    NOT_YET_PAGE: "links/not_yet.html",
}
NO_BROWSER_CACHE = ("Cache-Control", "private, max-age=0")


def _security_headers() -> tuple[tuple[str, str], ...]:
    """What Django's SecurityMiddleware and XFrameOptionsMiddleware add to every other answer,
    from the same settings. The fast path skips the middleware, so it sends these itself; read
    once per process, they cost a redirect nothing but their bytes."""
    headers = []
    if settings.X_FRAME_OPTIONS:
        headers.append(("X-Frame-Options", settings.X_FRAME_OPTIONS.upper()))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append(("X-Content-Type-Options", "nosniff"))
    policy = settings.SECURE_REFERRER_POLICY
    if policy:
        values = policy.split(",") if isinstance(policy, str) else policy
        headers.append(("Referrer-Policy", ",".join(value.strip() for value in values)))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(("Cross-Origin-Opener-Policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY))
    # What django-csp's middleware sends on every other page, from the same setting: the
    # fast path's pages are real pages too (an injected script there is as bad as anywhere).
    policy = build_policy()
    if policy:
        headers.append(("Content-Security-Policy", policy))
    return tuple(headers)


SECURITY_HEADERS = _security_headers()
# A redirect is not a page: it cannot be framed or sniffed into one, and the policies that
# concern the next document (Referrer-Policy, COOP, CSP) are left to the page that linked here
# and to the destination.
REDIRECT_SECURITY_HEADERS = tuple(
    (name, value) for name, value in SECURITY_HEADERS if name == "X-Content-Type-Options"
)
# The Django view gets the site's Referrer-Policy from SecurityMiddleware (which only sets one
# that is missing): the browsers' own default instead, which keeps the referring site's origin.
REDIRECT_REFERRER_POLICY = "strict-origin-when-cross-origin"


# SHORTURL_MAX_URL_LENGTH, read once: `settings.X` costs ~0.3 µs (LazyObject.__getattribute__),
# as much as the rest of a query's pass-through. Tests that change the setting refresh it.
_max_location = {"bytes": settings.SHORTURL_MAX_URL_LENGTH}


@receiver(setting_changed)
def _settings_changed(setting: str, value=None, **kwargs) -> None:
    if setting == "SHORTURL_MAX_URL_LENGTH":
        _max_location["bytes"] = settings.SHORTURL_MAX_URL_LENGTH


# What may stay as it is in a query of the Location header: RFC 3986's query characters, and
# "%" so that escapes the visitor's client already made are kept.
_QUERY_SAFE = "/?:@!$&'()*+,;=-._~%"
_ALL_QUERY_SAFE = re.compile(r"[A-Za-z0-9/?:@!$&'()*+,;=\-._~%]*\Z")


def _key(pair: str) -> str:
    """A query parameter's key, decoded (unquote_plus only when there is something to decode:
    it costs a microsecond)."""
    key = pair.partition("=")[0]
    return unquote_plus(key) if "%" in key or "+" in key else key


def _query_keys(query: str) -> set[str]:
    return {_key(pair) for pair in query.split("&") if pair}


def with_visitor_query(location: str, query_string: str) -> str:
    """`location` with the visitor's query parameters added, except those whose key the
    location's own query already has (the marketer's `utm_source` is not overridden by a
    visitor's).

    `query_string` is the WSGI QUERY_STRING: the raw bytes decoded as latin-1 (PEP 3333); what
    is not a query character is percent-encoded, so the header stays ASCII and one line.
    The QR code's marker (`qr=1`, core.channels) is ours, not the visitor's: it counted
    the visit as a scan and goes no further. A query that would take the Location past
    SHORTURL_MAX_URL_LENGTH bytes is dropped whole: the visitor goes to `location` as stored.
    """
    if QR_MARKER in query_string:
        query_string = without_qr_marker(query_string)
        if not query_string:
            return location
    rest, hash_mark, fragment = location.partition("#")
    path, _, own = rest.partition("?")
    if own:
        own_keys = _query_keys(own)
        added = "&".join(
            [pair for pair in query_string.split("&") if pair and _key(pair) not in own_keys]
        )
    else:
        added = query_string.strip("&")
    if not added:
        return location
    if not _ALL_QUERY_SAFE.match(added):  # most are plain `utm_source=mail`: no encoding needed
        try:
            raw = added.encode("latin-1")
        except UnicodeEncodeError:  # not from a WSGI server (a test client, a proxy's rewrite)
            raw = added.encode()
        added = quote(raw, safe=_QUERY_SAFE)
    query = f"{own}&{added}" if own else added
    passed_on = f"{path}?{query}{hash_mark}{fragment}"
    if len(passed_on) > _max_location["bytes"]:
        # The stored URL is within the cap once encoded (row 13); the visitor's query would take
        # the header past what proxies pass (a 502 for the visitor). The destination without it
        # is still where the marketer meant to send people; the ASCII header's length is bytes.
        return location
    return passed_on


def redirect_location_for(entry: link_cache.LinkEntry, meta: Mapping[str, str]) -> str:
    """The Location of a redirect to `entry` for this request: its click id first, for a link
    that tracks conversions (gates.with_click_id), then the visitor's query (see
    with_visitor_query). The fast path inlines this."""
    location = entry.location
    if entry.track_conversions and gates.CLICK_ID in meta:
        location = gates.with_click_id(location, meta[gates.CLICK_ID])
    query_string = meta.get("QUERY_STRING")
    if query_string and entry.pass_query:
        return with_visitor_query(location, query_string)
    return location


def _not_found(
    meta: Mapping[str, str], route: domains.DomainRoute | None
) -> tuple[int, link_cache.LinkEntry | None]:
    """404, or 429 once this client has had too many of them (not_found_limit says why); a
    domain that sends unknown codes elsewhere answers a 302 there instead of the 404 page."""
    note_orphan(meta, OrphanKind.UNKNOWN_HOST if route is None else OrphanKind.UNKNOWN_CODE)
    if not_found_limit.count_not_found(meta):
        return TOO_MANY_REQUESTS, None
    if route is not None and route.not_found_entry is not None:
        return route.not_found_entry.redirect_type, route.not_found_entry
    return NOT_FOUND, None


def resolve(code: str, meta: Mapping[str, str]) -> tuple[int, link_cache.LinkEntry | None]:
    """(status, link): a redirect status with its link, or 404/410/429 with None.

    `meta` is the WSGI environ (or request.META): the visit is built from its headers, the
    domain from its Host.
    """
    # 1. The domain (this process's table: no I/O), then the shape: a generated code must pass
    #    its check character; anything else must be an alias.
    route = domains.route_for(meta)
    if route is None:  # a host that is none of ours
        return _not_found(meta, None)
    generated = is_generated_shape(code)
    if generated:
        if check_character(code[:-1]) != code[-1]:
            return _not_found(meta, route)
    elif not ALIAS_RE.match(code):
        return _not_found(meta, route)

    # 2. Cache (and, with Redis, the visit in the same round trip), then the database.
    #    HEAD is answered like GET but never counted: link checkers and mail scanners send it.
    key = code + route.key_suffix if route.key_suffix else code  # link_cache.link_key, inlined
    counted = meta.get("REQUEST_METHOD") != "HEAD"
    event_id = new_event_id()
    if counted:
        entry, recorded = fused_read.fetch_and_record(
            key, meta, event_id, alias_shaped=not generated
        )
    else:
        entry, recorded = link_cache.get_entry(key, alias_shaped=not generated), True
    if entry is False:
        return _not_found(meta, route)
    if entry is None:
        if not generated and not link_cache.alias_may_exist(key):
            return _not_found(meta, route)
        entry = link_cache.load_entry(key)
        if entry is None:
            return _not_found(meta, route)

    # 3. Stopped links, then links not started yet (compared with this request's time, so a
    #    cached entry goes live by itself; nothing counted: the fused push left them alone);
    #    gated ones (a password, a visit cap, rules, variants) are decided, and counted or not,
    #    by serving/gates.py: the fused push above left them alone too.
    if entry.is_gone():
        # A fallback (the link's, else its domain's) sends the visitor on: serving/fallback.py.
        return fallback.stopped(
            entry, meta, fallback.gone_state(entry), event_id=event_id, counted=counted
        )
    if entry.valid_since is not None and entry.starts_later():
        meta[STARTS_AT] = entry.valid_since  # type: ignore[index]  # page_for's, as CAP_REACHED
        return NOT_FOUND, None
    if entry.gated:
        return gates.decide(entry, meta, event_id=event_id, counted=counted)

    # 5. The visit, when the cache read did not take it already (cache miss, no Redis). The same
    #    event id: should a timed-out fused push have landed after all, the visit counts once.
    if not recorded:
        record_visit(meta, entry, event_id=event_id)
    return entry.redirect_type, entry


def bare_root(meta: Mapping[str, str]) -> tuple[int, link_cache.LinkEntry | None] | None:
    """GET / on an extra domain: a 302 where the domain sends it, else the 404 page; None on the
    default domain (and unknown hosts), whose root is the site's home page."""
    route = domains.route_for(meta)
    if route is None or route.is_default:
        return None
    note_orphan(meta, OrphanKind.BARE_ROOT)
    if route.root_entry is not None:
        return route.root_entry.redirect_type, route.root_entry
    return NOT_FOUND, None


# Rendered once per process and status with a stand-in for the code (rendering costs ~1 ms;
# a flood of made-up codes would otherwise be a flood of template renders).
_CODE_STAND_IN = "3f1c9a7e-code-goes-here"
_page_parts: dict[int | str, list[str]] = {}


def page_for(status: int, meta: Mapping[str, str]) -> int | str:
    """Which error page answers `status` (a key of PAGES): the cap's own 410 when gates said
    the cap was reached, the "not live yet" 404 when resolve said the link starts later, else
    the status's."""
    if status == GONE and meta.get(gates.CAP_REACHED):
        return CAP_REACHED_PAGE
    if status == NOT_FOUND and meta.get(STARTS_AT):
        return NOT_YET_PAGE
    if status == gates.PREVIEW and meta.get(gates.PREVIEW_OF):
        return PREVIEW_PAGE
    return status


# The start in the "not live yet" page, put in like the code (the page is rendered once).
_START_STAND_IN = "5b8d0c2f-start-goes-here"


def error_page(status: int | str, code: str, *, starts_at: float | None = None) -> str:
    """The 404, 410 or 429 page (or another key of PAGES) for `code` (escaped); `starts_at`:
    the link's start (epoch seconds), for the "not live yet" page."""
    parts = _page_parts.get(status)
    if parts is None:
        # No request context: context processors would reach for the session and the user.
        context = {"code": _CODE_STAND_IN, "starts_at": _START_STAND_IN}
        page = render_to_string(PAGES[status], context)
        parts = _page_parts[status] = page.split(_CODE_STAND_IN)
    page = escape(code).join(parts)
    if starts_at is not None:
        start = datetime.fromtimestamp(starts_at, tz=UTC)
        page = page.replace(_START_STAND_IN, f"{start:%Y-%m-%d %H:%M} UTC")
    return page


def error_answer(page: int | str, code: str, meta: Mapping[str, str]) -> tuple[str, list]:
    """The body and the extra headers of the error page `page` (page_for's) for `code`. The
    "not live yet" page says when the link starts and may not be kept by any cache: from its
    start on, the same URL redirects (and an edit may bring the start forward)."""
    if page == NOT_YET_PAGE:
        return error_page(page, code, starts_at=meta[STARTS_AT]), [NO_BROWSER_CACHE]
    if page == PREVIEW_PAGE:
        from serving import previews  # preview fetchers of links with a preview only

        return previews.preview_page(meta[gates.PREVIEW_OF], meta), list(previews.HEADERS)
    return error_page(page, code), []


def bare_root_view(request: HttpRequest) -> HttpResponse | None:
    """bare_root for Django's home view (the fast path answers it itself); None: the home page."""
    answer = bare_root(request.META)
    if answer is None:
        return None
    status, entry = answer
    if entry is None:
        return HttpResponse(error_page(DOMAIN_ROOT_PAGE, ""), status=status)
    return _redirect_response(status, entry, request.META)


def _redirect_response(
    status: int, entry: link_cache.LinkEntry, meta: Mapping[str, str]
) -> HttpResponse:
    response = HttpResponse(status=status)
    response["Location"] = redirect_location_for(entry, meta)
    response[NO_BROWSER_CACHE[0]] = NO_BROWSER_CACHE[1]
    response["Referrer-Policy"] = REDIRECT_REFERRER_POLICY
    return response


def redirect_view(request: HttpRequest, code: str) -> HttpResponse:
    status, entry = resolve(code, request.META)
    if status == gates.UNLOCK and entry is not None:  # no entry: a preview (gates.PREVIEW)
        # A password-protected link (the fast path hands these here): its unlock page, or,
        # once the request has proved the password, the click decided again and counted.
        from serving.unlock import unlock

        page = unlock(request, entry)
        if page is not None:
            return page
        counted = request.method != "HEAD"
        status, entry = gates.decide(entry, request.META, event_id=new_event_id(), counted=counted)
        if entry is not None and request.method == "POST":
            # See Other: the browser follows with a GET, never re-sending the form (and its
            # password) to the destination, as a 307/308 link's own status would.
            status = SEE_OTHER
    if entry is None:
        body, headers = error_answer(page_for(status, request.META), code, request.META)
        response = HttpResponse(body, status=status, headers=dict(headers))
        if status == TOO_MANY_REQUESTS:
            response["Retry-After"] = not_found_limit.retry_after()
        return response
    # 4. The redirect.
    return _redirect_response(status, entry, request.META)
