"""OpenAPI pieces every API's views share: the error responses and their examples."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


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
