"""Each day's or week's unique visitors are the distinct people in it, exact at any size, across
DST changes and links, and never served stale from the cache (issue #14)."""

import datetime as dt
import random
from collections import defaultdict
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from analytics import selectors
from analytics.models import utc_hour
from analytics.services import aggregate_hourly
from analytics.tests.factories import VisitRecordFactory, add_visits
from links.services.create import link_create

pytestmark = pytest.mark.django_db

UTC = dt.UTC
HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)


@pytest.fixture
def link(user):
    return link_create(user=user, long_url="https://example.com/sale", alias="sale").link


@pytest.fixture
def other_link(user):
    return link_create(user=user, long_url="https://example.com/other", alias="other").link


def _store(visits: list[tuple]) -> list:
    """(link, when, client_id, is_bot) visits stored and rolled up, as the pipeline would."""
    stored = [
        VisitRecordFactory(link=target, visit_time=when, client_id=client_id, bot=is_bot)
        for target, when, client_id, is_bot in visits
    ]
    aggregate_hourly(pairs={(v.link_id, utc_hour(v.visit_time)) for v in stored})
    return stored


def _expected(visits: list, zone: ZoneInfo, bucket: str) -> dict[dt.date, tuple[int, int]]:
    """{local day or Monday: (people's clicks, distinct people)}, counted here from the visits
    with the documented rule: a visit belongs to the day its UTC hour begins in."""
    clicks: dict[dt.date, int] = defaultdict(int)
    people: dict[dt.date, set] = defaultdict(set)
    for visit in visits:
        if visit.is_bot:
            continue
        day = utc_hour(visit.visit_time).astimezone(zone).date()
        if bucket == "week":
            day -= dt.timedelta(days=day.weekday())
        clicks[day] += 1
        people[day].add(visit.client_id)
    return {day: (clicks[day], len(people[day])) for day in clicks}


def _random_visits(links: list, start: dt.datetime, days: int, seed: int) -> list[tuple]:
    """A few hundred visits by 15 people (some come back across days and links) and bots, some
    of the bots sharing a person's client id (a person's address and User-Agent): never people."""
    rnd = random.Random(seed)
    visits = []
    for _ in range(400):
        when = start + dt.timedelta(seconds=rnd.randrange(days * 86400))
        visits.append((rnd.choice(links), when, f"person-{rnd.randrange(15)}", rnd.random() < 0.1))
    return visits


@pytest.mark.parametrize(
    ("zone_name", "start", "days", "bucket"),
    [
        # US spring forward (8 March 2026): a 23-hour day.
        ("America/New_York", dt.datetime(2026, 3, 4, 17, tzinfo=UTC), 9, "day"),
        # Europe's fall back (25 October 2026), then the US's (1 November): 25-hour days.
        ("Europe/London", dt.datetime(2026, 10, 22, 5, tzinfo=UTC), 7, "day"),
        ("America/New_York", dt.datetime(2026, 10, 20, 9, tzinfo=UTC), 26, "week"),
        # A half-hour zone: its days begin with the UTC hour that starts at 00:30.
        ("Asia/Kolkata", dt.datetime(2026, 5, 1, tzinfo=UTC), 5, "day"),
    ],
)
def test_each_bucket_counts_its_distinct_people_exactly(
    settings, link, other_link, zone_name, start, days, bucket
):
    """One link's series, then all links': one sample stored for both (rolling up a sample's
    ~150 hours takes most of this test's time), so the link's count also leaves the other's
    visits out."""
    settings.TIME_ZONE = zone_name
    zone = ZoneInfo(zone_name)
    stored = _store(_random_visits([link, other_link], start, days, seed=days))
    for link_ids, visits in (
        ([link.pk], [visit for visit in stored if visit.link_id == link.pk]),
        (None, stored),
    ):
        with timezone.override(zone):
            series = selectors.series(
                link_ids=link_ids, start=start, end=start + days * DAY, bucket=bucket
            )
        counted = {
            point["hour"].date(): (point["clicks"], point["unique_visitors"])
            for point in series
            if point["clicks"]
        }
        assert counted == _expected(visits, zone, bucket)
        # One entry per local day or week, each starting at its local midnight (DST or not).
        assert all(point["hour"].astimezone(zone).time() == dt.time(0) for point in series[1:])
        assert len({point["hour"].date() for point in series}) == len(series)


def test_a_person_on_two_days_counts_in_both_days_and_once_in_the_week(settings, link):
    settings.TIME_ZONE = "Europe/Berlin"
    zone = ZoneInfo("Europe/Berlin")
    tuesday = dt.datetime(2026, 6, 2, 10, tzinfo=zone)
    _store(
        [
            (link, tuesday, "ann", False),
            (link, tuesday + DAY, "ann", False),
            (link, tuesday + DAY, "bob", False),
            (link, tuesday + 6 * DAY, "ann", False),  # the next Monday: another week
        ]
    )
    start = dt.datetime(2026, 6, 1, tzinfo=zone)
    with timezone.override(zone):
        days = selectors.series(link_ids=[link.pk], start=start, end=start + 8 * DAY, bucket="day")
        weeks = selectors.series(
            link_ids=[link.pk], start=start, end=start + 14 * DAY, bucket="week"
        )
    assert [p["unique_visitors"] for p in days] == [0, 1, 2, 0, 0, 0, 0, 1]
    assert [(p["hour"].date().isoformat(), p["clicks"], p["unique_visitors"]) for p in weeks] == [
        ("2026-06-01", 3, 2),
        ("2026-06-08", 1, 1),
    ]


def test_all_links_count_a_person_who_visited_two_of_them_once(
    settings, client, staff_user, link, other_link
):
    settings.TIME_ZONE = "UTC"
    now = timezone.now()
    two_days_ago = utc_hour(now) - 2 * DAY
    _store(
        [
            (link, two_days_ago, "ann", False),
            (other_link, two_days_ago, "ann", False),
            (other_link, two_days_ago, "bob", False),
        ]
    )
    end = utc_hour(now) + HOUR
    by_day = selectors.series(start=end - 7 * DAY, end=end, bucket="day")
    by_hour = selectors.series(start=two_days_ago, end=two_days_ago + HOUR, bucket="hour")
    assert [(p["clicks"], p["unique_visitors"]) for p in by_day if p["clicks"]] == [(3, 2)]
    assert [(p["clicks"], p["unique_visitors"]) for p in by_hour] == [(3, 2)]
    # Per link, each counts its own.
    one = selectors.series(link_ids=[link.pk], start=end - 7 * DAY, end=end, bucket="day")
    assert [p["unique_visitors"] for p in one if p["clicks"]] == [1]
    client.force_login(staff_user)
    chart = client.get(reverse("overview"), {"range": "7d"}).context["chart"]
    assert chart["unit"] == "day" and sum(chart["clicks"]) == 3
    assert max(chart["unique_visitors"]) == 2


def test_bots_are_never_unique_visitors(settings, link):
    settings.TIME_ZONE = "UTC"
    day = dt.datetime(2026, 4, 6, 8, tzinfo=UTC)
    _store(
        [
            (link, day, "ann", False),
            (link, day + HOUR, "crawler", True),
            (link, day + DAY, "ann", True),  # same address and User-Agent, classified a bot
        ]
    )
    series = selectors.series(
        link_ids=[link.pk], start=day - 8 * HOUR, end=day + 2 * DAY, bucket="day"
    )
    assert [(p["clicks"], p["unique_visitors"], p["bot_clicks"]) for p in series] == [
        (1, 1, 1),
        (0, 0, 1),
        (0, 0, 0),
    ]


def test_no_cap_on_busy_ranges(settings, link):
    """Past 20,000 clicks the series used to leave a day's people out: now every size is exact."""
    settings.TIME_ZONE = "UTC"
    day = dt.datetime(2026, 4, 6, tzinfo=UTC)
    visits = VisitRecordFactory.build_batch(
        20_050, link=link, visit_time=day + 3 * HOUR, client_id="same"
    )
    for n, visit in enumerate(visits):
        visit.client_id = f"person-{n % 7_000}"
    type(visits[0]).objects.bulk_create(visits, batch_size=2000)
    aggregate_hourly(pairs=[(link.pk, day + 3 * HOUR)])
    series = selectors.series(link_ids=[link.pk], start=day, end=day + 3 * DAY, bucket="day")
    assert [(p["clicks"], p["unique_visitors"]) for p in series] == [
        (20_050, 7_000),
        (0, 0),
        (0, 0),
    ]


def test_a_new_person_today_shows_up_after_the_roll_up(settings, link, other_link):
    settings.TIME_ZONE = "UTC"
    now = timezone.now()
    end = utc_hour(now) + HOUR  # as the pages' ranges: to the end of the current hour
    add_visits(link, when=now, client_id="ann")
    add_visits(link, when=now - 3 * DAY, client_id="ann")
    for link_ids in ([link.pk], None):  # the link's page, the overview
        first = selectors.series(link_ids=link_ids, start=end - 7 * DAY, end=end, bucket="day")
        assert first[-1]["unique_visitors"] == 1
    add_visits(link, when=now, client_id="bob")
    add_visits(other_link, when=now, client_id="cy")
    assert (
        selectors.series(link_ids=[link.pk], start=end - 7 * DAY, end=end, bucket="day")[-1][
            "unique_visitors"
        ]
        == 2
    )
    assert selectors.series(start=end - 7 * DAY, end=end, bucket="day")[-1]["unique_visitors"] == 3


def test_a_late_visit_into_a_closed_day_is_counted_after_the_roll_up(settings, link):
    settings.TIME_ZONE = "UTC"
    end = utc_hour(timezone.now()) + HOUR
    # Midnight, so the late visit an hour later falls on the same day at any time of the run.
    three_days_ago = (end - 3 * DAY).replace(hour=0)
    add_visits(link, when=three_days_ago, client_id="ann")
    for link_ids in ([link.pk], None):
        before = selectors.series(link_ids=link_ids, start=end - 7 * DAY, end=end, bucket="day")
        assert [p["unique_visitors"] for p in before if p["clicks"]] == [1]
    # A visit held up in the buffer (an outage, a slow node) is stored and rolled up later.
    add_visits(link, when=three_days_ago + HOUR, client_id="bob")
    for link_ids in ([link.pk], None):
        after = selectors.series(link_ids=link_ids, start=end - 7 * DAY, end=end, bucket="day")
        assert [p["unique_visitors"] for p in after if p["clicks"]] == [2]


def test_a_closed_day_is_not_counted_again_on_the_next_view(settings, link):
    settings.TIME_ZONE = "UTC"
    end = utc_hour(timezone.now()) + HOUR
    for age in (2, 3, 4):
        add_visits(link, 2, when=end - age * DAY)
    add_visits(link, when=end - HOUR)

    def view():
        with CaptureQueriesContext(connection) as queries:
            series = selectors.series(
                link_ids=[link.pk], start=end - 7 * DAY, end=end, bucket="day"
            )
        read_visits = [q["sql"] for q in queries if "analytics_visitrecord" in q["sql"]]
        return [p["unique_visitors"] for p in series if p["clicks"]], read_visits

    first, first_reads = view()
    again, again_reads = view()
    assert first == again == [2, 2, 2, 1]
    assert first_reads and not again_reads


def test_a_range_in_the_past_counts_people_who_came_back_after_it(settings, link):
    """The last day of a range that ends before someone's latest visit is counted from the
    visits (their latest visit is not in it)."""
    settings.TIME_ZONE = "UTC"
    day = dt.datetime(2026, 4, 6, tzinfo=UTC)
    add_visits(link, when=day + DAY + 10 * HOUR, client_id="ann")
    add_visits(link, when=day + 5 * DAY, client_id="ann")
    series = selectors.series(link_ids=[link.pk], start=day, end=day + 2 * DAY, bucket="day")
    assert [(p["clicks"], p["unique_visitors"]) for p in series] == [(0, 0), (1, 1)]


def test_the_stats_page_draws_each_days_people_with_no_note(client, user, link):
    client.force_login(user)
    now = timezone.now()
    add_visits(link, 3, when=now - 2 * DAY)
    response = client.get(reverse("link_stats", args=[link.code]), {"range": "30d"})
    chart = response.context["chart"]
    assert chart["unit"] == "day" and sum(chart["unique_visitors"]) == 3
    assert b"drawn for periods of up to" not in response.content
