"""Orphan visits: requests that reached no link, counted per hour by analytics.orphans; the
overview's summary and the Shlink API's paginated list and total. Staff only.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import F, Sum, Window
from django.db.models.expressions import RowRange

from analytics.models import OrphanKind, OrphanVisitCount, utc_hour


def orphan_visit_summary(*, start: datetime, end: datetime, limit: int = 10) -> dict:
    """Requests that reached no link in [start, end) (analytics.orphans): {"total", "paths":
    [{kind, host, path, count}], "referrers": [{referrer, count}]}, the most asked first."""
    # Hours that begin in the range, as the hourly click counts are read.
    rows = OrphanVisitCount.objects.filter(hour__gte=utc_hour(start), hour__lt=end).order_by()
    total = rows.aggregate(total=Sum("count"))["total"] or 0
    paths = list(
        rows.values("kind", "host", "path").annotate(count=Sum("count")).order_by("-count")[:limit]
    )
    referrers = list(
        rows.exclude(referrer="")
        .values("referrer")
        .annotate(count=Sum("count"))
        .order_by("-count")[:limit]
    )
    kinds = dict(OrphanKind.choices)
    for row in paths:
        row["kind_label"] = kinds.get(row["kind"], row["kind"])
    return {"total": total, "paths": paths, "referrers": referrers}


def orphan_visits_visible(user) -> bool:
    """Whether `user` may read orphan visits: staff, as on the overview page. They belong to no
    link and name paths and referrers across every user's domains."""
    return bool(user.is_staff)


def _orphan_rows(
    *,
    start: datetime | None,
    end: datetime | None,
    kinds: Iterable[str] | None,
    host: str | None = None,
):
    """OrphanVisitCount rows whose hour (start) is within [start, end]; `kinds`: only those;
    `host`: only the requests for that host (as counted: lowercase, no port)."""
    rows = OrphanVisitCount.objects.all()
    if host is not None:
        rows = rows.filter(host=host)
    if start is not None:
        rows = rows.filter(hour__gte=start)
    if end is not None:
        rows = rows.filter(hour__lte=end)
    if kinds is not None:
        rows = rows.filter(kind__in=list(kinds))
    return rows


def orphan_visit_total(
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    kinds: Iterable[str] | None = None,
    host: str | None = None,
) -> int:
    """How many orphan visits were counted (whose hour starts within [start, end], of `kinds`,
    asked of `host`)."""
    rows = _orphan_rows(start=start, end=end, kinds=kinds, host=host).order_by()
    return rows.aggregate(total=Sum("count"))["total"] or 0


def orphan_visit_slice(
    *,
    offset: int,
    limit: int,
    start: datetime | None = None,
    end: datetime | None = None,
    kinds: Iterable[str] | None = None,
    host: str | None = None,
) -> list[tuple[OrphanVisitCount, int]]:
    """Orphan visits one by one, newest hour first, for positions [offset, offset + limit) only:
    [(row, how many of its counted visits fall in the slice)], in order.

    The rows are counts per hour (analytics.orphans), so the list of single visits is expanded
    from them: one query, whatever the offset, whose running total of the counts (newest row
    first) picks the rows that overlap the slice. Within an hour, the row written last comes
    first. The positions add up to orphan_visit_total() with the same filters."""
    if limit < 1:
        return []
    running = Window(
        Sum("count"), order_by=[F("hour").desc(), F("pk").desc()], frame=RowRange(None, 0)
    )
    rows = (
        _orphan_rows(start=start, end=end, kinds=kinds, host=host)
        .annotate(through=running)
        .filter(through__gt=offset, through__lt=offset + limit + F("count"))
        .order_by("-hour", "-pk")
    )
    end_at = offset + limit
    return [(row, min(row.through, end_at) - max(row.through - row.count, offset)) for row in rows]
