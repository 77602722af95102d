"""The roll-ups the stats read instead of the visits (analytics.selectors): HourlyClick per
(link, hour), its HourlyBreakdown rows and their days' DailyBreakdown sums, and each person's
latest hour (LinkVisitor, HourlyClick.last_visitors).

Every write here is a recompute from VisitRecord, never an increment, so running one twice gives
the same rows. `aggregate_hourly` does the hours the flushes marked (analytics.services.ingest),
`rebuild_hourly` every hour since a date.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, Max, Min, Q, Sum
from django.db.models.functions import TruncHour
from django.utils import timezone

from analytics import buffer, spool
from analytics.models import (
    DailyBreakdown,
    HourlyBreakdown,
    HourlyClick,
    LinkVisitor,
    VisitRecord,
    utc_hour,
)
from analytics.selectors.breakdowns import (
    ROLLED_UP_DIMENSIONS,
    SET_ONLY_DIMENSIONS,
    breakdown_columns,
    breakdown_key,
)
from core.db import retry_on_conflict
from core.errors import Unavailable
from core.node_state import node_lock
from core.redis_conn import redis_client

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
_CHUNK = 500


def _upsert_hourly(rows: list[HourlyClick], fields: list[str]) -> None:
    if not rows:
        return
    # MySQL's ON DUPLICATE KEY UPDATE takes no conflict target; SQLite's ON CONFLICT needs one.
    with_target = connection.features.supports_update_conflicts_with_target
    HourlyClick.objects.bulk_create(
        rows,
        batch_size=_CHUNK,
        update_conflicts=True,
        unique_fields=["link", "hour"] if with_target else None,
        update_fields=fields,
    )


def breakdown_sums(visits) -> dict[tuple[int, datetime, str, str, str], int]:
    """The HourlyBreakdown counts of `visits`: {(link id, UTC hour, dimension, value, code): n}."""
    slot = TruncHour("visit_time", tzinfo=UTC)
    people, bots = visits.filter(is_bot=False), visits.filter(is_bot=True)
    sums: dict[tuple, int] = defaultdict(int)
    for dimension, field, of_bots in ROLLED_UP_DIMENSIONS:
        source = bots if of_bots else people
        if dimension in SET_ONLY_DIMENSIONS:
            source = source.exclude(**{field: ""})
        group = breakdown_columns(dimension, field)
        grouped = source.annotate(slot=slot).values("link_id", "slot", *group)
        for row in grouped.annotate(n=Count("id")).order_by().iterator():
            value, code = breakdown_key(dimension, field, row)
            sums[(row["link_id"], row["slot"].astimezone(UTC), dimension, value, code)] += row["n"]
    return dict(sums)


def _recompute_breakdowns(visits, pairs: set[tuple[int, datetime]]) -> None:
    """Rewrite the HourlyBreakdown rows of `pairs` from `visits` (which cover exactly those
    hours), then their days' DailyBreakdown sums. The rows of a (link, hour) are replaced, never
    incremented; hours outside `pairs` (e.g. purged ones) are left alone."""
    rows = [
        HourlyBreakdown(
            link_id=link_id, hour=hour, dimension=dimension, value=value, code=code, clicks=n
        )
        for (link_id, hour, dimension, value, code), n in breakdown_sums(visits).items()
    ]
    by_hour: dict[datetime, list[int]] = defaultdict(list)
    by_day: dict[datetime, set[int]] = defaultdict(set)
    for link_id, hour in pairs:
        by_hour[hour].append(link_id)
        by_day[hour.replace(hour=0)].add(link_id)
    rows = _with_kept(rows, by_hour)
    for hour, link_ids in by_hour.items():
        HourlyBreakdown.objects.filter(hour=hour, link_id__in=link_ids).delete()
    HourlyBreakdown.objects.bulk_create(rows, batch_size=_CHUNK)
    for day, link_ids in by_day.items():
        DailyBreakdown.objects.filter(day=day, link_id__in=link_ids).delete()
        sums = (
            HourlyBreakdown.objects.filter(link_id__in=link_ids, hour__gte=day, hour__lt=day + DAY)
            .values("link_id", "dimension", "value", "code")
            .annotate(n=Sum("clicks"))
            .order_by()
        )
        DailyBreakdown.objects.bulk_create(
            [
                DailyBreakdown(
                    link_id=row["link_id"],
                    day=day,
                    dimension=row["dimension"],
                    value=row["value"],
                    code=row["code"],
                    clicks=row["n"],
                )
                for row in sums
            ],
            batch_size=_CHUNK,
        )


def _with_kept(
    rows: list[HourlyBreakdown], by_hour: dict[datetime, list[int]]
) -> list[HourlyBreakdown]:
    """`rows` (counted from the visits left) plus what the hours' deleted visits counted (their
    rows' `kept`, analytics.services.retention), so a recount never loses a purged visit."""
    kept: dict[tuple, int] = {}
    for hour, link_ids in by_hour.items():
        old = HourlyBreakdown.objects.filter(hour=hour, link_id__in=link_ids, kept__gt=0)
        for row in old.values("link_id", "hour", "dimension", "value", "code", "kept"):
            key = (row["link_id"], utc_hour(row["hour"]), row["dimension"], row["value"])
            kept[(*key, row["code"])] = row["kept"]
    if not kept:
        return rows
    for row in rows:
        key = (row.link_id, row.hour, row.dimension, row.value, row.code)
        if key in kept:
            row.kept = kept.pop(key)
            row.clicks += row.kept
    return rows + [
        HourlyBreakdown(
            link_id=link_id,
            hour=hour,
            dimension=dimension,
            value=value,
            code=code,
            clicks=n,
            kept=n,
        )
        for (link_id, hour, dimension, value, code), n in kept.items()
    ]


def _set_last_visitors(link_id: int, hours: Iterable[datetime] | None = None) -> None:
    """HourlyClick.last_visitors of the link's `hours` (None: every hour that still has visits)
    from LinkVisitor: how many people's latest visit is in each."""
    visitors = LinkVisitor.objects.filter(link_id=link_id)
    if hours is None:
        oldest = VisitRecord.objects.filter(link_id=link_id).aggregate(t=Min("visit_time"))["t"]
        if oldest is None:
            return
        hours = HourlyClick.objects.filter(link_id=link_id, hour__gte=utc_hour(oldest))
        hours = list(hours.values_list("hour", flat=True))
        counts = dict(
            visitors.values("last_hour").annotate(n=Count("id")).values_list("last_hour", "n")
        )
    else:
        hours, counts = sorted(set(hours)), {}
        for i in range(0, len(hours), _CHUNK):
            chunk = visitors.filter(last_hour__in=hours[i : i + _CHUNK])
            counts |= dict(
                chunk.values("last_hour").annotate(n=Count("id")).values_list("last_hour", "n")
            )
    rows = [HourlyClick(link_id=link_id, hour=h, last_visitors=counts.get(h, 0)) for h in hours]
    _upsert_hourly(rows, ["last_visitors"])


def _recompute_visitors(visits, pairs: set[tuple[int, datetime]]) -> None:
    """Move each person of `visits` to their latest hour in LinkVisitor (never back: a recount of
    an older hour leaves a later visit's hour in place), then recount last_visitors of the hours
    involved: those of `pairs` and the hours people left."""
    latest: dict[int, dict[str, datetime]] = defaultdict(dict)
    rows = visits.filter(is_bot=False).values("link_id", "client_id").annotate(t=Max("visit_time"))
    for row in rows.order_by().iterator():
        latest[row["link_id"]][row["client_id"]] = utc_hour(row["t"])
    hours: dict[int, set[datetime]] = defaultdict(set)
    for link_id, hour in pairs:
        hours[link_id].add(hour)
    with_target = connection.features.supports_update_conflicts_with_target
    for link_id, clients in latest.items():
        ids = sorted(clients)
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            before = dict(
                LinkVisitor.objects.filter(link_id=link_id, client_id__in=chunk).values_list(
                    "client_id", "last_hour"
                )
            )
            moved = [cid for cid in chunk if cid not in before or clients[cid] > before[cid]]
            hours[link_id].update(utc_hour(before[cid]) for cid in moved if cid in before)
            LinkVisitor.objects.bulk_create(
                [
                    LinkVisitor(link_id=link_id, client_id=cid, last_hour=clients[cid])
                    for cid in moved
                ],
                update_conflicts=True,
                unique_fields=["link", "client_id"] if with_target else None,
                update_fields=["last_hour"],
            )
    for link_id, link_hours in hours.items():
        _set_last_visitors(link_id, link_hours)


def _rebuild_visitors(link_ids: Iterable[int]) -> None:
    """LinkVisitor and last_visitors of these links recomputed from all their visits (a repair:
    a visit that stopped counting as a person may move someone's latest hour back). A person
    none of whose visits is stored any more (retention, erasure) keeps their row: still counted."""
    for link_id in sorted(link_ids):
        with transaction.atomic():
            stored = VisitRecord.objects.filter(link_id=link_id).values("client_id")
            LinkVisitor.objects.filter(link_id=link_id, client_id__in=stored).delete()
            rows = (
                VisitRecord.objects.filter(link_id=link_id, is_bot=False)
                .values("client_id")
                .annotate(t=Max("visit_time"))
                .order_by()
                .iterator(chunk_size=5000)
            )
            batch = []
            for row in rows:
                batch.append(
                    LinkVisitor(
                        link_id=link_id, client_id=row["client_id"], last_hour=utc_hour(row["t"])
                    )
                )
                if len(batch) >= 5000:
                    LinkVisitor.objects.bulk_create(batch, batch_size=1000)
                    batch = []
            LinkVisitor.objects.bulk_create(batch, batch_size=1000)
            _set_last_visitors(link_id)


def _add_kept(rows: list[HourlyClick], *, start: datetime, end: datetime) -> None:
    """Add to each row (counted from the visits left) what its hour's deleted visits counted."""
    by_link = defaultdict(list)
    for row in rows:
        by_link[row.link_id].append(row)
    kept = {}
    ids = sorted(by_link)
    for i in range(0, len(ids), _CHUNK):
        old = HourlyClick.objects.filter(
            link_id__in=ids[i : i + _CHUNK], hour__gte=start, hour__lt=end
        ).exclude(kept_clicks=0, kept_unique_visitors=0, kept_bot_clicks=0)
        for link_id, hour, clicks, people, bots in old.values_list(
            "link_id", "hour", "kept_clicks", "kept_unique_visitors", "kept_bot_clicks"
        ):
            kept[(link_id, utc_hour(hour))] = (clicks, people, bots)
    if not kept:
        return
    for row in rows:
        clicks, people, bots = kept.get((row.link_id, row.hour), (0, 0, 0))
        row.clicks += clicks
        row.unique_visitors += people
        row.bot_clicks += bots


@retry_on_conflict
def _recompute(
    *, start: datetime, end: datetime, link_ids: list[int] | None = None, visitors: bool = True
) -> int:
    """Recompute every HourlyClick row of [start, end) (those links only, if given), with the
    roll-ups the stats read instead of the visits: the hours' breakdown rows (and their days'
    sums) and, unless `visitors` is off, each person's latest hour (LinkVisitor, last_visitors).
    """
    visits = VisitRecord.objects.filter(visit_time__gte=start, visit_time__lt=end)
    if link_ids is not None:
        visits = visits.filter(link_id__in=link_ids)
    counts = (
        visits.annotate(slot=TruncHour("visit_time", tzinfo=UTC))
        .values("link_id", "slot")
        .annotate(
            clicks=Count("id", filter=Q(is_bot=False)),
            unique_visitors=Count("client_id", filter=Q(is_bot=False), distinct=True),
            bot_clicks=Count("id", filter=Q(is_bot=True)),
        )
        .order_by()
    )
    rows = [
        HourlyClick(
            link_id=row["link_id"],
            hour=row["slot"].astimezone(UTC),
            clicks=row["clicks"],
            unique_visitors=row["unique_visitors"],
            bot_clicks=row["bot_clicks"],
            rolled_up=True,
        )
        for row in counts
    ]
    if not rows:
        return 0
    _add_kept(rows, start=start, end=end)
    pairs = {(row.link_id, row.hour) for row in rows}
    with transaction.atomic():
        fields = ["clicks", "unique_visitors", "bot_clicks", "rolled_up", "updated_at"]
        _upsert_hourly(rows, fields)
        _recompute_breakdowns(visits, pairs)
        if visitors:
            _recompute_visitors(visits, pairs)
    return len(rows)


def _recompute_pairs(pairs: Iterable[tuple[int, datetime]], *, lock_first: bool = False) -> int:
    by_hour: dict[datetime, set[int]] = defaultdict(set)
    for link_id, hour in pairs:
        by_hour[utc_hour(hour)].add(link_id)
    written = 0
    for hour, link_ids in sorted(by_hour.items()):
        ordered = sorted(link_ids)
        for i in range(0, len(ordered), _CHUNK):
            chunk = ordered[i : i + _CHUNK]
            if lock_first:
                # Insert-or-touch takes the rows' write locks before the counts are read.
                _upsert_hourly([HourlyClick(link_id=pk, hour=hour) for pk in chunk], ["updated_at"])
            written += _recompute(start=hour, end=hour + HOUR, link_ids=chunk)
    return written


def _aggregate_spooled_hours() -> int:
    with node_lock("aggregate"):
        members = spool.take_hours()
        written = _recompute_pairs(p for p in map(buffer.parse_hour_member, members) if p)
        spool.hours_done()
    return written


@contextmanager
def aggregation_paused() -> Iterator[None]:
    """Hold the lock aggregate_hourly takes (Redis's, else the node's), waiting for a running
    aggregation to end, so no hour read before the block is written back during it (embedded
    mode: the node's lock, which its aggregation takes). Unavailable (503) if none ends in
    BUSY_WAIT_SECONDS."""
    client = redis_client()
    if client is None:
        with node_lock("aggregate"):
            yield
        return
    token = buffer.acquire(client, buffer.AGGREGATE_LOCK_KEY)
    deadline = time.monotonic() + buffer.BUSY_WAIT_SECONDS
    while token is None and time.monotonic() < deadline:
        time.sleep(0.05)
        token = buffer.acquire(client, buffer.AGGREGATE_LOCK_KEY)
    if token is None:
        raise Unavailable("An aggregation of the visits is still running; try again.")
    try:
        with buffer.kept_alive(client, buffer.AGGREGATE_LOCK_KEY, token):
            yield
    finally:
        buffer.release(client, buffer.AGGREGATE_LOCK_KEY, token)


def aggregate_hourly(
    *, pairs: Iterable[tuple[int, datetime]] | None = None, wait: bool = False
) -> int:
    """Recompute the HourlyClick rows of the given (link id, hour) pairs; returns rows written.

    Without `pairs`, the pairs flush_visits marked (in Redis, or in the spool's file); returns
    0 at once when another aggregation is running, unless `wait`. Idempotent: a recompute from
    VisitRecord, never an increment, so running it twice gives the same rows. Hours whose visits
    have all been purged keep their rows.
    """
    if pairs is not None:
        return _recompute_pairs(pairs)
    client = redis_client()
    if client is None:
        return _aggregate_spooled_hours()
    token = buffer.acquire(client, buffer.AGGREGATE_LOCK_KEY)
    deadline = time.monotonic() + buffer.BUSY_WAIT_SECONDS
    while token is None and wait and time.monotonic() < deadline:
        time.sleep(0.05)
        token = buffer.acquire(client, buffer.AGGREGATE_LOCK_KEY)
    if token is None:
        return 0
    with (
        buffer.kept_alive(client, buffer.AGGREGATE_LOCK_KEY, token),
        buffer.hours_to_aggregate(client, token=token) as pending,
    ):
        return _recompute_pairs(pending)


def rebuild_hourly(*, since: datetime, progress: Callable[[int, int], None] | None = None) -> int:
    """Recompute every HourlyClick row from `since` to now, a day at a time; returns rows.

    For repairs (a changed definition of "bot", a restored backup). Hours with no visits left
    (purged) are not touched. The roll-ups go with them (see _recompute); each person's latest
    hour is recomputed from all the visits of the links visited since `since`.
    """
    start = utc_hour(since)
    end = utc_hour(timezone.now()) + HOUR
    days = max(1, -(-(end - start) // DAY))
    written = 0
    for day in range(days):
        window_start = start + day * DAY
        written += _recompute(start=window_start, end=min(window_start + DAY, end), visitors=False)
        if progress is not None:
            progress(day + 1, days)
    since_start = VisitRecord.objects.filter(visit_time__gte=start).order_by()
    _rebuild_visitors(set(since_start.values_list("link_id", flat=True).distinct()))
    return written
