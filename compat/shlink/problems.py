"""Errors as RFC 7807 problem details (`application/problem+json`) with Shlink's `type` values,
so Shlink clients recognise them (the SDK's ErrorType)."""

from __future__ import annotations

from http import HTTPStatus

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response

from compat.shlink.auth import InvalidApiKey
from core.api.base import api_exception_handler
from links.selectors import AmbiguousCode, LinkNotFound, TagNotFound
from links.services.policy import ALIAS_TAKEN, LinkRevoked
from links.services.tags import TagNameTaken

PROBLEM_JSON = "application/problem+json"
_ERROR = "https://shlink.io/api/error/"
INVALID_ARGUMENT = _ERROR + "invalid-data"
INVALID_SLUG = _ERROR + "non-unique-slug"
SHORT_URL_NOT_FOUND = _ERROR + "short-url-not-found"
MISSING_AUTHENTICATION = _ERROR + "missing-authentication"
INVALID_API_KEY = _ERROR + "invalid-api-key"
NOT_FOUND = _ERROR + "not-found"
DOMAIN_NOT_FOUND = _ERROR + "domain-not-found"
MERCURE_NOT_CONFIGURED = _ERROR + "mercure-not-configured"
TAG_NOT_FOUND = _ERROR + "tag-not-found"
TAG_CONFLICT = _ERROR + "tag-conflict"
# Errors Shlink has no type for (rate limits, outages, methods): RFC 7807's default, whose title
# is the status's phrase.
ABOUT_BLANK = "about:blank"

# Our services' field names → the Shlink names a client sent.
SHLINK_FIELDS = {
    "long_url": "longUrl",
    "alias": "customSlug",
    "valid_since": "validSince",
    "expires_at": "validUntil",
    "max_visits": "maxVisits",
    "pass_query": "forwardQuery",
    "title": "title",
    "tags": "tags",
    "domain": "domain",
    "name": "newName",  # a tag's new name (PUT /rest/v3/tags)
    # A domain's redirects (PATCH /rest/v3/domains/redirects)
    "root_redirect": "baseUrlRedirect",
    "not_found_redirect": "invalidShortUrlRedirect",
}


class InvalidArgument(exceptions.APIException):
    """A Shlink parameter we refuse: {"field": ["message"]} with Shlink's names."""

    status_code = 400

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__("Provided data is not valid")
        self.errors = errors


class DomainNotFound(exceptions.NotFound):
    """A domain the caller may not use, named in a Shlink path."""

    def __init__(self, authority: str):
        super().__init__(authority)
        self.authority = authority


class MercureNotConfigured(exceptions.APIException):
    status_code = 501


def problem(status: int, type_: str, title: str, detail: str, **extra) -> dict:
    return {"type": type_, "title": title, "detail": detail, "status": status, **extra}


def problem_response(body: dict, headers: dict | None = None) -> Response:
    return Response(body, status=body["status"], headers=headers, content_type=PROBLEM_JSON)


def invalid_data(errors: dict[str, list[str]]) -> dict:
    """Shlink's INVALID_ARGUMENT: `invalidElements` names the fields; our messages say why (in
    `detail`, which clients show, and by field in `errors`)."""
    messages = "; ".join(f"{field}: {' '.join(texts)}" for field, texts in errors.items())
    detail = "Provided data is not valid" + (f": {messages}" if messages else "")
    return problem(
        400,
        INVALID_ARGUMENT,
        "Invalid data",
        detail,
        invalidElements=list(errors),
        errors=errors,
    )


def _validation_errors(exc: DjangoValidationError) -> dict[str, list[str]]:
    if not hasattr(exc, "error_dict"):
        return {"data": exc.messages} if exc.messages else {}
    return {SHLINK_FIELDS.get(name, name): exc.message_dict[name] for name in exc.error_dict}


def _drf_errors(detail) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        return {
            name: [str(m) for m in (value if isinstance(value, list) else [value])]
            for name, value in detail.items()
        }
    return {"data": [str(m) for m in (detail if isinstance(detail, list) else [detail])]}


def _taken_alias(exc: DjangoValidationError) -> bool:
    errors = getattr(exc, "error_dict", {}).get("alias", [])
    return any(error.code == ALIAS_TAKEN for error in errors)


def to_problem(exc: Exception, context: dict) -> dict | None:
    """The Shlink problem for the errors Shlink has a type for; None for the others."""
    request = context.get("request")
    kwargs = context.get("kwargs") or {}
    if isinstance(exc, exceptions.NotAuthenticated):
        return problem(
            401,
            MISSING_AUTHENTICATION,
            "Invalid authorization",
            'Expected one of the following authentication headers, ["X-Api-Key"], but none '
            "were provided",
            expectedTypes=["X-Api-Key"],
        )
    if isinstance(exc, InvalidApiKey | exceptions.AuthenticationFailed):
        return problem(
            401,
            INVALID_API_KEY,
            "Invalid API key",
            "Provided API key does not exist or is invalid.",
        )
    if isinstance(exc, AmbiguousCode):
        return invalid_data(
            {
                "domain": [
                    f"You have this short code on several domains ({', '.join(exc.hosts)}): "
                    "add ?domain=<host> to say which."
                ]
            }
        )
    if isinstance(exc, LinkNotFound | LinkRevoked):
        code = kwargs.get("short_code", "")
        domain = request.query_params.get("domain") if request is not None else None
        where = f' for domain "{domain}"' if domain else ""
        return problem(
            404,
            SHORT_URL_NOT_FOUND,
            "Short URL not found",
            f'No URL found with short code "{code}"{where}',
            shortCode=code,
            domain=domain or None,
        )
    if isinstance(exc, TagNotFound):
        tag = str(exc.args[0]) if exc.args else ""
        return problem(
            404,
            TAG_NOT_FOUND,
            "Tag not found",
            f'Tag with name "{tag}" could not be found',
            tag=tag,
        )
    if isinstance(exc, TagNameTaken):
        return problem(
            409,
            TAG_CONFLICT,
            "Tag conflict",
            f"You cannot rename tag {exc.old_name} to {exc.new_name}, because it already exists",
            oldName=exc.old_name,
            newName=exc.new_name,
        )
    if isinstance(exc, DjangoValidationError):
        if _taken_alias(exc):
            slug = (request.data.get("customSlug") if request is not None else "") or ""
            return problem(
                400,
                INVALID_SLUG,
                "Invalid custom slug",
                f'Provided slug "{slug}" is already in use. ' + " ".join(exc.message_dict["alias"]),
                customSlug=slug,
            )
        return invalid_data(_validation_errors(exc))
    if isinstance(exc, DomainNotFound):
        return problem(
            404,
            DOMAIN_NOT_FOUND,
            "Domain not found",
            f'Domain with authority "{exc.authority}" could not be found',
            authority=exc.authority,
        )
    if isinstance(exc, MercureNotConfigured):
        return problem(
            501,
            MERCURE_NOT_CONFIGURED,
            "Mercure integration not configured",
            "This Shlink instance is not integrated with a mercure hub.",
        )
    if isinstance(exc, InvalidArgument):
        return invalid_data(exc.errors)
    if isinstance(exc, exceptions.ValidationError):
        return invalid_data(_drf_errors(exc.detail))
    if isinstance(exc, Http404 | exceptions.NotFound):
        return problem(404, NOT_FOUND, "Not found", "Requested route does not exist.")
    return None


def shlink_exception_handler(exc: Exception, context: dict) -> Response:
    body = to_problem(exc, context)
    if body is not None:
        return problem_response(body)
    # Everything else (rate limits, methods, bodies, outages, bugs) as the native API answers
    # it, reshaped: the status, its headers (Retry-After) and its message are kept.
    response = api_exception_handler(exc, context)
    data = response.data if isinstance(response.data, dict) else {}
    status = response.status_code
    body = problem(
        status, ABOUT_BLANK, HTTPStatus(status).phrase, str(data.get("detail", "")) or "Error."
    )
    headers = {name: value for name, value in response.items() if name == "Retry-After"}
    return problem_response(body, headers=headers)


@csrf_exempt
def route_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Any other path under /rest/: Shlink's NOT_FOUND, not the site's HTML page."""
    body = problem(404, NOT_FOUND, "Not found", "Requested route does not exist.")
    return JsonResponse(body, status=404, content_type=PROBLEM_JSON)
