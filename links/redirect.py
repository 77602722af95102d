"""GET /<code>: the product's hottest path. Read it top to bottom; every step says its cost.

1. shape + check character (no I/O) → 404 for garbage;
2. link cache → the database only on a miss (then cached, negative entries too);
3. revoked or expired → 410, unknown → 404 (real HTML pages);
4. the redirect (302 unless the link says otherwise), never cached by browsers;
5. the visit handed to analytics: one push onto a Redis list, nothing parsed or written here.
"""

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from analytics.capture import record_visit

from . import cache as link_cache
from .codes import ALIAS_RE, has_valid_check, is_generated_shape
from .models import UrlLink


def _not_found(code: str) -> HttpResponse:
    # No request context: context processors would reach for the session and the user.
    return HttpResponse(render_to_string("links/not_found.html", {"code": code}), status=404)


def _gone(code: str) -> HttpResponse:
    return HttpResponse(render_to_string("links/gone.html", {"code": code}), status=410)


def _load(code: str) -> link_cache.LinkEntry | None:
    link = UrlLink.objects.filter(code=code).first()
    if link is None:
        link_cache.store_missing(code)
        return None
    return link_cache.cache_link(link)


def redirect_view(request: HttpRequest, code: str) -> HttpResponse:
    # 1. Shape: a generated code must pass its check character; anything else must be an alias.
    if is_generated_shape(code):
        if not has_valid_check(code):
            return _not_found(code)
    elif not ALIAS_RE.match(code):
        return _not_found(code)

    # 2. Cache, then the database.
    entry = link_cache.get_entry(code)
    if entry is False:
        return _not_found(code)
    if entry is None:
        if not is_generated_shape(code) and code not in link_cache.known_aliases():
            return _not_found(code)
        entry = _load(code)
        if entry is None:
            return _not_found(code)

    # 3. Stopped links.
    if entry.is_gone():
        return _gone(code)

    # 4. The redirect.
    response = HttpResponse(status=entry.redirect_type)
    response["Location"] = entry.location
    response["Cache-Control"] = "private, max-age=0"

    # 5. The visit.
    record_visit(request, entry)
    return response
