"""Writes to links: the only place that creates or changes UrlLink rows."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone

from . import cache as link_cache
from .codes.aliases import validate_alias
from .codes.base import CodeGenerationError
from .codes.pool import pool_claim
from .codes.strategies import get_strategy
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
    try:
        parts = urlsplit(long_url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise refuse("This is not a valid URL.") from None
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
    if expires_at.year > timezone.now().year + 100:
        # Also keeps clear of datetime's year 9999 limit once converted to UTC.
        raise ValidationError(
            {"expires_at": ["Choose an expiry within 100 years, or leave it empty."]}
        )
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
    # Again after commit, in case a redirect reloaded the set in between.
    transaction.on_commit(link_cache.forget_aliases)
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


@dataclass
class _PreparedLink:
    link: UrlLink  # validated, unsaved, without a code yet
    alias: str
    plain: bool  # no alias or options: may reuse the owner's existing active link


def _prepare_link(
    owner,
    *,
    long_url: str,
    alias: str | None,
    title: str | None,
    expires_at: datetime | None,
    redirect_type: int | None,
    request_host: str | None,
) -> _PreparedLink:
    """Validate a shorten request, reporting every field's problem at once."""
    errors: dict[str, list[str]] = {}

    def check(validate, *args, **kwargs):
        try:
            return validate(*args, **kwargs)
        except ValidationError as exc:
            errors.update(exc.message_dict)
            return None

    long_url = check(validate_long_url, long_url or "", request_host=request_host)
    redirect_type = check(
        validate_redirect_type, RedirectType.FOUND if redirect_type is None else redirect_type
    )
    expires_at = check(validate_expiry, expires_at)
    title = (title or "").strip()
    title_max = UrlLink._meta.get_field("title").max_length
    if len(title) > title_max:
        errors["title"] = [f"Titles can be at most {title_max} characters."]
    alias = (alias or "").strip()
    if alias:
        check(validate_alias, alias)
    if errors:
        raise ValidationError(errors)
    plain = not alias and not title and expires_at is None and redirect_type == RedirectType.FOUND
    link = UrlLink(
        owner=owner,
        long_url=long_url,
        long_url_hash=url_hash(long_url),
        title=title,
        expires_at=expires_at,
        redirect_type=redirect_type,
    )
    return _PreparedLink(link=link, alias=alias, plain=plain)


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
    prepared = _prepare_link(
        owner,
        long_url=long_url,
        alias=alias,
        title=title,
        expires_at=expires_at,
        redirect_type=redirect_type,
        request_host=request_host,
    )
    if prepared.plain:
        existing = _existing_active_link(owner, prepared.link.long_url)
        if existing is not None:
            return ShortenResult(link=existing, created=False)
    link = (
        _create_with_alias(prepared.link, prepared.alias)
        if prepared.alias
        else _create_with_strategy(prepared.link)
    )
    return ShortenResult(link=link, created=True)


def get_visible_link(code: str, *, user) -> UrlLink:
    """The link for `code` if `user` may see it (owner or staff), else LinkNotFound."""
    try:
        return UrlLink.objects.visible_to(user).select_related("owner").get(code=code)
    except UrlLink.DoesNotExist:
        raise LinkNotFound(code) from None


def get_changeable_link(code: str, *, user) -> UrlLink:
    """The link for `code` if `user` may change it: its owner, or staff with the admin's
    `links.change_urllink` permission (the same one the admin's revoke action asks for).
    Staff who may only look get PermissionDenied; everyone else LinkNotFound."""
    link = get_visible_link(code, user=user)
    if link.owner_id != user.pk and not user.has_perm("links.change_urllink"):
        raise PermissionDenied(
            "Only the link's owner or staff allowed to change links can do that."
        )
    return link


def restore(code: str, *, user=None) -> UrlLink:
    """Code → link (with its long URL). Without a user, any link; with one, only theirs."""
    if user is not None:
        return get_visible_link(code, user=user)
    try:
        return UrlLink.objects.get(code=code)
    except UrlLink.DoesNotExist:
        raise LinkNotFound(code) from None


def _save_and_drop_cache(link: UrlLink, fields: list[str]) -> None:
    """Save and drop the cached entry together: if the drop fails, the change is rolled back
    (and CacheUnavailable raised) instead of a stale entry redirecting for a day."""
    with transaction.atomic():
        link.save(update_fields=[*fields, "updated_at"])
        link_cache.drop(link.code)
        link_cache.drop_after_commit(link.code)


def revoke(code: str, by) -> UrlLink:
    """Stop a link now: it expires at once and the redirect answers 410 from the next request."""
    link = get_changeable_link(code, user=by)
    if link.revoked_at is None:
        now = timezone.now()
        link.revoked_at = now
        if link.expires_at is None or link.expires_at > now:
            link.expires_at = now
        _save_and_drop_cache(link, ["revoked_at", "expires_at"])
    else:
        link_cache.drop(link.code)
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
    link = get_changeable_link(code, user=by)
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
        _save_and_drop_cache(link, changed)
    return link


def refresh_cache(code: str) -> None:
    """For staff: drop a link's cached entry so the next redirect reads the database."""
    link_cache.drop(code)


# --- Bulk shortening (the API's POST /api/v1/links/bulk/) -------------------------------------

BULK_MAX_ITEMS = 1000


@dataclass(frozen=True)
class BulkItemResult:
    """One item of a bulk call: its link (new or the owner's existing one), or why it failed."""

    link: UrlLink | None = None
    created: bool = False
    errors: dict[str, list[str]] | None = None


@dataclass
class _BulkItem(_PreparedLink):
    index: int  # position in the call, for the per-item results


def _bulk_prepare(owner, index: int, item: dict, *, request_host: str | None) -> _BulkItem:
    prepared = _prepare_link(
        owner,
        long_url=item.get("long_url") or "",
        alias=item.get("alias"),
        title=item.get("title"),
        expires_at=item.get("expires_at"),
        redirect_type=item.get("redirect_type"),
        request_host=request_host,
    )
    return _BulkItem(link=prepared.link, alias=prepared.alias, plain=prepared.plain, index=index)


def _bulk_reuse_existing(owner, items: list[_BulkItem]) -> tuple[list[_BulkItem], dict]:
    """Plain items whose URL the owner already has an active link for (one query for all).

    Returns the items still to create and {index: (link or first item, created)} for the rest;
    a URL repeated inside the call is created once and the repeats reuse it.
    """
    plain = [item for item in items if item.plain]
    existing: dict[str, UrlLink] = {}
    if plain:
        rows = (
            UrlLink.objects.active()
            .filter(
                owner=owner,
                long_url_hash__in={item.link.long_url_hash for item in plain},
                code_type__in=[CodeType.POOL, CodeType.SEQUENCE, CodeType.HASH],
                title="",
                expires_at__isnull=True,
                redirect_type=RedirectType.FOUND,
            )
            .order_by("-created_at", "-id")
        )
        for row in rows:
            existing.setdefault(row.long_url, row)
    to_create: list[_BulkItem] = []
    reused: dict[int, tuple[UrlLink | _BulkItem, bool]] = {}
    first_in_call: dict[str, _BulkItem] = {}
    for item in items:
        url = item.link.long_url
        if item.plain and url in existing:
            reused[item.index] = (existing[url], False)
        elif item.plain and url in first_in_call:
            reused[item.index] = (first_in_call[url], False)
        else:
            if item.plain:
                first_in_call[url] = item
            to_create.append(item)
    return to_create, reused


def _bulk_refuse_taken_aliases(items: list[_BulkItem], errors: dict[int, dict]) -> list[_BulkItem]:
    """Drop items whose alias is taken, in the database or earlier in the call (one query)."""
    aliases = [item.alias for item in items if item.alias]
    if not aliases:
        return items
    taken = set(UrlLink.objects.filter(code__in=aliases).values_list("code", flat=True))
    kept = []
    for item in items:
        if item.alias:
            if item.alias in taken:
                errors[item.index] = {
                    "alias": [f"The alias “{item.alias}” is already taken; please choose another."]
                }
                continue
            taken.add(item.alias)
            item.link.code = item.alias
            item.link.code_type = CodeType.CUSTOM
        kept.append(item)
    return kept


def _bulk_assign_from_candidates(strategy, items: list[_BulkItem], errors: dict[int, dict]):
    """Give each item the strategy's first candidate that is free: one query per round."""
    streams = {item.index: iter(strategy.candidates(item.link.long_url)) for item in items}
    waiting = list(items)
    used: set[str] = set()
    while waiting:
        proposals: dict[int, object] = {}
        for item in waiting:
            for candidate in streams[item.index]:
                if candidate.code not in used:
                    proposals[item.index] = candidate
                    break
            else:
                errors[item.index] = {
                    "code": ["No free short code could be found; please try again in a moment."]
                }
        taken = set(
            UrlLink.objects.filter(code__in=[c.code for c in proposals.values()]).values_list(
                "code", flat=True
            )
        )
        still_waiting = []
        for item in waiting:
            candidate = proposals.get(item.index)
            if candidate is None:
                continue
            if candidate.code in taken:
                still_waiting.append(item)
                continue
            used.add(candidate.code)
            item.link.code = candidate.code
            item.link.code_type = candidate.code_type
            item.link.seq_id = candidate.seq_id
        waiting = still_waiting


def _bulk_assign_codes(items: list[_BulkItem], errors: dict[int, dict]) -> None:
    generated = [item for item in items if not item.alias]
    if not generated:
        return
    strategy = get_strategy()
    if strategy.name == CodeType.POOL:
        pool_codes = pool_claim(len(generated))
        for item, code in zip(generated, pool_codes, strict=False):
            item.link.code = code
            item.link.code_type = CodeType.POOL
        generated = generated[len(pool_codes) :]
    _bulk_assign_from_candidates(strategy, generated, errors)


def _bulk_insert(items: list[_BulkItem], errors: dict[int, dict]) -> None:
    links = [item.link for item in items]
    try:
        with transaction.atomic():
            UrlLink.objects.bulk_create(links)
    except IntegrityError:
        # Someone took a code or alias between the checks and the insert: go one by one.
        for item in items:
            item.link.pk = None
            try:
                if item.alias:
                    _create_with_alias(item.link, item.alias)
                else:
                    with transaction.atomic():
                        item.link.save()
            except IntegrityError:
                try:
                    _create_with_strategy(item.link)
                except CodeGenerationError as exc:
                    errors[item.index] = {"code": [str(exc)]}
            except ValidationError as exc:
                errors[item.index] = exc.message_dict
        return
    if any(link.pk is None for link in links):
        # Backends that cannot return ids from a bulk insert (MySQL): one query finds them.
        ids = dict(
            UrlLink.objects.filter(code__in=[link.code for link in links]).values_list("code", "id")
        )
        for link in links:
            link.pk = ids[link.code]


def shorten_many(
    owner, items: list[dict], *, request_host: str | None = None
) -> list[BulkItemResult]:
    """Shorten up to BULK_MAX_ITEMS URLs in one transaction; every item succeeds or fails alone.

    Items take `shorten`'s keyword arguments (long_url, alias, title, expires_at,
    redirect_type). Round trips are per call, not per item: one query finds the owner's
    existing links, one the taken aliases, codes are claimed in a batch and the rows are
    written by one bulk insert. Results come back in the items' order.
    """
    if len(items) > BULK_MAX_ITEMS:
        raise ValidationError(
            {"items": [f"Send at most {BULK_MAX_ITEMS} URLs per call (this one has {len(items)})."]}
        )
    errors: dict[int, dict] = {}
    prepared: list[_BulkItem] = []
    for index, item in enumerate(items):
        try:
            prepared.append(_bulk_prepare(owner, index, item, request_host=request_host))
        except ValidationError as exc:
            errors[index] = exc.message_dict
    with transaction.atomic():
        to_create, reused = _bulk_reuse_existing(owner, prepared)
        to_create = _bulk_refuse_taken_aliases(to_create, errors)
        _bulk_assign_codes(to_create, errors)
        to_create = [item for item in to_create if item.index not in errors]
        _bulk_insert(to_create, errors)
        if any(item.alias for item in to_create):
            link_cache.forget_aliases()
            # Again after commit, in case a redirect reloaded the set in between.
            transaction.on_commit(link_cache.forget_aliases)
    created = {item.index: item.link for item in to_create if item.index not in errors}
    results = []
    for index in range(len(items)):
        if index in errors:
            results.append(BulkItemResult(errors=errors[index]))
        elif index in created:
            results.append(BulkItemResult(link=created[index], created=True))
        else:
            link, _ = reused[index]
            if isinstance(link, _BulkItem):
                if link.index in errors:
                    results.append(BulkItemResult(errors=errors[link.index]))
                    continue
                link = link.link
            results.append(BulkItemResult(link=link, created=False))
    return results
