"""Staff see every workspace with its members and links; they add and change members here as
an owner would."""

from django.contrib import admin
from django.db.models import Count

from .models import Membership, Workspace


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "personal_for", "member_count", "link_count", "created_at"]
    search_fields = ["slug", "name", "memberships__user__username"]
    list_filter = [("personal_for", admin.EmptyFieldListFilter)]
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

    @admin.display(description="members", ordering="member_total")
    def member_count(self, workspace) -> int:
        return workspace.member_total

    @admin.display(description="links", ordering="link_total")
    def link_count(self, workspace) -> int:
        return workspace.link_total
