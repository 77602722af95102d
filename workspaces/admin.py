"""Staff see every workspace with its members and links; they add and change members here as
an owner would."""

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.forms.models import BaseInlineFormSet

from audit.services import audit_change, snapshot
from workspaces.models import Membership, Role, Workspace


class MembershipFormSet(BaseInlineFormSet):
    """The rules workspaces.services keeps for owners, kept here too: after the save the
    workspace still has an owner, and a personal workspace's own user stays its owner."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        workspace = self.instance
        owners = set()
        for form in self.forms:
            data = getattr(form, "cleaned_data", None) or {}
            user = data.get("user")
            if user is not None and not data.get("DELETE") and data.get("role") == Role.OWNER:
                owners.add(user.pk)
        if not owners:
            raise ValidationError(
                "A workspace keeps at least one owner: make someone else owner first."
            )
        if workspace.personal_for_id is not None and workspace.personal_for_id not in owners:
            raise ValidationError(
                f"{workspace.personal_for.get_username()} stays the owner of their personal "
                "workspace."
            )


class MembershipInline(admin.StackedInline):
    # Stacked: each field has its own <label> (a tabular inline's column headers are not labels)
    # and a member fits a phone.
    model = Membership
    formset = MembershipFormSet
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "personal_for",
        "member_count",
        "link_count",
        "analytics_privacy",
        "created_at",
    ]
    search_fields = ["slug", "name", "memberships__user__username"]
    list_filter = [("personal_for", admin.EmptyFieldListFilter), "analytics_privacy"]
    readonly_fields = ["personal_for", "created_at"]
    inlines = [MembershipInline]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("personal_for")
            .annotate(
                member_total=Count("memberships", distinct=True),
                link_total=Count("links", distinct=True),
            )
        )

    # The admin saves the workspace and its members itself (not through workspaces.services),
    # inside its own transaction: their audit entries are written here, in it.
    def save_model(self, request, obj, form, change):
        before = snapshot(Workspace.objects.get(pk=obj.pk)) if change else None
        super().save_model(request, obj, form, change)
        action = "workspace.update" if change else "workspace.create"
        audit_change(action, obj, before=before, workspace_id=obj.pk)

    def save_formset(self, request, form, formset, change):
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        members = Membership.objects.filter(workspace_id=form.instance.pk)
        before = {membership.pk: snapshot(membership) for membership in members}
        for deleted in formset.deleted_forms:  # before the save, while they have their ids
            membership = deleted.instance
            if membership.pk in before:
                audit_change(
                    "membership.delete", membership, before=before[membership.pk], after={}
                )
        super().save_formset(request, form, formset, change)
        for membership in formset.new_objects:
            audit_change("membership.create", membership)
        for membership, _ in formset.changed_objects:
            audit_change("membership.update", membership, before=before[membership.pk])

    @admin.display(description="members", ordering="member_total")
    def member_count(self, workspace) -> int:
        return workspace.member_total

    @admin.display(description="links", ordering="link_total")
    def link_count(self, workspace) -> int:
        return workspace.link_total
