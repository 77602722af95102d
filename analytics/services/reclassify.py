"""Stored visits read again by newer detectors (bot, browser, OS, device; with `geo` the place
and network too), and the roll-ups of what changed recomputed (`manage.py reclassify_visits`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from analytics import enrich
from analytics.models import VisitRecord, utc_hour
from analytics.services.rollups import _CHUNK, _rebuild_visitors, _recompute_pairs


@dataclass(frozen=True)
class ReclassifyResult:
    examined: int  # visits read
    changed: int  # visits whose derived fields changed
    hours: int  # HourlyClick rows recomputed (with their breakdowns)


def reclassify_visits(
    *,
    since: datetime | None = None,
    geo: bool = False,
    batch_size: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> ReclassifyResult:
    """Run the User-Agent detectors (bot, browser, OS, device) again over stored visits, and with
    `geo` the place and network lookups too (from the stored address: with ANONYMIZE_IP that is
    the visitor's /24 or /48 network); then recompute the hours whose visits changed, and the
    people of links where someone turned out to be a bot (or the other way round).

    For after a detector or GeoIP database update. The visitor id (client_id) is never touched:
    it was derived from the full address, which may no longer be stored.
    """
    visits = VisitRecord.objects.order_by()
    if since is not None:
        visits = visits.filter(visit_time__gte=since)
    total = visits.count()
    fields = list(enrich.UserAgentInfo._fields) + (list(enrich.GeoInfo._fields) if geo else [])
    examined = changed = 0
    pairs: set[tuple[int, datetime]] = set()
    people_changed: set[int] = set()
    last_id = 0
    while True:
        chunk = list(
            visits.filter(pk__gt=last_id)
            .order_by("pk")
            .only("link_id", "visit_time", "user_agent", "client_ip", *fields)[:batch_size]
        )
        if not chunk:
            break
        last_id = chunk[-1].pk
        updated = []
        for visit in chunk:
            # A visit stored without its address (privacy "none", Sec-GPC) keeps the places
            # looked up when it was stored: there is nothing to look them up from again.
            if geo and visit.client_ip:
                everything = enrich.enrich(client_ip=visit.client_ip, user_agent=visit.user_agent)
                derived = {name: everything[name] for name in fields}
            else:
                derived = enrich.parse_user_agent(visit.user_agent)._asdict()
            if all(getattr(visit, name) == value for name, value in derived.items()):
                continue
            if derived["is_bot"] != visit.is_bot:
                people_changed.add(visit.link_id)
            for name, value in derived.items():
                setattr(visit, name, value)
            updated.append(visit)
            pairs.add((visit.link_id, utc_hour(visit.visit_time)))
        VisitRecord.objects.bulk_update(updated, fields, batch_size=_CHUNK)
        examined += len(chunk)
        changed += len(updated)
        if progress is not None:
            progress(examined, total)
    hours = _recompute_pairs(pairs)
    _rebuild_visitors(people_changed)
    return ReclassifyResult(examined=examined, changed=changed, hours=hours)
