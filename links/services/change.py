"""Changing a link: its URL, title, expiry, redirect type or query pass-through, or revoking it.
The cached entry is dropped with the change, or the change is rolled back."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .. import cache as link_cache
from ..models import UrlLink
from ..selectors import link_get_changeable
from .policy import (
    LongUrlRules,
    ensure_changeable,
    url_hash,
    validate_expiry,
    validate_long_url,
    validate_redirect_type,
    validate_title,
)
from .targeting import validate_rules, validate_variants

_UNSET = object()


def _save_and_drop_cache(link: UrlLink, fields: list[str]) -> None:
    """Save and drop the cached entry together: if the drop fails, the change is rolled back
    (and CacheUnavailable raised) instead of a stale entry redirecting for a day."""
    with transaction.atomic():
        link.save(update_fields=[*fields, "updated_at"])
        link_cache.drop(link.code)
        link_cache.drop_after_commit(link.code)


def link_revoke(*, code: str, user: AbstractBaseUser) -> UrlLink:
    """Stop a link now: it expires at once and the redirect answers 410 from the next request."""
    link = link_get_changeable(code=code, user=user)
    if link.revoked_at is None:
        now = timezone.now()
        link.revoked_at = now
        if link.expires_at is None or link.expires_at > now:
            link.expires_at = now
        _save_and_drop_cache(link, ["revoked_at", "expires_at"])
    else:
        link_cache.drop(link.code)
    return link


def link_update(
    *,
    code: str,
    user: AbstractBaseUser,
    long_url=_UNSET,
    title=_UNSET,
    expires_at=_UNSET,
    redirect_type=_UNSET,
    pass_query=_UNSET,
    rules=_UNSET,
    variants=_UNSET,
    request_host: str | None = None,
) -> UrlLink:
    """Change what a link points to or how it behaves; the cached entry is refreshed.

    Raises LinkRevoked for a revoked link, ValidationError for a value the rules refuse.
    """
    link = link_get_changeable(code=code, user=user)
    ensure_changeable(link)
    changed = []
    if long_url is not _UNSET:
        link.long_url = validate_long_url(long_url, request_host=request_host)
        link.long_url_hash = url_hash(link.long_url)
        changed += ["long_url", "long_url_hash"]
    if title is not _UNSET:
        link.title = validate_title(title)
        changed.append("title")
    if expires_at is not _UNSET:
        link.expires_at = validate_expiry(expires_at)
        changed.append("expires_at")
    if redirect_type is not _UNSET:
        link.redirect_type = validate_redirect_type(redirect_type)
        changed.append("redirect_type")
    if pass_query is not _UNSET:
        link.pass_query = bool(pass_query)
        changed.append("pass_query")
    if rules is not _UNSET or variants is not _UNSET:
        url_rules = LongUrlRules(request_host=request_host)
        errors: dict[str, list[str]] = {}
        for name, value, validate in (
            ("rules", rules, validate_rules),
            ("variants", variants, validate_variants),
        ):
            if value is _UNSET:
                continue
            try:
                setattr(link, name, validate(value, url_rules=url_rules))
                changed.append(name)
            except ValidationError as exc:
                errors.update(exc.message_dict)
        if errors:
            raise ValidationError(errors)
    if changed:
        _save_and_drop_cache(link, changed)
    return link


def link_cache_refresh(*, code: str) -> None:
    """For staff: drop a link's cached entry so the next redirect reads the database."""
    link_cache.drop(code)
