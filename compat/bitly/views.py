"""A subset of Bitly's API v4, under `/v4/`, over the links services: for tools written for Bitly.

`POST /v4/shorten`, `POST /v4/bitlinks`, `GET`/`PATCH /v4/bitlinks/{domain}/{code}` and
`POST /v4/expand` (and, in compat.bitly.clicks over this module's BitlyView,
`GET /v4/bitlinks/{domain}/{code}/clicks` and `…/clicks/summary`), answered with Bitly's field
names and error shape (`{"message": "NOT_FOUND", "description", "resource", "errors"}`).
Credentials: `Authorization: Bearer <API key or DRF token>`, or the bare key in the header as the
npm `bitly` client sends it (compat.auth); an API key's scopes apply. A user reaches their
own links only (staff: every link), exactly as on the native API.

Domains: a bitlink's id is `<short domain host>/<code>`. `bit.ly` names no domain in particular
(the default one, else the caller's only link with that code): Bitly clients write it themselves
as the default `domain` of creates and in ids they build from a bare code or short URL. Any other
host that is none of ours is refused (400 on create, 404 in a path).

Only the answers are shaped here: creating, changing and finding links is the services' and
selectors' work (link_create, link_update, link_get_visible). docs/api-bitly.md says
what differs from Bitly.
"""

from __future__ import annotations

from datetime import UTC, datetime
from http import HTTPStatus

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError
from django.http import HttpRequest, JsonResponse
from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, set_rollback

from compat.auth import credential_for
from compat.bitly.deeplinks import as_deeplinks_refusal, deeplink_changes, deeplinks_of
from core.api.base import (
    JsonBodyParser,
    KeyLimitHeadersMixin,
    WrongCredentialsThrottledMixin,
    api_exception_handler,
)
from core.api.scopes import ApiScope, HasKeyScope
from core.api.throttles import API_THROTTLES
from links.codes.aliases import ALIAS_RE
from links.models import UrlLink
from links.selectors import (
    AmbiguousCode,
    LinkNotFound,
    default_domain_host,
    link_get_visible,
    link_tag_names,
)
from links.services.change import link_update
from links.services.create import link_create
from links.shortlinks import link_short_url
from workspaces.selectors import pinned_workspace_id

# The host Bitly clients put in bodies and ids they make up: stands for "no domain named".
BITLY_HOST = "bit.ly"
Reply = dict[str, object]


class BitlyError(exceptions.APIException):
    """A refusal in Bitly's words: `message` is its code (NOT_FOUND, INVALID_ARG_LONG_URL…)."""

    def __init__(
        self,
        status: int,
        message: str,
        description: str,
        errors: list[dict[str, str]] | None = None,
    ):
        super().__init__(description)
        self.status_code = status
        self.message = message
        self.description = description
        self.errors = errors or []


def invalid_arg(field: str, description: str) -> BitlyError:
    return BitlyError(
        400,
        f"INVALID_ARG_{field.upper()}",
        description,
        [{"field": field, "error_code": "invalid", "message": description}],
    )


# --- Reading a call ----------------------------------------------------------------------------


def bitly_date(moment: datetime) -> str:
    """Bitly's timestamps: `2026-03-01T14:05:09+0000` (with the moment's own offset)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S%z")


def domain_named(host: str | None) -> str | None:
    """The domain a Bitly host names for our selectors and services: None for none or `bit.ly`
    (the default domain, see the module's docstring), else the host itself."""
    host = (host or "").strip()
    return None if not host or host.lower() == BITLY_HOST else host


def parse_bitlink_id(bitlink_id: object) -> tuple[str | None, str]:
    """(domain, code) of a bitlink id (`host/code`, a full short URL, or a bare code)."""
    if not isinstance(bitlink_id, str) or not bitlink_id.strip():
        raise invalid_arg("bitlink_id", "Name the bitlink as <domain>/<code>.")
    text = bitlink_id.strip()
    if "://" in text:
        text = text.split("://", 1)[1]
    text = text.split("?", 1)[0].rstrip("/")
    if "/" not in text:
        return None, text
    host, code = text.rsplit("/", 1)
    return domain_named(host.split("/", 1)[0]), code


def visible_link(request: Request, domain: str | None, code: str) -> UrlLink:
    """The caller's link (staff: anyone's; an API key's: of its workspace only) on `domain`
    with `code`, else LinkNotFound."""
    if not ALIAS_RE.match(code):
        raise LinkNotFound(code)  # not the shape of any code: no query
    return link_get_visible(
        code=code,
        user=request.user,
        domain=domain_named(domain),
        request_host=request.get_host(),
        workspace_id=pinned_workspace_id(request.auth),
    )


def body_of(request: Request) -> dict:
    if not isinstance(request.data, dict):
        raise BitlyError(400, "INVALID_BODY", "Send a JSON object.")
    return request.data


def optional_text(body: dict, field: str) -> str | None:
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise invalid_arg(field, f"`{field}` must be a string.")
    return value


def optional_tags(body: dict) -> list[str] | None:
    tags = body.get("tags")
    if tags is not None and not (
        isinstance(tags, list) and all(isinstance(tag, str) for tag in tags)
    ):
        raise invalid_arg("tags", "`tags` must be a list of strings.")
    return tags


# --- Shaping answers ---------------------------------------------------------------------------


def bitlink_id(request: Request, link: UrlLink) -> str:
    host = link.domain_host or default_domain_host(request.get_host())
    return f"{host}/{link.code}"


def bitlink(request: Request, link: UrlLink) -> Reply:
    """A link as Bitly's bitlink object."""
    shown_id = bitlink_id(request, link)
    return {
        "created_at": bitly_date(link.created_at.astimezone(UTC)),
        "id": shown_id,
        "link": link_short_url(link, request=request._request),
        "custom_bitlinks": [],
        "long_url": link.long_url,
        "title": link.title,
        "archived": link.archived,
        "created_by": link.owner.get_username(),
        "client_id": "",
        "tags": link_tag_names(link_ids=[link.pk])[link.pk],
        "deeplinks": deeplinks_of(link, shown_id, bitly_date),
        "references": {"group": ""},
    }


def bitly_error_response(error: BitlyError, resource: str) -> Response:
    body: Reply = {
        "message": error.message,
        "description": error.description,
        "resource": resource,
    }
    if error.errors:
        body["errors"] = error.errors
    return Response(body, status=error.status_code)


def refusal_of(error: ValidationError) -> BitlyError:
    """A service's ValidationError as Bitly's INVALID_ARG_<FIELD> (the first field's), with
    every field's messages in `errors`."""
    fields = error.message_dict if hasattr(error, "error_dict") else {"": error.messages}
    errors = [
        {"field": field or "body", "error_code": "invalid", "message": message}
        for field, messages in fields.items()
        for message in messages
    ]
    first = next(iter(fields), "") or "body"
    return BitlyError(400, f"INVALID_ARG_{first.upper()}", errors[0]["message"], errors)


# --- The views ---------------------------------------------------------------------------------


class BitlyAuthentication(BaseAuthentication):
    """`Authorization: Bearer <key>`, or the bare key as the whole header (what the npm client
    sends): an API key (`su_…`) or DRF token, through compat.auth."""

    def authenticate(self, request):
        header = get_authorization_header(request).split()
        if not header:
            return None
        if len(header) == 2 and header[0].lower() == b"bearer":
            raw = header[1]
        elif len(header) == 1:
            raw = header[0]
        else:
            raise exceptions.AuthenticationFailed("Send Authorization: Bearer <API key>.")
        try:
            credential = credential_for(raw.decode())
        except UnicodeError:
            credential = None
        if credential is None:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key.")
        return credential

    def authenticate_header(self, request) -> str:
        return "Bearer"


class BitlyView(KeyLimitHeadersMixin, WrongCredentialsThrottledMixin, APIView):
    """One Bitly endpoint: JSON in and out, Bitly's error shape, the native API's rate limits
    (counted together with it) and an API key's `scope`."""

    authentication_classes = [BitlyAuthentication]
    permission_classes = [IsAuthenticated, HasKeyScope]
    throttle_classes = API_THROTTLES
    parser_classes = [JsonBodyParser]
    renderer_classes = [JSONRenderer]
    schema = None  # not part of the native API's OpenAPI document (docs/api-bitly.md describes it)
    scope: str = ApiScope.LINKS_READ
    resource = "bitlinks"

    def required_scope(self, request) -> str:
        return self.scope

    def handle_exception(self, exc: Exception) -> Response:
        """Every refusal in Bitly's shape: 403 FORBIDDEN for credentials and scopes (as Bitly),
        404 NOT_FOUND for links the caller may not see, 400 INVALID_ARG_<FIELD> for values the
        services refuse; anything else with the native API's status (429 with Retry-After, 503
        while the database is away, a logged 500)."""
        refused = (
            exceptions.NotAuthenticated,
            exceptions.AuthenticationFailed,
            exceptions.PermissionDenied,
        )
        if isinstance(exc, refused):
            exc = BitlyError(403, "FORBIDDEN", str(exc.detail))
        elif isinstance(exc, DjangoPermissionDenied):  # a viewer of the workspace
            exc = BitlyError(403, "FORBIDDEN", str(exc) or "Not allowed.")
        elif isinstance(exc, AmbiguousCode):
            exc = invalid_arg(
                "bitlink_id",
                f"You have links with this code on several domains ({', '.join(exc.hosts)}): "
                "name the domain instead of bit.ly.",
            )
        elif isinstance(exc, LinkNotFound):
            exc = BitlyError(404, "NOT_FOUND", "No bitlink with this id.")
        elif isinstance(exc, ValidationError):
            exc = refusal_of(as_deeplinks_refusal(exc))
        elif isinstance(exc, exceptions.ParseError):
            exc = BitlyError(400, "INVALID_BODY", str(exc.detail))
        if isinstance(exc, BitlyError):
            set_rollback()
            return bitly_error_response(exc, self.resource)
        native = super().handle_exception(exc)
        data = native.data if isinstance(native.data, dict) else {}
        status = native.status_code
        message = {429: "RATE_LIMIT_EXCEEDED", 500: "INTERNAL_ERROR"}.get(
            status, HTTPStatus(status).phrase.upper().replace(" ", "_")
        )
        response = bitly_error_response(
            BitlyError(status, message, str(data.get("detail") or message)), self.resource
        )
        for header in ("Retry-After", "Allow"):
            if header in native:
                response[header] = native[header]
        return response

    def get_exception_handler(self):
        return api_exception_handler


def _create(request: Request, body: dict, **fields) -> Response:
    """link_create with Bitly's `long_url` and `domain`; 201 for a new link, 200 for the
    caller's existing one (what Bitly answers for a URL shortened before)."""
    long_url = body.get("long_url")
    if not isinstance(long_url, str) or not long_url.strip():
        raise invalid_arg("long_url", "Send the URL to shorten as `long_url`.")
    domain = optional_text(body, "domain")
    result = link_create(
        user=request.user,
        long_url=long_url,
        domain=domain_named(domain),
        request_host=request.get_host(),
        pinned_workspace_id=pinned_workspace_id(request.auth),
        **fields,
    )
    return Response(bitlink(request, result.link), status=201 if result.created else 200)


class ShortenView(BitlyView):
    """POST /v4/shorten {long_url, domain?, group_guid?}."""

    scope = ApiScope.LINKS_WRITE

    def post(self, request: Request) -> Response:
        return _create(request, body_of(request))


class BitlinksView(BitlyView):
    """POST /v4/bitlinks {long_url, domain?, title?, tags?, deeplinks?, group_guid?}."""

    scope = ApiScope.LINKS_WRITE

    def post(self, request: Request) -> Response:
        body = body_of(request)
        title = optional_text(body, "title")
        apps = deeplink_changes(body["deeplinks"]) if "deeplinks" in body else {}
        return _create(request, body, title=title or None, tags=optional_tags(body), **apps)


class BitlinkView(BitlyView):
    """GET /v4/bitlinks/{domain}/{code}; PATCH it with {title?, archived?, tags?, long_url?,
    deeplinks?} (`deeplinks` replaces both app links: an OS it leaves out has none)."""

    def required_scope(self, request) -> str:
        return ApiScope.LINKS_READ if request.method == "GET" else ApiScope.LINKS_WRITE

    def get(self, request: Request, domain: str, code: str) -> Response:
        return Response(bitlink(request, visible_link(request, domain, code)))

    def patch(self, request: Request, domain: str, code: str) -> Response:
        link = visible_link(request, domain, code)  # 404 first: others' codes cannot be probed
        body = body_of(request)
        changes: dict[str, object] = {}
        for field in ("title", "long_url"):
            if field in body:
                changes[field] = optional_text(body, field) or ""
        if "tags" in body:
            changes["tags"] = optional_tags(body) or []
        if "archived" in body:
            if not isinstance(body["archived"], bool):
                raise invalid_arg("archived", "`archived` is true or false.")
            changes["archived"] = body["archived"]
        if "deeplinks" in body:
            changes.update(deeplink_changes(body["deeplinks"]))
        link = link_update(
            code=link.code,
            user=request.user,
            domain=link.domain_host or None,
            request_host=request.get_host(),
            workspace_id=pinned_workspace_id(request.auth),
            **changes,
        )
        return Response(bitlink(request, link))


class ExpandView(BitlyView):
    """POST /v4/expand {bitlink_id} → {created_at, link, id, long_url}: a read."""

    scope = ApiScope.LINKS_READ

    def is_write(self, request) -> bool:
        return False  # counted as a read (core.api.throttles)

    def post(self, request: Request) -> Response:
        domain, code = parse_bitlink_id(body_of(request).get("bitlink_id"))
        link = visible_link(request, domain, code)
        shaped = bitlink(request, link)
        return Response({key: shaped[key] for key in ("created_at", "link", "id", "long_url")})


@csrf_exempt
def bitly_not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Other paths under /v4/: Bitly's NOT_FOUND, as JSON."""
    body = {"message": "NOT_FOUND", "description": "No such endpoint here.", "resource": ""}
    return JsonResponse(body, status=404)


BITLINK = "bitlinks/<str:domain>/<str:code>"
# Included under /v4/ after compat.bitly.clicks's clicks paths: the last pattern answers every
# other path.
urlpatterns = [
    path("shorten", ShortenView.as_view(), name="bitly-shorten"),
    path("bitlinks", BitlinksView.as_view(), name="bitly-bitlinks"),
    path("expand", ExpandView.as_view(), name="bitly-expand"),
    path(BITLINK, BitlinkView.as_view(), name="bitly-bitlink"),
    re_path(r"^(?P<rest>.+)$", bitly_not_found),
]
