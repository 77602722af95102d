"""Visits as the pipeline would have stored them, for tests of pages, the API and the admin."""

from __future__ import annotations

import uuid

from django.utils import timezone

from analytics.models import VisitRecord, utc_hour
from analytics.services import aggregate_hourly


def add_visits(link, count: int = 1, *, when=None, bot: bool = False, **fields) -> list:
    """Store `count` visits of `link` (each a different person) and recompute their hour.

    Defaults describe a person on Chrome/Linux in Berlin; `bot=True` makes Googlebot visits;
    any VisitRecord field can be given. Returns the stored visits, oldest pk first.
    """
    when = when or timezone.now()
    values = {
        "browser_type": "Googlebot" if bot else "Chrome",
        "os_type": "Linux",
        "device_type": "Bot" if bot else "PC",
        "country": "Germany",
        "country_code": "DE",
        "province": "Land Berlin",
        "city": "Berlin",
        "is_bot": bot,
        **fields,
    }
    client_id = values.pop("client_id", None)  # one given person, or a new one per visit
    event_ids = [uuid.uuid4().hex for _ in range(count)]
    VisitRecord.objects.bulk_create(
        [
            VisitRecord(
                link=link,
                code=link.code,
                event_id=event_id,
                client_id=client_id or uuid.uuid4().hex,
                visit_time=when,
                **values,
            )
            for event_id in event_ids
        ]
    )
    aggregate_hourly(pairs=[(link.pk, utc_hour(when))])
    # Re-read: MySQL does not hand back the ids of a bulk insert.
    return list(VisitRecord.objects.filter(event_id__in=event_ids).order_by("pk"))
