"""The product's 404 page under DEBUG too. Without DEBUG, Django answers a 404 with the URLconf's
handler404 (templates/404.html); with DEBUG on (`make run`) it showed its technical page, which
lists every URL pattern, for an unknown page such as `/dashboard/nope/`. This middleware answers
those with the same handler: an unknown path (nothing in the URLconf matched) and an Http404
raised by a view. A view that writes its own 404 (the redirect's page, the API's JSON) keeps it.
Without DEBUG it is not loaded at all."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, get_resolver


def _not_found_page(request: HttpRequest, exception: Exception) -> HttpResponse:
    """What the URLconf's handler404 answers (what production shows)."""
    handler = get_resolver(getattr(request, "urlconf", None)).resolve_error_handler(404)
    return handler(request, exception)


class FriendlyNotFoundMiddleware:
    def __init__(self, get_response):
        if not settings.DEBUG:
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 404 and request.resolver_match is None:
            # No URL pattern matched: Django's technical "Page not found" listing them all.
            return _not_found_page(request, Resolver404({"path": request.path_info}))
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, Http404):
            return _not_found_page(request, exception)
        return None
