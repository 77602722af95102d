"""Activates each person's time zone, so every time a page shows or a form reads is in it."""

from __future__ import annotations

from collections.abc import Callable
from zoneinfo import ZoneInfo

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from accounts import selectors, services

# Set by static/js/timezone.js from the browser's own zone (Intl), for people who chose none.
BROWSER_ZONE_COOKIE = "tz"
# The signed-in person's chosen zone ("" = none), copied from their profile.
SESSION_TIME_ZONE = "accounts.time_zone"


def database_converts_time_zones() -> bool:
    """Whether SQL date functions work in any zone. MySQL/MariaDB need their time zone tables
    loaded (docs/operations.md); without them the admin's date drill-down and per-day
    counts would fail in any zone but the connection's, so people's zones are not used."""
    return connection.features.has_zoneinfo_database


def time_zone_for(request: HttpRequest) -> str:
    """The zone this request's pages use: the person's choice, else their browser's, else ""
    (settings.TIME_ZONE)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        # Kept in the session after the first page, so a page costs no query for it.
        chosen = request.session.get(SESSION_TIME_ZONE)
        if chosen is None:
            chosen = selectors.profile_time_zone(user=user)
            request.session[SESSION_TIME_ZONE] = chosen
        if chosen:
            return chosen
    browser_zone = request.COOKIES.get(BROWSER_ZONE_COOKIE, "")
    return browser_zone if services.is_time_zone_name(browser_zone) else ""


class TimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # The API answers in UTC for every caller: machines compare its times, and the ISO
        # offset says which zone anyway.
        zone = "" if request.path_info.startswith("/api/") else time_zone_for(request)
        if zone and database_converts_time_zones():
            timezone.activate(ZoneInfo(zone))
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
