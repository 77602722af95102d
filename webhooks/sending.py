"""One HTTP attempt of a delivery: the body's bytes, its signature, the POST and its answer.

The POST goes to an address webhooks.targets has just checked, not to whatever the name resolves
to a moment later (DNS rebinding): urllib3 (requests' own transport) connects to that address
while the Host header, TLS's SNI and the certificate check use the URL's host name.

Every attempt has one deadline (settings.WEBHOOK_ATTEMPT_SECONDS) for all of it: connecting,
TLS, sending the body and reading the answer. A socket timeout alone is per read, so a receiver
that sends one byte every few seconds would hold the attempt, and its worker, for as long as it
likes; at the deadline a watchdog shuts the attempt's socket down, which ends any read or write
blocked on it.

Never called from the redirect path nor from a web request: only the delivery services, in a
lane of their own (the `webhooks` Celery queue's worker, or the embedded runner's webhooks
thread), reach it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from django.conf import settings
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import HTTPError, TimeoutError

from webhooks.targets import UnsafeTarget, check_target

# No single step (connecting, one read) may take longer than this, within the attempt's deadline.
STEP_TIMEOUT_SECONDS = 5.0
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


class _Deadline:
    """The attempt's deadline: the sockets it opens are shut down when it passes."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def over(self) -> bool:
        """Passed: its watchdog fired, or a step's own timeout (never longer than what was
        left) ran out with it."""
        return self.passed or time.monotonic() >= self.ends - 0.01

    def left(self) -> float:
        return max(self.ends - time.monotonic(), 0.001)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            passed = self.passed
        if passed:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # Wakes a recv()/send() blocked on it in the attempt's thread (close() alone does not);
    # an OSError: it was closed already.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _watched(cls: type[HTTPConnection], deadline: _Deadline) -> type[HTTPConnection]:
    """`cls`, its raw socket handed to `deadline` as soon as it is connected (before TLS)."""

    class Watched(cls):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    return Watched


def _pool(
    scheme: str, address: str, port: int, host: str, deadline: _Deadline
) -> urllib3.HTTPConnectionPool:
    """A connection pool to `address` that speaks to it as `host`, within `deadline`."""
    step = min(STEP_TIMEOUT_SECONDS, deadline.left())
    timeout = urllib3.Timeout(connect=step, read=step)
    if scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address,
            port,
            timeout=timeout,
            retries=False,
            cert_reqs="CERT_REQUIRED",
            ca_certs=certifi.where(),
            server_hostname=host,  # SNI
            assert_hostname=host,  # the certificate must name the URL's host, not the address
        )
        pool.ConnectionCls = _watched(HTTPSConnection, deadline)
    else:
        pool = urllib3.HTTPConnectionPool(address, port, timeout=timeout, retries=False)
        pool.ConnectionCls = _watched(HTTPConnection, deadline)
    return pool


def _open(
    url: str, addresses: list[str], body: bytes, headers: dict[str, str], deadline: _Deadline
):
    """POST to the first of `addresses` that takes the connection; the answer unread."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = parts.netloc.rsplit("@", 1)[-1]  # never the userinfo
    error: Exception | None = None
    for address in addresses:
        if deadline.passed:
            break
        pool = _pool(parts.scheme, address, port, parts.hostname, deadline)
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
    """POST the payload; 2xx is delivered. Over within settings.WEBHOOK_ATTEMPT_SECONDS, the
    name's lookup (webhooks.targets) included, whatever the receiver does."""
    deadline = _Deadline(attempt_seconds())
    try:
        return _post(url=url, secret=secret, payload=payload, deadline=deadline)
    finally:
        deadline.cancel()


def _post(*, url: str, secret: str, payload: dict, deadline: _Deadline) -> AttemptResult:
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
        response = _open(url, addresses, body, headers, deadline)
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
