"""The stats page and the stats API accept and refuse the same ranges (analytics.ranges)."""

import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from analytics.api.serializers import StatsQuerySerializer
from analytics.forms import StatsRangeForm
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


def test_without_a_choice_both_show_the_last_7_days():
    page = StatsRangeForm(default="7d").time_range()
    query = StatsQuerySerializer(data={})
    assert query.is_valid()
    api_days = (query.validated_data["end"] - query.validated_data["start"]).days
    assert round(page.days) == api_days == 7
