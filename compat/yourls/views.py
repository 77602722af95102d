"""YOURLS's API, `/yourls-api.php`, over the links services: for tools written for YOURLS.

GET or POST (form fields); parameters are read as YOURLS reads them (its `$_REQUEST`: the query
string, form fields over it). Actions `shorturl`, `expand`, `url-stats`, `stats`, `db-stats` and
`version` answer with YOURLS 1.9's field names, `status`/`code` strings and `error:*` codes, in
`format` `json`, `jsonp` (the JSON in a call of the `callback` named), `xml` (YOURLS's
default) or `simple` (the bare short or long URL as text). Credentials: `signature` = an API key
or DRF token (compat.auth), or `username` + `password` (the sign-in form's guard counts them),
never a cookie: so any origin may call (CORS `*`, a preflight answered without credentials),
as pages using YOURLS's JavaScript clients do. A user reaches their own links only (staff: every
link), exactly as on the native API. `shorturl` keeps YOURLS's unique URLs: a URL the caller
already has a link to answers "already exists" with that link. docs/api-yourls.md says what
differs from YOURLS.

Only the answers are shaped here: creating, finding and counting links is the services' and
selectors' work (link_create, link_for_long_url, link_get_visible, link_click_totals,
link_ranking, link_totals).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element, SubElement, tostring

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from compat.auth import SignInLockedOut, credential_for, user_for_password
from core.api.base import (
    KeyLimitHeadersMixin,
    WrongCredentialsThrottledMixin,
    api_exception_handler,
)
from core.api.scopes import ApiScope, HasKeyScope
from core.api.throttles import API_THROTTLES
from core.cors import preflight_answer, readable_from_any_origin
from core.login_attempts import ANSWERED_BY_VIEW, lockout_seconds
from links import domains
from links.codes.aliases import ALIAS_RE
from links.models import UrlLink
from links.selectors import (
    LINK_RANKINGS,
    AmbiguousCode,
    LinkNotFound,
    default_domain_host,
    link_click_totals,
    link_for_long_url,
    link_get_visible,
    link_ranking,
    link_totals,
)
from links.services.create import link_create
from links.services.policy import LOOP
from links.shortlinks import link_short_url
from workspaces.selectors import pinned_workspace_id

# What `version` says: the YOURLS whose answers these are.
YOURLS_VERSION = "1.9.2"

# YOURLS's own words, which its clients show or compare.
PLEASE_LOG_IN = "Please log in"
INVALID_LOGIN = "Invalid username or password"
NOT_FOUND = "Error: short URL not found"
UNKNOWN_ACTION = 'Unknown or missing "action" parameter'
STATS_AS_TEXT = "Need either XML or JSON format for stats"

STATS_DEFAULT_LIMIT = 10
STATS_MAX_LIMIT = 500  # the native list's largest page
STATS_MAX_START = 10**9

Reply = dict[str, object]


# --- Reading a call ----------------------------------------------------------------------------


def yourls_params(request) -> dict[str, str]:
    """YOURLS's `$_REQUEST`: the query string's parameters with the form's fields over them.

    Read from Django's request, never parsed by DRF (a JSON body is not YOURLS's)."""
    django_request = getattr(request, "_request", request)
    return {**django_request.GET.dict(), **django_request.POST.dict()}


def _whole_number(text: str | None, *, default: int, low: int, high: int) -> int:
    try:
        number = int((text or "").strip())
    except ValueError:
        return default
    return max(low, min(high, number))


def keyword_and_host(shorturl: str) -> tuple[str, str | None]:
    """What `shorturl` names: (keyword, host) for a full short URL (`https://s.example/abc`),
    (keyword, None) for a bare keyword (`abc`)."""
    text = (shorturl or "").strip()
    if "://" not in text:
        return text, None
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
    except ValueError:  # not a URL after all (`http://[oops/abc`): names no link
        return "", ""
    return parts.path.rstrip("/").rsplit("/", 1)[-1], host


def visible_link(request: Request, shorturl: str) -> UrlLink:
    """The caller's link (staff: anyone's) that a keyword or full short URL names.

    A full short URL names its domain by its host, as the redirect reads it (links.domains): a
    host that is none of ours, or a link the caller may not see, is LinkNotFound. A bare keyword
    is the default domain's link, else the caller's only one (AmbiguousCode when several)."""
    keyword, host = keyword_and_host(shorturl)
    if not ALIAS_RE.match(keyword):
        raise LinkNotFound(keyword)  # not the shape of any code: no query
    request_host = request.get_host()
    domain = None
    if host is not None:
        route = domains.current_table().route_for(host)
        if route is None:
            raise LinkNotFound(keyword)
        domain = route.host or default_domain_host(request_host)
    return link_get_visible(
        code=keyword,
        user=request.user,
        domain=domain,
        request_host=request_host,
        workspace_id=pinned_workspace_id(request.auth),
    )


# --- Shaping answers ---------------------------------------------------------------------------


def yourls_date(moment: datetime) -> str:
    """YOURLS's timestamps: `2026-03-01 14:05:09` (here always UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def trim_long_string(text: str, length: int = 60, append: str = "[...]") -> str:
    """yourls_trim_long_string: long URLs shortened for messages."""
    if len(text) <= length:
        return text
    return text[: length - len(append)] + append


def _short_url(request: Request, link: UrlLink) -> str:
    return link_short_url(link, request=request._request)


def _without_scheme(url: str) -> str:
    return re.sub(r"^https?://", "", url)


def link_fields(request: Request, link: UrlLink, *, clicks: int) -> Reply:
    """A link as `url-stats` and `stats` show it (YOURLS keeps no creator IP here: "")."""
    return {
        "shorturl": _short_url(request, link),
        "url": link.long_url,
        "title": link.title,
        "timestamp": yourls_date(link.created_at),
        "ip": "",
        "clicks": str(clicks),  # YOURLS's database hands numbers back as strings
    }


_XML_UNSAFE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_fill(parent: Element, reply: Reply) -> None:
    for key, value in reply.items():
        child = SubElement(parent, key)
        if isinstance(value, dict):
            _xml_fill(child, value)
        else:
            # ElementTree escapes markup; characters XML cannot hold at all are replaced.
            child.text = _XML_UNSAFE.sub("\ufffd", "" if value is None else str(value))


def xml_document(reply: Reply) -> str:
    """The answer as YOURLS's XML: one element per key, nested for nested keys, in <result>."""
    root = Element("result")
    _xml_fill(root, reply)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="unicode")


# A JSONP callback: a JavaScript name, then `.name` or `[index]` steps (`cb`, `jQuery123_456`,
# `a.b`, and `__yourls1700000000000_jsonp[1700000000001]` as npm's yourls-api names its own).
# Nothing else can stand before the answer's `(`: no call, quote, operator or escape.
JSONP_CALLBACK = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*|\[[0-9]{1,20}\])*", re.ASCII
)
JSONP_CALLBACK_MAX_LENGTH = 200
BAD_CALLBACK = "Invalid callback parameter"  # YOURLS's words

# CORS: what a page on another origin may send (npm's yourls-api adds X-Requested-With).
CORS_ALLOW_METHODS = ("GET", "POST", "OPTIONS")
CORS_ALLOW_HEADERS = "Content-Type, X-Requested-With"


class CallbackRefused(exceptions.APIException):
    """`format=jsonp` with no callback, or one that is not a JavaScript name (callback_refused)."""

    status_code = 400


def jsonp_callback(params: dict[str, str]) -> str | None:
    """The callback a call names: `callback`, else `jsonp` (YOURLS reads both), else None."""
    for name in ("callback", "jsonp"):
        if name in params:
            return params[name]
    return None


def is_jsonp(fmt: str | None) -> bool:
    return (fmt or "").strip().lower() == "jsonp"


def callback_refused(callback: str | None) -> HttpResponse | None:
    """For `format=jsonp`: None when `callback` may wrap the answer, else YOURLS's refusal (400
    `{"errorCode": "400", "error": "Invalid callback parameter"}`, with a `message` saying what
    a callback may be). As JSON, not a script: a page that loads it runs nothing."""
    if (
        callback is not None
        and len(callback) <= JSONP_CALLBACK_MAX_LENGTH
        and JSONP_CALLBACK.fullmatch(callback)
    ):
        return None
    message = (
        "callback: format=jsonp needs the name of a JavaScript function to call, such as cb, "
        f"jQuery123_456, a.b or a[0] (letters, digits, _ and $; at most "
        f"{JSONP_CALLBACK_MAX_LENGTH} characters)."
    )
    body = {"errorCode": "400", "error": BAD_CALLBACK, "message": message}
    return HttpResponse(
        json.dumps(body), status=400, content_type="application/json; charset=utf-8"
    )


def render_reply(
    reply: Reply, fmt: str | None, *, status: int | None = None, callback: str | None = None
) -> HttpResponse:
    """The answer in the format asked for (YOURLS's yourls_api_output).

    The HTTP status is the answer's `statusCode`, else its `errorCode`, else 200. `simple` is
    the text `format=simple` answers; the other formats leave it out. Without `format`: XML, and
    an unknown format answers as `simple`, as YOURLS does. `callback` (the call's, when it
    named one) is in every answer, as YOURLS puts it there; `jsonp` wraps the JSON in a call of
    it, once callback_refused has passed it."""
    reply = dict(reply)
    simple = str(reply.pop("simple", ""))
    if callback is not None:
        reply.setdefault("callback", callback)
    if status is None:
        status = int(reply.get("statusCode") or reply.get("errorCode") or 200)
    fmt = (fmt or "xml").strip().lower()
    if fmt == "jsonp":
        refused = callback_refused(callback)
        if refused is not None:
            return refused
        # json.dumps writes every non-ASCII character as \uXXXX (U+2028 and U+2029 too).
        body, content_type = f"{callback}({json.dumps(reply)})", "application/javascript"
    elif fmt == "json":
        body, content_type = json.dumps(reply), "application/json"
    elif fmt == "xml":
        body, content_type = xml_document(reply), "application/xml"
    else:
        body, content_type = simple, "text/plain"
    return HttpResponse(body, status=status, content_type=f"{content_type}; charset=utf-8")


# --- Actions -----------------------------------------------------------------------------------


def _field_messages(error: ValidationError) -> list[tuple[str, list[ValidationError]]]:
    """(field, refusals) of a service's ValidationError, the long URL first, then the keyword."""
    fields = error.error_dict if hasattr(error, "error_dict") else {"": error.error_list}
    order = {"long_url": 0, "alias": 1}
    return sorted(fields.items(), key=lambda item: order.get(item[0], 2))


def _shorturl_refused(error: ValidationError) -> Reply:
    """link_create's refusal as YOURLS's: a URL it cannot take is `error:nourl` (or
    `error:noloop` for this service's own URLs), HTTP 400, which YOURLS clients raise as such;
    a keyword refused (taken, reserved, ill-formed) `error:keyword`, answered 200 as YOURLS does
    (its clients read the reply); anything else `error:<field>`."""
    field, refusals = _field_messages(error)[0]
    message = " ".join(message for refusal in refusals for message in refusal.messages)
    if field == "long_url":
        code = "error:noloop" if any(r.code == LOOP for r in refusals) else "error:nourl"
        return {
            "status": "fail",
            "code": code,
            "message": message,
            "errorCode": "400",
            "statusCode": "400",
        }
    code = "error:keyword" if field == "alias" else f"error:{field or 'invalid'}"
    return {"status": "fail", "code": code, "message": message, "statusCode": 200}


def _already_exists(request: Request, link: UrlLink) -> Reply:
    """YOURLS's "already exists" (`error:url`) with the link the URL already has. HTTP 200, as
    YOURLS up to 1.8 sent it (1.9.1 on says 400): YOURLS's clients act on the reply only then
    (the PyPI client raises its YOURLSURLExistsError; a browser runs no JSONP answer of a 4xx,
    so npm's yourls-api would never hear back)."""
    short_url = _short_url(request, link)
    clicks = link_click_totals(link_ids=[link.pk], people=False)[link.pk]["clicks"]
    return {
        "status": "fail",
        "code": "error:url",
        "url": {
            "keyword": link.code,
            "url": link.long_url,
            "title": link.title,
            "date": yourls_date(link.created_at),
            "ip": "",
            "clicks": str(clicks),
        },
        "message": (
            f"{trim_long_string(link.long_url)} already exists in database "
            f"(short URL: {_without_scheme(short_url)})"
        ),
        "title": link.title,
        "shorturl": short_url,
        "statusCode": 200,
        "simple": short_url,
    }


def action_shorturl(request: Request, params: dict[str, str]) -> Reply:
    """`url`, optional `keyword` (an alias) and `title` → link_create, with YOURLS's unique URLs
    (YOURLS_UNIQUE_URLS, its default): a URL that already has a link in the caller's workspaces
    (link_for_long_url) answers "already exists" (`error:url`) with that link, whatever its
    keyword and whatever this call's `keyword` and `title`, as YOURLS checks the URL first.
    Someone else's link is never handed back: the caller gets a new one."""
    long_url = params.get("url", "")
    existing = link_for_long_url(
        user=request.user,
        long_url=long_url,
        request_host=request.get_host(),
        workspace_id=pinned_workspace_id(request.auth),
    )
    if existing is not None:
        return _already_exists(request, existing)
    try:
        result = link_create(
            user=request.user,
            long_url=long_url,
            alias=params.get("keyword", "").strip() or None,
            title=params.get("title", "").strip() or None,
            request_host=request.get_host(),
            pinned_workspace_id=pinned_workspace_id(request.auth),
        )
    except ValidationError as error:
        return _shorturl_refused(error)
    link = result.link
    if not result.created:  # made a moment ago by another call of the caller's
        return _already_exists(request, link)
    short_url = _short_url(request, link)
    return {
        "status": "success",
        "code": "",
        "url": {
            "keyword": link.code,
            "url": link.long_url,
            "title": link.title,
            "date": yourls_date(link.created_at),
            "ip": "",
        },
        "message": f"{trim_long_string(link.long_url)} added to database",
        "title": link.title,
        "shorturl": short_url,
        "statusCode": 200,
        "simple": short_url,
    }


def _lookup_refused(error: LinkNotFound, keyword: str) -> Reply:
    if isinstance(error, AmbiguousCode):
        message = (
            f"You have links with this keyword on several domains ({', '.join(error.hosts)}): "
            "send the full short URL."
        )
        return {"keyword": keyword, "message": message, "errorCode": 400, "simple": message}
    return {"keyword": keyword, "message": NOT_FOUND, "errorCode": 404, "simple": "not found"}


def action_expand(request: Request, params: dict[str, str]) -> Reply:
    """`shorturl` (a keyword or a full short URL) → its long URL."""
    shorturl = params.get("shorturl", "")
    try:
        link = visible_link(request, shorturl)
    except LinkNotFound as error:
        return _lookup_refused(error, keyword_and_host(shorturl)[0])
    return {
        "keyword": link.code,
        "shorturl": _short_url(request, link),
        "longurl": link.long_url,
        "title": link.title,
        "message": "success",
        "statusCode": 200,
        "simple": link.long_url,
    }


def action_url_stats(request: Request, params: dict[str, str]) -> Reply:
    """`shorturl` → the link with its clicks (people's, all time: link_click_totals)."""
    shorturl = params.get("shorturl", "")
    try:
        link = visible_link(request, shorturl)
    except LinkNotFound as error:
        refusal = _lookup_refused(error, keyword_and_host(shorturl)[0])
        return {
            "statusCode": refusal["errorCode"],
            "message": refusal["message"],
            "simple": refusal["message"],
        }
    clicks = link_click_totals(link_ids=[link.pk], people=False)[link.pk]["clicks"]
    return {
        "statusCode": 200,
        "message": "success",
        "link": link_fields(request, link, clicks=clicks),
    }


def _totals(request: Request) -> Reply:
    totals = link_totals(user=request.user, workspace_id=pinned_workspace_id(request.auth))
    return {"total_links": str(totals["links"]), "total_clicks": str(totals["clicks"])}


def action_stats(request: Request, params: dict[str, str]) -> Reply:
    """`filter` (top, bottom, rand, last; top by default), `limit` (10 by default, at most 500)
    and `start` → the caller's links so ranked, with the totals of `db-stats`."""
    ranking = params.get("filter", "").strip().lower()
    ranking = "rand" if ranking == "random" else ranking
    if ranking not in LINK_RANKINGS:
        ranking = "top"  # YOURLS's default for anything else
    limit = _whole_number(
        params.get("limit"), default=STATS_DEFAULT_LIMIT, low=0, high=STATS_MAX_LIMIT
    )
    start = _whole_number(params.get("start"), default=0, low=0, high=STATS_MAX_START)
    links = (
        link_ranking(
            user=request.user,
            by=ranking,
            limit=limit,
            offset=start,
            workspace_id=pinned_workspace_id(request.auth),
        )
        if limit
        else []
    )
    reply: Reply = {}
    if links:  # YOURLS leaves the key out when no link is listed
        reply["links"] = {
            f"link_{number}": link_fields(request, link, clicks=link.total_clicks)
            for number, link in enumerate(links, start=1)
        }
    reply.update(stats=_totals(request), statusCode=200, message="success", simple=STATS_AS_TEXT)
    return reply


def action_db_stats(request: Request, params: dict[str, str]) -> Reply:
    """How many links the caller has (staff: all of them) and their clicks."""
    return {
        "db-stats": _totals(request),
        "statusCode": 200,
        "message": "success",
        "simple": STATS_AS_TEXT,
    }


def action_version(request: Request, params: dict[str, str]) -> Reply:
    return {"version": YOURLS_VERSION, "statusCode": 200, "simple": YOURLS_VERSION}


ACTION_SCOPES = {
    "shorturl": ApiScope.LINKS_WRITE,
    "expand": ApiScope.LINKS_READ,
    "url-stats": ApiScope.STATS_READ,
    "stats": ApiScope.STATS_READ,
    "db-stats": ApiScope.STATS_READ,
}
ACTIONS: dict[str, Callable[[Request, dict[str, str]], Reply]] = {
    "shorturl": action_shorturl,
    "expand": action_expand,
    "url-stats": action_url_stats,
    "stats": action_stats,
    "db-stats": action_db_stats,
    "version": action_version,
}


# --- The view ----------------------------------------------------------------------------------


class YourlsAuthentication(BaseAuthentication):
    """YOURLS's credentials in the call's parameters, in YOURLS's order: `signature` (an API key
    or DRF token; with or without `timestamp`, which changes nothing: keys are stored hashed, so
    YOURLS's md5(timestamp + key) cannot be checked), else `username` + `password`."""

    def authenticate(self, request):
        params = yourls_params(request)
        signature = params.get("signature", "")
        if signature:
            credential = credential_for(signature)
            if credential is None:
                raise exceptions.AuthenticationFailed(PLEASE_LOG_IN)
            return credential
        username, password = params.get("username", ""), params.get("password", "")
        if username and password:
            user = user_for_password(request._request, username=username, password=password)
            if user is None:
                raise exceptions.AuthenticationFailed(INVALID_LOGIN)
            return user, None
        return None


class _FormatIsYourls(DefaultContentNegotiation):
    """`format` is YOURLS's parameter (json, xml, simple), not DRF's renderer override (which
    would answer 404 for `simple`): the view renders its answers itself."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class YourlsApiView(KeyLimitHeadersMixin, WrongCredentialsThrottledMixin, APIView):
    """`/yourls-api.php`: GET or POST, every action.

    Rate limits are the native API's (core.api.throttles), counted together with it: a
    `shorturl` is a write whatever its method, every other action a read, callers without
    (valid) credentials count per client IP."""

    authentication_classes = [YourlsAuthentication]
    permission_classes = [IsAuthenticated, HasKeyScope]
    throttle_classes = API_THROTTLES
    renderer_classes = [JSONRenderer]
    parser_classes = []  # parameters come from Django's request (yourls_params)
    content_negotiation_class = _FormatIsYourls
    schema = None  # not part of the native API's OpenAPI document (docs/api-yourls.md describes it)

    def is_write(self, request) -> bool:
        return yourls_params(request).get("action") == "shorturl"

    def required_scope(self, request) -> str | None:
        """An API key's scope each action needs (`version` none)."""
        return ACTION_SCOPES.get(yourls_params(request).get("action", ""))

    def initial(self, request, *args, **kwargs):
        """A JSONP call's callback is checked first: a refused one changes nothing (no link is
        made) and costs no credential check. A CORS preflight carries no credentials: answered
        without them (options), counted per client IP."""
        if request.method != "OPTIONS":
            params = yourls_params(request)
            if is_jsonp(params.get("format")) and callback_refused(jsonp_callback(params)):
                raise CallbackRefused
            return super().initial(request, *args, **kwargs)
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(
            request
        )
        self.check_throttles(request)
        return None

    def get(self, request: Request) -> HttpResponse:
        params = yourls_params(request)
        action = ACTIONS.get(params.get("action", ""))
        if action is None:
            reply: Reply = {"errorCode": 400, "message": UNKNOWN_ACTION, "simple": UNKNOWN_ACTION}
        else:
            reply = action(request, params)
        return render_reply(reply, params.get("format"), callback=jsonp_callback(params))

    post = get

    def options(self, request: Request, *args, **kwargs) -> HttpResponse:
        """The CORS preflight of a page on another origin (npm's yourls-api sends
        X-Requested-With, which needs one)."""
        return preflight_answer(CORS_ALLOW_METHODS, CORS_ALLOW_HEADERS)

    def finalize_response(self, request, response, *args, **kwargs):
        """Every answer may be read by a page on any origin, as the YOURLS CORS plugins let it:
        credentials are the call's own parameters, never a cookie, so another site's page
        reads nothing of a visitor's that it did not send itself."""
        response = super().finalize_response(request, response, *args, **kwargs)
        return readable_from_any_origin(
            response, expose="Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset"
        )

    def get_exception_handler(self):
        return api_exception_handler

    def handle_exception(self, exc: Exception) -> HttpResponse:
        """Refusals in YOURLS's shape (`{"errorCode", "message"}`), in the format asked for:
        403 for credentials, as YOURLS; otherwise the native API's status (429 with its
        Retry-After, 503 while the database is away, a logged 500)."""
        params = yourls_params(self.request)
        fmt, callback = params.get("format"), jsonp_callback(params)
        if isinstance(exc, CallbackRefused):
            return callback_refused(callback)
        if isinstance(exc, SignInLockedOut):
            seconds = lockout_seconds()
            message = (
                f"Too many failed sign-ins: try again in {max(1, round(seconds / 60))} minutes."
            )
            reply = {"message": message, "errorCode": 429, "simple": message}
            response = render_reply(reply, fmt, callback=callback or "")
            response["Retry-After"] = str(seconds)
            setattr(response, ANSWERED_BY_VIEW, True)  # not axes' HTML page instead
            return response
        if isinstance(exc, exceptions.AuthenticationFailed):
            message = str(exc.detail)
        elif isinstance(exc, exceptions.NotAuthenticated):
            sent_login = "username" in params or "password" in params
            message = INVALID_LOGIN if sent_login else PLEASE_LOG_IN
        else:
            return self._reshaped(super().handle_exception(exc), fmt, callback)
        # YOURLS's sign-in refusal names the callback, "" when none was sent.
        reply = {"message": message, "errorCode": 403, "simple": message}
        return render_reply(reply, fmt, callback=callback or "")

    @staticmethod
    def _reshaped(response, fmt: str | None, callback: str | None) -> HttpResponse:
        data = response.data if isinstance(response.data, dict) else {}
        message = str(data.get("detail") or "The request could not be answered.")
        reply = {"errorCode": response.status_code, "message": message, "simple": message}
        answer = render_reply(reply, fmt, status=response.status_code, callback=callback)
        for header in ("Retry-After", "Allow"):
            if header in response:
                answer[header] = response[header]
        return answer
