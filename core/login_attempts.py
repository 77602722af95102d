"""What django-axes needs from the project to count failed sign-ins (settings: AXES_*).

Axes counts failures per username and client IP in the database and refuses a sign-in past
LOGIN_FAILURE_LIMIT for LOGIN_LOCKOUT_MINUTES, on /accounts/login/ and /admin/login/ alike.
These hooks make it count the way the rest of the project does.
"""

from __future__ import annotations

import unicodedata

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.client_ip import client_ip


def client_address(request: HttpRequest) -> str:
    """The client as the visit capture and the API throttles see it (NUM_PROXIES deep), not
    whatever a client writes into X-Forwarded-For."""
    return client_ip(request.META)


def attempted_username(request: HttpRequest, credentials: dict | None) -> str | None:
    """The username tried, folded as MariaDB's utf8mb4_unicode_ci compares it (case, accents,
    trailing spaces), so that "Marketer" and "markéter " count against the same account."""
    field = get_user_model().USERNAME_FIELD
    username = (credentials or {}).get(field)
    if username is None:
        username = request.POST.get(field)
    if username is None:
        return None
    decomposed = unicodedata.normalize("NFKD", str(username).casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char)).rstrip()


def is_provider_answer(request: HttpRequest, credentials: dict | None) -> bool:
    """A sign-in through the single sign-on provider (accounts.oidc: its callback authenticates
    with the nonce it sent), not a password tried here: never counted nor locked out. The provider
    guards its own passwords; counting refusals here (an unverified address, a domain not
    allowed) would lock everyone behind one address out of single sign-on."""
    return "nonce" in (credentials or {})


# Set to True on its response by a view that answers a locked-out sign-in itself, in the format
# its callers read (the YOURLS API's 429 + Retry-After): that answer is kept, not replaced by the
# page. The sign-in was refused all the same: the view's credentials went through axes.
ANSWERED_BY_VIEW = "lockout_answered_by_view"


def lockout_seconds() -> int:
    """How long a locked-out sign-in waits (each try meanwhile starts the wait again)."""
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def locked_out_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """A page for a person (429, Retry-After): when to try again, and whom to ask."""
    if original_response is not None and getattr(original_response, ANSWERED_BY_VIEW, False):
        return original_response
    seconds = lockout_seconds()
    response = render(
        request, "registration/locked_out.html", {"minutes": round(seconds / 60)}, status=429
    )
    # Exact: each try while locked out starts the wait again (axes' default).
    response["Retry-After"] = str(seconds)
    return response
