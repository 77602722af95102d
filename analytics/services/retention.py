"""How long visits are kept: old VisitRecords deleted, their hours' counts kept
(`manage.py purge_visits`)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from analytics.models import VisitRecord, utc_hour
from analytics.services.rollups import aggregate_hourly


def purge_visits(*, older_than_days: int) -> int:
    """Delete VisitRecords older than `older_than_days` days, keeping their HourlyClick rows.

    The cut-off is a whole hour, so no hour is left half purged (a later rebuild would count it
    from half its visits). Pending hours are aggregated first so no count is lost.
    """
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    aggregate_hourly()
    cutoff = utc_hour(timezone.now() - timedelta(days=older_than_days))
    deleted = 0
    while True:
        ids = list(
            VisitRecord.objects.filter(visit_time__lt=cutoff)
            .order_by()
            .values_list("pk", flat=True)[:5000]
        )
        if not ids:
            return deleted
        deleted += VisitRecord.objects.filter(pk__in=ids).delete()[0]
