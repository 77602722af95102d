"""CORS for the APIs browser apps on other origins call (the compat layers): a preflight's
answer, and any origin allowed to read an answer.

`*` is safe only where the credential travels in the request itself (a header or a parameter),
never as a cookie: another site's page then reads nothing it did not send itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpResponse

MAX_AGE_SECONDS = 3600  # how long a browser may reuse a preflight's answer


def preflight_answer(methods: Iterable[str], allow_headers: str) -> HttpResponse:
    """204 to an OPTIONS preflight: the methods the route takes and the headers a caller may
    send."""
    listed = ", ".join(methods)
    response = HttpResponse(status=204)
    response["Allow"] = f"{listed}, OPTIONS" if "OPTIONS" not in listed else listed
    response["Access-Control-Allow-Methods"] = listed
    response["Access-Control-Allow-Headers"] = allow_headers
    response["Access-Control-Max-Age"] = str(MAX_AGE_SECONDS)
    return response


def readable_from_any_origin(response: HttpResponse, *, expose: str = "") -> HttpResponse:
    """Let a page on any origin read `response` (and the headers named in `expose`)."""
    response["Access-Control-Allow-Origin"] = "*"
    if expose:
        response["Access-Control-Expose-Headers"] = expose
    return response
