"""One HTTP attempt of a delivery: the body's bytes, its signature, the POST and its answer.

The POST goes to an address webhooks.targets has just checked, not to whatever the name resolves
to a moment later (DNS rebinding): urllib3 (requests' own transport) connects to that address
while the Host header, TLS's SNI and the certificate check use the URL's host name.

Every attempt has one deadline (settings.WEBHOOK_ATTEMPT_SECONDS) for all of it: connecting,
TLS, sending the body and reading the answer (links.outbound.Deadline: a receiver that sends one
byte every few seconds is cut off at it, and never holds the attempt's worker for longer).

Never called from the redirect path nor from a web request: only the delivery services, in a
lane of their own (the `webhooks` Celery queue's worker, or the embedded runner's webhooks
thread), reach it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

from django.conf import settings
from urllib3.exceptions import HTTPError, TimeoutError

from links import outbound
from links.outbound import STEP_TIMEOUT_SECONDS, Deadline
from webhooks.targets import UnsafeTarget, check_target

EXCERPT_LENGTH = 500
USER_AGENT = "shorturl-webhooks/1"


def body_bytes(payload: dict) -> bytes:
    """The exact bytes sent (and signed): compact JSON, UTF-8."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def signature(secret: str, body: bytes) -> str:
    """The X-Shorturl-Signature header's value: `sha256=<hex HMAC-SHA256 of the raw body>`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class AttemptResult:
    delivered: bool
    status_code: int | None = None
    excerpt: str = ""
    error: str = ""


def attempt_seconds() -> float:
    return float(settings.WEBHOOK_ATTEMPT_SECONDS)


def post(*, url: str, secret: str, payload: dict) -> AttemptResult:
    """POST the payload; 2xx is delivered. Over within settings.WEBHOOK_ATTEMPT_SECONDS, the
    name's lookup (webhooks.targets) included, whatever the receiver does."""
    deadline = Deadline(attempt_seconds())
    try:
        return _post(url=url, secret=secret, payload=payload, deadline=deadline)
    finally:
        deadline.cancel()


def _post(*, url: str, secret: str, payload: dict, deadline: Deadline) -> AttemptResult:
    try:
        addresses = check_target(url)  # again now, and the connection goes to these
    except UnsafeTarget as exc:
        return AttemptResult(delivered=False, error=str(exc))
    body = body_bytes(payload)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Shorturl-Event": payload["event"],
        "X-Shorturl-Delivery": payload["id"],
        "X-Shorturl-Signature": signature(secret, body),
    }
    try:
        # A redirect is not followed: it could lead anywhere.
        response = outbound.open_pinned(
            "POST", url, addresses, deadline, headers=headers, body=body
        )
        try:
            start = response.read(EXCERPT_LENGTH * 4, decode_content=True)
        finally:
            response.release_conn()
    except (HTTPError, OSError) as exc:
        if deadline.over():
            return AttemptResult(
                delivered=False,
                error=f"No complete answer within {deadline.seconds:g} s: cut off.",
            )
        if isinstance(exc, TimeoutError):
            return AttemptResult(
                delivered=False, error=f"No answer within {STEP_TIMEOUT_SECONDS:g} s."
            )
        return AttemptResult(delivered=False, error=f"Could not connect: {exc}"[:1000])
    if deadline.over():
        # The answer was cut short by the deadline: what came is not the receiver's answer.
        return AttemptResult(
            delivered=False, error=f"No complete answer within {deadline.seconds:g} s: cut off."
        )
    excerpt = start.decode("utf-8", errors="replace")[:EXCERPT_LENGTH]
    delivered = 200 <= response.status < 300
    return AttemptResult(
        delivered=delivered,
        status_code=response.status,
        excerpt=excerpt,
        error="" if delivered else f"The receiver answered {response.status}.",
    )
