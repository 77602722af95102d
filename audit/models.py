"""The audit log: one row per change to a workspace's things (links, domains, tags, API keys,
webhooks, the workspace and its members) and per sign-in to the admin.

Append-only from the product's side: no service changes or deletes a row, the model refuses
to save a row twice or delete one, and the admin shows them read-only. The workspace and the
actor are kept as ids and names, not foreign keys, so an entry outlives both: a deleted
workspace's or user's history stays for staff to read.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from audit.channels import CHANNELS, LABELS


class AppendOnly(Exception):
    """An audit entry may be written once and never changed or deleted."""


class AuditEntryQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("Audit entries are never changed.")

    def delete(self):
        raise AppendOnly("Audit entries are never deleted.")


class AuditEntry(models.Model):
    at = models.DateTimeField(default=timezone.now, db_index=True)
    # None: not a workspace's (an admin sign-in, a domain kept for every workspace).
    workspace_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor = models.CharField(max_length=150, blank=True)  # the username then; "" for none
    channel = models.CharField(max_length=8, choices=[(c, LABELS[c]) for c in CHANNELS])
    action = models.CharField(max_length=40)  # "<object type>.<verb>": link.update
    object_type = models.CharField(max_length=20)
    object_id = models.CharField(max_length=64, blank=True)
    object_repr = models.CharField(max_length=200, blank=True)
    # {field: [before, after]}: None before on a create, None after on a delete; secrets masked.
    changes = models.JSONField(default=dict, blank=True)

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["workspace_id", "-at"], name="audit_ws_at")]
        verbose_name = "audit entry"
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.action} {self.object_repr} by {self.actor or '-'} ({self.channel})"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise AppendOnly("Audit entries are never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("Audit entries are never deleted.")
