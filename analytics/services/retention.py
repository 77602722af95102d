"""How long raw visits are kept, and erasing them on request: VisitRecords deleted, every count
they made kept.

Retention (`apply_retention`, the `apply-retention` job and `manage.py apply_retention`): each
workspace's links' visits older than its `raw_retention_days`, else ANALYTICS_RAW_RETENTION_DAYS
(unset: kept for good). Erasure (`visitor_visits_erase`, `link_raw_visits_erase`): one visitor's
visits across a workspace (by stored IP or by client_id), or one link's, for a data subject's
request (analytics.selectors.visitor_visits_export is the access request's copy).

Every deletion here goes through `_delete_keeping_counts`: the hours involved are rolled up first
(so an hour flushed but not yet aggregated is counted before its visits go: the roll-up's high-
water mark is never behind a purge), then what the deleted visits counted is added to their
hours' `kept_*` fields and their breakdown rows' `kept`, which every later recount adds back
(analytics.services.rollups). So totals, unique visitors, charts and breakdowns never move, and
a visit arriving late into a purged hour adds to its count instead of replacing it. Unlike
analytics.services.deletion (the Shlink layer's DELETE …/visits), which deletes the counts too.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from analytics.models import HourlyBreakdown, HourlyClick, LinkVisitor, VisitRecord, utc_hour
from analytics.selectors.visits import visitor_visits
from analytics.services.rollups import HOUR, aggregate_hourly, aggregation_paused, breakdown_sums
from core.db import retry_on_conflict
from workspaces.models import Workspace
from workspaces.selectors import manage_required, retention_days

_BATCH = 2000
# What an erased person's LinkVisitor row says instead of their client_id: still one person
# (unique visitor counts keep them), no longer theirs.
ERASED_PREFIX = "erased:"


@dataclass
class Deleted:
    """What a deletion removed: raw visits, over how many links."""

    visits: int = 0
    link_ids: set[int] = field(default_factory=set)

    @property
    def links(self) -> int:
        return len(self.link_ids)

    def as_dict(self) -> dict[str, int]:
        return {"visits": self.visits, "links": self.links}


@dataclass
class RetentionResult:
    """One pass of apply_retention: visits deleted in all, and per workspace slug."""

    visits: int = 0
    workspaces: dict[str, int] = field(default_factory=dict)


@retry_on_conflict
def _delete_batch(ids: list[int]) -> Deleted:
    """Delete these visits, their counts kept (module docstring). Called with the roll-up paused."""
    visits = VisitRecord.objects.filter(pk__in=ids)
    pairs = {
        (link_id, utc_hour(moment))
        for link_id, moment in visits.values_list("link_id", "visit_time").order_by()
    }
    if not pairs:
        return Deleted()
    # Settle the hours first: what they count is then exactly their visits (plus earlier kept).
    aggregate_hourly(pairs=pairs)
    with transaction.atomic():
        # Per (link, hour): [people's clicks, bots' clicks], and the people who made them.
        clicks: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
        people: dict[tuple, set[str]] = defaultdict(set)
        rows = visits.values_list("link_id", "visit_time", "is_bot", "client_id").order_by()
        for link_id, moment, is_bot, client_id in rows.iterator():
            pair = (link_id, utc_hour(moment))
            clicks[pair][1 if is_bot else 0] += 1
            if not is_bot:
                people[pair].add(client_id)
        breakdowns = breakdown_sums(visits)
        deleted = visits.delete()[0]
        for (link_id, hour), (people_clicks, bot_clicks) in clicks.items():
            gone = people.get((link_id, hour), set())
            if gone:  # a person with a visit left in the hour is still counted from it
                left = VisitRecord.objects.filter(
                    link_id=link_id,
                    visit_time__gte=hour,
                    visit_time__lt=hour + HOUR,
                    is_bot=False,
                    client_id__in=gone,
                )
                gone = gone - set(left.values_list("client_id", flat=True))
            HourlyClick.objects.filter(link_id=link_id, hour=hour).update(
                kept_clicks=F("kept_clicks") + people_clicks,
                kept_unique_visitors=F("kept_unique_visitors") + len(gone),
                kept_bot_clicks=F("kept_bot_clicks") + bot_clicks,
            )
        for (link_id, hour, dimension, value, code), n in breakdowns.items():
            HourlyBreakdown.objects.filter(
                link_id=link_id, hour=hour, dimension=dimension, value=value, code=code
            ).update(kept=F("kept") + n)
    return Deleted(visits=deleted, link_ids={link_id for link_id, _ in pairs})


def _delete_keeping_counts(
    visits: QuerySet, *, progress: Callable[[int], None] | None = None
) -> Deleted:
    """Delete `visits` in batches, keeping every count they made; `progress(deleted so far)`."""
    aggregate_hourly(wait=True)  # what the flushes marked, so the pause below is short
    result = Deleted()
    while True:
        with aggregation_paused():
            ids = list(visits.order_by().values_list("pk", flat=True)[:_BATCH])
            if not ids:
                return result
            batch = _delete_batch(ids)
        result.visits += batch.visits
        result.link_ids |= batch.link_ids
        if progress is not None:
            progress(result.visits)


def _cutoff(days: int, now: datetime) -> datetime:
    """Visits before this go. Whole hours from a day up (no hour half purged); 0 days: all
    stored visits, the current hour's too (their counts are kept like any other's)."""
    return now if days == 0 else utc_hour(now - timedelta(days=days))


def apply_retention(
    *,
    days: int | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> RetentionResult:
    """Delete every workspace's raw visits past its retention (workspaces.selectors.
    retention_days; `days`: this many for every workspace, for a one-off pass), their counts
    kept. `progress(workspace slug, visits deleted so far in it)`."""
    if days is not None and days < 0:
        raise ValueError("days must be 0 or more")
    now = timezone.now()
    result = RetentionResult()
    for workspace in Workspace.objects.order_by("pk").iterator():
        keep = days if days is not None else retention_days(workspace)
        if keep is None:
            continue
        visits = VisitRecord.objects.filter(
            link__workspace=workspace, visit_time__lt=_cutoff(keep, now)
        )
        on_progress = None
        if progress is not None:

            def on_progress(n: int, slug: str = workspace.slug) -> None:
                progress(slug, n)

        deleted = _delete_keeping_counts(visits, progress=on_progress).visits
        if deleted:
            result.workspaces[workspace.slug] = deleted
            result.visits += deleted
    return result


def purge_visits(*, older_than_days: int) -> int:
    """Delete VisitRecords of every link older than `older_than_days` days (a whole hour cut),
    keeping every count they made; returns how many went."""
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    cutoff = _cutoff(older_than_days, timezone.now())
    return _delete_keeping_counts(VisitRecord.objects.filter(visit_time__lt=cutoff)).visits


def visitor_visits_erase(
    *, workspace, ip: str = "", visitor: str = "", by: AbstractBaseUser | None = None
) -> Deleted:
    """Erase one visitor's raw visits across the workspace, counts kept (their clicks and their
    place in unique visitor counts stay, with no identifier of theirs left: their LinkVisitor
    rows get a random id). `by`: the user asking, who must manage the workspace (its owners,
    staff with the workspaces permission); None for commands and the admin."""
    if by is not None:
        manage_required(user=by, workspace=workspace)
    visits = visitor_visits(workspace=workspace, ip=ip, visitor=visitor)
    client_ids = set(visits.values_list("client_id", flat=True).distinct())
    if visitor:
        client_ids.add(visitor.strip())
    deleted = _delete_keeping_counts(visits)
    for row in LinkVisitor.objects.filter(link__workspace=workspace, client_id__in=client_ids):
        LinkVisitor.objects.filter(pk=row.pk).update(
            client_id=ERASED_PREFIX + secrets.token_hex(16)
        )
    return deleted


def link_raw_visits_erase(*, link, by: AbstractBaseUser | None = None) -> Deleted:
    """Erase every raw visit of one link, counts kept (analytics.services.deletion deletes the
    counts too). `by` as for visitor_visits_erase: an owner of the link's workspace."""
    if by is not None:
        manage_required(user=by, workspace=link.workspace)
    return _delete_keeping_counts(VisitRecord.objects.filter(link=link))
