"""The social preview page: what a link-preview fetcher gets for a link with a social preview.

serving.gates decides who gets it (analytics.bots.is_link_preview: the one rule, the stats'
"Social preview" kind); this renders it: a small HTML page of Open Graph and Twitter Card tags
(og:title, og:description, og:image, og:url: the short URL, twitter:card
summary_large_image with an image, else summary), every value escaped by the template. It names
no destination, so a link with a password or a visit cap gives nothing away.

Only preview fetchers of links that set a preview come here: a render (~1 ms) per fetch is
cheap beside the fetch itself. The answer may be kept a few minutes by the fetcher (they fetch
again as a link is shared), never by a shared cache for people: `private`, and it varies by
User-Agent.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

from django.core.handlers.wsgi import WSGIRequest
from django.template.loader import render_to_string

from links import domains
from links.cache import LinkEntry
from links.shortlinks import short_url_for

TEMPLATE = "links/preview.html"
HEADERS = (("Cache-Control", "private, max-age=300"), ("Vary", "User-Agent"))


def short_url_of(entry: LinkEntry, meta: Mapping[str, str]) -> str:
    """The link's short URL (links.shortlinks: the one rule), from this request's host and
    scheme where SHORT_URL_BASE does not say."""
    route = domains.route_for(meta)
    host = route.host if route is not None else ""
    # A request for its scheme and host only: nothing reads the body.
    request = WSGIRequest({**meta, "wsgi.input": io.BytesIO()})
    return short_url_for(entry.code, request=request, domain_host=host)


def preview_page(entry: LinkEntry, meta: Mapping[str, str]) -> str:
    return render_to_string(
        TEMPLATE,
        {
            "short_url": short_url_of(entry, meta),
            "og_title": entry.og_title,
            "og_description": entry.og_description,
            "og_image": entry.og_image,
        },
    )
