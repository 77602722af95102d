"""Bitly's API v4 clicks under `/v4/bitlinks/{domain}/{code}/clicks` (and `…/summary`): a link's
people's clicks per hour, day, week or month from the hourly counts (the stats API's `series`),
in Bitly's shape. The rest of the Bitly layer (credentials, errors, the bitlink lookup) is
compat.bitly.views's; docs/api-bitly.md says what differs from Bitly.
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.urls import path
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.request import Request
from rest_framework.response import Response

from analytics import ranges
from analytics.selectors import links_totals, series
from compat.bitly.views import BITLINK, BitlyView, bitly_date, invalid_arg, visible_link
from core.api.scopes import ApiScope
from links.models import UrlLink

# Bitly's units of time; ours are counted by the hour, so `minute` is refused.
UNITS = ("hour", "day", "week", "month")
# Bitly's names for analytics.ranges.units_span's.
_FIELDS = {"reference": "unit_reference", "count": "units"}

Reply = dict[str, object]


def _reference(text: str) -> datetime:
    """`unit_reference` as an aware datetime (naive: the current time zone's), else
    INVALID_ARG_UNIT_REFERENCE (a 25th hour or a +99:00 offset too, which the parser raises on)."""
    try:
        reference = parse_datetime(text.replace(" ", "+"))
        if reference is not None and timezone.is_naive(reference):
            reference = timezone.make_aware(reference)
    except (ValueError, OverflowError):
        reference = None
    if reference is None:
        raise invalid_arg(
            "unit_reference", "`unit_reference` is an ISO 8601 time, e.g. 2026-03-01T00:00:00Z."
        )
    return reference


def clicks_query(request: Request, link: UrlLink) -> tuple[Reply, datetime, datetime]:
    """Bitly's `unit`, `units` and `unit_reference` (and `size`, the most entries listed) →
    (what the answer echoes, start, end), within analytics.ranges' limits."""
    params = request.query_params
    unit = (params.get("unit") or "day").strip().lower()
    if unit == "minute":
        raise invalid_arg("unit", "Clicks are counted by the hour here: ask for hour or longer.")
    if unit not in UNITS:
        raise invalid_arg("unit", "`unit` is one of minute, hour, day, week, month.")
    try:
        units = int(params.get("units") or -1)
        size = int(params.get("size") or 0)
    except ValueError:
        raise invalid_arg("units", "`units` and `size` are whole numbers.") from None
    if units == 0 or units < -1:
        raise invalid_arg("units", "`units` is -1 (every unit) or a positive number.")
    reference_text = (params.get("unit_reference") or "").strip()
    reference = _reference(reference_text) if reference_text else timezone.now()
    # units=-1: every unit since the link's creation, the newest ones when there are more than a
    # series may list; `size` caps how many are listed.
    count = ranges.max_buckets() if units < 0 else units
    if size > 0:
        count = min(count, size)
    since = link.created_at if units < 0 else None
    try:
        start, end = ranges.units_span(unit, reference, count, since=since)
    except ValidationError as error:
        field, messages = next(iter(error.message_dict.items()))
        raise invalid_arg(_FIELDS[field], " ".join(messages)) from None
    echo = {"units": units, "unit": unit, "unit_reference": bitly_date(reference)}
    return echo, start, end


class ClicksView(BitlyView):
    """GET /v4/bitlinks/{domain}/{code}/clicks?unit=&units=&unit_reference=: people's clicks
    per unit, newest first (HourlyClick, as the stats API)."""

    scope = ApiScope.STATS_READ

    def get(self, request: Request, domain: str, code: str) -> Response:
        link = visible_link(request, domain, code)
        echo, start, end = clicks_query(request, link)
        entries = series(
            link_ids=[link.pk], start=start, end=end, bucket=str(echo["unit"]), people=False
        )
        link_clicks = [
            {"clicks": entry["clicks"], "date": bitly_date(entry["hour"])}
            for entry in reversed(entries)
        ]
        return Response({"link_clicks": link_clicks, **echo})


class ClicksSummaryView(BitlyView):
    """GET /v4/bitlinks/{domain}/{code}/clicks/summary: the same span's people's clicks."""

    scope = ApiScope.STATS_READ

    def get(self, request: Request, domain: str, code: str) -> Response:
        link = visible_link(request, domain, code)
        echo, start, end = clicks_query(request, link)
        total = 0
        if start < end:
            totals = links_totals(link_ids=[link.pk], start=start, end=end, people=False)
            total = totals[link.pk]["clicks"]
        return Response({"total_clicks": total, **echo})


# Included under /v4/ before compat.bitly.views's patterns, whose last one answers every other path.
urlpatterns = [
    path(f"{BITLINK}/clicks", ClicksView.as_view(), name="bitly-clicks"),
    path(f"{BITLINK}/clicks/summary", ClicksSummaryView.as_view(), name="bitly-clicks-summary"),
]
