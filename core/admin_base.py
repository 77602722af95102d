"""What the admins of both apps share."""

import datetime as dt

from django.http import HttpRequest
from django.utils import timezone


def short_date(moment: dt.datetime) -> str:
    """A time in the person's zone, compact ("2026-04-01 09:30"), so a list keeps its last
    columns in view where Django's "April 1, 2026, 9:30 a.m." would take two lines of width."""
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M}"


class ReadOnlyAdminMixin:
    """Rows written by services and the analytics pipeline; the admin only shows them."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
