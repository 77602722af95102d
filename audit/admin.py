"""Staff read the whole audit log here, read-only: nothing added, changed or deleted."""

from __future__ import annotations

from django.contrib import admin

from audit.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("at", "action", "object_repr", "actor", "channel", "workspace_id")
    list_filter = ("channel", "action", "object_type")
    search_fields = ("object_repr", "object_id", "actor", "action")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEntry._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
