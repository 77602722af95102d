"""The stats roll-ups (breakdown rows, each person's latest hour) give exactly what grouping and
counting the visits directly gives, on varied data, ranges and orders of aggregation."""

import datetime as dt
import random
import uuid
from collections import Counter

import pytest

from analytics import selectors, services
from analytics.bots import BotKind
from analytics.models import (
    DailyBreakdown,
    HourlyBreakdown,
    HourlyClick,
    LinkVisitor,
    VisitRecord,
    utc_hour,
)
from analytics.selectors.breakdowns import _ranked
from analytics.selectors.hours import _hour_ceil
from core import channels

UTC = dt.UTC
T0 = dt.datetime(2024, 5, 1, 0, 0, tzinfo=UTC)
DAYS = 4
PLACES = [
    ("Germany", "DE", "Land Berlin", "Berlin"),
    ("Germany", "DE", "Bavaria", "Munich"),
    ("France", "FR", "Île-de-France", "Paris"),
    ("China", "CN", "Zhejiang", "Hangzhou"),
    ("", "", "", ""),
    ("Loopback", "", "", ""),
]
REFERRERS = [
    "",
    "",
    "https://www.google.com/search?q=x",
    "https://google.com/",
    "https://t.co/abc",
    "http://[not-an-ipv6/",
    "android-app://com.slack",
    "https://news.ycombinator.com/item?id=1",
]
PEOPLE = [
    ("Chrome", "Windows", "PC"),
    ("Safari", "iOS", "Mobile"),
    ("Firefox", "Linux", "PC"),
    ("", "", "Other"),
    ("Mobile Safari", "iOS", "Tablet"),
]
BOTS = ["Googlebot", "Slackbot-LinkExpanding", ""]
BOT_KINDS = ["search", "social", "other", ""]  # "" as stored before bot kinds existed


def _visits(rnd: random.Random, links, count: int) -> list[VisitRecord]:
    visits = []
    for _ in range(count):
        link = rnd.choice(links)
        client = rnd.randrange(40)  # few people: many come back, in other hours and days
        bot = client % 9 == 0
        country, code, province, city = PLACES[client % len(PLACES)]
        browser, os_type, device = PEOPLE[client % len(PEOPLE)]
        bot_name = bot_kind = ""
        if bot:
            browser, os_type, device = BOTS[client % len(BOTS)], "Other", "Bot"
            bot_name, bot_kind = browser, BOT_KINDS[client % len(BOT_KINDS)]
        visits.append(
            VisitRecord(
                link=link,
                code=link.code,
                event_id=uuid.uuid4().hex,
                client_id=f"client-{client}",
                visit_time=T0 + dt.timedelta(seconds=rnd.randrange(DAYS * 86400)),
                referrer=rnd.choice(REFERRERS),
                country=country,
                country_code=code,
                province=province,
                city=city,
                isp=rnd.choice(["", "Deutsche Telekom", "Orange"]),
                browser_type=browser,
                os_type=os_type,
                device_type=device,
                is_bot=bot,
                bot_name=bot_name,
                bot_kind=bot_kind,
                channel=rnd.choice(["link", "link", "qr"]),
                # Some sent to a stopped link's fallback (issue #28); no draw: the rest stays.
                link_state=("", "", "expired", "", "limit_reached", "")[client % 6],
            )
        )
    return visits


def _direct_breakdowns(link_ids, start, end, limit=10) -> dict:
    """What selectors.breakdowns answered before the roll-ups: grouping the range's visits."""
    visits = VisitRecord.objects.filter(
        link_id__in=link_ids,
        visit_time__gte=utc_hour(start),
        visit_time__lt=_hour_ceil(end),
    )
    people = visits.filter(is_bot=False)

    def ranked(rows, name) -> list[dict]:
        counts = Counter()
        for visit in rows:
            value = getattr(visit, name)
            if name == "referrer":
                key = selectors.referrer_host(value)
            elif name == "destination":
                key = value  # "" is the long URL, named below
            elif name == "link_state":
                if not value:
                    continue  # served by the link: only fallback visits are listed
                key = value
            else:
                key = value or "Unknown"
            counts[key] += 1
        return _ranked(counts, limit)[0]

    fields = {**selectors.BREAKDOWN_FIELDS, "referrers": "referrer"}
    result = {key: ranked(people, field) for key, field in fields.items()}
    codes = {v.country: v.country_code for v in people if v.country_code}
    for entry in result["countries"]:
        entry["code"] = codes.get(entry["name"], "")
    bots = visits.filter(is_bot=True)
    result["bots"] = ranked(bots, "bot_name")
    result["bot_kinds"] = [
        {**entry, "kind": entry["name"], "name": BotKind(entry["name"]).label}
        if entry["name"] in BotKind.values
        else {**entry, "kind": ""}  # "Unknown": stored before kinds existed
        for entry in ranked(bots, "bot_kind")
    ]
    result["channels"] = [
        {**entry, "channel": entry["name"], "name": channels.LABELS[entry["name"]]}
        for entry in result["channels"]
    ]
    result["destinations"] = [
        {**entry, "url": entry["name"], "name": entry["name"] or "Long URL"}
        for entry in result["destinations"]
    ]
    result["sent_to_fallback"] = sum(1 for visit in people if visit.link_state)
    result["fallbacks"] = [
        {**entry, "state": entry["name"], "name": selectors.FALLBACK_LABELS[entry["name"]]}
        for entry in result["fallbacks"]
    ]
    return result


def _direct_unique(link_id, start, end) -> int:
    return (
        VisitRecord.objects.filter(
            link_id=link_id,
            is_bot=False,
            visit_time__gte=utc_hour(start),
            visit_time__lt=_hour_ceil(end),
        )
        .values("client_id")
        .distinct()
        .count()
    )


def _ranges(rnd: random.Random) -> list[tuple[dt.datetime, dt.datetime]]:
    whole = [
        (T0, T0 + dt.timedelta(days=DAYS)),  # everything, whole days
        (T0 - dt.timedelta(days=2), T0 + dt.timedelta(days=9)),  # around everything
        (T0 + dt.timedelta(days=1), T0 + dt.timedelta(days=2)),  # one day in the middle
        (T0 + dt.timedelta(hours=30), T0 + dt.timedelta(days=7)),  # to "now": a partial first day
        (T0 + dt.timedelta(hours=5), T0 + dt.timedelta(hours=9)),  # hours of one day
        (T0 + dt.timedelta(hours=20), T0 + dt.timedelta(hours=28)),  # across midnight
        (T0 + dt.timedelta(hours=7, minutes=40), T0 + dt.timedelta(hours=50, minutes=5)),
        (T0 + dt.timedelta(days=10), T0 + dt.timedelta(days=11)),  # nothing
    ]
    for _ in range(8):
        start = T0 + dt.timedelta(minutes=rnd.randrange(-600, DAYS * 1440))
        whole.append((start, start + dt.timedelta(minutes=rnd.randrange(30, DAYS * 1440))))
    return whole


def _assert_same_as_direct(links, rnd: random.Random) -> None:
    for start, end in _ranges(rnd):
        for link in links:
            stats = selectors.link_stats(link=link, start=start, end=end)
            direct = _direct_breakdowns([link.pk], start, end)
            assert {key: stats[key] for key in direct} == direct, (start, end)
            assert stats["unique_visitors"] == _direct_unique(link.pk, start, end), (start, end)
        both = [link.pk for link in links]
        both_stats = selectors.breakdowns(link_ids=both, start=start, end=end)
        direct = _direct_breakdowns(both, start, end)
        assert {key: both_stats[key] for key in direct} == direct
        top = selectors.top_links(start=start, end=end, link_ids=both)
        assert {row["link_id"]: row["unique_visitors"] for row in top} == {
            row["link_id"]: _direct_unique(row["link_id"], start, end) for row in top
        }


def _rollup_tables() -> dict:
    def rows(model, *fields):
        return sorted(model.objects.values_list(*fields))

    breakdown = ("link_id", "dimension", "value", "code", "clicks")
    return {
        "hourly": rows(HourlyBreakdown, "hour", *breakdown),
        "daily": rows(DailyBreakdown, "day", *breakdown),
        "visitors": rows(LinkVisitor, "link_id", "client_id", "last_hour"),
        "hours": rows(HourlyClick, "link_id", "hour", "clicks", "unique_visitors", "last_visitors"),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2])
def test_rollups_match_the_visits_whatever_order_the_hours_are_aggregated_in(make_link, seed):
    rnd = random.Random(seed)
    links = [make_link("https://example.com/a"), make_link("https://example.com/b")]
    visits = _visits(rnd, links, 300)
    # Stored in shuffled batches, each aggregated as the pipeline would: hours come late and
    # out of order, and people's later visits are often aggregated before their earlier ones.
    rnd.shuffle(visits)
    for i in range(0, len(visits), 100):
        batch = visits[i : i + 100]
        VisitRecord.objects.bulk_create(batch)
        services.aggregate_hourly(pairs={(v.link_id, utc_hour(v.visit_time)) for v in batch})
    _assert_same_as_direct(links, rnd)

    # A rebuild gives the same rows, and so does aggregating everything again.
    before = _rollup_tables()
    services.rebuild_hourly(since=T0 - dt.timedelta(days=1))
    assert _rollup_tables() == before
    services.aggregate_hourly(pairs={(v.link_id, utc_hour(v.visit_time)) for v in visits})
    assert _rollup_tables() == before


@pytest.mark.django_db
def test_a_person_coming_back_later_counts_once_not_once_per_hour(make_link):
    link = make_link()
    for hours in (0, 1, 30, 49):
        VisitRecord.objects.create(
            link=link,
            code=link.code,
            event_id=uuid.uuid4().hex,
            client_id="same-person",
            visit_time=T0 + dt.timedelta(hours=hours, minutes=10),
        )
        services.aggregate_hourly(pairs=[(link.pk, T0 + dt.timedelta(hours=hours))])
    week = selectors.link_stats(link=link, start=T0, end=T0 + dt.timedelta(days=7))
    assert (week["total_clicks"], week["unique_visitors"]) == (4, 1)
    assert sum(point["unique_visitors"] for point in week["series"]) == 4  # per hour: 1 each
    # A range that ends before the person's latest visit still counts them once, in range only.
    early = selectors.link_stats(link=link, start=T0, end=T0 + dt.timedelta(hours=20))
    assert (early["total_clicks"], early["unique_visitors"]) == (2, 1)
    later = selectors.link_stats(
        link=link, start=T0 + dt.timedelta(hours=2), end=T0 + dt.timedelta(hours=31)
    )
    assert (later["total_clicks"], later["unique_visitors"]) == (1, 1)
    assert HourlyClick.objects.get(link=link, hour=T0 + dt.timedelta(hours=49)).last_visitors == 1
    assert HourlyClick.objects.filter(link=link, last_visitors__gt=0).count() == 1


@pytest.mark.django_db
def test_rebuild_moves_a_person_back_when_their_latest_visit_stops_counting(make_link):
    link = make_link()
    for hours, ua in ((0, "Browser"), (5, "Now a bot")):
        VisitRecord.objects.create(
            link=link,
            code=link.code,
            event_id=uuid.uuid4().hex,
            client_id="person",
            visit_time=T0 + dt.timedelta(hours=hours),
            user_agent=ua,
        )
    services.rebuild_hourly(since=T0)
    assert LinkVisitor.objects.get(link=link).last_hour == T0 + dt.timedelta(hours=5)
    VisitRecord.objects.filter(user_agent="Now a bot").update(
        is_bot=True, bot_name="NewBot", bot_kind="other"
    )
    services.rebuild_hourly(since=T0)
    assert LinkVisitor.objects.get(link=link).last_hour == T0
    stats = selectors.link_stats(link=link, start=T0, end=T0 + dt.timedelta(days=1))
    assert (stats["total_clicks"], stats["unique_visitors"], stats["bot_clicks"]) == (1, 1, 1)
    assert stats["bots"] == [{"name": "NewBot", "clicks": 1, "share": 100.0}]
    assert stats["browsers"] == [{"name": "Unknown", "clicks": 1, "share": 100.0}]


@pytest.mark.django_db
def test_partial_days_use_day_rows_only_when_the_rest_of_the_day_is_empty(make_link):
    link = make_link()
    for hours in (1, 2, 22):
        VisitRecord.objects.create(
            link=link,
            code=link.code,
            event_id=uuid.uuid4().hex,
            client_id=f"p{hours}",
            visit_time=T0 + dt.timedelta(hours=hours),
            country="France",
            country_code="FR",
        )
    services.rebuild_hourly(since=T0)
    for start_hour, end_hour, expected in ((0, 3, 2), (2, 23, 2), (0, 24, 3), (3, 22, 0)):
        stats = selectors.link_stats(
            link=link,
            start=T0 + dt.timedelta(hours=start_hour),
            end=T0 + dt.timedelta(hours=end_hour),
        )
        clicks = [row["clicks"] for row in stats["countries"]]
        assert clicks == ([expected] if expected else []), (start_hour, end_hour)
        assert stats["unique_visitors"] == expected
