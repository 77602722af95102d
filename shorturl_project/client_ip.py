"""Who is asking: the client's address behind a known number of reverse proxies."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from django.conf import settings


def client_ip(meta: Mapping[str, str]) -> str:
    """The visitor's address: X-Forwarded-For trusted only as far as NUM_PROXIES proxies go.

    `meta` is the WSGI environ (request.META). Each trusted proxy appends the address it saw,
    so the client is the NUM_PROXIES-th entry from the right; anything left of it may have been
    written by the client and is ignored.
    """
    remote = meta.get("REMOTE_ADDR", "")
    proxies = settings.NUM_PROXIES
    if proxies > 0:
        forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
        entries = [entry.strip() for entry in forwarded.split(",")] if forwarded else []
        if len(entries) >= proxies:
            try:
                return str(ipaddress.ip_address(entries[-proxies]))
            except ValueError:
                pass  # a proxy that writes something else: fall back to the socket
    return remote[:45]
