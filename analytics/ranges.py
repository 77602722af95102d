"""The stats span rules, one definition for every channel that lets a caller choose a series'
span: the stats pages' form, the stats API (a link's, a tag's) and Bitly's clicks. (Shlink's
visit dates choose no series: they filter a page of visits, checked by DRF's date field.)

A range is [start, end): start from 2000 on, end at most a day ahead of now, start before end;
a range chosen by its ends (check_range: the pages and the stats API) is shown by the hour for at
most 366 days (longer ranges by day or week), and no series lists more than
settings.STATS_MAX_BUCKETS entries (Bitly's `units` of hours are bounded by that alone). Without
a choice, the last 7 days. "The last N days" (last_days) are whole local days, today among them:
a chart by day shows N bars, not a partial eighth one at the start.

What a series costs grows with its entries (analytics.selectors.series builds one object per
entry and never walks the hours of a longer bucket) and with the stored rows of the span, which
are bounded by the links' real traffic since 2000; so capping the entries and the span's ends
bounds what any one request can make the server do. Each channel answers a refusal in its own
shape; the messages here name the limit.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
# A day of slack: "today" in the viewer's zone may end up to 14 hours after UTC's.
FUTURE_SLACK = timedelta(days=1)
MAX_HOURLY_RANGE = timedelta(days=366)
DEFAULT_DAYS = 7  # last_days(DEFAULT_DAYS, …): the span shown without a choice
# What a series entry may cover: the stats API's and pages' buckets, and Bitly's months.
BUCKETS = ("hour", "day", "week", "month")
HOUR = timedelta(hours=1)

BEFORE_EARLIEST = "Dates before 2000 hold no clicks."
IN_THE_FUTURE = "The end cannot be in the future."
START_AFTER_END = "The start must be before the end."
TOO_MANY_HOURS = (
    "Choose at most 366 days of hours at a time; for longer ranges ask for bucket=day, week or "
    "auto."
)


def max_buckets() -> int:
    """The most entries one series may list (settings.STATS_MAX_BUCKETS)."""
    return settings.STATS_MAX_BUCKETS


def too_many_buckets(count: int, bucket: str) -> str:
    return (
        f"A series lists at most {max_buckets():,} entries; this one would list {count:,} "
        f"{bucket}s. Choose a shorter range or a longer bucket."
    )


def check_moment(moment: datetime, *, now: datetime | None = None) -> datetime:
    """`moment` if it may bound a range, else ValidationError (keeps later arithmetic safe)."""
    try:
        early, late = moment < EARLIEST, moment > (now or timezone.now()) + FUTURE_SLACK
    except OverflowError:  # year 1 or 9999 with an offset: past what a datetime holds in UTC
        early, late = moment.year < EARLIEST.year, moment.year >= EARLIEST.year
    if early:
        raise ValidationError(BEFORE_EARLIEST)
    if late:
        raise ValidationError(IN_THE_FUTURE)
    return moment


def bucket_first_day(day: date, bucket: str) -> date:
    """The first day of the day, week (from Monday) or month `day` is in."""
    if bucket == "week":
        return day - timedelta(days=day.weekday())
    if bucket == "month":
        return day.replace(day=1)
    return day


def buckets_shifted(first: date, bucket: str, count: int) -> date:
    """The first day of the day, week or month `count` of them after (before, when negative) the
    one starting on `first`."""
    if bucket == "day":
        return first + timedelta(days=count)
    if bucket == "week":
        return first + timedelta(weeks=count)
    months = first.year * 12 + first.month - 1 + count
    return date(months // 12, months % 12 + 1, 1)


def _utc_hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def bucket_count(start: datetime, end: datetime, bucket: str) -> int:
    """How many entries a series of [start, end) in `bucket`s lists: one per UTC hour, or per
    local day, week or month that at least one of its hours begins in (the current time zone)."""
    first = _utc_hour(start)
    last = _utc_hour(end - timedelta(microseconds=1))  # the hour the range's last moment is in
    if last < first:
        return 0
    if bucket == "hour":
        return (last - first) // HOUR + 1
    zone = timezone.get_current_timezone()
    lo = bucket_first_day(first.astimezone(zone).date(), bucket)
    hi = bucket_first_day(last.astimezone(zone).date(), bucket)
    if bucket == "day":
        return (hi - lo).days + 1
    if bucket == "week":
        return (hi - lo).days // 7 + 1
    return (hi.year - lo.year) * 12 + hi.month - lo.month + 1


def last_days(days: int, end: datetime) -> tuple[datetime, datetime]:
    """[start, end) of "the last `days` days" up to `end`: the local day `end`'s last moment is
    in (today, so far) and the `days - 1` before it from their midnight (the current time zone),
    so a series by day lists exactly `days` entries. The stats pages' day presets and the stats
    API's default span."""
    zone = timezone.get_current_timezone()
    today = (end - timedelta(microseconds=1)).astimezone(zone).date()
    start = datetime.combine(today - timedelta(days=days - 1), time.min, tzinfo=zone)
    return start, end


def check_range(start: datetime, end: datetime, *, bucket: str | None = None) -> None:
    """ValidationError({"start": [reason]}) unless [start, end) is a range stats may show, as a
    series of `bucket`s when one is given."""
    if start >= end:
        raise ValidationError({"start": [START_AFTER_END]})
    if bucket == "hour" and end - start > MAX_HOURLY_RANGE:
        raise ValidationError({"start": [TOO_MANY_HOURS]})
    if bucket is not None:
        count = bucket_count(start, end, bucket)
        if count > max_buckets():
            raise ValidationError({"start": [too_many_buckets(count, bucket)]})


def units_span(
    bucket: str, reference: datetime, count: int, *, since: datetime | None = None
) -> tuple[datetime, datetime]:
    """[start, end) of the `count` whole `bucket`s up to and including the one holding
    `reference` (UTC hours; local days, weeks from Monday, months), none before the one holding
    `since` when it is given: Bitly's `units` before a `unit_reference`.

    ValidationError({"reference": [reason]}) for a reference check_moment refuses, and
    ({"count": [reason]}) for more than max_buckets() entries or a span reaching before 2000."""
    try:
        check_moment(reference)
    except ValidationError as error:
        raise ValidationError({"reference": error.messages}) from None
    if count > max_buckets():
        raise ValidationError({"count": [too_many_buckets(count, bucket)]})
    if since is not None:
        since = max(since, EARLIEST)
    zone = timezone.get_current_timezone()
    if bucket == "hour":
        end = _utc_hour(reference) + HOUR
    else:
        first = bucket_first_day(reference.astimezone(zone).date(), bucket)
        end = datetime.combine(buckets_shifted(first, bucket, 1), time.min, tzinfo=zone)
    reach = bucket_count(EARLIEST, end, bucket)  # the most that stay within 2000 and after
    if count > reach and since is None:
        raise ValidationError(
            {
                "count": [
                    f"{BEFORE_EARLIEST} Up to this reference, at most {reach:,} {bucket}s "
                    "(from 2000-01-01) can be listed."
                ]
            }
        )
    count = min(count, reach)
    if bucket == "hour":
        start = end - count * HOUR
        if since is not None:
            start = max(start, _utc_hour(since))
        return start, end
    start_day = buckets_shifted(first, bucket, 1 - count)
    if since is not None:
        start_day = max(start_day, bucket_first_day(since.astimezone(zone).date(), bucket))
    return datetime.combine(start_day, time.min, tzinfo=zone), end
