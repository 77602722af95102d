"""Which way a change came in: the site's pages, the API with a key or token, another
shortener's API (Shlink, YOURLS, Bitly), the Django admin, or a command.

The channel is the request's, not the service's: the same service (links.services.change.
link_update) serves all of them, so the request marks the channel once (ChannelMiddleware,
from its path and its credentials) and the service's audit entry reads it here. Outside any
request (manage.py, a Celery task, the embedded runner's jobs) the channel is `command`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

WEB = "web"
API = "api"
COMPAT = "compat"
ADMIN = "admin"
COMMAND = "command"
CHANNELS = (WEB, API, COMPAT, ADMIN, COMMAND)
LABELS = {
    WEB: "Web",
    API: "API (key or token)",
    COMPAT: "Compat API (Shlink, YOURLS, Bitly)",
    ADMIN: "Admin",
    COMMAND: "Command",
}

_current: ContextVar[str | None] = ContextVar("audit_channel", default=None)
_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)

# Other shorteners' APIs (shorturl_project/urls.py): Shlink's /rest/, Bitly's /v4/, YOURLS.
_COMPAT_PREFIXES = ("/rest/", "/v4/", "/yourls-api.php")


def current() -> str:
    """The channel of the change being made now."""
    return _current.get() or COMMAND


def current_user():
    """Who is making the change now, for a service not told (a domain's, changed by staff):
    the request's signed-in user (the API's too: DRF sets it on the request once it has
    authenticated the call); None outside a request or for an anonymous one."""
    request = _request.get()
    user = getattr(request, "user", None) if request is not None else None
    return user if user is not None and user.is_authenticated else None


@contextmanager
def acting_through(channel: str) -> Iterator[None]:
    """Changes made inside are told as made through `channel` (a request, or a test)."""
    token = _current.set(channel)
    try:
        yield
    finally:
        _current.reset(token)


def channel_of(request: HttpRequest) -> str:
    """A request's channel, from its path and credentials: the native API is `api` when called
    with a key or token (`Authorization`), `web` when the site's own pages call it with the
    session."""
    path = request.path_info
    if path.startswith("/admin/"):
        return ADMIN
    if path.startswith(_COMPAT_PREFIXES):
        return COMPAT
    if path.startswith("/api/") and request.META.get("HTTP_AUTHORIZATION"):
        return API
    return WEB


class ChannelMiddleware:
    """Marks each request's channel for the audit entries its changes leave."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            with acting_through(channel_of(request)):
                return self.get_response(request)
        finally:
            _request.reset(token)
