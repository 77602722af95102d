"""Changing many links in one call (PATCH /api/v1/links/bulk/, My links' bulk actions, the
admin's actions): the same change for every link named, by the rules link_update and link_revoke
apply to one link, answered per link.

One transaction per call: every refusal is decided per link before anything is written (not
found or not yours, a viewer's, a revoked link's expiry, a start at or after the new expiry, too
many tags, a short domain kept for another workspace), then the accepted links are changed
together, in a few queries whatever their number, or not at all (the link cache out of reach:
CacheUnavailable, nothing changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from core.db import retry_on_conflict
from core.errors import FieldProblem, NotFound
from links import cache as link_cache
from links import events
from links.domains import current_table
from links.models import UrlLink, tag_key
from links.selectors import link_tag_names, links_get_changeable_many
from links.services.audit_trail import link_audit_many, link_snapshot
from links.services.bulk import BULK_MAX_ITEMS
from links.services.change import mark_revoked
from links.services.policy import LinkRevoked, ensure_changeable, validate_expiry, validate_schedule
from links.services.tags import clean_tags, link_tags_replace_many
from workspaces.models import Workspace
from workspaces.services import workspace_for_writing

BULK_CHANGE_MAX = BULK_MAX_ITEMS
# What a bulk call may set, the same for every link: `tags` replaces them, `add_tags` adds to
# each link's own, `revoked` may only be true (a revoke is final), `workspace` moves the links.
BULK_CHANGES = ("tags", "add_tags", "archived", "revoked", "expires_at", "workspace")

CHANGED, UNCHANGED, REFUSED = "changed", "unchanged", "refused"


@dataclass(frozen=True)
class BulkChangeResult:
    """What a bulk change did to one code: `outcome` CHANGED, UNCHANGED (it already was so) or
    REFUSED with `errors` ({"field": [reason]}: `code` when the link is not found or not the
    caller's to change, else the field whose rule refused it)."""

    code: str
    outcome: str
    link: UrlLink | None = None
    errors: dict[str, list[str]] | None = None


def clean_bulk_changes(changes) -> dict:
    """The changes a bulk call asks for, checked once for the whole call: ValidationError naming
    the field for anything malformed (unknown, a wrong type, an expiry in the past, tags the
    rules refuse, `tags` with `add_tags`, `revoked` with `expires_at`)."""
    if not isinstance(changes, dict) or not changes:
        raise ValidationError({"set": [f"Say what to change: one or more of {BULK_CHANGES}."]})
    unknown = sorted(str(name) for name in changes if name not in BULK_CHANGES)
    if unknown:
        raise ValidationError(
            {"set": [f"Unknown field(s) {', '.join(unknown)}; a bulk change sets {BULK_CHANGES}."]}
        )
    cleaned: dict = {}
    if "tags" in changes and "add_tags" in changes:
        raise ValidationError({"add_tags": ["Send either tags (replace) or add_tags, not both."]})
    if "tags" in changes:
        cleaned["tags"] = clean_tags(changes["tags"])
    if "add_tags" in changes:
        try:
            cleaned["add_tags"] = clean_tags(changes["add_tags"])
        except ValidationError as exc:
            raise ValidationError({"add_tags": exc.message_dict["tags"]}) from None
        if not cleaned["add_tags"]:
            raise ValidationError({"add_tags": ["Name at least one tag to add."]})
    if "archived" in changes:
        if not isinstance(changes["archived"], bool):
            raise ValidationError({"archived": ["Send true or false."]})
        cleaned["archived"] = changes["archived"]
    if "revoked" in changes:
        if changes["revoked"] is not True:
            raise ValidationError(
                {"revoked": ["Only true: a revoked link stays revoked (it cannot be undone)."]}
            )
        if "expires_at" in changes:
            raise ValidationError(
                {"expires_at": ["A revoke sets the expiry: send one or the other."]}
            )
        cleaned["revoked"] = True
    if "expires_at" in changes:
        # A datetime (every channel parses its own input: the API's DateTimeField, the forms').
        expires_at = changes["expires_at"]
        if expires_at is not None and not isinstance(expires_at, datetime):
            raise ValidationError({"expires_at": ["Send a date and time (ISO 8601) or null."]})
        cleaned["expires_at"] = validate_expiry(expires_at)
    if "workspace" in changes:
        workspace = changes["workspace"]
        if not isinstance(workspace, str | Workspace) or not workspace:
            raise ValidationError({"workspace": ["Name the workspace to move the links to."]})
        cleaned["workspace"] = workspace
    return cleaned


def _refusal(exc: Exception) -> dict[str, list[str]]:
    """A refused link's reason, as {"field": [message]}."""
    if isinstance(exc, ValidationError):
        return exc.message_dict
    if isinstance(exc, LinkRevoked):  # only a new expiry asks a link to be changeable
        return {"expires_at": [str(exc)]}
    if isinstance(exc, FieldProblem):  # a code on several domains
        return {exc.field: [exc.message]}
    if isinstance(exc, NotFound):
        return {"code": [exc.public_message]}
    return {"code": [str(exc)]}  # PermissionDenied: a viewer's


def link_change_many(
    *,
    user: AbstractBaseUser,
    changes: dict,
    codes: list[str] | None = None,
    ids: list[int] | None = None,
    workspace_id: int | None = None,
) -> list[BulkChangeResult]:
    """Apply `changes` (clean_bulk_changes) to each link named by `codes` (the default domain's
    link, else the only one the user sees, as link_get_visible) or by `ids` (the admin's
    selection), up to BULK_CHANGE_MAX, each as link_update / link_revoke would. Results come in
    the order given, once per distinct code or id. `workspace_id`: only that workspace's links
    (an API key acts for one; it may then move none elsewhere).

    The whole call is refused (ValidationError, PermissionDenied) only when it is malformed, too
    long, or moves links to a workspace the user may not write in; each link is refused on its
    own otherwise (a viewer's, someone else's, a revoked link's new expiry…).
    """
    keys: list = list(dict.fromkeys(codes if codes is not None else ids or []))
    field = "codes" if codes is not None else "ids"
    if not keys:
        raise ValidationError({field: ["Name at least one link."]})
    if len(keys) > BULK_CHANGE_MAX:
        raise ValidationError(
            {
                field: [
                    f"Change at most {BULK_CHANGE_MAX} links per call (this one has {len(keys)})."
                ]
            }
        )
    if codes is not None and not all(isinstance(code, str) and code for code in keys):
        raise ValidationError({"codes": ["Send the codes as a list of strings."]})
    changes = clean_bulk_changes(changes)
    target = None
    if "workspace" in changes:
        target = workspace_for_writing(
            user=user, workspace=changes["workspace"], pinned_id=workspace_id
        )
    found = links_get_changeable_many(
        user=user,
        codes=keys if codes is not None else (),
        ids=keys if codes is None else (),
        workspace_id=workspace_id,
    )
    refused: dict = {}
    links: dict = {}
    for key in keys:
        got = found[key]
        if isinstance(got, NotFound | PermissionDenied):
            refused[key] = _refusal(got)
        else:
            links[key] = got
    now = timezone.now()
    current_tags: dict[int, list[str]] = {}
    if {"tags", "add_tags"} & set(changes) or target is not None:
        current_tags = link_tag_names(link_ids=[link.pk for link in links.values()])
    domains = current_table().by_id
    # Each link as it was, for its audit entry: its tags only when the change may touch them.
    tags_known = bool(current_tags) or {"tags", "add_tags"} & set(changes) or target is not None
    befores = {
        link.pk: link_snapshot(link, tags=current_tags.get(link.pk, []) if tags_known else None)
        for link in links.values()
    }
    plans: dict = {}  # key → (fields to save, new tags or None, revoked now)
    for key, link in links.items():
        try:
            plans[key] = _plan(link, changes, target, now, current_tags, domains)
        except (ValidationError, LinkRevoked) as exc:
            refused[key] = _refusal(exc)
    _apply(links, plans, changes, target, now, user=user, befores=befores)
    results = []
    for key in keys:
        code = key if codes is not None else (links[key].code if key in links else str(key))
        if key in refused:
            results.append(BulkChangeResult(code=code, outcome=REFUSED, errors=refused[key]))
        else:
            fields, tags, _ = plans[key]
            outcome = CHANGED if fields or tags is not None else UNCHANGED
            results.append(BulkChangeResult(code=code, outcome=outcome, link=links[key]))
    return results


def _plan(link: UrlLink, changes: dict, target, now, current_tags, domains):
    """What `changes` does to one link, set on the object (nothing saved): (the fields that
    change, its tags as they will be or None, whether it is revoked now). Raises what
    link_update or link_revoke would."""
    fields: list[str] = []
    tags = None
    revoking = False
    if "expires_at" in changes:
        ensure_changeable(link)  # a revoked link's expiry is its revoke moment, for good
        validate_schedule(link.valid_since, changes["expires_at"], field="expires_at")
        if link.expires_at != changes["expires_at"]:
            link.expires_at = changes["expires_at"]
            fields.append("expires_at")
    if changes.get("revoked") and link.revoked_at is None:
        fields += [field for field in mark_revoked(link, now) if field not in fields]
        revoking = True
    if "archived" in changes and link.archived != changes["archived"]:
        link.archived = changes["archived"]
        fields.append("archived")
    if target is not None and link.workspace_id != target.pk:
        route = domains.get(link.domain_id)
        if route is not None and not route.takes_links_of(target.pk):
            raise ValidationError(
                {"workspace": [f"Its short domain {route.host} is kept for another workspace."]}
            )
        link.workspace_id = target.pk
        link.workspace = target
        fields.append("workspace")
        tags = current_tags.get(link.pk, [])  # the same names, as the new workspace's tags
    if "tags" in changes:
        # Compared as the tags' keys: "Spring" and "spring" are one tag of the workspace.
        wanted = {tag_key(name) for name in changes["tags"]}
        if tags is not None or wanted != {tag_key(name) for name in current_tags.get(link.pk, [])}:
            tags = changes["tags"]
    elif "add_tags" in changes:
        have = current_tags.get(link.pk, [])
        keys = {tag_key(name) for name in have}
        if any(tag_key(name) not in keys for name in changes["add_tags"]):
            try:
                tags = clean_tags([*have, *changes["add_tags"]])
            except ValidationError as exc:
                raise ValidationError({"add_tags": exc.message_dict["tags"]}) from None
    return fields, tags, revoking


@retry_on_conflict  # one unit of work (core.db): run again whole on a write conflict
def _apply(links: dict, plans: dict, changes: dict, target, now, *, user, befores) -> None:
    """Write the planned changes: one UPDATE per kind of change, the tags in a few queries per
    workspace, the cached entries of links whose redirect changed dropped with them, and one
    audit entry per link changed (`befores`: each link's snapshot before the plan)."""
    planned = [
        (links[key], fields, tags, revoking) for key, (fields, tags, revoking) in plans.items()
    ]
    if not any(fields or tags is not None for _, fields, tags, _ in planned):
        return

    def ids_changing(field: str) -> list[int]:
        return [link.pk for link, fields, _, _ in planned if field in fields]

    revoked = [link for link, _, _, revoking in planned if revoking]
    redirect_changed = [
        link for link, fields, _, _ in planned if {"expires_at", "revoked_at"} & set(fields)
    ]
    updated = [link for link, fields, tags, revoking in planned if (fields or tags is not None)]
    with transaction.atomic():
        rows = UrlLink.objects
        # `revoked_at__isnull`: a link revoked meanwhile by another request stays as it was.
        if revoked:
            # Each keeps an earlier expiry; the rest expire now (link_revoke's rule).
            rows.filter(pk__in=ids_changing("expires_at"), revoked_at__isnull=True).update(
                expires_at=now
            )
            rows.filter(pk__in=[link.pk for link in revoked], revoked_at__isnull=True).update(
                revoked_at=now
            )
        elif "expires_at" in changes:
            rows.filter(pk__in=ids_changing("expires_at"), revoked_at__isnull=True).update(
                expires_at=changes["expires_at"]
            )
        if "archived" in changes:
            rows.filter(pk__in=ids_changing("archived")).update(archived=changes["archived"])
        if target is not None:
            rows.filter(pk__in=ids_changing("workspace")).update(workspace_id=target.pk)
        link_tags_replace_many(
            tagged=[(link, tags) for link, _, tags, _ in planned if tags is not None]
        )
        # As link_update: a change of tags alone leaves the row's updated_at as it was.
        saved = [link for link, fields, _, _ in planned if fields]
        rows.filter(pk__in=[link.pk for link in saved]).update(updated_at=now)
        for link in saved:
            link.updated_at = now
        for action in ("link.update", "link.revoke"):
            changed = []
            for link, fields, tags, revoking in planned:
                if (fields or tags is not None) and revoking == (action == "link.revoke"):
                    before = befores[link.pk]
                    after_tags = None
                    if "tags" in before:
                        after_tags = tags if tags is not None else before["tags"]
                    changed.append((link, before, link_snapshot(link, tags=after_tags)))
            link_audit_many(action=action, user=user, changed=changed)
        link_cache.drop_many([link_cache.key_of_link(link) for link in redirect_changed])
    revoked_ids = {link.pk for link in revoked}
    events.announce_after_commit(events.LINK_REVOKED, revoked)
    events.announce_after_commit(
        events.LINK_UPDATED, [link for link in updated if link.pk not in revoked_ids]
    )
