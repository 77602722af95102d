"""How many: clicks, people and bot clicks of a range, for one link, several links apart
(`links_totals`: a tag's, a list page's) or together (a tag's, the dashboard's), the most
clicked links and tags, and a stats page's whole answer (`link_stats`: totals, series,
breakdowns, and the conversions of analytics.selectors.conversions).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import Count, Min, QuerySet, Sum
from django.utils import timezone

from analytics.models import HourlyClick, LinkVisitor, utc_hour
from analytics.privacy import link_privacy, uniques_exact_within
from analytics.selectors.breakdowns import DEFAULT_LIMIT, breakdowns
from analytics.selectors.conversions import conversion_details, conversion_totals
from analytics.selectors.hours import LinkIds, _hour_ceil, _hourly_rows, _visits
from analytics.selectors.series import series
from links.models import UrlLink


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
        "uniques_exact_within": link_uniques_exact_within(link),
    }


def link_uniques_exact_within(link) -> str:
    """Over what span a link's unique visitors are exact (analytics.privacy): visitor ids keyed
    per window (privacy modes "truncated", "none") count a returning person once a window."""
    return uniques_exact_within(link_privacy(link))


def links_stats(
    *,
    link_ids: LinkIds,
    start: datetime,
    end: datetime,
    limit: int | None = DEFAULT_LIMIT,
    bucket: str = "hour",
) -> dict:
    """link_stats's shape (without `code`) summed over several links (a tag's): clicks add
    up, and `unique_visitors` counts a person who visited several of them once."""
    totals = _totals(link_ids, start, end)
    clicks_series = series(link_ids=link_ids, start=start, end=end, bucket=bucket)
    click_breakdowns = breakdowns(link_ids=link_ids, start=start, end=end, limit=limit)
    conversions = conversion_totals(
        link_ids=link_ids, start=start, end=end, clicks=totals["total_clicks"]
    )
    return {
        "start": utc_hour(start).astimezone(timezone.get_current_timezone()),
        "end": end,
        "timezone": timezone.get_current_timezone_name(),
        **totals,
        **conversions,
        "bucket": bucket,
        "series": clicks_series,
        **click_breakdowns,
        "conversions": conversion_details(
            link_ids=link_ids,
            start=start,
            end=end,
            click_breakdowns=click_breakdowns,
            several_currencies=conversions["revenue"] is None,
        ),
    }


def workspace_stats(
    *,
    workspace_id: int,
    start: datetime,
    end: datetime,
    limit: int | None = DEFAULT_LIMIT,
    bucket: str = "hour",
) -> dict:
    """links_stats over every link of a workspace (archived and stopped ones too), its links
    read as a subquery, not a list: a workspace may hold many."""
    link_ids = UrlLink.objects.filter(workspace_id=workspace_id).values("pk")
    return links_stats(link_ids=link_ids, start=start, end=end, limit=limit, bucket=bucket)


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


def tags_totals(*, tag_ids: list[int]) -> dict[int, dict[str, int]]:
    """{tag id: {"clicks", "bot_clicks"}}, all time, over the links carrying each tag (archived
    and stopped ones too, as a tag's page counts them): what those links' own all-time totals
    (links.selectors.link_click_totals) add up to. One grouped query on the hourly rows; zeros
    for a tag whose links were never clicked."""
    totals = {pk: {"clicks": 0, "bot_clicks": 0} for pk in tag_ids}
    if not tag_ids:
        return totals
    rows = (
        HourlyClick.objects.filter(link__tags__id__in=tag_ids)
        .values("link__tags__id")
        .annotate(c=Sum("clicks"), b=Sum("bot_clicks"))
        .order_by()
    )
    for row in rows:
        totals[row["link__tags__id"]] = {"clicks": row["c"] or 0, "bot_clicks": row["b"] or 0}
    return totals


def first_moment(*, link_ids: Iterable[int] | None = None) -> datetime | None:
    """When the first of these links (None: of all links) was made: where "all time" starts."""
    links = UrlLink.objects.all() if link_ids is None else UrlLink.objects.filter(pk__in=link_ids)
    return links.aggregate(first=Min("created_at"))["first"]
