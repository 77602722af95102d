"""Creating many links in one call (the API's POST /api/v1/links/bulk/): round trips per call,
not per item, with the same rules as one link."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from core.db import retry_on_conflict
from links import cache as link_cache
from links import events
from links.codes.base import CodeGenerationError
from links.codes.pool import pool_claim
from links.codes.strategies import get_strategy
from links.models import CodeType, UrlLink
from links.services.audit_trail import link_audit_many, link_snapshot
from links.services.create import (
    PreparedLink,
    create_with_alias,
    create_with_strategy,
    hold_owner,
    prepare_link,
)
from links.services.policy import (
    LongUrlRules,
    alias_case_warnings_many,
    alias_taken_error,
    free_alias_suggestions,
)
from links.services.tags import link_tags_set_many
from workspaces.models import Workspace
from workspaces.services import workspace_for_writing

BULK_MAX_ITEMS = 1000
# Each distinct password costs a hash (~0.3 s of CPU): a call may give its links this many
# different ones (a few seconds), however many links share them.
BULK_MAX_PASSWORDS = 10


@dataclass(frozen=True)
class BulkItemResult:
    """One item of a bulk call: its link (new or the owner's existing one), or why it failed."""

    link: UrlLink | None = None
    created: bool = False
    errors: dict[str, list[str]] | None = None
    # Created all the same, but worth a word, as link_create's warnings: an alias that differs
    # from another only by case (another item of the same call included).
    warnings: dict[str, list[str]] | None = None


@dataclass
class _BulkItem(PreparedLink):
    index: int  # position in the call, for the per-item results


def _bulk_prepare(
    user,
    index: int,
    item: dict,
    *,
    url_rules: LongUrlRules,
    request_host: str | None,
    workspace: Workspace,
    password_hashes: dict[str, str],
) -> _BulkItem:
    prepared = prepare_link(
        user=user,
        long_url=item.get("long_url") or "",
        alias=item.get("alias"),
        title=item.get("title"),
        expires_at=item.get("expires_at"),
        valid_since=item.get("valid_since"),
        redirect_type=item.get("redirect_type"),
        request_host=request_host,
        url_rules=url_rules,
        pass_query=item.get("pass_query"),
        tags=item.get("tags"),
        utm=item.get("utm"),
        archived=item.get("archived"),
        password=item.get("password"),
        max_visits=item.get("max_visits"),
        rules=item.get("rules"),
        variants=item.get("variants"),
        domain=item.get("domain"),
        workspace=workspace,
        password_hashes=password_hashes,
        og_title=item.get("og_title"),
        og_description=item.get("og_description"),
        og_image=item.get("og_image"),
        expired_url=item.get("expired_url"),
        ios_url=item.get("ios_url"),
        android_url=item.get("android_url"),
        fallback_url=item.get("fallback_url"),
        track_conversions=item.get("track_conversions"),
    )
    return _BulkItem(
        link=prepared.link,
        alias=prepared.alias,
        plain=prepared.plain,
        tags=prepared.tags,
        index=index,
    )


def _bulk_reuse_existing(
    user, workspace: Workspace, items: list[_BulkItem]
) -> tuple[list[_BulkItem], dict]:
    """Plain items whose URL the owner already has an active link for (one query for all).

    Returns the items still to create and {index: (link or first item, created)} for the rest;
    a URL repeated inside the call is created once and the repeats reuse it.
    """
    plain = [item for item in items if item.plain]
    # By (domain, URL): the same URL on another domain is another link.
    existing: dict[tuple[int, str], UrlLink] = {}
    if plain:
        rows = UrlLink.objects.reusable_plain(
            user=user,
            workspace_id=workspace.pk,
            long_url_hashes={item.link.long_url_hash for item in plain},
        )
        for row in rows:
            existing.setdefault((row.domain_id, row.long_url), row)
    to_create: list[_BulkItem] = []
    reused: dict[int, tuple[UrlLink | _BulkItem, bool]] = {}
    first_in_call: dict[tuple[int, str], _BulkItem] = {}
    for item in items:
        url = (item.link.domain_id, item.link.long_url)
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
    """Drop items whose alias is taken on their domain, in the database or earlier in the call
    (one query, and one more per domain for the free aliases suggested instead)."""
    aliases = [item.alias for item in items if item.alias]
    if not aliases:
        return items
    taken = set(UrlLink.objects.filter(code__in=aliases).values_list("code", "domain_id"))
    kept, refused = [], []
    for item in items:
        if item.alias:
            if (item.alias, item.link.domain_id) in taken:
                refused.append(item)
                continue
            taken.add((item.alias, item.link.domain_id))
            item.link.code = item.alias
            item.link.code_type = CodeType.CUSTOM
        kept.append(item)
    for domain_id in {item.link.domain_id for item in refused}:
        on_domain = [item for item in refused if item.link.domain_id == domain_id]
        suggestions = free_alias_suggestions([item.alias for item in on_domain], domain_id)
        for item in on_domain:
            suggestion = suggestions.get(item.alias)
            if (suggestion, domain_id) in taken:  # claimed by an earlier item of this call
                suggestion = None
            errors[item.index] = alias_taken_error(item.alias, suggestion=suggestion).message_dict
    return kept


def _bulk_assign_from_candidates(strategy, items: list[_BulkItem], errors: dict[int, dict]):
    """Give each item the strategy's first candidate that is free: one query per round."""
    if not items:
        return
    strategy.expect(len(items))
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


_INSERT_FIELDS = [field for field in UrlLink._meta.concrete_fields if not field.primary_key]
_STAMPED_FIELDS = [
    field.attname
    for field in _INSERT_FIELDS
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
]


def _insert_returning_ids(links: list[UrlLink]) -> bool:
    """INSERT the links with one statement per batch and set their ids from RETURNING.

    What bulk_create does, without its per-value compilation (most of its cost for a thousand
    rows): values that are None, str or int go to the driver as they are, others (datetimes)
    through the field's own conversion, and the rows share one creation time. False, having
    done nothing, on a database that cannot return ids from a multi-row insert.
    """
    connection = connections[UrlLink.objects.db]
    if not connection.features.can_return_rows_from_bulk_insert:
        return False
    now = timezone.now()
    prepped: dict[str, object] = {}
    for field in _INSERT_FIELDS:
        if field.attname in _STAMPED_FIELDS:
            prepped[field.attname] = field.get_db_prep_save(now, connection)
    quote = connection.ops.quote_name
    pk_field = UrlLink._meta.pk
    returning, _ = connection.ops.return_insert_columns([pk_field])
    # Table and column names come from the model; every value is a query parameter.
    table = quote(UrlLink._meta.db_table)
    columns = ", ".join(quote(field.column) for field in _INSERT_FIELDS)
    head = f"INSERT INTO {table} ({columns}) VALUES "  # noqa: S608
    row = "(" + ", ".join(["%s"] * len(_INSERT_FIELDS)) + ")"
    batch = max(1, connection.ops.bulk_batch_size(_INSERT_FIELDS, links))
    plain = (str, int)
    for link in links:
        for attname in _STAMPED_FIELDS:
            setattr(link, attname, now)
    with connection.cursor() as cursor:
        for start in range(0, len(links), batch):
            chunk = links[start : start + batch]
            params: list = []
            for link in chunk:
                for field in _INSERT_FIELDS:
                    attname = field.attname
                    if attname in prepped:
                        params.append(prepped[attname])
                        continue
                    value = getattr(link, attname)
                    if value is not None and type(value) not in plain:
                        value = field.get_db_prep_save(value, connection)
                    params.append(value)
            cursor.execute(f"{head}{', '.join([row] * len(chunk))} {returning}", params)
            ids = cursor.fetchall()
            for link, (pk,) in zip(chunk, ids, strict=True):
                link.pk = pk
                link._state.adding = False
                link._state.db = connection.alias
    return True


def _bulk_insert(items: list[_BulkItem], errors: dict[int, dict]) -> None:
    links = [item.link for item in items]
    if not links:
        return
    try:
        with transaction.atomic():
            if not _insert_returning_ids(links):
                UrlLink.objects.bulk_create(links)
    except IntegrityError:
        # Someone took a code or alias between the checks and the insert: go one by one.
        for item in items:
            item.link.pk = None
            item.link._state.adding = True
            try:
                if item.alias:
                    create_with_alias(item.link, item.alias)
                else:
                    with transaction.atomic():
                        item.link.save()
            except IntegrityError:
                try:
                    create_with_strategy(item.link)
                except CodeGenerationError as exc:
                    errors[item.index] = {"code": [str(exc)]}
            except ValidationError as exc:
                errors[item.index] = exc.message_dict
        return
    if any(link.pk is None for link in links):
        # Backends that cannot return ids from a bulk insert: one query finds them.
        rows = UrlLink.objects.filter(code__in=[link.code for link in links])
        ids = {
            (code, domain_id): pk
            for code, domain_id, pk in rows.values_list("code", "domain_id", "id")
        }
        for link in links:
            link.pk = ids[(link.code, link.domain_id)]


def _case_warnings(items: list[_BulkItem]) -> dict[tuple[str, int], dict[str, list[str]]]:
    """alias_case_warnings_many for the new aliases, domain by domain: {(alias, domain id):
    warning}."""
    warnings = {}
    for domain_id in {item.link.domain_id for item in items}:
        aliases = [item.alias for item in items if item.link.domain_id == domain_id]
        for alias, warning in alias_case_warnings_many(aliases, domain_id).items():
            warnings[(alias, domain_id)] = warning
    return warnings


def link_create_many(
    *,
    user: AbstractBaseUser,
    items: list[dict],
    request_host: str | None = None,
    workspace: Workspace | str | None = None,
    pinned_workspace_id: int | None = None,
) -> list[BulkItemResult]:
    """Shorten up to BULK_MAX_ITEMS URLs in one transaction; every item succeeds or fails alone.

    Items take `link_create`'s keyword arguments (long_url, alias, title, valid_since,
    expires_at, redirect_type, pass_query, tags, utm, archived, password, max_visits, rules,
    variants, domain, og_title, og_description, og_image, track_conversions). Round trips are
    per call, not per item: one query finds the owner's existing links, one the taken aliases,
    codes are claimed in a batch, the rows are written by one bulk insert (and tags by three
    more queries). Results come back in the items' order. Every item goes to one workspace
    (`workspace` and `pinned_workspace_id` as for link_create).
    """
    if len(items) > BULK_MAX_ITEMS:
        raise ValidationError(
            {"items": [f"Send at most {BULK_MAX_ITEMS} URLs per call (this one has {len(items)})."]}
        )
    # Not text: refused per item by the password rules, not counted here.
    passwords = {item.get("password") for item in items if isinstance(item.get("password"), str)}
    passwords.discard("")
    if len(passwords) > BULK_MAX_PASSWORDS:
        raise ValidationError(
            {
                "items": [
                    f"Give at most {BULK_MAX_PASSWORDS} different passwords per call (this one "
                    f"has {len(passwords)}): each costs a moment to hash. Any number of links may "
                    "share one."
                ]
            }
        )
    password_hashes: dict[str, str] = {}
    workspace = workspace_for_writing(user=user, workspace=workspace, pinned_id=pinned_workspace_id)
    errors: dict[int, dict] = {}
    prepared: list[_BulkItem] = []
    url_rules = LongUrlRules(request_host=request_host)
    for index, item in enumerate(items):
        try:
            prepared.append(
                _bulk_prepare(
                    user,
                    index,
                    item,
                    url_rules=url_rules,
                    request_host=request_host,
                    workspace=workspace,
                    password_hashes=password_hashes,
                )
            )
        except ValidationError as exc:
            errors[index] = exc.message_dict
    to_create, reused, warnings, errors = _bulk_write(user, workspace, prepared, errors)
    created = {item.index: item.link for item in to_create if item.index not in errors}
    link_cache.forget_missing_after_commit(
        [link_cache.key_of_link(link) for link in created.values()]
    )
    events.announce_after_commit(events.LINK_CREATED, created.values())
    results = []
    for index in range(len(items)):
        if index in errors:
            results.append(BulkItemResult(errors=errors[index]))
        elif index in created:
            link = created[index]
            results.append(
                BulkItemResult(
                    link=link, created=True, warnings=warnings.get((link.code, link.domain_id))
                )
            )
        else:
            link, _ = reused[index]
            if isinstance(link, _BulkItem):
                if link.index in errors:
                    results.append(BulkItemResult(errors=errors[link.index]))
                    continue
                link = link.link
            results.append(BulkItemResult(link=link, created=False))
    return results


@retry_on_conflict
def _bulk_write(
    user: AbstractBaseUser,
    workspace: Workspace,
    prepared: list[_BulkItem],
    prepare_errors: dict[int, dict],
) -> tuple[list[_BulkItem], dict, dict, dict[int, dict]]:
    """link_create_many's writes, one unit of work (core.db): run again whole on a write
    conflict, from the prepared items and the errors found before it (an attempt's own errors,
    codes and rows are the rolled-back attempt's)."""
    errors = dict(prepare_errors)
    for item in prepared:
        item.link.pk, item.link._state.adding = None, True
    hold_owner(user)  # first, before reading reusable links or claiming codes
    to_create, reused = _bulk_reuse_existing(user, workspace, prepared)
    to_create = _bulk_refuse_taken_aliases(to_create, errors)
    _bulk_assign_codes(to_create, errors)
    to_create = [item for item in to_create if item.index not in errors]
    _bulk_insert(to_create, errors)
    new_aliases = [item for item in to_create if item.alias and item.index not in errors]
    link_cache.aliases_added_after_commit(
        [link_cache.key_of_link(item.link) for item in new_aliases]
    )
    warnings = _case_warnings(new_aliases)  # after the insert: sees the call's own
    link_tags_set_many(
        tagged=[(item.link, item.tags) for item in to_create if item.index not in errors],
    )
    link_audit_many(
        action="link.create",
        user=user,
        changed=[
            (item.link, None, link_snapshot(item.link, tags=item.tags or []))
            for item in to_create
            if item.index not in errors
        ],
    )
    return to_create, reused, warnings, errors
