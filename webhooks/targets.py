"""Where a webhook may send (SSRF): http(s) only, and never to this machine or a private network.

The rule is links.outbound's, the one outbound address policy (the destination health checker
calls it too): every address a target's host resolves to must be public. It is checked when a
webhook is saved and again for each attempt, which then connects to an address just checked
(webhooks.sending) instead of resolving the name once more: a name that resolves to a public
address for the check and to 127.0.0.1 for the connection (DNS rebinding) never reaches
127.0.0.1. SHORTURL_WEBHOOK_ALLOW_PRIVATE=1 lifts the address rule for webhooks only (a
receiver on the same machine or network, as the tests start; the link checker has its own,
LINK_CHECK_ALLOW_PRIVATE); the scheme rule stays.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from links import outbound
from links.outbound import UnsafeTarget

__all__ = ["UnsafeTarget", "check_target", "validate_webhook_url"]

_url_validator = URLValidator(schemes=["http", "https"])
MAX_URL_LENGTH = 2048


def check_target(url: str) -> list[str]:
    """The addresses `url` may be reached at now (links.outbound.check_target); UnsafeTarget
    otherwise. Sending connects to one of these, never resolving the name again."""
    return outbound.check_target(
        url, what="webhooks", allow_private=settings.SHORTURL_WEBHOOK_ALLOW_PRIVATE
    )


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
