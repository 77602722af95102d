"""The one place that turns a code into the short URL people click.

The short URL is never stored: it is `SHORT_URL_BASE` + code, so the domain can change at any
time. Without `SHORT_URL_BASE` the request's own scheme and host are used (development, or a
single-domain install), and without a request either, a site-relative path. A caller with no
request names the base itself (`base`: `manage.py export_links --base`), which then stands for
SHORT_URL_BASE. A link on an extra short domain (links.models.Domain) is
`https://<its host>/<code>`, with the base's scheme (else the request's).
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse


def short_url_for(
    code: str, *, request: HttpRequest | None = None, domain_host: str = "", base: str = ""
) -> str:
    base = base or settings.SHORT_URL_BASE
    if domain_host:
        if base:
            scheme = urlsplit(base).scheme or "https"
        else:
            scheme = request.scheme if request is not None else "https"
        return f"{scheme}://{domain_host}/{code}"
    if base:
        return base.rstrip("/") + "/" + code
    if request is not None:
        return request.build_absolute_uri("/" + code)
    return "/" + code


def link_short_url(link, *, request: HttpRequest | None = None, base: str = "") -> str:
    """A UrlLink's short URL."""
    return short_url_for(link.code, request=request, domain_host=link.domain_host, base=base)


def link_page_url(view_name: str, link, *args, **query) -> str:
    """The URL of one of a link's pages (stats, edit, QR…): by code, with `?domain=` for a link on
    an extra domain, where the same code may be another link's too. `query`: more parameters."""
    url = reverse(view_name, args=[link.code, *args])
    if link.domain_host:
        query = {"domain": link.domain_host, **query}
    return f"{url}?{urlencode(query)}" if query else url
