"""What clicks were made of: top countries, devices, browsers, referrers, channels, destinations
and bots over a range (read from the roll-up rows), and a link's A/B variants side by side.

Every breakdown is a list of {"name": str, "clicks": int, "share": float} sorted by clicks,
descending. The dimensions named here are also what analytics.services.rollups keeps.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import urlsplit

from django.db.models import Count, Q, QuerySet, Sum

from analytics.bots import BotKind
from analytics.models import DailyBreakdown, HourlyBreakdown, HourlyClick, VisitRecord, utc_hour
from analytics.selectors.hours import (
    DAY,
    HOUR,
    LinkIds,
    _day,
    _hour_ceil,
    _hourly_rows,
    _ids,
)
from core import channels
from links.models import FALLBACK_STATES

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
    # People a stopped link sent to its fallback (serving/fallback.py), by the link's state then
    # (VisitRecord.link_state); only those visits are rolled up here (FALLBACKS_ONLY).
    "fallbacks": "link_state",
}
# The dimensions that roll up only the visits whose field is set: a visit the link served
# itself has no state, and a row per (link, hour) saying so would only take room.
SET_ONLY_DIMENSIONS = frozenset(("fallbacks",))
# The states' names, as LinkStatus labels them.
FALLBACK_LABELS = {status.value: status.label for status in FALLBACK_STATES}
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


def breakdown_columns(dimension: str, field: str) -> list[str]:
    """The VisitRecord columns a rolled-up dimension groups visits by."""
    return {"countries": ["country", "country_code"], "referrers": ["referrer"]}.get(
        dimension, [field]
    )


def breakdown_key(dimension: str, field: str, row: dict) -> tuple[str, str]:
    """(value, code) of one group of visits, as a breakdown row holds it: a referrer's host, a
    country's name with its code, else the column's value; cut to the row's 255 characters."""
    if dimension == "referrers":
        value, code = referrer_host(row["referrer"]), ""
    elif dimension == "countries":
        value, code = row["country"], row["country_code"]
    else:
        value, code = row[field], ""
    return value[:255], code


def _visit_sums(visits: QuerySet) -> Counter:
    """{(dimension, value, code): clicks} of `visits`, as the roll-up's breakdown rows hold them."""
    sums: Counter = Counter()
    for dimension, field, of_bots in ROLLED_UP_DIMENSIONS:
        source = visits.filter(is_bot=of_bots)
        if dimension in SET_ONLY_DIMENSIONS:
            source = source.exclude(**{field: ""})
        group = breakdown_columns(dimension, field)
        for row in source.values(*group).annotate(n=Count("id")).order_by():
            sums[dimension, *breakdown_key(dimension, field, row)] += row["n"]
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
    sent people to ("" for the long URL, named "Long URL"). `fallbacks` holds only the people a
    stopped link sent to its fallback, by the link's state (`state`: expired, revoked,
    limit_reached), and `sent_to_fallback` their number. Each entry's `share` is of the
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
        elif dimension in SET_ONLY_DIMENSIONS:
            if value:  # rows of older roll-ups never hold "", but a hand-made one might
                counts[dimension][value] += clicks
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
    result["fallbacks"] = [
        {**entry, "state": entry["name"], "name": FALLBACK_LABELS.get(entry["name"], UNKNOWN)}
        for entry in result["fallbacks"]
    ]
    # "Sent to the fallback: N": people a stopped link sent on instead of its 410 page.
    result["sent_to_fallback"] = counts["fallbacks"].total()
    return result


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
