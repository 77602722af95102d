"""Writes to links: the only place that creates or changes UrlLink rows."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone

from . import cache as link_cache
from .codes import CodeGenerationError, get_strategy, validate_alias
from .models import CodeType, RedirectType, UrlLink


class LinkNotFound(Exception):
    """No such link, or not one the caller may see (the two are told apart to nobody)."""


@dataclass(frozen=True)
class ShortenResult:
    link: UrlLink
    created: bool


_UNSET = object()
_url_validator = URLValidator(schemes=["http", "https"])


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


def validate_long_url(long_url: str, *, request_host: str | None = None) -> str:
    """Return the URL to store, or raise ValidationError({"long_url": [reason]})."""

    def refuse(message: str) -> ValidationError:
        return ValidationError({"long_url": [message]})

    long_url = (long_url or "").strip()
    if not long_url:
        raise refuse("Enter the long URL to shorten.")
    if len(long_url) > settings.SHORTURL_MAX_URL_LENGTH:
        raise refuse(
            f"URLs can be at most {settings.SHORTURL_MAX_URL_LENGTH} characters "
            f"(this one has {len(long_url)})."
        )
    parts = urlsplit(long_url)
    if parts.scheme.lower() not in ("http", "https"):
        raise refuse("Only http and https URLs can be shortened.")
    if not parts.hostname:
        raise refuse("The URL needs a host name, e.g. https://example.com/page.")
    host = parts.hostname.lower()
    if host in own_hosts(request_host):
        raise refuse("This is already a short link; it cannot be shortened again.")
    try:
        _url_validator(long_url)
    except ValidationError:
        raise refuse("This is not a valid URL.") from None
    if _host_matches(host, settings.SHORTURL_BLOCKED_DOMAINS):
        raise refuse(f"Links to {host} are not allowed.")
    if settings.SHORTURL_ALLOWED_DOMAINS and not _host_matches(
        host, settings.SHORTURL_ALLOWED_DOMAINS
    ):
        raise refuse(f"Only links to {', '.join(settings.SHORTURL_ALLOWED_DOMAINS)} are allowed.")
    return long_url


def validate_redirect_type(redirect_type: int) -> int:
    try:
        value = int(redirect_type)
    except (TypeError, ValueError):
        value = None
    if value not in RedirectType.values:
        raise ValidationError({"redirect_type": ["Choose one of 301, 302, 307 or 308."]})
    return value


def validate_expiry(expires_at: datetime | None) -> datetime | None:
    if expires_at is None:
        return None
    if timezone.is_naive(expires_at):
        expires_at = timezone.make_aware(expires_at)
    if expires_at <= timezone.now():
        raise ValidationError({"expires_at": ["The expiry must be in the future."]})
    return expires_at


def _existing_active_link(owner, long_url: str) -> UrlLink | None:
    return (
        UrlLink.objects.active()
        .filter(
            owner=owner,
            long_url_hash=url_hash(long_url),
            long_url=long_url,
            code_type__in=[CodeType.POOL, CodeType.SEQUENCE, CodeType.HASH],
            title="",
            expires_at__isnull=True,
            redirect_type=RedirectType.FOUND,
        )
        .order_by("-created_at", "-id")
        .first()
    )


def _create_with_alias(link: UrlLink, alias: str) -> UrlLink:
    validate_alias(alias)
    link.code = alias
    link.code_type = CodeType.CUSTOM
    try:
        with transaction.atomic():
            link.save()
    except IntegrityError:
        raise ValidationError(
            {"alias": [f"The alias “{alias}” is already taken; please choose another."]}
        ) from None
    link_cache.forget_aliases()
    return link


def _create_with_strategy(link: UrlLink) -> UrlLink:
    for candidate in get_strategy().candidates(link.long_url):
        link.code = candidate.code
        link.code_type = candidate.code_type
        link.seq_id = candidate.seq_id
        try:
            with transaction.atomic():
                link.save()
            return link
        except IntegrityError:
            link.pk = None  # taken by someone else: try the next candidate
    raise CodeGenerationError("No free short code could be found; please try again in a moment.")


def shorten(
    owner,
    long_url: str,
    *,
    alias: str | None = None,
    title: str | None = None,
    expires_at: datetime | None = None,
    redirect_type: int = RedirectType.FOUND,
    request_host: str | None = None,
) -> ShortenResult:
    """Create a short link, or hand back the owner's active one for the same plain request."""
    long_url = validate_long_url(long_url, request_host=request_host)
    redirect_type = validate_redirect_type(redirect_type)
    expires_at = validate_expiry(expires_at)
    title = (title or "").strip()
    alias = (alias or "").strip()
    plain = not alias and not title and expires_at is None and redirect_type == RedirectType.FOUND
    if plain:
        existing = _existing_active_link(owner, long_url)
        if existing is not None:
            return ShortenResult(link=existing, created=False)
    link = UrlLink(
        owner=owner,
        long_url=long_url,
        long_url_hash=url_hash(long_url),
        title=title,
        expires_at=expires_at,
        redirect_type=redirect_type,
    )
    link = _create_with_alias(link, alias) if alias else _create_with_strategy(link)
    return ShortenResult(link=link, created=True)


def get_visible_link(code: str, *, user) -> UrlLink:
    """The link for `code` if `user` may see it (owner or staff), else LinkNotFound."""
    try:
        return UrlLink.objects.visible_to(user).select_related("owner").get(code=code)
    except UrlLink.DoesNotExist:
        raise LinkNotFound(code) from None


def restore(code: str, *, user=None) -> UrlLink:
    """Code → link (with its long URL). Without a user, any link; with one, only theirs."""
    if user is not None:
        return get_visible_link(code, user=user)
    try:
        return UrlLink.objects.get(code=code)
    except UrlLink.DoesNotExist:
        raise LinkNotFound(code) from None


def _refresh_cache(link: UrlLink) -> None:
    # Drop rather than rewrite: the next redirect reloads the committed row.
    transaction.on_commit(lambda: link_cache.drop(link.code))
    link_cache.drop(link.code)


def revoke(code: str, by) -> UrlLink:
    """Stop a link now: it expires at once and the redirect answers 410 from the next request."""
    link = get_visible_link(code, user=by)
    if link.revoked_at is None:
        now = timezone.now()
        link.revoked_at = now
        if link.expires_at is None or link.expires_at > now:
            link.expires_at = now
        link.save(update_fields=["revoked_at", "expires_at", "updated_at"])
    _refresh_cache(link)
    return link


def update(
    code: str,
    by,
    *,
    long_url=_UNSET,
    title=_UNSET,
    expires_at=_UNSET,
    redirect_type=_UNSET,
    request_host: str | None = None,
) -> UrlLink:
    """Change what a link points to or how it behaves; the cached entry is refreshed."""
    link = get_visible_link(code, user=by)
    changed = []
    if long_url is not _UNSET:
        link.long_url = validate_long_url(long_url, request_host=request_host)
        link.long_url_hash = url_hash(link.long_url)
        changed += ["long_url", "long_url_hash"]
    if title is not _UNSET:
        link.title = (title or "").strip()
        changed.append("title")
    if expires_at is not _UNSET:
        link.expires_at = validate_expiry(expires_at)
        changed.append("expires_at")
    if redirect_type is not _UNSET:
        link.redirect_type = validate_redirect_type(redirect_type)
        changed.append("redirect_type")
    if changed:
        link.save(update_fields=[*changed, "updated_at"])
        _refresh_cache(link)
    return link


def refresh_cache(code: str) -> None:
    """For staff: drop a link's cached entry so the next redirect reads the database."""
    link_cache.drop(code)
