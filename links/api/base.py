"""What every API view shares: JSON errors for everything, throttles, the link lookup.

Errors always come back as JSON: `{"field": ["message"]}` for invalid input, `{"detail": "…"}`
otherwise, never an HTML page or a traceback, whatever DEBUG says.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.signals import got_request_exception
from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from links.cache import CacheUnavailable
from links.codes.aliases import ALIAS_RE
from links.codes.base import CodeGenerationError
from links.models import UrlLink
from links.selectors import LinkNotFound, link_get_visible
from links.services.policy import LinkRevoked

from .throttles import API_THROTTLES, AnonThrottle

logger = logging.getLogger("links.api")

NOT_FOUND_MESSAGE = "No link with this code."


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The link's state does not allow this change."
    default_code = "conflict"


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service is busy; please try again in a moment."
    default_code = "service_unavailable"


def field_errors(exc: DjangoValidationError) -> dict[str, list[str]]:
    """A Django ValidationError as DRF's {"field": ["message"]} shape."""
    if hasattr(exc, "error_dict"):
        return exc.message_dict
    return {"non_field_errors": exc.messages}


def api_exception_handler(exc: Exception, context: dict) -> Response:
    """DRF's handler, taught the services' exceptions, with a JSON 500 for anything else."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(field_errors(exc))
    elif isinstance(exc, LinkNotFound):
        exc = exceptions.NotFound(NOT_FOUND_MESSAGE)
    elif isinstance(exc, LinkRevoked):
        exc = Conflict(str(exc))
    elif isinstance(exc, CodeGenerationError | CacheUnavailable):
        exc = ServiceUnavailable(str(exc))
    response = exception_handler(exc, context)
    if response is not None:
        return response
    set_rollback()
    request = context.get("request")
    logger.error("Unhandled error in the API", exc_info=exc)
    # Error reporting (and the test client) learn about it as they would from Django itself.
    got_request_exception.send(sender=None, request=getattr(request, "_request", request))
    return Response(
        {"detail": "Something went wrong on our side; it has been logged. Please try again."},
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )


class JsonErrorsMixin:
    """Errors as JSON, even from views that render something else (the schema's YAML, HTML)."""

    def get_exception_handler(self):
        return api_exception_handler

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response


class WrongCredentialsThrottledMixin:
    """A wrong or stale token counts against the caller's IP like no token at all.

    DRF refuses failed credentials (401) before it reaches the throttles, so guessing tokens
    was never limited; counted here, the guesser meets the anonymous rate's 429 + Retry-After.
    """

    def perform_authentication(self, request) -> None:
        try:
            super().perform_authentication(request)
        except exceptions.AuthenticationFailed:
            # request.user is anonymous now: of the API's throttles only AnonThrottle counts.
            self.check_throttles(request)
            raise


class ApiView(WrongCredentialsThrottledMixin, JsonErrorsMixin, GenericAPIView):
    """Base for the API's views: JSON in, JSON out (the Swagger UI is the browsable version)."""

    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer]
    throttle_classes = API_THROTTLES

    def check_permissions(self, request) -> None:
        # Callers without credentials are counted per IP before they are refused, so probing
        # the API anonymously is rate limited too (DRF would only throttle after a 401).
        if not request.user.is_authenticated:
            self.check_throttles(request)
        super().check_permissions(request)

    def get_link(self, code: str) -> UrlLink:
        """The caller's link (any link for staff); 404 for unknown codes and others' links."""
        if not ALIAS_RE.match(code):
            # Not the shape of any code: refused without a query.
            raise LinkNotFound(code)
        return link_get_visible(code=code, user=self.request.user)


def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Unknown paths under /api/v1/ answer JSON, not the site's HTML 404 page."""
    detail = "Not found."
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            detail = f"Not found. Did you mean {request.path}/ (with a trailing slash)?"
    return JsonResponse({"detail": detail}, status=404)


class SchemaView(WrongCredentialsThrottledMixin, JsonErrorsMixin, SpectacularAPIView):
    throttle_classes = [AnonThrottle]


class SwaggerView(WrongCredentialsThrottledMixin, JsonErrorsMixin, SpectacularSwaggerView):
    throttle_classes = [AnonThrottle]
