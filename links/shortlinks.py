"""The one place that turns a code into the short URL people click.

The short URL is never stored: it is `SHORT_URL_BASE` + code, so the domain can change at any
time. Without `SHORT_URL_BASE` the request's own scheme and host are used (development, or a
single-domain install), and without a request either, a site-relative path.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def short_url_for(code: str, *, request: HttpRequest | None = None) -> str:
    base = settings.SHORT_URL_BASE
    if base:
        return base.rstrip("/") + "/" + code
    if request is not None:
        return request.build_absolute_uri("/" + code)
    return "/" + code
