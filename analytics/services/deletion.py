"""Deleting visits on request (the Shlink layer's DELETE …/visits): a link's every visit with
every count kept of them, or every orphan visit count of the install.

A link's numbers come from its raw visits (VisitRecord) and from the roll-ups kept beside them
(HourlyClick, HourlyBreakdown, DailyBreakdown, LinkVisitor); deleting the raw visits alone
would leave every total, chart and breakdown as it was (they outlive purge_visits on purpose).
So both go, in one transaction, while no aggregation runs (it could write back an hour it read
before the delete): afterwards every page, API and compat layer says 0 for the link together.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Sum

from analytics.models import (
    DailyBreakdown,
    HourlyBreakdown,
    HourlyClick,
    LinkVisitor,
    OrphanVisitCount,
    VisitRecord,
)
from analytics.services.rollups import aggregation_paused
from core.db import retry_on_conflict


def link_visits_delete(*, link) -> int:
    """Delete every visit of `link` and every roll-up of them; returns how many visits the link
    counted (its all-time total, bots included: what its visitsSummary said), or its stored
    visits if more (visits not rolled up yet). The caller has checked that the user may change
    the link (links.selectors.link_get_changeable). Visits still on their way (buffered, a
    second or two) are stored and counted afterwards. The visit cap's count is not given back:
    it counts the people let through, not stats."""
    with aggregation_paused():
        return _delete_link_visits(link)


@retry_on_conflict
def _delete_link_visits(link) -> int:
    sums = HourlyClick.objects.filter(link=link).aggregate(c=Sum("clicks"), b=Sum("bot_clicks"))
    counted = (sums["c"] or 0) + (sums["b"] or 0)
    stored = VisitRecord.objects.filter(link=link).delete()[0]
    for model in (HourlyClick, HourlyBreakdown, DailyBreakdown, LinkVisitor):
        model.objects.filter(link=link).delete()
    return max(counted, stored)


@retry_on_conflict
def orphan_visits_delete() -> int:
    """Delete every orphan visit count (analytics.orphans: requests that reached no link,
    counted per hour, kind, host, path and Referer) of the install; returns the visits they
    counted. Staff only: the caller checks (analytics.selectors.orphan_visits_visible). Counts
    a process has not written yet (up to ORPHAN_VISITS_FLUSH_SECONDS) come afterwards."""
    with transaction.atomic():
        rows = OrphanVisitCount.objects.select_for_update().order_by()
        counted = rows.aggregate(total=Sum("count"))["total"] or 0
        OrphanVisitCount.objects.all().delete()
    return counted
