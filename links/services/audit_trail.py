"""A link's entries in the audit log (audit.services): what a link is, as its log shows it
before and after a change. Every service that creates, changes or revokes links records here,
so each channel (site, API, compat APIs, admin, commands, bulk changes) leaves the same entry."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from audit.services import audit_entry, audit_record, audit_record_many, snapshot
from links.models import UrlLink

# A link's own state kept by the product, not set by anyone: left out of its entries.
_NOT_AUDITED = frozenset({"owner_id", "seq_id", "code_type", "visits_used", "created_at"})


_ASK = object()


def link_snapshot(link: UrlLink, *, tags=_ASK) -> dict:
    """A link's audited fields, its tags' names among them (sorted): read from the database
    unless given (`tags`, a bulk change that read them all at once; None leaves them out)."""
    fields = [
        f.attname
        for f in link._meta.concrete_fields
        if f.attname not in _NOT_AUDITED and not f.attname.startswith("health_")
    ]
    values = snapshot(link, fields=fields)
    values.pop("updated_at", None)
    values.pop("long_url_hash", None)
    values.pop("id", None)
    if tags is _ASK:
        tags = link.tags.order_by("name").values_list("name", flat=True) if link.pk else []
    if tags is not None:
        values["tags"] = sorted(tags)
    return values


def link_audit(
    *,
    action: str,
    link: UrlLink,
    user: AbstractBaseUser | None,
    before: dict | None,
    always: bool = False,
    after: dict | None = None,
) -> None:
    """Record `action` on `link` (link.create / link.update / link.revoke), its fields now
    (or `after`) against `before` (None for a new link)."""
    audit_record(
        action=action,
        actor=user,
        object_type="link",
        object_id=link.pk,
        object_repr=link.code,
        workspace_id=link.workspace_id,
        before=before,
        after=link_snapshot(link) if after is None else after,
        always=always,
    )


def link_audit_many(*, action: str, user: AbstractBaseUser | None, changed: list) -> None:
    """One `action` entry per link of a bulk call: `changed` holds (link, before or None, after
    or None: its snapshot now)."""
    audit_record_many(
        audit_entry(
            action=action,
            actor=user,
            object_type="link",
            object_id=link.pk,
            object_repr=link.code,
            workspace_id=link.workspace_id,
            before=before,
            after=link_snapshot(link) if after is None else after,
            always=action != "link.update",
        )
        for link, before, after in changed
    )
