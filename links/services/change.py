"""Changing a link: its URL, title, start and expiry, redirect type, query pass-through, tags,
archived flag, password or visit cap, or revoking it. The cached entry is dropped with the
change, or the change is rolled back."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.db import retry_on_conflict
from links import cache as link_cache
from links import events
from links.models import UrlLink
from links.selectors import link_get_changeable
from links.services.app_links import validate_app_urls
from links.services.audit_trail import link_audit, link_snapshot
from links.services.gates import validate_max_visits, validate_password
from links.services.health import health_forget
from links.services.policy import (
    LongUrlRules,
    ensure_changeable,
    url_hash,
    validate_expiry,
    validate_long_url,
    validate_optional_url,
    validate_redirect_type,
    validate_schedule,
    validate_start,
    validate_title,
)
from links.services.previews import validate_preview
from links.services.tags import clean_tags, link_tags_set
from links.services.targeting import validate_rules, validate_variants
from links.services.utm import clean_utm, merge_utm

_UNSET = object()


def _save_and_drop_cache(link: UrlLink, fields: list[str]) -> None:
    """Save and drop the cached entry together: if the drop fails, the change is rolled back
    (and CacheUnavailable raised) instead of a stale entry redirecting for a day."""
    with transaction.atomic():
        link.save(update_fields=[*fields, "updated_at"])
        key = link_cache.key_of_link(link)
        link_cache.drop(key)
        link_cache.drop_after_commit(key)


def mark_revoked(link: UrlLink, now: datetime) -> list[str]:
    """What a revoke does to a live link, in memory (nothing saved): revoked now, and expired
    now unless it expired earlier. The fields that changed (link_revoke, bulk_change)."""
    link.revoked_at = now
    if link.expires_at is None or link.expires_at > now:
        link.expires_at = now
        return ["revoked_at", "expires_at"]
    return ["revoked_at"]


def link_revoke(
    *,
    code: str,
    user: AbstractBaseUser,
    domain: str | None = None,
    request_host: str = "",
    workspace_id: int | None = None,
) -> UrlLink:
    """Stop a link now: it expires at once and the redirect answers 410 from the next request.
    `domain`: its short domain's host, when the code may be on several (link_get_visible);
    `workspace_id`: only a link of that workspace (an API key acts for one)."""
    link = link_get_changeable(
        code=code,
        user=user,
        domain=domain,
        request_host=request_host,
        workspace_id=workspace_id,
    )
    if link.revoked_at is None:
        before = link_snapshot(link)
        mark_revoked(link, timezone.now())
        _save_revoke(link, user, before)
        events.announce_after_commit(events.LINK_REVOKED, [link])
    else:
        link_cache.drop(link_cache.key_of_link(link))
    return link


def link_update(
    *,
    code: str,
    user: AbstractBaseUser,
    long_url=_UNSET,
    title=_UNSET,
    expires_at=_UNSET,
    valid_since=_UNSET,
    redirect_type=_UNSET,
    pass_query=_UNSET,
    tags=_UNSET,
    utm: dict[str, str] | None = None,
    archived=_UNSET,
    password=_UNSET,
    max_visits=_UNSET,
    rules=_UNSET,
    variants=_UNSET,
    request_host: str | None = None,
    domain: str | None = None,
    workspace_id: int | None = None,
    og_title=_UNSET,
    og_description=_UNSET,
    og_image=_UNSET,
    expired_url=_UNSET,
    ios_url=_UNSET,
    android_url=_UNSET,
    fallback_url=_UNSET,
    track_conversions=_UNSET,
) -> UrlLink:
    """Change what a link points to or how it behaves; the cached entry is refreshed.
    `valid_since`: its start (None: live at once), before its expiry as it will be.

    `tags` replaces the link's tags; `utm` ({utm_source…: value}) is merged into the long URL
    (the one given, else the current one). Tags and `archived` only sort the owner's lists:
    they may change on a revoked link too, and leave the cached entry alone.

    `domain` names the link's short domain when the code may be on several (link_get_visible);
    a link's domain itself never changes: its short URL is out there. `workspace_id`: only a
    link of that workspace (an API key acts for one).

    `expired_url`: the link's fallback ("" or None: none), through the long-URL policy. It may
    be set on a revoked link too: it says where that link's visitors go, and revives nothing.
    `ios_url` / `android_url`: where that OS's visitors go when no rule took them ("" or None:
    none), through links.services.app_links.
    `fallback_url`: where visitors go while its destination is broken (links.services.health;
    "" or None: none), through the long-URL policy; frozen once revoked, as the long URL.
    `track_conversions`: the redirect appends the click id to the destination from the next
    click on (analytics.services.conversions).

    Raises LinkRevoked for a revoked link, ValidationError for a value the rules refuse.
    """
    link = link_get_changeable(
        code=code,
        user=user,
        domain=domain,
        request_host=request_host or "",
        workspace_id=workspace_id,
    )
    before = link_snapshot(link)
    utm = clean_utm(utm)
    # What a click meets: frozen once the link is revoked, its gates and targeting too (a revoked
    # link's password, cap, rules or variants decide nothing; changing them would say otherwise).
    redirecting = (long_url, title, expires_at, valid_since, redirect_type, pass_query)
    redirecting += (track_conversions,)
    redirecting += (password, max_visits, rules, variants)
    preview = {"og_title": og_title, "og_description": og_description, "og_image": og_image}
    preview_given = tuple(name for name, value in preview.items() if value is not _UNSET)
    redirecting += tuple(preview[name] for name in preview_given)
    apps = {"ios_url": ios_url, "android_url": android_url}
    apps_given = tuple(name for name, value in apps.items() if value is not _UNSET)
    redirecting += tuple(apps[name] for name in apps_given)
    redirecting += (fallback_url,)
    if utm or any(value is not _UNSET for value in redirecting):
        ensure_changeable(link)
    if tags is not _UNSET:
        tags = clean_tags(tags)
    changed = []
    if long_url is not _UNSET or utm:
        new_url = link.long_url if long_url is _UNSET else (long_url or "").strip()
        if utm and new_url:
            new_url = merge_utm(new_url, utm)
        link.long_url = validate_long_url(new_url, request_host=request_host)
        link.long_url_hash = url_hash(link.long_url)
        changed += ["long_url", "long_url_hash"]
    if title is not _UNSET:
        link.title = validate_title(title)
        changed.append("title")
    if expires_at is not _UNSET:
        link.expires_at = validate_expiry(expires_at)
        changed.append("expires_at")
    if valid_since is not _UNSET:
        link.valid_since = validate_start(valid_since)
        changed.append("valid_since")
    if expires_at is not _UNSET or valid_since is not _UNSET:
        # The start and the expiry as they will be: the field named is the one changed.
        field = "valid_since" if valid_since is not _UNSET else "expires_at"
        validate_schedule(link.valid_since, link.expires_at, field=field)
    if redirect_type is not _UNSET:
        link.redirect_type = validate_redirect_type(redirect_type)
        changed.append("redirect_type")
    if pass_query is not _UNSET:
        link.pass_query = bool(pass_query)
        changed.append("pass_query")
    if track_conversions is not _UNSET:
        link.track_conversions = bool(track_conversions)
        changed.append("track_conversions")
    if max_visits is not _UNSET:
        # The visits already used stay used: raising a cap of 10 to 20 lets 10 more through.
        link.max_visits = validate_max_visits(max_visits)
        changed.append("max_visits")
    if password is not _UNSET:  # None or "" removes it
        link.password_hash = validate_password(password)
        changed.append("password_hash")
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
    # Fields checked as a group (each group's rule names every field it refuses), those given only.
    for given, values, validate_group in (
        (preview_given, preview, validate_preview),
        (apps_given, apps, validate_app_urls),
    ):
        if given:
            cleaned = validate_group(
                url_rules=LongUrlRules(request_host=request_host),
                given=given,
                **{name: values[name] for name in given},
            )
            for name, value in cleaned.items():
                setattr(link, name, value)
            changed += list(cleaned)
    if expired_url is not _UNSET:
        url_rules = LongUrlRules(request_host=request_host)
        link.expired_url = validate_optional_url(
            expired_url, field="expired_url", url_rules=url_rules
        )
        changed.append("expired_url")
    if fallback_url is not _UNSET:
        url_rules = LongUrlRules(request_host=request_host)
        link.fallback_url = validate_optional_url(
            fallback_url, field="fallback_url", url_rules=url_rules
        )
        changed.append("fallback_url")
    # Decided here, not in the unit: an attempt sets link.archived, and a retry comparing against
    # it would find nothing to change and save nothing.
    archive = None if archived is _UNSET or bool(archived) == link.archived else bool(archived)
    _save_update(link, user, before, changed, archive, tags)
    return link


@retry_on_conflict
def _save_update(
    link: UrlLink, user, before: dict, validated: list[str], archive: bool | None, tags
) -> None:
    """link_update's writes, one unit of work (core.db): the fields validated before it, run
    again whole on a write conflict."""
    changed = list(validated)
    changed += health_forget(link, changed)
    if changed:
        _save_and_drop_cache(link, changed)
    if archive is not None:
        link.archived = archive
        link.save(update_fields=["archived", "updated_at"])
        changed.append("archived")
    if tags is not _UNSET:
        link_tags_set(link=link, tags=tags)
        changed.append("tags")
    if changed:  # a call that changed nothing tells nothing
        link_audit(action="link.update", link=link, user=user, before=before)
        events.announce_after_commit(events.LINK_UPDATED, [link])


@retry_on_conflict
def _save_revoke(link: UrlLink, user, before: dict) -> None:
    _save_and_drop_cache(link, ["revoked_at", "expires_at"])
    link_audit(action="link.revoke", link=link, user=user, before=before, always=True)


def link_cache_refresh(*, link: UrlLink) -> None:
    """For staff: drop a link's cached entry so the next redirect reads the database."""
    link_cache.drop(link_cache.key_of_link(link))
