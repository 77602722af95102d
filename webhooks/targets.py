"""Where a webhook may send (SSRF): http(s) only, and never to this machine or a private network.

Every address a target's host resolves to must be public: not loopback, private, link-local,
multicast, reserved, unspecified or otherwise not global; an IPv6 address carrying an IPv4 one
(6to4, NAT64, IPv4-mapped: links.services.policy.embedded_ipv4, the rule the link policy uses
too) may not carry such an IPv4 address either. It is checked when a webhook is saved and again
for each attempt, which then connects to an address just checked (webhooks.sending) instead
of resolving the name once more: a name that resolves to a public address for the check and to
127.0.0.1 for the connection (DNS rebinding) never reaches 127.0.0.1.
SHORTURL_WEBHOOK_ALLOW_PRIVATE=1 lifts the address rule (a receiver on the same machine or
network, as the tests start); the scheme rule stays.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from links.services.policy import embedded_ipv4, is_local_address

_url_validator = URLValidator(schemes=["http", "https"])
MAX_URL_LENGTH = 2048


class UnsafeTarget(Exception):
    """The target may not be called: the reason is the message."""


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


def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to (one for an IP literal)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnsafeTarget(f"The host {host} cannot be resolved.") from exc
    return sorted({info[4][0] for info in infos})


def check_target(url: str) -> list[str]:
    """The addresses `url` may be reached at now (scheme, then every resolved address checked);
    UnsafeTarget otherwise. Sending connects to one of these, never resolving the name again."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeTarget("Only http:// and https:// URLs with a host can receive webhooks.")
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTarget("The URL's port is not a number.") from exc
    allow_private = settings.SHORTURL_WEBHOOK_ALLOW_PRIVATE
    if not allow_private and is_local_address(host):
        raise UnsafeTarget(f"{host} is this machine: webhooks cannot be sent there.")
    addresses = resolve(host, port)
    if allow_private:
        return addresses
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone id is no part of it
        if not _address_is_public(address):
            raise UnsafeTarget(
                f"{host} resolves to {address}, a loopback, private or reserved address: "
                "webhooks are sent to public addresses only."
            )
    return addresses


def validate_webhook_url(url: str) -> str:
    """The URL to store, or ValidationError({"url": [reason]})."""
    url = (url or "").strip()
    if not url:
        raise ValidationError({"url": ["Enter the URL that should receive the webhook."]})
    if len(url) > MAX_URL_LENGTH:
        raise ValidationError({"url": [f"URLs can be at most {MAX_URL_LENGTH} characters."]})
    try:
        _url_validator(url)
    except ValidationError:
        raise ValidationError({"url": ["Enter a valid http:// or https:// URL."]}) from None
    try:
        check_target(url)
    except UnsafeTarget as exc:
        raise ValidationError({"url": [str(exc)]}) from None
    return url
