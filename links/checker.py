"""One check of one destination URL, as the health checker (links.services.health) does it: a GET
that follows up to MAX_REDIRECTS redirects, each hop's address checked first by the one outbound
address policy (links.outbound, the webhooks' rule: no loopback or private targets, the
connection going to the address just checked), all of it within one deadline.

Only the start of the body is read (BODY_CAP), for the soft-404 hints; nothing is stored but
what CheckResult holds. HEAD is not used: many sites answer it differently from GET (405, 404,
or a 200 for a page that is gone).

No database here: the caller records the result and decides what it means.
"""

from __future__ import annotations

import re
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from django.conf import settings
from urllib3.exceptions import (
    HTTPError,
    NameResolutionError,
    NewConnectionError,
    SSLError,
    TimeoutError,
)

from links.models import CheckError
from links.outbound import Deadline, LookupTimeout, UnsafeTarget, check_target, open_pinned

MAX_REDIRECTS = 5
BODY_CAP = 64 * 1024
USER_AGENT = "shorturl-link-checker/1"
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
# A 404 or 410 says the page is gone; every other 4xx (401, 403, 405, 429…) is most often a
# site refusing robots, while people get the page: a hint, not a failure.
_GONE = frozenset((404, 410))
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_H1 = re.compile(rb"<h1[^>]*>(.*?)</h1>", re.IGNORECASE | re.DOTALL)
_NOT_FOUND_WORDS = re.compile(
    rb"\b(404|not found|page (?:does not|doesn't) exist|no longer available|page not found)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CheckResult:
    url: str
    ok: bool
    status_code: int | None = None
    final_url: str = ""
    elapsed_ms: int = 0
    error: str = ""  # a CheckError value; "" when ok with no hint
    detail: str = ""  # in words, for the link's reason and the history

    @property
    def counts(self) -> bool:
        """Whether it says anything about the destination: a check the address rule stopped
        (BLOCKED) says nothing either way."""
        return self.error != CheckError.BLOCKED


def user_agent() -> str:
    """`shorturl-link-checker/1`, with the page that tells site owners what it is when the
    operator names one (settings.LINK_CHECK_ABOUT_URL)."""
    about = settings.LINK_CHECK_ABOUT_URL
    return f"{USER_AGENT} (+{about})" if about else USER_AGENT


def soft_404_hint(url: str, final_url: str, body: bytes) -> str:
    """Why a 200 answer looks like a "not found" page ("" when it does not): its title or first
    heading says so, or a deep link was redirected to the site's front page. A hint only: many
    real pages mention 404s, and shops send sold-out items to their front page on purpose."""
    for pattern in (_TITLE, _H1):
        match = pattern.search(body)
        if match and _NOT_FOUND_WORDS.search(match[1]):
            text = match[1].decode("utf-8", "replace").strip()[:80]
            return f"the page's {'title' if pattern is _TITLE else 'heading'} says {text!r}"
    asked, landed = urlsplit(url), urlsplit(final_url)
    if asked.path.strip("/") and not landed.path.strip("/") and not landed.query:
        return "a deep link was redirected to the site's front page"
    return ""


def check_url(url: str, *, seconds: float) -> CheckResult:
    """GET `url` the way a visitor's browser would reach it; over within `seconds` whatever the
    servers on the way do."""
    started = time.monotonic()
    deadline = Deadline(seconds)
    try:
        result = _follow(url, deadline)
    finally:
        deadline.cancel()
    elapsed = int((time.monotonic() - started) * 1000)
    return CheckResult(**{**result, "url": url, "elapsed_ms": elapsed})


def _failure(error: str, detail: str, **extra) -> dict:
    return {"ok": False, "error": error, "detail": detail[:300], **extra}


def _follow(url: str, deadline: Deadline) -> dict:
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        if deadline.over():
            return _timed_out(deadline, current)
        try:
            addresses = check_target(
                current,
                what="link checks",
                allow_private=settings.LINK_CHECK_ALLOW_PRIVATE,
                seconds=deadline.left(),  # the lookup is part of the fetch
            )
        except LookupTimeout:
            return _timed_out(deadline, current)
        except UnsafeTarget as exc:
            message = str(exc)
            if "cannot be resolved" in message:
                return _failure(CheckError.DNS, message, final_url=current)
            return _failure(CheckError.BLOCKED, f"Not checked: {message}", final_url=current)
        try:
            status, location, body = _get(current, addresses, deadline)
        except (HTTPError, OSError) as exc:
            return _connection_failure(exc, deadline, current)
        if status in _REDIRECTS and location:
            current = urljoin(current, location)
            continue
        return _judged(url, current, status, body)
    return _failure(
        CheckError.HTTP, f"More than {MAX_REDIRECTS} redirects in a row.", final_url=current
    )


def _judged(url: str, final_url: str, status: int, body: bytes) -> dict:
    answer = {"status_code": status, "final_url": final_url}
    if status >= 500 or status in _GONE:
        return _failure(CheckError.HTTP, f"{final_url} answered {status}.", **answer)
    if status >= 400:
        return {**answer, "ok": True, "detail": f"Answered {status} (it may refuse robots)."}
    hint = soft_404_hint(url, final_url, body) if status == 200 else ""
    if hint:
        return {**answer, "ok": True, "error": CheckError.SOFT404, "detail": f"Hint: {hint}."}
    return {**answer, "ok": True}


def _connection_failure(exc: Exception, deadline: Deadline, url: str) -> dict:
    if isinstance(exc, NewConnectionError) and not deadline.over():
        # urllib3 files a refused connection under its timeouts: told apart first.
        return _failure(CheckError.REFUSED, f"Could not connect: {exc}", final_url=url)
    if deadline.over() or isinstance(exc, TimeoutError):
        return _timed_out(deadline, url)
    reason = getattr(exc, "reason", None) or exc
    if isinstance(exc, SSLError) or isinstance(reason, ssl.SSLError | SSLError):
        return _failure(CheckError.TLS, f"TLS error: {reason}", final_url=url)
    if isinstance(reason, NameResolutionError):
        return _failure(CheckError.DNS, f"The name did not resolve: {reason}", final_url=url)
    # Refused, reset, or the server closed the connection without an answer.
    return _failure(CheckError.REFUSED, f"Could not connect: {reason}", final_url=url)


def _timed_out(deadline: Deadline, url: str) -> dict:
    return _failure(
        CheckError.TIMEOUT, f"No complete answer within {deadline.seconds:g} s.", final_url=url
    )


def _get(url: str, addresses: list[str], deadline: Deadline) -> tuple[int, str, bytes]:
    """(status, Location, the body's start) from the first of `addresses` that answers."""
    headers = {
        "User-Agent": user_agent(),
        "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
    }
    # No redirect followed: each hop's address is checked first (_follow).
    response = open_pinned("GET", url, addresses, deadline, headers=headers)
    try:
        body = response.read(BODY_CAP, decode_content=True) if response.status == 200 else b""
    finally:
        response.release_conn()
    if deadline.over():
        raise TimeoutError("cut off at the deadline")
    return response.status, response.headers.get("Location", ""), body
