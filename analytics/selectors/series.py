"""Clicks over time: a series of [start, end) in hours, local days, weeks or months, with each
bucket's distinct people counted exactly (never a sum of hours) and cached once the bucket is over.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, time, timedelta, tzinfo

from django.core.cache import cache
from django.db import connections
from django.db.models import Count, Max, Q, QuerySet, Sum, Value
from django.utils import timezone

from analytics import ranges
from analytics.models import LinkVisitor, VisitRecord, utc_hour
from analytics.selectors.hours import HOUR, LinkIds, _hour_ceil, _hourly_rows, _ids

# A series is by hour up to 48 hours, by day up to ~6 months, by week beyond (a readable number
# of bars: at most 48, 180 or a few hundred).
BUCKETS = ("hour", "day", "week")
HOURLY_SERIES_MAX = timedelta(hours=48)
DAILY_SERIES_MAX = timedelta(days=180)
# A bucket's distinct people, counted by the database, are kept in the cache once the bucket is
# over (it ended before the current hour), with a fingerprint of its HourlyClick rows: a late
# visit rolled up into one of its hours changes the fingerprint, so it is counted again, never
# served stale. A whole day or week is asked for again on every view of any range holding it; a
# range's partial first bucket only until the range moves on, an hour later.
BUCKET_PEOPLE_KEY = "bucket-people"
BUCKET_PEOPLE_SECONDS = 7 * 86400
PARTIAL_BUCKET_PEOPLE_SECONDS = 3600
# Buckets counted per statement (one COUNT(DISTINCT) per bucket, joined by UNION ALL).
_BUCKETS_PER_QUERY = 40


def _hour_sums(link_ids: LinkIds, start: datetime, end: datetime) -> dict[datetime, dict]:
    """{UTC hour: its HourlyClick rows summed} for the hours of [start, end) that have rows."""
    sums = (
        _hourly_rows(link_ids, start, end)
        .values("hour")
        .annotate(
            clicks_sum=Sum("clicks"),
            unique_sum=Sum("unique_visitors"),
            bots_sum=Sum("bot_clicks"),
            last_sum=Sum("last_visitors"),
            rows=Count("id"),
            stale=Count("id", filter=Q(rolled_up=False)),
            updated=Max("updated_at"),
        )
        .order_by()
    )
    return {row["hour"]: row for row in sums}  # aware datetimes hash by instant


def hourly_series(
    *, link_ids: Iterable[int] | None = None, start: datetime, end: datetime
) -> list[dict]:
    """[{hour, clicks, unique_visitors, bot_clicks}] for every hour in [start, end), zeros kept:
    series(bucket="hour").

    `hour` is an aware datetime in the current time zone; `start` is rounded down to its hour.
    `link_ids=None` sums every link; a person who visited several of the links in an hour is
    one unique visitor of that hour.
    """
    return series(link_ids=link_ids, start=start, end=end, bucket="hour")


def series_bucket(start: datetime, end: datetime) -> str:
    """The bucket a chart of [start, end) is drawn in: "hour", "day" or "week"."""
    if end - start <= HOURLY_SERIES_MAX:
        return "hour"
    return "day" if end - start <= DAILY_SERIES_MAX else "week"


def _bucket_start(hour: datetime, bucket: str, zone: tzinfo) -> datetime:
    """The local midnight starting the day (or the week, from Monday, or the month) `hour`
    begins in; for "hour", the hour itself."""
    if bucket == "hour":
        return hour
    day = ranges.bucket_first_day(hour.astimezone(zone).date(), bucket)
    return datetime.combine(day, time.min, tzinfo=zone)


class _Bucket:
    """One entry of a series: its UTC hours [start, end) and their HourlyClick sums."""

    def __init__(self, start: datetime, end: datetime):
        self.start, self.end = start, end
        self.clicks = self.bot_clicks = self.hourly_people = self.last_people = 0
        self.rows = self.stale = 0
        self.updated: datetime | None = None
        self.people = 0  # distinct people, set by series

    def add(self, row: dict) -> None:
        self.clicks += row["clicks_sum"] or 0
        self.bot_clicks += row["bots_sum"] or 0
        self.hourly_people += row["unique_sum"] or 0
        self.last_people += row["last_sum"] or 0
        self.rows += row["rows"]
        self.stale += row["stale"]
        if self.updated is None or row["updated"] > self.updated:
            self.updated = row["updated"]

    def fingerprint(self) -> list:
        """Changes whenever the roll-up rewrites one of the bucket's hours (a visit came, one
        turned out to be a bot): a cached count with another fingerprint is counted again."""
        updated = self.updated.isoformat() if self.updated else ""
        return [self.rows, self.clicks, self.bot_clicks, self.hourly_people, updated]


def _links_key(link_ids: LinkIds) -> str | None:
    """The links' part of a cache key; None for a QuerySet (not cached)."""
    if link_ids is None:
        return "all"
    if isinstance(link_ids, QuerySet):
        return None
    ids = sorted(set(link_ids))
    text = ",".join(map(str, ids))
    return text if len(ids) <= 4 else hashlib.sha1(text.encode()).hexdigest()  # noqa: S324


def _count_people(link_ids: LinkIds, spans: list[tuple[datetime, datetime]]) -> list[int]:
    """Distinct people (not bots) in each [start, end) of `spans`, a person visiting several of
    the links counting once: COUNT(DISTINCT client_id) per span, over the covering index
    (link, visit_time, id, is_bot, client_id) when the links are named."""
    people = VisitRecord.objects.filter(is_bot=False)
    if link_ids is not None:
        people = people.filter(link_id__in=_ids(link_ids))
    statement = _people_statement(people)
    counts: list[int] = []
    for i in range(0, len(spans), _BUCKETS_PER_QUERY):
        chunk = list(enumerate(spans[i : i + _BUCKETS_PER_QUERY], start=i))
        rows = dict(statement(chunk))
        counts += [rows.get(n, 0) for n, _ in chunk]
    return counts


def _people_part(people: QuerySet, n: int, lo: datetime, hi: datetime) -> QuerySet:
    """(n, distinct people in [lo, hi)): one row, the constant `n` saying which span."""
    return (
        people.filter(visit_time__gte=lo, visit_time__lt=hi)
        .values(n=Value(n))  # a constant: no GROUP BY, one row per part
        .annotate(people=Count("client_id", distinct=True))
        .values_list("n", "people")
    )


# Stand-ins for a span's number and bounds, found again among a compiled statement's parameters.
_MARK_N = -7
_MARK_SPAN = (datetime(1900, 1, 1, tzinfo=UTC), datetime(1900, 1, 2, tzinfo=UTC))


def _people_statement(people: QuerySet):
    """A function running _people_part for a chunk of [(n, (lo, hi))] as one UNION ALL
    statement, compiled by Django once and given each span's parameters.

    Compiling one queryset per span cost ~1 ms of CPU each, nearly all of a 10,000-day series'
    (analytics.ranges). Both backends (SQLite, MariaDB) pass the span's number and bounds as
    parameters; a backend that did not would be told here, not counted wrongly."""
    part = _people_part(people, _MARK_N, *_MARK_SPAN)
    sql, params = part.query.sql_with_params()
    ops = connections[part.db].ops
    marks = [_MARK_N, *(ops.adapt_datetimefield_value(moment) for moment in _MARK_SPAN)]
    slots = [marks.index(value) if value in marks else None for value in params]
    if sorted(slot for slot in slots if slot is not None) != [0, 1, 2]:
        raise NotImplementedError(
            f"{connections[part.db].vendor}: a span's number and bounds are not parameters of "
            "the compiled people count"
        )

    def run(chunk: list[tuple[int, tuple[datetime, datetime]]]) -> list[tuple[int, int]]:
        values: list = []
        for n, (lo, hi) in chunk:
            mine = [n, ops.adapt_datetimefield_value(lo), ops.adapt_datetimefield_value(hi)]
            pairs = zip(params, slots, strict=True)
            values += [value if slot is None else mine[slot] for value, slot in pairs]
        with connections[part.db].cursor() as cursor:
            cursor.execute(" UNION ALL ".join([sql] * len(chunk)), values)
            return [(int(n), int(count)) for n, count in cursor.fetchall()]

    return run


def _last_bucket_from_latest_visits(link_ids: LinkIds, last: _Bucket) -> bool:
    """Whether the people of a single link's last bucket are the sum of its hours'
    last_visitors (see LinkVisitor): when nobody's latest visit is at or after its end (the
    bucket reaches "now") and the roll-up wrote all its rows."""
    if link_ids is None or isinstance(link_ids, QuerySet):
        return False
    ids = list(link_ids)
    if len(ids) != 1 or last.stale:
        return False
    later = LinkVisitor.objects.filter(link_id=ids[0], last_hour__gte=last.end)
    return not later.exists()


def _bucket_people(link_ids: LinkIds, buckets: list[_Bucket], bucket: str, zone: tzinfo) -> None:
    """Set each bucket's `people`: distinct people in it, exact at any size, never a sum of
    hours. Buckets without clicks hold nobody; a single link's last bucket, when it reaches now,
    is read from the roll-up; closed buckets from the cache when their fingerprint still holds;
    the rest are counted from the visits, and cached when closed."""
    todo = [item for item in buckets if item.clicks]
    if todo and todo[-1] is buckets[-1] and _last_bucket_from_latest_visits(link_ids, todo[-1]):
        last = todo.pop()
        last.people = last.last_people
    if not todo:
        return
    links = _links_key(link_ids)
    now_hour = utc_hour(timezone.now())
    keys: dict[_Bucket, str] = {}
    if links is not None:
        for item in todo:
            if item.end <= now_hour:  # over: only a late visit still reaches it (see fingerprint)
                span = f"{item.start.timestamp():.0f}:{item.end.timestamp():.0f}"
                keys[item] = f"{BUCKET_PEOPLE_KEY}:{links}:{span}"
    cached = cache.get_many(list(keys.values())) if keys else {}
    missing = []
    for item in todo:
        hit = cached.get(keys.get(item, ""))
        if hit is not None and hit[0] == item.fingerprint():
            item.people = hit[1]
        else:
            missing.append(item)
    counted = _count_people(link_ids, [(item.start, item.end) for item in missing])
    fresh: dict[int, dict[str, list]] = defaultdict(dict)
    for item, people in zip(missing, counted, strict=True):
        item.people = people
        if item in keys:
            first = _bucket_start(item.start, bucket, zone)
            whole = _bucket_start(item.start - HOUR, bucket, zone) != first
            whole = whole and _bucket_start(item.end, bucket, zone) != first
            ttl = BUCKET_PEOPLE_SECONDS if whole else PARTIAL_BUCKET_PEOPLE_SECONDS
            fresh[ttl][keys[item]] = [item.fingerprint(), people]
    for ttl, values in fresh.items():
        cache.set_many(values, timeout=ttl)


def _series_buckets(
    start: datetime, end: datetime, bucket: str, zone: tzinfo
) -> dict[datetime, _Bucket]:
    """{the entry's start (the UTC hour, or the local midnight starting the day, week or month):
    its _Bucket} over [start, end), each holding the UTC hours that begin in it. One step per
    entry, never per hour: what a series costs follows the entries it lists (analytics.ranges
    caps them), not the length of its span."""
    first, stop = utc_hour(start), _hour_ceil(end)
    buckets: dict[datetime, _Bucket] = {}
    if bucket == "hour":
        hour = first
        while hour < stop:
            buckets[hour] = _Bucket(hour, hour + HOUR)
            hour += HOUR
        return buckets
    day = ranges.bucket_first_day(first.astimezone(zone).date(), bucket)
    low = first
    while low < stop:
        following = ranges.buckets_shifted(day, bucket, 1)
        high = min(stop, _hour_ceil(datetime.combine(following, time.min, tzinfo=zone)))
        if high > low:
            buckets[datetime.combine(day, time.min, tzinfo=zone)] = _Bucket(low, high)
            low = high
        day = following
    return buckets


def series(
    *,
    link_ids: Iterable[int] | None = None,
    start: datetime,
    end: datetime,
    bucket: str = "hour",
    people: bool = True,
) -> list[dict]:
    """[{hour (the bucket's start, local), clicks, unique_visitors, bot_clicks}] for every hour,
    local day, week (Monday first) or month of [start, end), zeros kept; `start` is rounded down
    to its hour, and a day, week or month is the UTC hours that begin in it (so it follows DST
    changes). analytics.ranges.bucket_count says how many entries that is.

    `unique_visitors` is the distinct people in the bucket, exact at any size and never a sum of
    hours: one person clicking at 9, 13 and 20 h is one visitor that day, and a person visiting
    several of the links is one visitor. A single link's hours read HourlyClick.unique_visitors.
    `people=False` skips counting them (0) for a caller that shows clicks only (Bitly's).
    """
    if end <= start:
        return []
    zone = timezone.get_current_timezone()
    buckets = _series_buckets(start, end, bucket, zone)
    items = list(buckets.values())
    starts = [item.start for item in items]
    for hour, row in _hour_sums(link_ids, start, end).items():
        index = bisect_right(starts, hour) - 1
        if index >= 0:
            items[index].add(row)
    ids = None if link_ids is None or isinstance(link_ids, QuerySet) else list(link_ids)
    if people and bucket == "hour" and ids is not None and len(ids) <= 1:
        for item in items:  # a link's hours are counted by the roll-up
            item.people = item.hourly_people
    elif people:
        _bucket_people(link_ids if ids is None else ids, items, bucket, zone)
    return [
        {
            "hour": key.astimezone(zone),
            "clicks": item.clicks,
            "unique_visitors": item.people,
            "bot_clicks": item.bot_clicks,
        }
        for key, item in buckets.items()
    ]
