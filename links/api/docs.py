"""OpenAPI pieces the API views share: error responses, their examples, the code parameter."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from links.codes.aliases import ALIAS_RE


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


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

RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    int,
    OpenApiParameter.HEADER,
    description="Seconds to wait before the next request.",
    response=[429],
)

_ERRORS = {
    400: OpenApiResponse(
        OpenApiTypes.OBJECT,
        description='Invalid input: {"field": ["message"]} (or {"detail": …} for unreadable JSON).',
        examples=[
            OpenApiExample(
                "Invalid field",
                value={"long_url": ["Only http and https URLs can be shortened."]},
                status_codes=["400"],
                response_only=True,
            )
        ],
    ),
    401: OpenApiResponse(
        DetailSerializer,
        description="No credentials, or a wrong token.",
        examples=[
            OpenApiExample(
                "No credentials",
                value={"detail": "Authentication credentials were not provided."},
                status_codes=["401"],
                response_only=True,
            )
        ],
    ),
    403: OpenApiResponse(
        DetailSerializer,
        description=(
            "Not allowed: a viewer of the workspace (they read, owners and editors write), or "
            "an API key without the scope the call needs (the message says which)."
        ),
        examples=[
            OpenApiExample(
                "A viewer",
                value={"detail": "Viewers of the workspace 'acme' cannot change its links."},
                status_codes=["403"],
                response_only=True,
            )
        ],
    ),
    404: OpenApiResponse(
        DetailSerializer,
        description=(
            "No such link, or one of a workspace you are not in (an API key: of another "
            "workspace than its own); or no such workspace of yours."
        ),
        examples=[
            OpenApiExample(
                "Unknown code",
                value={"detail": "No link with this code."},
                status_codes=["404"],
                response_only=True,
            )
        ],
    ),
    429: OpenApiResponse(
        DetailSerializer,
        description="Too many requests; see Retry-After.",
        examples=[
            OpenApiExample(
                "Throttled",
                value={"detail": "Request was throttled. Expected available in 12 seconds."},
                status_codes=["429"],
                response_only=True,
            )
        ],
    ),
    503: OpenApiResponse(
        DetailSerializer,
        description=(
            "No free short code could be found right now, or the database is unreachable; "
            "retry after the Retry-After header's seconds."
        ),
        examples=[
            OpenApiExample(
                "No free code",
                value={
                    "detail": "No free short code could be found; please try again in a moment."
                },
                status_codes=["503"],
                response_only=True,
            )
        ],
    ),
}


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    return {code: _ERRORS[code] for code in codes}


LINK_EXAMPLE = {
    "code": "aZ3kP9q",
    "short_url": "https://s.example.com/aZ3kP9q",
    "long_url": "https://www.example.com/spring-sale?utm_source=newsletter",
    "title": "Spring sale newsletter",
    "redirect_type": 302,
    "created_at": "2026-03-01T09:30:00Z",
    "expires_at": None,
    "pass_query": True,
    "is_active": True,
    "clicks": 42,
}
