"""Accounts in the admin: DRF's token list (with one change for accessibility), paused password
checks, and the admin's own password change guarded like the site's."""

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from shorturl_project.admin_base import short_date

from . import views
from .models import PasswordCheckTries

admin.site.unregister(TokenProxy)

# The admin's password change checks the old password through the same guess limit as
# /accounts/password/ (AdminSite looks this up when it builds its URLs).
admin.site.password_change = views.admin_password_change


@admin.register(TokenProxy)
class AccessibleTokenAdmin(TokenAdmin):
    # Django labels its search box with an icon; with a help text tied to the box as well,
    # axe-core reads the box as labelled by that text alone (label-title-only, serious). The
    # search still looks in user names, like every other list's search box, which has no help.
    search_help_text = None


@admin.register(PasswordCheckTries)
class PasswordCheckTriesAdmin(admin.ModelAdmin):
    """Deleting a row lifts that user's pause at once (it also ends by itself)."""

    list_display = ("user", "tries", "last_try")
    search_fields = ("user__username",)
    fields = ("user", "tries", "last_try_at")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Last try", ordering="last_try_at")
    def last_try(self, obj: PasswordCheckTries) -> str:
        return short_date(obj.last_try_at)
