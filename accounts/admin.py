"""Accounts in the admin: API keys (DRF-style tokens among them; never a usable key, only its
first characters), paused password checks, and the admin's own password change guarded like the
site's."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework.authtoken import admin as drf_token_admin
from rest_framework.authtoken.models import TokenProxy

from accounts import services, views
from accounts.models import ApiKey, PasswordCheckTries, SsoIdentity
from core.admin_base import short_date

# DRF's token list showed each key in full; tokens are hashed API keys now (listed below), and
# its "add" would make a token the admin could not show. (Imported first: this app comes before
# DRF's in INSTALLED_APPS, so the admin has not read DRF's module yet.)
assert drf_token_admin.TokenAdmin
admin.site.unregister(TokenProxy)

# The admin's password change checks the old password through the same guess limit as
# /accounts/password/ (AdminSite looks this up when it builds its URLs).
admin.site.password_change = views.admin_password_change
# The admin's sign-in offers single sign-on as the site's does (settings.SSO_*).
admin.site.login = views.admin_login


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are made by their owners (keys page) or drf_create_token, and shown only then."""

    list_display = ("name", "user", "key_start", "workspace", "drf_token", "created", "status")
    list_filter = ("drf_token",)
    list_select_related = ("user", "workspace")
    search_fields = ("user__username", "name", "prefix")
    fields = (
        "name",
        "user",
        "key_start",
        "workspace",
        "scopes",
        "drf_token",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
        "rate_limit",
    )
    # Its limit is all that staff change on a key (requests per minute; empty: the workspace's
    # default): a key flooding the API is slowed without revoking it.
    readonly_fields = fields[:-1]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApiKey, form, change: bool) -> None:
        services.api_key_set_rate_limit(
            key_id=obj.pk, user=obj.user, rate_limit=obj.rate_limit, by=request.user
        )

    @admin.display(description="Key")
    def key_start(self, obj: ApiKey) -> str:
        return f"{obj.prefix}…"

    @admin.display(description="Created", ordering="created_at")
    def created(self, obj: ApiKey) -> str:
        return short_date(obj.created_at)

    @admin.display(description="Status")
    def status(self, obj: ApiKey) -> str:
        if obj.revoked_at:
            return "Revoked"
        return "Expired" if obj.is_expired() else "Active"

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        # Rows are never edited here; revoking is what changing a key means.
        return request.user.has_perm("accounts.change_apikey")

    @admin.action(description="Revoke the selected keys", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset.filter(revoked_at__isnull=True):
            services.api_key_revoke(key_id=api_key.pk, user=api_key.user)
        messages.success(request, "Revoked: they are refused from the next request.")


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


@admin.register(SsoIdentity)
class SsoIdentityAdmin(admin.ModelAdmin):
    """Who signs in through the provider as whom (accounts.sso makes the links). Read-only:
    deleting one makes the person's next sign-in link by e-mail again (or make a new user)."""

    list_display = ("user", "email", "subject", "issuer", "created_at", "last_sign_in_at")
    list_select_related = ("user",)
    search_fields = ("user__username", "email", "subject")
    readonly_fields = list_display

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
