"""What may be stored in a link and when a link may change: the rules every entry point shares."""

from __future__ import annotations

import hashlib
from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils import timezone

from ..models import RedirectType, UrlLink

_url_validator = URLValidator(schemes=["http", "https"])


class LinkRevoked(Exception):
    """A revoked link is final: it cannot be changed (the API answers 409)."""

    def __init__(self, code: str):
        super().__init__(f"{code} was revoked and can no longer be changed.")
        self.code = code


def is_storable_text(value: str) -> bool:
    """False for text no database encoding takes: a lone surrogate, which a JSON "\\ud800"
    escape decodes to. DRF's fields refuse it before the API calls a service; other callers
    (bulk imports, the admin, scripts) reach the rules here only (links/tests/test_fuzz.py)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def url_hash(long_url: str) -> str:
    return hashlib.sha1(long_url.encode(), usedforsecurity=False).hexdigest()


def _host_matches(host: str, domains: list[str]) -> bool:
    host = host.lower().rstrip(".")
    for domain in domains:
        domain = domain.lower().strip().lstrip(".")
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


def own_hosts(request_host: str | None = None) -> set[str]:
    hosts = set()
    if settings.SHORT_URL_BASE:
        hosts.add((urlsplit(settings.SHORT_URL_BASE).hostname or "").lower())
    if request_host:
        hosts.add(request_host.split(":")[0].lower())
    return {h for h in hosts if h}


class LongUrlRules:
    """The long-URL rules with their settings read once: a bulk call checks many URLs with one.

    `check(long_url)` returns the URL to store, or raises ValidationError({"long_url": [reason]}).
    """

    def __init__(self, *, request_host: str | None = None):
        self.max_length = settings.SHORTURL_MAX_URL_LENGTH
        self.own_hosts = own_hosts(request_host)
        self.blocked = settings.SHORTURL_BLOCKED_DOMAINS
        self.allowed = settings.SHORTURL_ALLOWED_DOMAINS

    def check(self, long_url: str) -> str:
        def refuse(message: str) -> ValidationError:
            return ValidationError({"long_url": [message]})

        long_url = (long_url or "").strip()
        if not long_url:
            raise refuse("Enter the long URL to shorten.")
        if not is_storable_text(long_url):
            raise refuse("This is not a valid URL.")
        if len(long_url) > self.max_length:
            raise refuse(
                f"URLs can be at most {self.max_length} characters (this one has {len(long_url)})."
            )
        try:
            parts = urlsplit(long_url)
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            raise refuse("This is not a valid URL.") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise refuse("Only http and https URLs can be shortened.")
        host = parts.hostname
        if not host:
            raise refuse("The URL needs a host name, e.g. https://example.com/page.")
        host = host.lower()
        if host in self.own_hosts:
            raise refuse("This is already a short link; it cannot be shortened again.")
        try:
            _url_validator(long_url)
        except ValidationError:
            raise refuse("This is not a valid URL.") from None
        if self.blocked and _host_matches(host, self.blocked):
            raise refuse(f"Links to {host} are not allowed.")
        if self.allowed and not _host_matches(host, self.allowed):
            raise refuse(f"Only links to {', '.join(self.allowed)} are allowed.")
        return long_url


def validate_long_url(long_url: str, *, request_host: str | None = None) -> str:
    """Return the URL to store, or raise ValidationError({"long_url": [reason]})."""
    return LongUrlRules(request_host=request_host).check(long_url)


_REDIRECT_TYPES = frozenset(RedirectType.values)


def validate_redirect_type(redirect_type: int) -> int:
    try:
        value = int(redirect_type)
    except (TypeError, ValueError):
        value = None
    if value not in _REDIRECT_TYPES:
        raise ValidationError({"redirect_type": ["Choose one of 301, 302, 307 or 308."]})
    return value


def validate_expiry(expires_at: datetime | None) -> datetime | None:
    if expires_at is None:
        return None
    if timezone.is_naive(expires_at):
        expires_at = timezone.make_aware(expires_at)
    if expires_at <= timezone.now():
        raise ValidationError({"expires_at": ["The expiry must be in the future."]})
    if expires_at.year > timezone.now().year + 100:
        # Also keeps clear of datetime's year 9999 limit once converted to UTC.
        raise ValidationError(
            {"expires_at": ["Choose an expiry within 100 years, or leave it empty."]}
        )
    return expires_at


_TITLE_MAX_LENGTH = UrlLink._meta.get_field("title").max_length


def validate_title(title: str | None) -> str:
    """The title to store (trimmed), or ValidationError({"title": [reason]})."""
    title = (title or "").strip()
    limit = _TITLE_MAX_LENGTH
    if len(title) > limit:
        raise ValidationError({"title": [f"Titles can be at most {limit} characters."]})
    if not is_storable_text(title):
        raise ValidationError({"title": ["This title holds characters that are not text."]})
    return title


def ensure_changeable(link: UrlLink) -> None:
    if link.revoked_at is not None:
        raise LinkRevoked(link.code)
