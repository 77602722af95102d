"""Writing the audit log: the one home of what an entry holds (who, when, which channel, the
fields before and after, secrets masked).

The services that change things call audit_record inside the transaction of their change, so
an entry exists exactly when its change does: a change rolled back leaves none, and none is
left for a change that was refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction

from audit import channels
from audit.models import AuditEntry

# Shown instead of a secret: that it is set, and that it changed, never its value.
MASK = "••••••"
SECRET_FIELDS = frozenset({"password", "password_hash", "secret", "key_hash", "key", "token"})
# Bookkeeping, not a change anyone made: left out of every snapshot.
NOISE_FIELDS = frozenset({"id", "updated_at", "long_url_hash", "created_at", "last_used_at"})


def _plain(value):
    """A field's value as JSON keeps it (datetimes as ISO 8601 text)."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def snapshot(obj: models.Model, *, fields: Iterable[str] | None = None, **extra) -> dict:
    """An object's audited fields as plain values: its concrete fields (foreign keys as ids)
    less bookkeeping, or only `fields`; `extra` adds computed ones (a link's tags)."""
    if fields is None:
        fields = [f.attname for f in obj._meta.concrete_fields if f.attname not in NOISE_FIELDS]
    values = {name: _plain(getattr(obj, name)) for name in fields}
    values.update({name: _plain(value) for name, value in extra.items()})
    return values


def _masked(name: str, value):
    if name in SECRET_FIELDS and value not in (None, ""):
        return MASK
    return value


_EMPTY = (None, "", [], {})


def changes_between(before: dict, after: dict) -> dict[str, list]:
    """{field: [before, after]} for the fields that differ (None for a side that lacks it: a
    create's before, a delete's after, where empty fields are left out). Secrets are compared as
    they are and shown masked: a new password is a change, unseen."""
    changed = {}
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        one_sided = name not in before or name not in after  # a create or a delete
        if one_sided and (old if name in before else new) in _EMPTY:
            continue  # a field a new object left empty (or a gone one had empty) says nothing
        if old != new:
            changed[name] = [_masked(name, old), _masked(name, new)]
    return changed


_REQUEST_USER = object()


def audit_entry(
    *,
    action: str,
    actor: AbstractBaseUser | None = _REQUEST_USER,
    object_type: str,
    object_id: object = "",
    object_repr: str = "",
    workspace_id: int | None = None,
    before: dict | None = None,
    after: dict | None = None,
    always: bool = False,
) -> AuditEntry | None:
    """The entry for one change made now through the current channel (audit.channels), not yet
    saved; None when the change changed no field, unless `always` (a revoke, a delete, a
    sign-in). `actor` left out: the request's user (audit.channels.current_user)."""
    if actor is _REQUEST_USER:
        actor = channels.current_user()
    changes = changes_between(before or {}, after or {})
    if not changes and not always:
        return None
    is_user = actor is not None and getattr(actor, "pk", None) is not None
    return AuditEntry(
        workspace_id=workspace_id,
        actor_id=actor.pk if is_user else None,
        actor=actor.get_username() if is_user else "",
        channel=channels.current(),
        action=action,
        object_type=object_type,
        object_id=str(object_id)[:64],
        object_repr=str(object_repr)[:200],
        changes=changes,
    )


def audit_record(**change) -> AuditEntry | None:
    """Record one change (audit_entry's arguments). Call it inside the change's transaction;
    called outside one, it makes its own."""
    entry = audit_entry(**change)
    if entry is not None:
        with transaction.atomic():
            entry.save()
    return entry


def audit_record_many(entries: Iterable[AuditEntry | None]) -> int:
    """Record many changes' entries (audit_entry's) in one insert (SQLite: one per 99): a
    bulk call's, one entry per object changed. How many were recorded."""
    entries = [entry for entry in entries if entry is not None]
    AuditEntry.objects.bulk_create(entries)
    return len(entries)


_NOW = object()


def audit_change(
    action: str,
    obj: models.Model,
    *,
    actor: AbstractBaseUser | None = _REQUEST_USER,
    before: dict | None = None,
    after: dict | None = _NOW,  # type: ignore[assignment]
    workspace_id: int | None = _NOW,  # type: ignore[assignment]
) -> AuditEntry | None:
    """audit_record for one object: `action` is "<object type>.<verb>" (webhook.update), the
    object's fields now (`after`; {} for a delete) against `before` (snapshot taken before the
    change; none for a create), in its own workspace. Only an update that changed nothing
    records nothing."""
    return audit_record(
        action=action,
        actor=actor,
        object_type=action.split(".")[0],
        object_id=obj.pk if obj.pk is not None else "",
        object_repr=str(obj),
        workspace_id=getattr(obj, "workspace_id", None) if workspace_id is _NOW else workspace_id,
        before=before,
        after=snapshot(obj) if after is _NOW else after,
        always=not action.endswith(".update"),
    )
