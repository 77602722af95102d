"""OpenAPI pieces the link views share: the code and domain parameters, a link's example."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter

from links.codes.aliases import ALIAS_RE

# Every code (generated or alias) has this shape; "bulk" is reserved because
# /api/v1/links/bulk/ is the bulk operation's own path.
CODE_PATTERN = "^(?!bulk$)" + ALIAS_RE.pattern.removeprefix("^")

CODE_PARAMETER = OpenApiParameter(
    "code",
    str,
    OpenApiParameter.PATH,
    description="The short code (the part after the domain in the short URL).",
    pattern=CODE_PATTERN,
)

DOMAIN_PARAMETER = OpenApiParameter(
    "domain",
    str,
    OpenApiParameter.QUERY,
    required=False,
    description=(
        "The link's short domain (its host, as the link's `domain` shows it), for a code you "
        "have on several domains. Without it: your link on the default domain, else your only "
        "link with that code."
    ),
)

LINK_EXAMPLE = {
    "code": "aZ3kP9q",
    "short_url": "https://s.example.com/aZ3kP9q",
    "long_url": "https://www.example.com/spring-sale?utm_source=newsletter",
    "title": "Spring sale newsletter",
    "redirect_type": 302,
    "created_at": "2026-03-01T09:30:00Z",
    "valid_since": None,
    "expires_at": None,
    "pass_query": True,
    "track_conversions": False,
    "is_active": True,
    "clicks": 42,
    "og_title": "Spring sale: 30% off everything",
    "og_description": "Until Sunday, in every store and online.",
    "og_image": "https://www.example.com/img/spring-sale.jpg",
}
