"""What every JSON API view shares: JSON errors for everything, throttles, the key's scopes.

Errors always come back as JSON: `{"field": ["message"]}` for invalid input, `{"detail": "…"}`
otherwise, never an HTML page or a traceback, whatever DEBUG says. The services' refusals reach
the handler as kinds of core.errors, so it knows no app.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.signals import got_request_exception
from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.log import log_response
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from core import errors
from core.api.scopes import ApiScope, HasKeyScope, scope_by_method
from core.api.throttles import API_THROTTLES, AnonThrottle
from core.errors import FieldProblem, NotFound, Unavailable
from core.outages import (
    DATABASE_UNAVAILABLE_MESSAGE,
    RETRY_AFTER_SECONDS,
    is_database_unavailable,
)

logger = logging.getLogger("api")


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The link's state does not allow this change."
    default_code = "conflict"


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service is busy; please try again in a moment."
    default_code = "service_unavailable"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        super().__init__(f"The request body is too large: at most {limit:,} bytes are accepted.")


class JsonBodyParser(JSONParser):
    """DRF's JSON parser, with JSON nested deeper than Python's decoder goes refused as 400.

    The decoder recurses once per level and gives up with RecursionError (`[` × 100,000),
    which DRF does not expect and would answer 500 with a traceback.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as error:
            raise exceptions.ParseError(
                "JSON parse error - the document is nested too deeply."
            ) from error


def field_errors(exc: DjangoValidationError) -> dict[str, list[str]]:
    """A Django ValidationError as DRF's {"field": ["message"]} shape."""
    if hasattr(exc, "error_dict"):
        return exc.message_dict
    return {"non_field_errors": exc.messages}


def api_exception_handler(exc: Exception, context: dict) -> Response:
    """DRF's handler, taught the services' exceptions, with a JSON 500 for anything else."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(field_errors(exc))
    elif isinstance(exc, FieldProblem):  # before NotFound: a link's AmbiguousCode is both
        exc = exceptions.ValidationError({exc.field: [exc.message]})
    elif isinstance(exc, NotFound):
        exc = exceptions.NotFound(exc.public_message)
    elif isinstance(exc, DjangoPermissionDenied):
        # The services say why (a viewer of the workspace, a key for another one): kept, where
        # DRF's own handler would answer its generic message.
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, errors.Conflict):
        exc = Conflict(str(exc))
    elif isinstance(exc, Unavailable):
        exc = ServiceUnavailable(str(exc))
    elif isinstance(exc, RequestDataTooBig):
        # Django refuses to read a body over DATA_UPLOAD_MAX_MEMORY_SIZE before reading it.
        exc = PayloadTooLarge()
    request = context.get("request")
    django_request = getattr(request, "_request", request)
    if is_database_unavailable(exc):
        set_rollback()
        response = Response({"detail": DATABASE_UNAVAILABLE_MESSAGE}, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        # One line with the cause; Django then leaves the response alone (no second line).
        log_response(
            "Database unavailable: %s (%s)",
            django_request.path,
            exc,
            response=response,
            request=django_request,
            logger=logger,
        )
        return response
    response = exception_handler(exc, context)
    if response is not None:
        if response.status_code == status.HTTP_503_SERVICE_UNAVAILABLE:
            response.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
        return response
    set_rollback()
    # Error reporting (and the test client) learn about it as they would from Django itself.
    got_request_exception.send(sender=None, request=django_request)
    response = Response(
        {"detail": "Something went wrong on our side; it has been logged. Please try again."},
        status=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )
    # Logged once, with the traceback (Django would add a second line without it).
    log_response(
        "Unhandled error in the API: %s",
        django_request.path,
        response=response,
        request=django_request,
        logger=logger,
        exception=exc,
    )
    return response


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

    def permission_denied(self, request, message=None, code=None):
        # Callers without credentials are counted per IP before they are refused, so probing
        # anonymously is rate limited too (DRF throttles only after the permission check). Here
        # rather than in check_permissions: a view open to anonymous callers is throttled once,
        # by DRF, not twice.
        if not request.user.is_authenticated:
            self.check_throttles(request)
        super().permission_denied(request, message=message, code=code)


class KeyLimitHeadersMixin:
    """RateLimit-Limit / -Remaining / -Reset on every answer to a key with a limit of its own
    (core.api.throttles.KeyRateThrottle), refusals and errors included, so a client can slow
    down before it meets the 429."""

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        key_limit = getattr(request, "key_limit", None)
        if key_limit is not None:
            for header, value in key_limit.headers().items():
                response[header] = value
        return response


def validated(serializer_class, data) -> dict:
    """`data` checked by the serializer: its validated data, or 400 with every field's
    problem (DRF's ValidationError)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ApiView(
    KeyLimitHeadersMixin, WrongCredentialsThrottledMixin, JsonErrorsMixin, GenericAPIView
):
    """Base for the API's views: JSON in, JSON out (the Swagger UI is the browsable version)."""

    parser_classes = [JsonBodyParser]
    renderer_classes = [JSONRenderer]
    throttle_classes = API_THROTTLES
    permission_classes = [IsAuthenticated, HasKeyScope]
    # The scope an API key needs to read here (writes need links:write).
    read_scope = ApiScope.LINKS_READ

    def required_scope(self, request) -> str:
        return scope_by_method(request, read=self.read_scope)


@csrf_exempt
def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Unknown paths under /api/ answer JSON, not the site's HTML 404 page.

    Whatever the method: CSRF protects views that change something, and this one only says
    "not found" (without the exemption a POST got Django's HTML CSRF page instead).
    """
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


class SwaggerView(WrongCredentialsThrottledMixin, JsonErrorsMixin, SpectacularSwaggerSplitView):
    """Swagger UI under the site's Content-Security-Policy: its start-up script comes from this
    view (`?script`) instead of inline, and its page has no inline <style>."""

    throttle_classes = [AnonThrottle]
    template_name = "api/swagger_ui.html"
