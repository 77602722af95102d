"""One HTTP attempt of a delivery: the body's bytes, its signature, the POST and its answer.

The POST goes to an address webhooks.targets has just checked, not to whatever the name resolves
to a moment later (DNS rebinding): urllib3 (requests' own transport) connects to that address
while the Host header, TLS's SNI and the certificate check use the URL's host name.

Never called from the redirect path: only the delivery services (a Celery task, the embedded
runner's job, or the "Send a test" button) reach it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from urllib3.exceptions import HTTPError, TimeoutError

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


def _pool(scheme: str, address: str, port: int, host: str) -> urllib3.HTTPConnectionPool:
    """A connection pool to `address` that speaks to it as `host`."""
    timeout = urllib3.Timeout(connect=TIMEOUT_SECONDS, read=TIMEOUT_SECONDS)
    if scheme == "https":
        return urllib3.HTTPSConnectionPool(
            address,
            port,
            timeout=timeout,
            retries=False,
            cert_reqs="CERT_REQUIRED",
            ca_certs=certifi.where(),
            server_hostname=host,  # SNI
            assert_hostname=host,  # the certificate must name the URL's host, not the address
        )
    return urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)


def _open(url: str, addresses: list[str], body: bytes, headers: dict[str, str]):
    """POST to the first of `addresses` that takes the connection; the answer unread."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = parts.netloc.rsplit("@", 1)[-1]  # never the userinfo
    error: Exception | None = None
    for address in addresses:
        pool = _pool(parts.scheme, address, port, parts.hostname)
        try:
            return pool.urlopen(
                "POST",
                target,
                body=body,
                headers={**headers, "Host": host_header},
                redirect=False,  # a redirect could lead anywhere
                retries=False,
                preload_content=False,  # only the start of the answer is read, however long
            )
        except TimeoutError:
            raise
        except HTTPError as exc:
            error = exc
    raise error or HTTPError("no address to connect to")


def post(*, url: str, secret: str, payload: dict) -> AttemptResult:
    """POST the payload; 2xx is delivered."""
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
        response = _open(url, addresses, body, headers)
        try:
            start = response.read(EXCERPT_LENGTH * 4, decode_content=True)
        finally:
            response.release_conn()
    except TimeoutError:
        return AttemptResult(delivered=False, error=f"No answer within {TIMEOUT_SECONDS:g} s.")
    except HTTPError as exc:
        return AttemptResult(delivered=False, error=f"Could not connect: {exc}"[:1000])
    excerpt = start.decode("utf-8", errors="replace")[:EXCERPT_LENGTH]
    delivered = 200 <= response.status < 300
    return AttemptResult(
        delivered=delivered,
        status_code=response.status,
        excerpt=excerpt,
        error="" if delivered else f"The receiver answered {response.status}.",
    )
