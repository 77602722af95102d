"""`/.well-known/apple-app-site-association` and `/.well-known/assetlinks.json` on a short domain:
the app-association file its owner set (links/services/app_links.py checks it), so that iOS and
Android open the app for the domain's links instead of the browser.

Served from this process's domain table (links/domains.py), as a redirect is served from its
link's entry: no query, read again on every process once the domain changes; by the WSGI fast
path (serving/hotpath.py) as a redirect is, so a short domain serves them whether or not Django
serves its pages (ALLOWED_HOSTS). 200 with the file as stored and `application/json`, never a
redirect (Apple's and Google's fetchers follow none); 404 when the domain sets none, or for a
host that is none of ours.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from links import domains

PATHS = frozenset(domains.WELL_KNOWN_PATHS.values())
# Apple's CDN and Android's verifier fetch these now and then; five minutes in any cache keeps an
# owner's change close behind. A miss is kept a minute.
FOUND_CACHE = "public, max-age=300"
MISSING_CACHE = "public, max-age=60"
MISSING = b'{"detail": "This domain serves no such file."}'


def association_answer(meta: Mapping[str, str]) -> tuple[int, bytes, str]:
    """(status, body, Cache-Control) of a request for one of PATHS (its PATH_INFO)."""
    route = domains.route_for(meta)  # this process's table: no I/O
    body = route.well_known.get(meta.get("PATH_INFO", "")) if route is not None else None
    if body is None:
        return 404, MISSING, MISSING_CACHE
    return 200, body, FOUND_CACHE


@require_safe
def association_file(request: HttpRequest) -> HttpResponse:
    """association_answer for Django's URLconf (tests, and any server without the fast path)."""
    status, body, cache_control = association_answer(request.META)
    response = HttpResponse(body, status=status, content_type="application/json")
    response["Cache-Control"] = cache_control
    return response
