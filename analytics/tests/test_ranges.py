"""The stats page and the stats API accept and refuse the same ranges (analytics.ranges)."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from analytics import ranges
from analytics.api.serializers import StatsQuerySerializer
from analytics.forms import StatsRangeForm
from analytics.tests.factories import add_visits
from links.services.create import link_create

TODAY = timezone.localdate()


def _day(offset: int) -> dt.date:
    return TODAY + dt.timedelta(days=offset)


CASES = [
    pytest.param(dt.date(2024, 1, 1), dt.date(2024, 12, 31), True, id="366-day leap year"),
    pytest.param(dt.date(2024, 1, 1), dt.date(2025, 1, 1), True, id="367 days, by week"),
    pytest.param(dt.date(1999, 12, 30), dt.date(2000, 1, 2), False, id="before 2000"),
    pytest.param(dt.date(2000, 1, 1), dt.date(2000, 1, 2), True, id="first days of 2000"),
    pytest.param(_day(-3), _day(0), True, id="up to today"),
    pytest.param(_day(5), _day(9), False, id="in the future"),
    pytest.param(dt.date(2024, 5, 2), dt.date(2024, 5, 1), False, id="start after end"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("first", "last", "accepted"), CASES)
def test_the_page_and_the_api_agree(user, first, last, accepted):
    """A custom range of whole days on the page is [first 00:00, last + 1 day 00:00) in the API,
    bucketed as the page does (`bucket=auto`)."""
    form = StatsRangeForm({"range": "custom", "start": first, "end": last})
    assert form.is_valid() is accepted, form.errors

    link = link_create(user=user, long_url="https://example.com/ranges").link
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    tz = timezone.get_current_timezone()
    start = dt.datetime.combine(first, dt.time.min, tzinfo=tz)
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time.min, tzinfo=tz)
    response = api.get(
        f"/api/v1/links/{link.code}/stats/",
        {"start": start.isoformat(), "end": end.isoformat(), "bucket": "auto"},
    )
    assert (response.status_code == 200) is accepted, response.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "now",
    [
        dt.datetime(2026, 3, 10, 14, 20, tzinfo=dt.UTC),  # mid-afternoon
        dt.datetime(2026, 3, 10, 23, 40, tzinfo=dt.UTC),  # the next hour is tomorrow's
        dt.datetime(2026, 3, 10, 0, 5, tzinfo=dt.UTC),  # just after midnight
    ],
)
def test_without_a_choice_both_show_the_last_7_days_as_7_days(user, now, settings):
    """The "Last 7 days" are 7 day buckets on the page's chart and in the API's `bucket=day`, from
    the same local midnight (it was 168 hours back from the next hour: 8 days, one partial)."""
    settings.TIME_ZONE = "UTC"
    page = StatsRangeForm(default="7d").time_range(now)
    query = StatsQuerySerializer(data={"end": now.isoformat(), "bucket": "day"})
    assert query.is_valid(), query.errors
    api = query.validated_data
    assert page.start == api["start"]
    assert ranges.bucket_count(page.start, page.end, "day") == 7
    assert ranges.bucket_count(api["start"], api["end"], "day") == 7
    assert timezone.localtime(page.start).time() == dt.time.min


def test_the_day_presets_chart_as_many_bars_as_days(logged_in_user_client):
    client, link = logged_in_user_client
    add_visits(link, when=timezone.now())
    for key, days in [("7d", 7), ("30d", 30), ("90d", 90)]:
        response = client.get(reverse("link_stats", args=[link.code]), {"range": key})
        chart = response.context["chart"]
        assert chart["unit"] == "day"
        assert len(chart["labels"]) == days, key
        assert chart["labels"][-1] == f"{timezone.localdate():%Y-%m-%d}"
        assert sum(chart["clicks"]) == 1
    api = APIClient()
    api.force_authenticate(link.owner)
    body = api.get(f"/api/v1/links/{link.code}/stats/", {"bucket": "day"}).json()
    assert len(body["series"]) == 7
    assert body["total_clicks"] == 1


@pytest.fixture
def logged_in_user_client(client, user):
    client.force_login(user)
    return client, link_create(user=user, long_url="https://example.com/seven").link
