"""CORS for everything under /rest/, as Shlink answers it: dashboards such as Shlink's web client
call from the browser, on another origin. Any origin may: the credential is the X-Api-Key
header, never a cookie, so `*` hands no one's session to another site.

One middleware, so every answer under /rest/ carries it whoever made it: the views, their
errors, the not-found route, a database outage (core.outages, inside it), Django's own 404 and
500. Preflights (`OPTIONS`) are answered here, without a key and before sessions or
authentication: 204, the methods the route takes (an unknown route: every method, as Shlink
answers, so the browser sends the request and the client can read its 404 problem)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from core.cors import preflight_answer, readable_from_any_origin

REST_PREFIX = "/rest/"
# What the Shlink SDK sends (the key, JSON bodies) and what a client may add.
ALLOW_HEADERS = "X-Api-Key, Content-Type, Accept"
EVERY_METHOD = ("GET", "POST", "PUT", "PATCH", "DELETE")


def route_methods(path: str) -> tuple[str, ...]:
    """The methods the view at `path` answers (OPTIONS and HEAD aside); every method for a path
    that is no route of ours (Shlink's not-found answers any)."""
    try:
        view = getattr(resolve(path).func, "view_class", None)
    except Resolver404:
        view = None
    if view is None:
        return EVERY_METHOD
    return tuple(
        method.upper()
        for method in view.http_method_names
        if method not in ("options", "head") and hasattr(view, method)
    )


def preflight(request: HttpRequest) -> HttpResponse:
    return preflight_answer(route_methods(request.path_info), ALLOW_HEADERS)


class ShlinkCorsMiddleware:
    """Answers preflights under /rest/ and lets any origin read every answer there."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(REST_PREFIX):
            return self.get_response(request)
        is_preflight = request.method == "OPTIONS"
        response = preflight(request) if is_preflight else self.get_response(request)
        return readable_from_any_origin(response)
