"""Creating one link: validate, reuse the owner's plain link for the same URL, or claim a code."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.db import retry_on_conflict, take_turn
from links import cache as link_cache
from links import events
from links.codes.aliases import validate_alias
from links.codes.base import CodeGenerationError
from links.codes.strategies import get_strategy
from links.models import CodeType, RedirectType, UrlLink
from links.services.app_links import validate_app_urls
from links.services.audit_trail import link_audit
from links.services.domains import domain_for_create
from links.services.gates import check_password_rules, hash_password, validate_max_visits
from links.services.policy import (
    LongUrlRules,
    alias_case_warnings,
    alias_taken_error,
    free_alias_suggestions,
    url_hash,
    validate_expiry,
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
from workspaces.models import Workspace
from workspaces.services import workspace_for_writing


@dataclass(frozen=True)
class LinkCreateResult:
    link: UrlLink
    created: bool  # False: the owner's existing active link for the same plain request
    # Created all the same, but worth a word ({field: [message]}): an alias that differs from
    # another only by case.
    warnings: dict[str, list[str]] = field(default_factory=dict)


def hold_owner(user: AbstractBaseUser) -> None:
    """Take the owner's turn (core.db.take_turn) until the transaction ends: one owner's
    creates take turns, so a plain create looks for a reusable link only once the one before
    it has committed its own, on one database node or across a Galera cluster's nodes.

    A turn rather than SELECT … FOR UPDATE on the owner's user row: on Galera that lock holds
    on the local node only and is not certified, so two nodes' creates both passed it and could
    both insert a link for one URL. The turn is a write (the owner's core.models.Turn row):
    on one node the second create waits for the first's commit, as with the lock; across nodes
    the later commit fails its certification (1213) and the create is run again
    (retry_on_conflict), now finding the link the other made. The cost: one small row write per
    create, and per bulk batch.

    Every create takes it first, before any code or row: a create that had claimed a pool code
    (locked its row) and then waited for the turn could wait for a plain create that holds the
    turn and waits for that code (a deadlock). Taken first, a create waiting for a turn holds
    nothing another create could be waiting for. (Inserting the link also takes a shared lock
    on the owner's user row, for the foreign key; creates no longer lock that row otherwise, so
    it orders nothing between them.)

    READ COMMITTED (settings) lets the read after the wait see the link just committed. SQLite:
    every transaction there begins IMMEDIATE (settings), which already holds the database's
    single write lock; the turn's row is written all the same.

    A turn rather than a unique index on (owner, long_url_hash): "plain and active" changes
    with revokes, expiries and edits, and MariaDB has no partial unique index, so such an index
    would need a key column kept right by every write path (and old duplicates removed first);
    the turn needs no such column, covers link_create and link_create_many alike, and holds
    another create of the same owner back for one insert only.
    """
    take_turn(f"links.owner:{user.pk}")  # `user` may be request.user, a lazy object: pk works


def create_with_alias(link: UrlLink, alias: str) -> UrlLink:
    validate_alias(alias)
    link.code = alias
    link.code_type = CodeType.CUSTOM
    try:
        with transaction.atomic():
            link.save()
    except IntegrityError:
        suggestion = free_alias_suggestions([alias], link.domain_id).get(alias)
        raise alias_taken_error(alias, suggestion=suggestion) from None
    link_cache.aliases_added_after_commit([link_cache.key_of_link(link)])
    return link


def create_with_strategy(link: UrlLink) -> UrlLink:
    # One transaction for the code's claim (pool) and the row: one commit, not two.
    with transaction.atomic():
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


_FOUND = int(RedirectType.FOUND)
# Every column's default, by position: UrlLink(*values) skips the keyword handling of
# Model.__init__, a third of the cost of preparing a link in a bulk call.
_LINK_POSITIONS = {field.attname: i for i, field in enumerate(UrlLink._meta.concrete_fields)}
_LINK_DEFAULTS = [field.get_default() for field in UrlLink._meta.concrete_fields]
# A callable default must be called for each link: then the keyword path is taken.
_STATIC_DEFAULTS = not any(
    field.has_default() and callable(field.default) for field in UrlLink._meta.concrete_fields
)


def _unsaved_link(*, owner: AbstractBaseUser, **values) -> UrlLink:
    """UrlLink(owner=owner, **values), built from positional values."""
    if not _STATIC_DEFAULTS:
        return UrlLink(owner=owner, **values)
    args = list(_LINK_DEFAULTS)
    for attname, value in values.items():
        args[_LINK_POSITIONS[attname]] = value
    args[_LINK_POSITIONS["owner_id"]] = owner.pk
    link = UrlLink(*args)
    link.owner = owner  # cached, as UrlLink(owner=owner) leaves it
    return link


@dataclass
class PreparedLink:
    link: UrlLink  # validated, unsaved, without a code yet
    alias: str
    plain: bool  # no alias or options: may reuse the owner's existing active link
    tags: list[str]  # cleaned (clean_tags); set once the link has its row


def prepare_link(
    *,
    user: AbstractBaseUser,
    long_url: str,
    alias: str | None,
    title: str | None,
    expires_at: datetime | None,
    redirect_type: int | None,
    request_host: str | None,
    url_rules: LongUrlRules | None = None,
    valid_since: datetime | None = None,
    pass_query: bool | None = None,
    tags: list[str] | None = None,
    utm: dict[str, str] | None = None,
    archived: bool | None = None,
    password: str | None = None,
    max_visits: int | None = None,
    rules: list | None = None,
    variants: list | None = None,
    domain: str | None = None,
    workspace: Workspace | None = None,
    password_hashes: dict[str, str] | None = None,
    og_title: str | None = None,
    og_description: str | None = None,
    og_image: str | None = None,
    expired_url: str | None = None,
    ios_url: str | None = None,
    android_url: str | None = None,
    fallback_url: str | None = None,
    track_conversions: bool | None = None,
) -> PreparedLink:
    """Validate a create request, reporting every field's problem at once.

    `url_rules`: the long-URL rules for `request_host`, when the caller checks many URLs.
    `utm`: {utm_source…: value}, merged into the long URL's query before it is checked.
    `domain`: the short domain's host (links.services.domains); none: the default one.
    `workspace`: where the link goes, resolved by the caller (workspace_for_writing); none:
    the user's personal workspace.
    `password_hashes`: a caller preparing many links passes one dict for all of them, so each
    distinct password is hashed once (links.services.gates.hash_password).
    """
    # The refusals themselves, not only their messages: their codes say what kind each is.
    errors: dict[str, list[ValidationError]] = {}

    def check(validate, *args, **kwargs):
        try:
            return validate(*args, **kwargs)
        except ValidationError as exc:
            errors.update(exc.error_dict)
            return None

    if url_rules is None:
        url_rules = LongUrlRules(request_host=request_host)
    utm = check(clean_utm, utm)
    long_url = (long_url or "").strip()
    if utm and long_url:
        long_url = merge_utm(long_url, utm)
    long_url = check(url_rules.check, long_url)
    redirect_type = check(
        validate_redirect_type, RedirectType.FOUND if redirect_type is None else redirect_type
    )
    expires_at = check(validate_expiry, expires_at)
    valid_since = check(validate_start, valid_since)
    check(validate_schedule, valid_since, expires_at)
    title = check(validate_title, title)
    alias = (alias or "").strip()
    if alias:
        check(validate_alias, alias)
    tags = check(clean_tags, tags)
    max_visits = check(validate_max_visits, max_visits)
    password = check(check_password_rules, password)
    rules = check(validate_rules, rules, url_rules=url_rules)
    variants = check(validate_variants, variants, url_rules=url_rules)
    preview = check(
        validate_preview,
        url_rules=url_rules,
        og_title=og_title,
        og_description=og_description,
        og_image=og_image,
    )
    expired_url = check(
        validate_optional_url, expired_url, field="expired_url", url_rules=url_rules
    )
    fallback_url = check(
        validate_optional_url, fallback_url, field="fallback_url", url_rules=url_rules
    )
    app_urls = check(
        validate_app_urls, url_rules=url_rules, ios_url=ios_url, android_url=android_url
    )
    if workspace is None:
        workspace = workspace_for_writing(user=user, workspace=None)
    domain_id = check(
        domain_for_create, domain, request_host=request_host, workspace_id=workspace.pk
    )
    if errors:
        raise ValidationError(errors)
    # Hashed only once everything is valid: a hash costs ~0.3 s of CPU.
    password_hash = hash_password(password, hashed=password_hashes)
    pass_query = True if pass_query is None else bool(pass_query)
    archived = bool(archived)
    track_conversions = bool(track_conversions)
    # UTM values are part of the URL: a plain request for the same final URL may reuse a link.
    plain = (
        not alias
        and not title
        and expires_at is None
        and valid_since is None
        and redirect_type == _FOUND
        and pass_query
        and not tags
        and not archived
        and not password_hash
        and max_visits is None
        and not rules
        and not variants
        and not any(preview.values())
        and not expired_url
        and not fallback_url
        and not any(app_urls.values())
        and not track_conversions
    )
    link = _unsaved_link(
        owner=user,
        long_url=long_url,
        long_url_hash=url_hash(long_url),
        title=title,
        expires_at=expires_at,
        valid_since=valid_since,
        redirect_type=redirect_type,
        pass_query=pass_query,
        archived=archived,
        password_hash=password_hash,
        max_visits=max_visits,
        rules=rules,
        variants=variants,
        domain_id=domain_id,
        workspace_id=workspace.pk,
        **preview,
        expired_url=expired_url or "",
        fallback_url=fallback_url or "",
        **app_urls,
        track_conversions=track_conversions,
    )
    return PreparedLink(link=link, alias=alias, plain=plain, tags=tags)


def link_create(
    *,
    user: AbstractBaseUser,
    long_url: str,
    alias: str | None = None,
    title: str | None = None,
    expires_at: datetime | None = None,
    redirect_type: int = RedirectType.FOUND,
    request_host: str | None = None,
    pass_query: bool = True,
    valid_since: datetime | None = None,
    tags: list[str] | None = None,
    utm: dict[str, str] | None = None,
    archived: bool = False,
    password: str | None = None,
    max_visits: int | None = None,
    rules: list | None = None,
    variants: list | None = None,
    domain: str | None = None,
    workspace: Workspace | str | None = None,
    pinned_workspace_id: int | None = None,
    og_title: str | None = None,
    og_description: str | None = None,
    og_image: str | None = None,
    expired_url: str | None = None,
    ios_url: str | None = None,
    android_url: str | None = None,
    fallback_url: str | None = None,
    track_conversions: bool = False,
) -> LinkCreateResult:
    """Create a short link, or hand back the user's active one for the same plain request (on
    the same domain, in the same workspace).

    `workspace`: a Workspace or its slug; none: the pinned one (an API key's), else the user's
    personal workspace. Refused: a workspace the user is not in (ValidationError) or only
    views (PermissionDenied); see workspaces.services.workspace_for_writing.
    """
    workspace = workspace_for_writing(user=user, workspace=workspace, pinned_id=pinned_workspace_id)
    prepared = prepare_link(
        user=user,
        long_url=long_url,
        alias=alias,
        title=title,
        expires_at=expires_at,
        valid_since=valid_since,
        redirect_type=redirect_type,
        request_host=request_host,
        pass_query=pass_query,
        tags=tags,
        utm=utm,
        archived=archived,
        password=password,
        max_visits=max_visits,
        rules=rules,
        variants=variants,
        domain=domain,
        workspace=workspace,
        og_title=og_title,
        og_description=og_description,
        og_image=og_image,
        expired_url=expired_url,
        ios_url=ios_url,
        android_url=android_url,
        fallback_url=fallback_url,
        track_conversions=track_conversions,
    )
    result = _create_prepared(user=user, workspace=workspace, prepared=prepared)
    if not result.created:
        return result
    link = result.link
    link_cache.forget_missing_after_commit([link_cache.key_of_link(link)])
    events.announce_after_commit(events.LINK_CREATED, [link])
    return result


@retry_on_conflict
def _create_prepared(
    *, user: AbstractBaseUser, workspace: Workspace, prepared: PreparedLink
) -> LinkCreateResult:
    """link_create's writes, one unit of work (core.db): run again whole on a write conflict,
    with the prepared link's row and code state reset first (a rolled-back attempt's insert
    left them on the instance; its pool code went back to the pool, see pool._give_back)."""
    link = prepared.link
    link.pk, link._state.adding = None, True
    hold_owner(user)
    if prepared.plain:
        existing = (
            UrlLink.objects.reusable_plain(
                user=user,
                workspace_id=workspace.pk,
                long_url_hashes=[link.long_url_hash],
            )
            .filter(long_url=link.long_url, domain_id=link.domain_id)
            .first()
        )
        if existing is not None:
            return LinkCreateResult(link=existing, created=False)
    warnings = {}
    if prepared.alias:
        link = create_with_alias(link, prepared.alias)
        warnings = alias_case_warnings(prepared.alias, link.domain_id)
    else:
        link = create_with_strategy(link)
    if prepared.tags:
        link_tags_set(link=link, tags=prepared.tags)
    link_audit(action="link.create", link=link, user=user, before=None)
    return LinkCreateResult(link=link, created=True, warnings=warnings)
