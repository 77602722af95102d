"""What clicks turned into (issue #29): leads, sales and revenue of links over a range, by day and
by the clicks' country, device and referrer host, with the conversion rates.

Every figure is a COUNT or a SUM over Conversion rows (indexed by link and time), never a
counter kept beside them, so it is exact whatever raced. A conversion counts in the range its
report came in (`created_at`), as a click counts when it was made. Revenue is in minor units,
per currency: sums of two currencies are never added up (`revenue` names the one currency, or
is null when the range has sales in several; `revenue_by_currency` lists each).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from analytics.models import Conversion, ConversionKind
from analytics.selectors.breakdowns import DIRECT, UNKNOWN, share
from analytics.selectors.hours import LinkIds, _hourly_rows, _ids

# The breakdowns of conversions, named as the clicks' (selectors.breakdowns) with their column.
DIMENSIONS = {"countries": "country_code", "devices": "device_type", "referrers": "referrer_host"}
_LEADS = Count("id", filter=Q(kind=ConversionKind.LEAD))
_SALES = Count("id", filter=Q(kind=ConversionKind.SALE))


def _conversions(link_ids: LinkIds, start: datetime, end: datetime) -> QuerySet:
    rows = Conversion.objects.filter(created_at__gte=start, created_at__lt=end)
    return rows if link_ids is None else rows.filter(link_id__in=_ids(link_ids))


def _revenue(rows: QuerySet) -> tuple[int | None, str | None, list[dict]]:
    """(revenue, its currency, every currency's) of the sales among `rows`."""
    by_currency = [
        {"currency": row["currency"], "amount": row["amount"] or 0, "sales": row["sales"]}
        for row in rows.filter(kind=ConversionKind.SALE)
        .values("currency")
        .annotate(amount=Sum("amount"), sales=Count("id"))
        .order_by("-amount", "currency")
    ]
    if not by_currency:
        return 0, None, []
    if len(by_currency) == 1:
        return by_currency[0]["amount"], by_currency[0]["currency"], by_currency
    return None, None, by_currency


def rates(*, clicks: int, leads: int, sales: int) -> dict[str, float]:
    """The conversion rates, in percent to one decimal: leads of clicks, sales of leads."""
    return {"lead_rate": share(leads, clicks), "sale_rate": share(sales, leads)}


def conversion_totals(*, link_ids: LinkIds, start: datetime, end: datetime, clicks: int) -> dict:
    """{leads, sales, revenue, currency, revenue_by_currency, lead_rate, sale_rate} of the links
    (all links: None) over [start, end); `clicks` is the range's clicks, for the rate."""
    rows = _conversions(link_ids, start, end)
    counted = rows.aggregate(leads=_LEADS, sales=_SALES)
    revenue, currency, by_currency = _revenue(rows)
    return {
        "leads": counted["leads"],
        "sales": counted["sales"],
        "revenue": revenue,
        "currency": currency,
        "revenue_by_currency": by_currency,
        **rates(clicks=clicks, leads=counted["leads"], sales=counted["sales"]),
    }


def conversion_details(
    *,
    link_ids: LinkIds,
    start: datetime,
    end: datetime,
    click_breakdowns: dict,
    several_currencies: bool,
) -> dict:
    """{"days": […], "countries"/"devices"/"referrers": […]}: leads, sales and revenue per local
    day (with the day's clicks, from HourlyClick whatever the chart's bucket) and per value of
    the clicks' dimensions (with that value's clicks, from `click_breakdowns`, as far as they
    list it; null past their limit). Days and values without a conversion are left out; each
    revenue is null when the range has sales in several currencies, whose sums mean nothing
    (`several_currencies`: the same range's conversion_totals found so, its `revenue` null)."""
    rows = _conversions(link_ids, start, end)
    zone = timezone.get_current_timezone()
    days = []
    daily = list(
        rows.annotate(day=TruncDate("created_at", tzinfo=zone))
        .values("day")
        .annotate(leads=_LEADS, sales=_SALES, revenue=Sum("amount"))
        .order_by("day")
    )
    # Each day's clicks from the hours themselves, not the chart's series: with weekly buckets
    # the series holds a whole week's clicks under its Monday.
    clicks_by_day = (
        {
            row["day"]: row["clicks"] or 0
            for row in _hourly_rows(link_ids, start, end)
            .annotate(day=TruncDate("hour", tzinfo=zone))
            .filter(day__in=[row["day"] for row in daily])
            .values("day")
            .annotate(clicks=Sum("clicks"))
            .order_by()
        }
        if daily
        else {}
    )
    for row in daily:
        day = row["day"].isoformat()
        clicks = clicks_by_day.get(row["day"], 0)
        days.append(
            {
                "day": day,
                "clicks": clicks,
                "leads": row["leads"],
                "sales": row["sales"],
                "revenue": None if several_currencies else row["revenue"] or 0,
                **rates(clicks=clicks, leads=row["leads"], sales=row["sales"]),
            }
        )
    result: dict = {"days": days}
    for dimension, column in DIMENSIONS.items():
        click_entries = click_breakdowns.get(dimension) or []
        if dimension == "countries":
            clicks_of = {entry.get("code", ""): entry for entry in click_entries}
        else:
            clicks_of = {entry["name"]: entry for entry in click_entries}
        entries = []
        grouped = (
            rows.values(column)
            .annotate(leads=_LEADS, sales=_SALES, revenue=Sum("amount"))
            .order_by("-sales", "-leads", column)
        )
        for row in grouped:
            value = row[column]
            if dimension == "referrers":
                value = value or DIRECT
            clicked = clicks_of.get(value)
            entry = {
                "name": (clicked["name"] if clicked else value) or UNKNOWN,
                "clicks": clicked["clicks"] if clicked else None,
                "leads": row["leads"],
                "sales": row["sales"],
                "revenue": None if several_currencies else row["revenue"] or 0,
            }
            if dimension == "countries":
                entry["code"] = value
            entries.append(entry)
        result[dimension] = entries
    return result
