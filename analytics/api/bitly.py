"""Bitly's API v4 clicks under `/v4/bitlinks/{domain}/{code}/clicks` (and `…/summary`): a link's
people's clicks per hour, day, week or month from the hourly counts (the stats API's `series`),
in Bitly's shape. The rest of the Bitly layer (credentials, errors, the bitlink lookup) is
links.compat.bitly's; docs/api.md ("Bitly API") says what differs from Bitly.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.urls import path
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import ApiScope
from links.compat.bitly import BITLINK, BitlyView, bitly_date, invalid_arg, visible_link
from links.models import UrlLink

from ..models import utc_hour
from ..selectors import bucket_first_day, links_totals, series

# Bitly's units of time; ours are counted by the hour, so `minute` is refused.
UNITS = ("hour", "day", "week", "month")
# The most entries one `clicks` answer lists (`units=-1` on an old link by the hour).
MAX_UNITS = 10_000

Reply = dict[str, object]


def _days_shifted(day: date, unit: str, count: int) -> date:
    if unit == "day":
        return day + timedelta(days=count)
    if unit == "week":
        return day + timedelta(weeks=count)
    months = day.year * 12 + day.month - 1 + count
    return date(months // 12, months % 12 + 1, 1)


def unit_span(
    unit: str, reference: datetime, count: int, since: datetime | None = None
) -> tuple[datetime, datetime]:
    """[start, end) of the `count` whole units of time up to and including the one holding
    `reference` (local days, weeks from Monday, months; UTC hours), at most MAX_UNITS of them,
    and none before the one holding `since` (the link's creation) when it is given."""
    count = min(count, MAX_UNITS)
    if unit == "hour":
        end = utc_hour(reference) + timedelta(hours=1)
        start = end - timedelta(hours=count)
        if since is not None:
            start = max(start, utc_hour(since))
        return start, end
    zone = timezone.get_current_timezone()
    first = bucket_first_day(reference.astimezone(zone).date(), unit)
    end_day = _days_shifted(first, unit, 1)
    start_day = _days_shifted(first, unit, 1 - count)
    if since is not None:
        start_day = max(start_day, bucket_first_day(since.astimezone(zone).date(), unit))
    return (
        datetime.combine(start_day, time.min, tzinfo=zone),
        datetime.combine(end_day, time.min, tzinfo=zone),
    )


def clicks_query(request: Request, link: UrlLink) -> tuple[Reply, datetime, datetime]:
    """Bitly's `unit`, `units` and `unit_reference` (and `size`, the most entries listed) →
    (what the answer echoes, start, end)."""
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
    if reference_text:
        reference = parse_datetime(reference_text.replace(" ", "+"))
        if reference is None:
            raise invalid_arg(
                "unit_reference", "`unit_reference` is an ISO 8601 time, e.g. 2026-03-01T00:00:00Z."
            )
        if timezone.is_naive(reference):
            reference = timezone.make_aware(reference)
    else:
        reference = timezone.now()
    # units=-1: every unit since the link's creation; `size` caps how many are listed.
    count = MAX_UNITS if units < 0 else units
    if size > 0:
        count = min(count, size)
    since = link.created_at if units < 0 else None
    start, end = unit_span(unit, reference, count, since=since)
    echo = {"units": units, "unit": unit, "unit_reference": bitly_date(reference)}
    return echo, start, end


class ClicksView(BitlyView):
    """GET /v4/bitlinks/{domain}/{code}/clicks?unit=&units=&unit_reference=: people's clicks
    per unit, newest first (HourlyClick, as the stats API)."""

    scope = ApiScope.STATS_READ

    def get(self, request: Request, domain: str, code: str) -> Response:
        link = visible_link(request, domain, code)
        echo, start, end = clicks_query(request, link)
        entries = series(link_ids=[link.pk], start=start, end=end, bucket=str(echo["unit"]))
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


# Included under /v4/ before links.compat.bitly's patterns, whose last one answers every other path.
urlpatterns = [
    path(f"{BITLINK}/clicks", ClicksView.as_view(), name="bitly-clicks"),
    path(f"{BITLINK}/clicks/summary", ClicksSummaryView.as_view(), name="bitly-clicks-summary"),
]
