"""Series bucketed by hour up to 48 h, by day beyond, by week past ~180 days, with each bucket's
unique visitors counted exactly; presets up to 90 days and all time (issue #14)."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics import selectors
from analytics.tests.factories import add_visits
from links.services.create import link_create
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

UTC = dt.UTC
DAY0 = dt.datetime(2026, 3, 2, tzinfo=UTC)  # a Monday


@pytest.fixture
def link(user):
    return link_create(user=user, long_url="https://example.com/sale", alias="sale").link


def _one_person_three_times_a_day(link, day: dt.datetime) -> None:
    for hour in (9, 13, 20):
        add_visits(link, when=day + dt.timedelta(hours=hour), client_id="returning-person")


def test_buckets_by_length():
    assert selectors.series_bucket(DAY0, DAY0 + dt.timedelta(hours=48)) == "hour"
    assert selectors.series_bucket(DAY0, DAY0 + dt.timedelta(hours=49)) == "day"
    assert selectors.series_bucket(DAY0, DAY0 + dt.timedelta(days=180)) == "day"
    assert selectors.series_bucket(DAY0, DAY0 + dt.timedelta(days=181)) == "week"


def test_a_day_counts_a_returning_person_once(settings, link):
    settings.TIME_ZONE = "UTC"
    _one_person_three_times_a_day(link, DAY0)
    _one_person_three_times_a_day(link, DAY0 + dt.timedelta(days=1))
    series = selectors.series(
        link_ids=[link.pk], start=DAY0, end=DAY0 + dt.timedelta(days=7), bucket="day"
    )
    assert [point["hour"].date().isoformat() for point in series][:3] == [
        "2026-03-02",
        "2026-03-03",
        "2026-03-04",
    ]
    assert len(series) == 7
    # Three clicks a day by one person: 1 unique visitor a day, never 3 (a sum of hours).
    assert [(p["clicks"], p["unique_visitors"]) for p in series[:3]] == [(3, 1), (3, 1), (0, 0)]


def test_a_week_counts_a_returning_person_once(settings, link):
    settings.TIME_ZONE = "UTC"
    _one_person_three_times_a_day(link, DAY0 + dt.timedelta(days=1))
    _one_person_three_times_a_day(link, DAY0 + dt.timedelta(days=3))
    add_visits(link, when=DAY0 + dt.timedelta(days=8))
    series = selectors.series(
        link_ids=[link.pk], start=DAY0, end=DAY0 + dt.timedelta(days=14), bucket="week"
    )
    assert [(p["hour"].date().isoformat(), p["clicks"], p["unique_visitors"]) for p in series] == [
        ("2026-03-02", 6, 1),
        ("2026-03-09", 1, 1),
    ]


def test_days_follow_the_current_time_zone(settings, link):
    settings.TIME_ZONE = "America/New_York"  # UTC-5 in early March
    add_visits(link, when=DAY0 + dt.timedelta(hours=3))  # 22:00 on 1 March in New York
    with timezone.override("America/New_York"):
        series = selectors.series(
            link_ids=[link.pk],
            start=DAY0 - dt.timedelta(days=2),
            end=DAY0 + dt.timedelta(days=2),
            bucket="day",
        )
    clicked = [p["hour"].isoformat() for p in series if p["clicks"]]
    assert clicked == ["2026-03-01T00:00:00-05:00"]


def test_stats_page_charts_7_days_by_day_and_has_90_days_and_all_time(client, user, link):
    client.force_login(user)
    url = reverse("link_stats", args=[link.code])
    now = timezone.now()
    add_visits(link, 2, when=now, client_id="someone")
    week = client.get(url, {"range": "7d"})
    assert week.context["chart"]["unit"] == "day"
    assert len(week.context["chart"]["labels"]) == 7
    assert week.context["chart"]["unique_visitors"][-1] == 1
    assert client.get(url, {"range": "24h"}).context["chart"]["unit"] == "hour"
    quarter = client.get(url, {"range": "90d"})
    assert len(quarter.context["chart"]["labels"]) == 90
    html = quarter.content.decode()
    assert "Last 90 days" in html and "All time" in html
    everything = client.get(url, {"range": "all"})
    assert everything.context["time_range"].start <= link.created_at
    assert everything.context["time_range"].start > link.created_at - dt.timedelta(hours=1)
    assert everything.context["stats"]["total_clicks"] == 2


def test_all_time_of_an_old_link_is_charted_by_week(client, user, link):
    link.created_at = timezone.now() - dt.timedelta(days=800)
    link.save(update_fields=["created_at"])
    client.force_login(user)
    response = client.get(reverse("link_stats", args=[link.code]), {"range": "all"})
    assert response.status_code == 200
    assert response.context["chart"]["unit"] == "week"
    assert 114 <= len(response.context["chart"]["labels"]) <= 116


def test_a_range_the_page_refuses_is_said_not_replaced_silently(client, user, link):
    client.force_login(user)
    response = client.get(
        reverse("link_stats", args=[link.code]),
        {"range": "custom", "start": "2026-03-10", "end": "2026-03-01"},
    )
    html = response.content.decode()
    assert "The start date must be on or before the end date." in html
    assert "Showing the default period instead." in html


def test_api_buckets_on_request_and_refuses_hours_over_a_year(user, link):
    api = client_for(user)
    _one_person_three_times_a_day(link, DAY0)
    path = f"/api/v1/links/{link.code}/stats/"
    hourly = api.get(path, {"start": "2026-03-02T00:00:00Z", "end": "2026-03-09T00:00:00Z"})
    assert hourly.json()["bucket"] == "hour" and len(hourly.json()["series"]) == 168
    daily = api.get(
        path, {"start": "2026-03-02T00:00:00Z", "end": "2026-03-09T00:00:00Z", "bucket": "day"}
    ).json()
    assert daily["bucket"] == "day" and len(daily["series"]) == 7
    assert (daily["series"][0]["clicks"], daily["series"][0]["unique_visitors"]) == (3, 1)
    auto = api.get(
        path, {"start": "2024-03-02T00:00:00Z", "end": "2026-03-02T00:00:00Z", "bucket": "auto"}
    )
    assert auto.status_code == 200 and auto.json()["bucket"] == "week"
    too_many_hours = api.get(path, {"start": "2024-03-02T00:00:00Z", "end": "2026-03-02T00:00:00Z"})
    assert too_many_hours.status_code == 400
    assert "bucket=day" in too_many_hours.json()["start"][0]
