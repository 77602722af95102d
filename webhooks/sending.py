"""One HTTP attempt of a delivery: the body's bytes, its signature, the POST and its answer.

Never called from the redirect path: only the delivery services (a Celery task, the embedded
runner's job, or the "Send a test" button) reach it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

import requests

from .targets import UnsafeTarget, check_target

TIMEOUT_SECONDS = 5.0
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


def post(*, url: str, secret: str, payload: dict) -> AttemptResult:
    """POST the payload; 2xx is delivered. Redirects are not followed (they could lead anywhere)."""
    try:
        check_target(url)  # again now: the name may resolve elsewhere than when it was saved
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
        response = requests.post(
            url,
            data=body,
            headers=headers,
            timeout=TIMEOUT_SECONDS,
            allow_redirects=False,
            stream=True,  # only the start of the answer is read, however long it is
        )
        with response:
            start = next(response.iter_content(EXCERPT_LENGTH * 4), b"")
    except requests.Timeout:
        return AttemptResult(delivered=False, error=f"No answer within {TIMEOUT_SECONDS:g} s.")
    except requests.RequestException as exc:
        return AttemptResult(delivered=False, error=f"Could not connect: {exc}"[:1000])
    excerpt = start.decode(response.encoding or "utf-8", errors="replace")[:EXCERPT_LENGTH]
    delivered = 200 <= response.status_code < 300
    return AttemptResult(
        delivered=delivered,
        status_code=response.status_code,
        excerpt=excerpt,
        error="" if delivered else f"The receiver answered {response.status_code}.",
    )
