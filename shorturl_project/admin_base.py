"""What the admins of both apps share."""

from django.http import HttpRequest


class ReadOnlyAdminMixin:
    """Rows written by services and the analytics pipeline; the admin only shows them."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
