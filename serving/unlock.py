"""The unlock page of a password-protected link: GET /<code> shows a form (200, not counted);
the password POSTed there, or sent by an API client as `X-Link-Password` on GET, is checked
here and, when right, the click goes on through serving.gates.decide (cap, destination, visit).

A POSTed form is answered 303 See Other: the browser follows it with a GET and never re-sends
the form (with the password) to the destination, whatever the link's own redirect type (a 307
or 308 would repeat the POST there). A header on GET gets the link's own redirect.

Every check costs ~0.3 s of CPU (PBKDF2 at Django's iterations), so tries are throttled per
client (IP, IPv6 /64) BEFORE the check: SHORTURL_UNLOCK_TRIES per
SHORTURL_UNLOCK_WINDOW_SECONDS, counted in the cache (Redis in services mode: every node
shares the count; embedded mode: per worker process, so a node lets a client try at most
WEB_CONCURRENCY times that). A try is counted when it starts and given back when it was
right, so a flood of wrong ones hashes at most that many before it meets 429.

The visit keeps the referrer the visitor came with: the form's POST carries the unlock page
itself as its Referer, so the page holds the first GET's Referer in a hidden field (cut to the
visit's MAX_REFERRER, escaped like any text on a page; whatever comes back is the visitor's
word, as the header was) and the right password's click is recorded with it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time

from csp.constants import SELF
from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from analytics.messages import MAX_REFERRER
from links.cache import LinkEntry
from links.forms import UnlockForm
from serving import gates
from serving.not_found_limit import client_key

logger = logging.getLogger(__name__)

WRONG_PASSWORD = "That password is not right."  # noqa: S105 - the message, not a password
HEADER = "HTTP_X_LINK_PASSWORD"
# The unlock form's hidden field with the referrer of the visitor's first GET.
REFERRER_FIELD = "referrer"


def _window() -> tuple[str, int]:
    """(the current window's key part, seconds until it turns)."""
    seconds = max(1, settings.SHORTURL_UNLOCK_WINDOW_SECONDS)
    now = time.time()
    number = int(now // seconds)
    return str(number), max(1, math.ceil((number + 1) * seconds - now))


def _tries_key(request: HttpRequest) -> str:
    return f"unlock-tries:{client_key(request.META)}:{_window()[0]}"


def start_try(request: HttpRequest) -> bool:
    """Count a try for this client; False when it is past its tries for the window."""
    key = _tries_key(request)
    timeout = settings.SHORTURL_UNLOCK_WINDOW_SECONDS + 5
    try:
        cache.add(key, 0, timeout)
        tries = cache.incr(key)
    except ValueError:  # the key was gone (evicted, or a cache that ignored an outage)
        cache.set(key, 1, timeout)
        tries = 1
    return tries <= settings.SHORTURL_UNLOCK_TRIES


def give_back_try(request: HttpRequest) -> None:
    """A right password: the try does not count against the client."""
    with contextlib.suppress(ValueError):  # gone meanwhile: nothing to give back
        cache.decr(_tries_key(request))


def visitor_referrer(request: HttpRequest) -> str:
    """Where the visitor came from: on the form's POST, the referrer its page carried (the
    POST's own Referer is the unlock page); else the request's Referer. At most MAX_REFERRER
    characters, as a visit keeps."""
    if request.method == "POST" and REFERRER_FIELD in request.POST:
        referrer = request.POST[REFERRER_FIELD]
    else:
        referrer = request.META.get("HTTP_REFERER", "")
    return referrer[:MAX_REFERRER]


def _page(
    request: HttpRequest,
    entry: LinkEntry,
    *,
    form: UnlockForm | None = None,
    status: int = 200,
    throttled: bool = False,
) -> HttpResponse:
    response = render(
        request,
        "links/unlock.html",
        {
            "code": entry.code,
            "form": form or UnlockForm(),
            "referrer_field": REFERRER_FIELD,
            "referrer": visitor_referrer(request),
            "throttled": throttled,
            "minutes": math.ceil(_window()[1] / 60),
        },
        status=status,
    )
    # The right password is answered 303 to the destination, on another site: Chromium holds
    # a form's redirects to the page's CSP `form-action` too, so the site's `'self'` would
    # block the unlock. Any http(s) site, not the destination's own: the header must not give
    # it away before the password is given (long URLs are http(s) only: services.policy).
    response._csp_replace = {"form-action": [SELF, "https:", "http:"]}
    # Not to be indexed, nor kept: the page stands between a visitor and a private link.
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Cache-Control"] = "private, no-store"
    if throttled:
        response["Retry-After"] = str(_window()[1])
    return response


def unlock(request: HttpRequest, entry: LinkEntry) -> HttpResponse | None:
    """For a request to a link whose password it has not proved (serving.redirect.resolve said
    gates.UNLOCK): the unlock page to answer, or None once the password it carries is right
    (gates.UNLOCKED is then set, and the caller decides the click again)."""
    from_form = request.method == "POST"
    if from_form:
        form = UnlockForm(request.POST)
        if not form.is_valid():
            return _page(request, entry, form=form, status=400)
        given = form.cleaned_data["password"]
    elif HEADER in request.META:
        given = request.META[HEADER]
    else:
        return _page(request, entry)

    if not start_try(request):
        return _page(request, entry, status=429, throttled=True)
    if not check_password(given, entry.password_hash):
        form = UnlockForm.refused(WRONG_PASSWORD)
        # A form's wrong value is a bad request; a header's is a refused credential.
        return _page(request, entry, form=form, status=400 if from_form else 403)
    give_back_try(request)
    request.META[gates.UNLOCKED] = entry.password_hash
    if from_form:
        # The click's visit (serving.gates.decide, next) reads the referrer from here.
        request.META["HTTP_REFERER"] = visitor_referrer(request)
    return None
