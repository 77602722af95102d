"""Who is asking: the client's address behind a known number of reverse proxies."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping

from django.conf import settings

# VisitRecord.client_ip's length, and the longest text of an address: IPv6 with an IPv4 tail
# written out in full, "0000:0000:0000:0000:0000:ffff:255.255.255.255" (the canonical text of
# any address is at most 39 characters).
MAX_IP_LENGTH = 45


# "[", "]" and ":65535" around the longest address: some proxies write the client's port too.
_MAX_WITH_PORT = MAX_IP_LENGTH + len("[]:65535")


def canonical_ip(text: str) -> str:
    """The canonical text of the IP address `text` ("" when it is not one), without a zone id
    or a port.

    An IPv6 zone id ("fe80::1%eth0") names an interface of the host that wrote it: it means
    nothing here, and it may be of any length (X-Forwarded-For is written by the client). Some
    proxies (Azure Application Gateway, for one) write "203.0.113.5:51234" or
    "[2001:db8::1]:443": read as no address, every client behind them became the proxy, and
    shared one sign-in lockout and one 404 budget.
    """
    if len(text) > _MAX_WITH_PORT:
        # Only blanks or a zone id make an address this long: cut them before the cache, so
        # that its keys stay short whatever a client sends.
        address, zoned, _zone = text.strip().partition("%")
        if len(address) > _MAX_WITH_PORT:
            return ""
        text = address + zoned
    return _canonical(text)


def _without_port(text: str) -> str:
    if text.startswith("["):  # [IPv6] or [IPv6]:port
        inside, bracket, _port = text[1:].partition("]")
        return inside if bracket else text
    if text.count(":") == 1:  # IPv4:port (an IPv6 address has at least two colons)
        return text.partition(":")[0]
    return text


@functools.lru_cache(maxsize=32768)  # keys of at most 46 characters: a few MB at most
def _canonical(text: str) -> str:
    # Visitors come back: the cache spares the redirect the parsing (~1.5 µs) of a known address.
    address, zoned, _zone = _without_port(text.strip()).partition("%")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return ""
    if zoned and parsed.version == 4:
        return ""  # zone ids are IPv6's only
    return str(parsed)


def client_ip(meta: Mapping[str, str]) -> str:
    """The visitor's address: X-Forwarded-For trusted only as far as NUM_PROXIES proxies go.

    `meta` is the WSGI environ (request.META). Each trusted proxy appends the address it saw,
    so the client is the NUM_PROXIES-th entry from the right; anything left of it may have been
    written by the client and is ignored. Always a canonical address that fits
    VisitRecord.client_ip, or "" when even the socket's is none.
    """
    proxies = settings.NUM_PROXIES
    if proxies > 0:
        forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
        entries = forwarded.split(",") if forwarded else []
        if len(entries) >= proxies:
            address = canonical_ip(entries[-proxies])
            if address:
                return address
            # A proxy that writes something else: fall back to the socket.
    return canonical_ip(meta.get("REMOTE_ADDR", ""))
