"""The hours a stats range covers, and the rows that hold them: helpers every stats question
shares (analytics.selectors.series, breakdowns, totals).

A range is read in whole UTC hours, as HourlyClick counts them: `start` rounded down to its
hour, `end` up (_hour_ceil), so totals, series and breakdowns of one range cover the same visits.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import QuerySet

from analytics.models import HourlyClick, VisitRecord, utc_hour

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)

LinkIds = Iterable[int] | QuerySet | None


def _hour_ceil(moment: datetime) -> datetime:
    floor = utc_hour(moment)
    return floor if floor == moment else floor + HOUR


def _day(moment: datetime) -> datetime:
    return utc_hour(moment).replace(hour=0)


def _ids(link_ids: LinkIds):
    # A QuerySet stays a subquery (e.g. "this marketer's links"); anything else becomes a list.
    return link_ids if isinstance(link_ids, QuerySet) else list(link_ids)


def _hourly_rows(link_ids: LinkIds, start: datetime, end: datetime) -> QuerySet:
    rows = HourlyClick.objects.filter(hour__gte=utc_hour(start), hour__lt=end)
    if link_ids is not None:
        rows = rows.filter(link_id__in=_ids(link_ids))
    return rows


def _visits(link_ids: LinkIds, start: datetime, end: datetime) -> QuerySet:
    # Whole UTC hours, as HourlyClick counts them: totals and breakdowns cover the same visits.
    visits = VisitRecord.objects.filter(
        visit_time__gte=utc_hour(start), visit_time__lt=_hour_ceil(end)
    )
    if link_ids is not None:
        visits = visits.filter(link_id__in=_ids(link_ids))
    return visits
