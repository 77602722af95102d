"""Where the service itself may connect to (SSRF), and how: the one outbound address policy that
webhook deliveries (webhooks.targets, webhooks.sending) and the destination health checker
(links.checker) both call.

An address is public when it is not loopback, private, link-local, multicast, reserved,
unspecified or otherwise not global; an IPv6 address carrying an IPv4 one (6to4, NAT64,
IPv4-mapped: links.services.policy.embedded_ipv4, the rule the link policy uses too) may not
carry such an IPv4 address either. check_target resolves the name once and hands back the
addresses it checked; the caller connects to one of those (open_pinned, pinned_pool) instead of
resolving the name again, so a name that resolves to a public address for the check and to
127.0.0.1 for the connection (DNS rebinding) never reaches 127.0.0.1.

Each caller says whether the address rule is lifted, from a setting of its own: webhooks from
SHORTURL_WEBHOOK_ALLOW_PRIVATE (a receiver on the operator's own network), the checker from
LINK_CHECK_ALLOW_PRIVATE (test-only: a destination is any link owner's to choose, so lifting it
lets anyone make the server fetch internal addresses). The scheme rule stays.

Every outbound request has one Deadline for all of it (the name's lookup, connecting, TLS,
sending, reading): a socket timeout alone is per read, so a server sending one byte every few
seconds would hold the caller for as long as it liked. At the deadline a watchdog shuts the
request's sockets down, which ends any read or write blocked on them.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ipaddress
import socket
import threading
import time
from urllib.parse import urlsplit

import certifi
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import HTTPError, NewConnectionError, TimeoutError

from links.services.policy import embedded_ipv4, is_local_address

# No single step (connecting, one read) may take longer than this, within the deadline.
STEP_TIMEOUT_SECONDS = 5.0


# getaddrinfo cannot be interrupted: a lookup with a time limit runs here, and its caller stops
# waiting at the limit. A few threads: a resolver that hangs holds one each until it gives up.
_lookups = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-dns")


class UnsafeTarget(Exception):
    """The target may not be called: the reason is the message."""


class LookupTimeout(Exception):
    """The name did not resolve within the time given."""


def _address_is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The address, and the IPv4 address it carries if it carries one (6to4, Teredo, NAT64,
    IPv4-compatible or -mapped: links.services.policy.embedded_ipv4), are both public. A mapped
    address is judged as its IPv4 address alone: ::ffff:0:0/96 is never global itself."""
    inner = embedded_ipv4(address)
    if inner is not None:
        if not _is_public(inner):
            return False
        if address.ipv4_mapped is not None:
            return True
    return _is_public(address)


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return not (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def resolve(host: str, port: int, *, seconds: float | None = None) -> list[str]:
    """The addresses `host` resolves to (one for an IP literal); LookupTimeout when `seconds`
    pass first."""
    try:
        if seconds is None:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        else:
            lookup = _lookups.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
            try:
                infos = lookup.result(timeout=seconds)
            except concurrent.futures.TimeoutError as exc:
                lookup.cancel()  # still queued behind hung lookups: never started
                raise LookupTimeout(f"{host} did not resolve within {seconds:.1f} s.") from exc
    except (OSError, UnicodeError) as exc:
        raise UnsafeTarget(f"The host {host} cannot be resolved.") from exc
    return sorted({info[4][0] for info in infos})


def check_target(
    url: str, *, what: str, allow_private: bool, seconds: float | None = None
) -> list[str]:
    """The addresses `url` may be reached at now (scheme, then every resolved address checked,
    unless `allow_private`); UnsafeTarget otherwise, its message naming `what` is sent
    ("webhooks", "link checks"); LookupTimeout when the lookup takes more than `seconds`. The
    caller connects to one of these, never resolving the name again."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTarget(f"Only http:// and https:// URLs with a host can receive {what}.")
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTarget("The URL's port is not a number.") from exc
    if not allow_private and is_local_address(host):
        raise UnsafeTarget(f"{host} is this machine: {what} cannot be sent there.")
    addresses = resolve(host, port, seconds=seconds)
    if allow_private:
        return addresses
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone id is no part of it
        if not _address_is_public(address):
            raise UnsafeTarget(
                f"{host} resolves to {address}, a loopback, private or reserved address: "
                f"{what} are sent to public addresses only."
            )
    return addresses


class Deadline:
    """One request's deadline: the sockets it opens are shut down when it passes."""

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
    # Wakes a recv()/send() blocked on it in the request's thread (close() alone does not);
    # an OSError: it was closed already.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _watched(cls: type[HTTPConnection], deadline: Deadline) -> type[HTTPConnection]:
    """`cls`, its raw socket handed to `deadline` as soon as it is connected (before TLS)."""

    class Watched(cls):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    return Watched


def pinned_pool(
    scheme: str, address: str, port: int, host: str, deadline: Deadline
) -> urllib3.HTTPConnectionPool:
    """A connection pool to `address` (one check_target handed back) that speaks to it as
    `host`: the Host header, TLS's SNI and the certificate check use the name, within
    `deadline`."""
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


def open_pinned(
    method: str,
    url: str,
    addresses: list[str],
    deadline: Deadline,
    *,
    headers: dict[str, str],
    body: bytes | None = None,
) -> urllib3.BaseHTTPResponse:
    """`method` on `url` at the first of `addresses` (check_target's) that takes the connection,
    spoken to as the URL's host (pinned_pool), within `deadline`: the answer unread
    (preload_content=False: the caller reads only the start it needs), a redirect not followed
    (its target is the caller's to check first). A connection refused tries the next address;
    a timeout ends it."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {**headers, "Host": parts.netloc.rsplit("@", 1)[-1]}  # never the userinfo
    error: Exception | None = None
    for address in addresses:
        if deadline.over():
            break
        pool = pinned_pool(parts.scheme, address, port, parts.hostname, deadline)
        try:
            return pool.urlopen(
                method,
                target,
                body=body,
                headers=headers,
                redirect=False,
                retries=False,
                preload_content=False,
            )
        except NewConnectionError as exc:  # a TimeoutError to urllib3: the next address may take it
            error = exc
        except TimeoutError:
            raise
        except HTTPError as exc:
            error = exc
    raise error or HTTPError("no address to connect to")
