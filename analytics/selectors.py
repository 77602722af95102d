"""Reads for stats pages, the stats API and the admin.

Contract (other modules code against these signatures; the analytics pipeline fills them in):
every breakdown is a list of {"name": str, "clicks": int} sorted by clicks, descending.

Series and totals read HourlyClick (one row per link and hour), never raw visits. Breakdowns read
the roll-up rows kept with it (DailyBreakdown for whole UTC days, HourlyBreakdown for the hours
of partial days), and distinct people over a range read HourlyClick.last_visitors (see
LinkVisitor), so a link's stats cost the same at a thousand visits as at a million; only a range
that ends before some of its visitors' latest visits counts them from VisitRecord. Breakdowns
count people only; bots and link-preview fetchers are counted apart (`bot_clicks`, `bots`).
Hours are UTC hours shown in the current time zone (settings.TIME_ZONE unless activated
otherwise), as aware datetimes.
"""

from __future__ import annotations

import hashlib
import hmac
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, time, timedelta, tzinfo
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.db.models import Count, F, Max, Min, Q, QuerySet, Sum, Value, Window
from django.db.models.expressions import RowRange
from django.utils import timezone

from analytics import buffer, ranges, spool
from analytics.bots import BotKind
from analytics.models import (
    DailyBreakdown,
    HourlyBreakdown,
    HourlyClick,
    LinkVisitor,
    OrphanKind,
    OrphanVisitCount,
    VisitRecord,
    utc_hour,
)
from core import channels
from core.redis_conn import redis_client
from links.models import UrlLink

BREAKDOWN_FIELDS = {
    "countries": "country",
    "provinces": "province",
    "cities": "city",
    "isps": "isp",
    "browsers": "browser_type",
    "os": "os_type",
    "devices": "device_type",
    "referrers": "referrer_host",
    # The short link itself or its QR code (core.channels), named by the channels' labels.
    "channels": "channel",
    # Where a link's rules and variants sent people (serving/gates.py): the URL, "" for the long
    # URL; cut to the roll-up's 255 characters.
    "destinations": "destination",
}
# Bots are broken down apart from people: by the bot's name and by its kind (analytics.bots).
BOT_BREAKDOWN_FIELDS = {"bots": "bot_name", "bot_kinds": "bot_kind"}
# (dimension, VisitRecord field, whether it counts bots instead of people) of every breakdown
# the roll-up keeps: one list for the roll-up and for visits it has not rolled up.
ROLLED_UP_DIMENSIONS = [
    *((dimension, field, False) for dimension, field in BREAKDOWN_FIELDS.items()),
    *((dimension, field, True) for dimension, field in BOT_BREAKDOWN_FIELDS.items()),
]
UNKNOWN = "Unknown"
LONG_URL = "Long URL"  # the destinations entry of visits no rule or variant sent elsewhere
DIRECT = "Direct"  # the referrers entry for visits that sent no Referer (typed, apps, e-mail)
DEFAULT_LIMIT = 10
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)

LinkIds = Iterable[int] | QuerySet | None

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


def referrer_host(referrer: str) -> str:
    """The host a Referer names, without "www."; DIRECT when there was none."""
    if not referrer:
        return DIRECT
    try:
        host = urlsplit(referrer).hostname or ""
    except ValueError:
        host = ""
    host = host.removeprefix("www.")
    return host or UNKNOWN


def share(part: int, total: int) -> float:
    """`part` as a percentage of `total`, to one decimal (0 when there is no total)."""
    return round(100 * part / total, 1) if total else 0.0


def _ranked(counts: Counter, limit: int | None) -> tuple[list[dict], dict]:
    """The top `limit` entries (all when None), each with its share of the whole breakdown (the
    period's total, not the entries shown), and the rest summed: {clicks, values, share}."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    total = counts.total()
    shown, rest = ordered[:limit], ordered[len(ordered) if limit is None else limit :]
    rest_clicks = sum(clicks for _, clicks in rest)
    return (
        [{"name": name, "clicks": clicks, "share": share(clicks, total)} for name, clicks in shown],
        {"clicks": rest_clicks, "values": len(rest), "share": share(rest_clicks, total)},
    )


def _with_links(rows: QuerySet, link_ids: LinkIds) -> QuerySet:
    return rows if link_ids is None else rows.filter(link_id__in=_ids(link_ids))


def _stale_visits(link_ids: LinkIds, start: datetime, end: datetime) -> QuerySet:
    """The visits of the (link, hour)s in range whose HourlyClick row the roll-up did not write
    (made by hand, say): they have no breakdown rows, so they are grouped directly."""
    stale = _hourly_rows(link_ids, start, end).filter(rolled_up=False)
    pairs = Q(pk__in=[])
    for link_id, hour in stale.values_list("link_id", "hour"):
        pairs |= Q(link_id=link_id, visit_time__gte=hour, visit_time__lt=hour + HOUR)
    return VisitRecord.objects.filter(pairs)


def _visit_sums(visits: QuerySet) -> Counter:
    """{(dimension, value, code): clicks} of `visits`, as the roll-up's breakdown rows hold them."""
    sums: Counter = Counter()
    for dimension, field, of_bots in ROLLED_UP_DIMENSIONS:
        source = visits.filter(is_bot=of_bots)
        group = {"countries": ["country", "country_code"], "referrers": ["referrer"]}.get(
            dimension, [field]
        )
        for row in source.values(*group).annotate(n=Count("id")).order_by():
            if dimension == "referrers":
                value, code = referrer_host(row["referrer"]), ""
            elif dimension == "countries":
                value, code = row["country"], row["country_code"]
            else:
                value, code = row[field], ""
            sums[dimension, value[:255], code] += row["n"]
    return sums


def _breakdown_sums(link_ids: LinkIds, start: datetime, end: datetime) -> Counter:
    """{(dimension, value, code): clicks} over the hours of [start, end): whole UTC days from
    DailyBreakdown; a partial first or last day from the HourlyBreakdown rows of its hours in
    the range, or, when those are most of the day, its day row less the rest of its hours (no
    hours at all when the rest of the day holds no clicks, e.g. today after now)."""
    first, end = utc_hour(start), _hour_ceil(end)
    days, plus, minus = [], Q(pk__in=[]), Q(pk__in=[])
    day = _day(first)
    while day < end:
        part_start, part_end = max(first, day), min(end, day + DAY)
        rest = Q(hour__gte=day, hour__lt=part_start) | Q(hour__gte=part_end, hour__lt=day + DAY)
        partial = part_start > day or part_end < day + DAY
        if partial and _with_links(HourlyClick.objects.filter(rest), link_ids).exists():
            if (part_end - part_start) * 2 <= DAY:
                plus |= Q(hour__gte=part_start, hour__lt=part_end)
                day += DAY
                continue
            minus |= rest
        days.append(day)
        day += DAY
    sums = _visit_sums(_stale_visits(link_ids, start, end))
    fields = ("dimension", "value", "code")
    parts = [(HourlyBreakdown.objects.filter(plus), 1), (HourlyBreakdown.objects.filter(minus), -1)]
    if days:  # one run of days: only a partial first or last day can be missing
        parts.append((DailyBreakdown.objects.filter(day__gte=days[0], day__lte=days[-1]), 1))
    for rows, sign in parts:
        for row in _with_links(rows, link_ids).values(*fields).annotate(n=Sum("clicks")).order_by():
            sums[row["dimension"], row["value"], row["code"]] += sign * row["n"]
    return +sums  # drops what the day had only in the hours left out


def breakdowns(
    *,
    link_ids: Iterable[int] | None = None,
    start: datetime,
    end: datetime,
    limit: int | None = DEFAULT_LIMIT,
) -> dict:
    """Top `limit` values (all when None) per BREAKDOWN_FIELDS name (people only) plus `bots` (by
    bot name) and `bot_kinds` (by kind, named by BotKind's labels, each entry also carrying its
    `kind`). `channels` entries are named by the channels' labels ("Short link", "QR code") and
    carry the `channel` ("link", "qr"). `destinations` entries carry the `url` a rule or variant
    sent people to ("" for the long URL, named "Long URL"). Each entry's `share` is of the
    breakdown's whole period (people's clicks; bots' for the bot breakdowns); `other` holds, per
    breakdown, what the limit left out.

    Empty values are reported as "Unknown"; `countries` entries also carry the ISO `code`, and
    are counted by it: a country stored under two names (GeoIP data from two sources, e.g.
    "Russia" and "Russian Federation") is one entry, named by the name with more clicks.
    Read from the roll-up rows, which hold what grouping the range's visits would give.
    """
    counts: dict[str, Counter] = {name: Counter() for name, _, _ in ROLLED_UP_DIMENSIONS}
    country_names: dict[str, Counter] = defaultdict(Counter)  # ISO code: {name: clicks}
    for (dimension, value, code), clicks in _breakdown_sums(link_ids, start, end).items():
        if dimension == "countries" and code:
            country_names[code][value] += clicks
        elif dimension == "destinations":
            counts[dimension][value] += clicks  # "": the long URL, named below
        elif dimension in counts:
            counts[dimension][value or UNKNOWN] += clicks
    named = {}
    for code, names in country_names.items():
        # The name with the most clicks, the alphabetically first on a tie (stable answers).
        name = min(names, key=lambda value: (-names[value], value)) or UNKNOWN
        counts["countries"][name] += names.total()
        named[name] = code
    result: dict = {"other": {}}
    for name, _, _ in ROLLED_UP_DIMENSIONS:
        result[name], result["other"][name] = _ranked(counts[name], limit)
    for entry in result["countries"]:
        entry["code"] = named.get(entry["name"], "")
    result["bot_kinds"] = [
        {**entry, "kind": entry["name"], "name": BotKind(entry["name"]).label}
        if entry["name"] in BotKind.values
        else {**entry, "kind": ""}
        for entry in result["bot_kinds"]
    ]
    result["channels"] = [
        {**entry, "channel": entry["name"], "name": channels.LABELS.get(entry["name"], UNKNOWN)}
        for entry in result["channels"]
    ]
    result["destinations"] = [
        {**entry, "url": entry["name"], "name": entry["name"] or LONG_URL}
        for entry in result["destinations"]
    ]
    return result


def _unique_visitors(link_ids: list[int], start: datetime, end: datetime) -> dict[int, int]:
    """{link_id: distinct people in [start, end)}, exact. Where nobody's latest visit to the
    link is at or after the range's end, they are the people whose latest visit is inside it:
    the sum of the hours' last_visitors. Otherwise (a range in the past of returning visitors)
    they are counted from the visits."""
    stale = _hourly_rows(link_ids, start, end).filter(rolled_up=False)
    end = _hour_ceil(end)
    # One query for both (a list page reads this for every link it shows).
    later = set(
        LinkVisitor.objects.filter(link_id__in=link_ids, last_hour__gte=end)
        .order_by()
        .values_list("link_id", flat=True)
        .union(stale.order_by().values_list("link_id", flat=True))
    )
    rolled = [link_id for link_id in link_ids if link_id not in later]
    rows = (
        HourlyClick.objects.filter(link_id__in=rolled, hour__gte=utc_hour(start), hour__lt=end)
        .values("link_id")
        .annotate(u=Sum("last_visitors"))
        .order_by()
    )
    people = {row["link_id"]: row["u"] or 0 for row in rows} if rolled else {}
    if later:
        people |= _distinct_visitors(_visits(sorted(later), start, end))
    return people


def _totals(link_ids: LinkIds, start: datetime, end: datetime) -> dict[str, int]:
    sums = _hourly_rows(link_ids, start, end).aggregate(
        clicks=Sum("clicks"), bots=Sum("bot_clicks")
    )
    ids = None if link_ids is None or isinstance(link_ids, QuerySet) else list(link_ids)
    if ids is not None and len(ids) == 1:
        unique = _unique_visitors(ids, start, end).get(ids[0], 0)
    else:  # a person who visited several of the links counts once
        unique = (
            _visits(link_ids, start, end)
            .filter(is_bot=False)
            .values("client_id")
            .distinct()
            .count()
        )
    return {
        "total_clicks": sums["clicks"] or 0,
        "unique_visitors": unique,
        "bot_clicks": sums["bots"] or 0,
    }


def link_stats(
    *,
    link,
    start: datetime,
    end: datetime,
    limit: int | None = DEFAULT_LIMIT,
    bucket: str = "hour",
) -> dict:
    """Everything the stats API and the link stats page show for one link, the series in
    `bucket`s (see series).

    Totals match the series (both HourlyClick); `unique_visitors` is distinct over the whole
    range (not a sum of hours). `start` is rounded down to its hour.
    """
    return {
        "code": link.code,
        **links_stats(link_ids=[link.pk], start=start, end=end, limit=limit, bucket=bucket),
    }


def links_stats(
    *,
    link_ids: list[int],
    start: datetime,
    end: datetime,
    limit: int | None = DEFAULT_LIMIT,
    bucket: str = "hour",
) -> dict:
    """link_stats's shape (without `code`) summed over several links (a tag's): clicks add
    up, and `unique_visitors` counts a person who visited several of them once."""
    return {
        "start": utc_hour(start).astimezone(timezone.get_current_timezone()),
        "end": end,
        "timezone": timezone.get_current_timezone_name(),
        **_totals(link_ids, start, end),
        "bucket": bucket,
        "series": series(link_ids=link_ids, start=start, end=end, bucket=bucket),
        **breakdowns(link_ids=link_ids, start=start, end=end, limit=limit),
    }


def links_totals(
    *, link_ids: list[int], start: datetime, end: datetime, people: bool = True
) -> dict[int, dict[str, int]]:
    """{link id: {"clicks", "unique_visitors", "bot_clicks"}} over [start, end) for each of the
    links apart (a tag's links, listed side by side), zeros for a link without clicks: the same
    numbers each link's own stats page shows for the range. One grouped query on HourlyClick,
    plus _unique_visitors' (distinct people per link, exact), which `people=False` skips for a
    caller that needs only the clicks ("unique_visitors" stays 0)."""
    totals = {pk: {"clicks": 0, "unique_visitors": 0, "bot_clicks": 0} for pk in link_ids}
    if not link_ids:
        return totals
    sums = (
        _hourly_rows(link_ids, start, end)
        .values("link_id")
        .annotate(c=Sum("clicks"), b=Sum("bot_clicks"))
        .order_by()
    )
    for row in sums:
        totals[row["link_id"]].update(clicks=row["c"] or 0, bot_clicks=row["b"] or 0)
    if people:
        for link_id, visitors in _unique_visitors(link_ids, start, end).items():
            totals[link_id]["unique_visitors"] = visitors
    return totals


def variant_results(
    *, link, start: datetime, end: datetime, locations: list[str] | None = None
) -> list[dict]:
    """The link's variants side by side over [start, end): for each (in the link's order) its
    `url`, `weight`, people's `clicks`, distinct `people` and `share` of the clicks the variants
    got together. Read from the visits (one grouped query on the link's (link, visit_time)
    index): people are distinct per variant, which no roll-up row holds.

    A visit is a variant's when it went to the variant's location (`locations`, in the variants'
    order: links.cache.redirect_location of each url, what the redirect recorded; the caller
    gives them, as links imports analytics and not the other way round; by default the urls
    themselves, which they are for ASCII URLs). Clicks of a variant since removed are not listed.
    """
    variants = list(link.variants or ())
    if not variants:
        return []
    if locations is None:
        locations = [variant["url"] for variant in variants]
    rows = (
        VisitRecord.objects.filter(
            link_id=link.pk,
            is_bot=False,
            visit_time__gte=utc_hour(start),
            visit_time__lt=end,
            destination__in=set(locations),
        )
        .values("destination")
        .annotate(clicks=Count("id"), people=Count("client_id", distinct=True))
        .order_by()
    )
    found = {row["destination"]: row for row in rows}
    total = sum(row["clicks"] for row in found.values())
    results = []
    for index, (variant, location) in enumerate(zip(variants, locations, strict=True)):
        row = found.get(location, {})
        clicks = row.get("clicks", 0)
        results.append(
            {
                "label": f"Variant {chr(ord('A') + index)}",
                "url": variant["url"],
                "weight": variant["weight"],
                "clicks": clicks,
                "people": row.get("people", 0),
                "share": share(clicks, total),
            }
        )
    return results


def _distinct_visitors(visits: QuerySet) -> dict[int, int]:
    """{link_id: distinct people} among `visits` (one grouped query)."""
    rows = (
        visits.filter(is_bot=False)
        .values("link_id")
        .annotate(u=Count("client_id", distinct=True))
        .order_by()
    )
    return {row["link_id"]: row["u"] for row in rows}


def top_links(
    *,
    start: datetime,
    end: datetime,
    link_ids: Iterable[int] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[dict]:
    """The most clicked links in [start, end), by people's clicks, descending.

    [{link (UrlLink, owner loaded), link_id, code, title, long_url, clicks, unique_visitors,
    bot_clicks}]; `unique_visitors` is distinct people over the range.
    """
    rows = list(
        _hourly_rows(link_ids, start, end)
        .values("link_id")
        .annotate(c=Sum("clicks"), b=Sum("bot_clicks"))
        .order_by("-c", "-b", "link_id")[:limit]
    )
    top_ids = [row["link_id"] for row in rows]
    links = UrlLink.objects.select_related("owner", "domain").in_bulk(top_ids)
    people = _unique_visitors(top_ids, start, end)
    return [
        {
            "link": links[row["link_id"]],
            "link_id": row["link_id"],
            "code": links[row["link_id"]].code,
            "title": links[row["link_id"]].title,
            "long_url": links[row["link_id"]].long_url,
            "clicks": row["c"] or 0,
            "unique_visitors": people.get(row["link_id"], 0),
            "bot_clicks": row["b"] or 0,
        }
        for row in rows
        if row["link_id"] in links
    ]


def top_tags(*, start: datetime, end: datetime, limit: int = DEFAULT_LIMIT) -> list[dict]:
    """The tags whose links people clicked most in [start, end), across every workspace (the
    staff overview): [{name, workspace (its slug), links (clicked in the range), clicks,
    bot_clicks}], by people's clicks, descending. A link with two tags counts for both. One
    grouped query on the hourly rows."""
    rows = (
        _hourly_rows(None, start, end)
        .filter(link__tags__isnull=False)
        .values("link__tags__id", "link__tags__name", "link__tags__workspace__slug")
        .annotate(c=Sum("clicks"), b=Sum("bot_clicks"), n=Count("link_id", distinct=True))
        .order_by("-c", "-b", "link__tags__id")[:limit]
    )
    return [
        {
            "name": row["link__tags__name"],
            "workspace": row["link__tags__workspace__slug"],
            "links": row["n"],
            "clicks": row["c"] or 0,
            "bot_clicks": row["b"] or 0,
        }
        for row in rows
    ]


def first_moment(*, link_ids: Iterable[int] | None = None) -> datetime | None:
    """When the first of these links (None: of all links) was made: where "all time" starts."""
    links = UrlLink.objects.all() if link_ids is None else UrlLink.objects.filter(pk__in=link_ids)
    return links.aggregate(first=Min("created_at"))["first"]


def latest_visits(*, link, limit: int = 50, include_bots: bool = True) -> QuerySet:
    """The latest stored visits of a link, newest first (for the admin and the stats page).

    `include_bots=False` keeps people's visits only: on a link shared in chat or crawled, bots
    and link previews otherwise fill the list (the stats page shows them on request)."""
    return visit_list(link=link, include_bots=include_bots)[:limit]


def visit_list(
    *,
    link,
    include_bots: bool = True,
    start: datetime | None = None,
    end: datetime | None = None,
) -> QuerySet:
    """Every stored visit of a link, newest first, for paginated APIs (the Shlink layer):
    `include_bots=False` leaves bots and link previews out; `start`/`end` bound the visit
    time (both inclusive)."""
    visits = VisitRecord.objects.filter(link=link)
    if not include_bots:
        visits = visits.filter(is_bot=False)
    if start is not None:
        visits = visits.filter(visit_time__gte=start)
    if end is not None:
        visits = visits.filter(visit_time__lte=end)
    return visits.order_by("-visit_time", "-id")


def has_visits(*, link) -> bool:
    """Whether the link has any stored visit, a bot's included."""
    return VisitRecord.objects.filter(link=link).exists()


EXPORT_FIELDS = (
    "visit_time",
    "code",
    "visitor",  # a keyed pseudonym of client_id, see _visitor_pseudonym
    "is_bot",
    "device_type",
    "browser_type",
    "browser_version",
    "os_type",
    "os_version",
    "country",
    "country_code",
    "province",
    "city",
    "isp",
    "referrer",
    "user_agent",
    "channel",  # last: columns already read by position keep their place
)


def _visitor_pseudonym(link_id: int, client_id: str) -> str:
    """Tells one link's visitors apart without letting the holder of an export recover their IP:
    client_id is an unkeyed SHA-1 of (ip, User-Agent), which the exported User-Agent and a
    search of the address space would reverse in seconds."""
    key = f"{settings.SECRET_KEY}:export:{link_id}".encode()
    return hmac.new(key, client_id.encode(), hashlib.sha256).hexdigest()[:16]


def visit_rows_for_export(*, link, chunk_size: int = 10000) -> Iterator[tuple]:
    """Every visit of a link as tuples in EXPORT_FIELDS order, oldest first, streamed from the
    database in chunks (a million rows never sit in memory at once).

    Keyset-paginated on (visit_time, id), one LIMITed query per chunk, rather than one query
    under .iterator(): the MySQL driver buffers a whole result set client-side (a million
    visits measured 1.7 GB of RSS that way, 105 MB in chunks of 10,000, in the same 25 s).
    """
    columns = ["client_id" if name == "visitor" else name for name in EXPORT_FIELDS]
    visitor = columns.index("client_id")
    visits = VisitRecord.objects.filter(link=link).order_by("visit_time", "id")
    after = Q()
    while True:
        chunk = list(visits.filter(after).values_list("id", *columns)[:chunk_size])
        for row in chunk:
            values = list(row[1:])
            values[visitor] = _visitor_pseudonym(link.pk, values[visitor])
            yield tuple(values)
        if len(chunk) < chunk_size:
            return
        last_id, last_time = chunk[-1][0], chunk[-1][1]
        after = Q(visit_time__gt=last_time) | Q(visit_time=last_time, id__gt=last_id)


def pipeline_status() -> dict[str, int]:
    """What waits to be stored: visits buffered in Redis (or spooled, embedded), the batch being
    stored, hours waiting for aggregation, messages that could not be stored."""
    client = redis_client()
    if client is None:
        return {"buffered": spool.pending_visits(), "processing": 0, "pending_hours": 0, "dead": 0}
    return buffer.status(client)


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


def _orphan_rows(*, start: datetime | None, end: datetime | None, kinds: Iterable[str] | None):
    """OrphanVisitCount rows whose hour (start) is within [start, end]; `kinds`: only those."""
    rows = OrphanVisitCount.objects.all()
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
) -> int:
    """How many orphan visits were counted (whose hour starts within [start, end], of `kinds`)."""
    rows = _orphan_rows(start=start, end=end, kinds=kinds).order_by()
    return rows.aggregate(total=Sum("count"))["total"] or 0


def orphan_visit_slice(
    *,
    offset: int,
    limit: int,
    start: datetime | None = None,
    end: datetime | None = None,
    kinds: Iterable[str] | None = None,
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
        _orphan_rows(start=start, end=end, kinds=kinds)
        .annotate(through=running)
        .filter(through__gt=offset, through__lt=offset + limit + F("count"))
        .order_by("-hour", "-pk")
    )
    end_at = offset + limit
    return [(row, min(row.through, end_at) - max(row.through - row.count, offset)) for row in rows]
