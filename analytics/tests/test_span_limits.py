"""Every time span a caller chooses is bounded in what it costs (security round 3, findings 2 and
8): analytics.ranges holds the rule, with its limits as settings (STATS_MAX_BUCKETS), and each
channel refuses beyond them in its own shape: the stats API and pages 400 {"start": [...]},
Bitly INVALID_ARG_*, Shlink an invalid-data problem. Before, one Bitly call of 10,000 months
walked every hour of 833 years (~47 s of CPU) and odd `unit_reference`s answered 500."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.services import api_key_create
from analytics import ranges, selectors
from analytics.models import HourlyClick
from analytics.selectors.series import _people_statement
from links.models import UrlLink
from links.services.create import link_create

pytestmark = pytest.mark.django_db

HOST = "testserver"
FUZZ = hypothesis_settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def link(user) -> UrlLink:
    made = link_create(user=user, long_url="https://example.com/spans", tags=["spans"]).link
    HourlyClick.objects.create(
        link=made, hour=timezone.now().replace(minute=0, second=0, microsecond=0), clicks=2
    )
    return made


@pytest.fixture
def bitly(user):
    key = api_key_create(user=user, name="bitly")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def get(link: UrlLink, params: dict, path: str = "clicks"):
        return client.get(f"/v4/bitlinks/{HOST}/{link.code}/{path}", params)

    return get


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def shlink(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="shlink")[1])
    return client


# --- Bitly -------------------------------------------------------------------------------------


def test_bitly_10000_months_is_refused_naming_where_clicks_begin(bitly, link):
    """The audit's request: 10,000 months reach back to the 12th century."""
    response = bitly(link, {"unit": "month", "units": 10000})

    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "INVALID_ARG_UNITS"
    assert "2000-01-01" in body["description"]


@pytest.mark.parametrize("path", ["clicks", "clicks/summary"])
def test_bitly_units_past_the_bucket_cap_are_refused_naming_it(bitly, link, settings, path):
    settings.STATS_MAX_BUCKETS = 50

    assert bitly(link, {"unit": "hour", "units": 50}, path).status_code == 200
    response = bitly(link, {"unit": "hour", "units": 51}, path)

    assert response.status_code == 400
    assert response.json()["message"] == "INVALID_ARG_UNITS"
    assert "50" in response.json()["description"]


def test_bitly_every_unit_lists_at_most_the_cap(bitly, link, settings):
    """units=-1 (since the link was made) stays an answer, cut to the newest entries."""
    settings.STATS_MAX_BUCKETS = 24
    UrlLink.objects.filter(pk=link.pk).update(created_at=timezone.now() - timedelta(days=30))

    body = bitly(link, {"unit": "hour", "units": -1}).json()

    assert len(body["link_clicks"]) == 24
    assert body["link_clicks"][0]["clicks"] == 2


@pytest.mark.parametrize(
    "reference",
    [
        "2026-03-01T25:00:00Z",
        "0001-01-01",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31",
        "9999-12-31T23:00:00-05:00",
        "2026-03-01T00:00:00+99:00",
        "1999-12-31T23:00:00Z",
        "2999-01-01T00:00:00Z",
    ],
)
@pytest.mark.parametrize("path", ["clicks", "clicks/summary"])
def test_bitly_unit_reference_out_of_range_is_invalid_arg(bitly, link, reference, path):
    for unit in ("hour", "day", "week", "month"):
        response = bitly(link, {"unit": unit, "units": 3, "unit_reference": reference}, path)

        assert response.status_code == 400, (unit, response.content)
        assert response.json()["message"] == "INVALID_ARG_UNIT_REFERENCE"


reference_text = st.one_of(
    st.text(max_size=40),
    st.builds(
        "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}".format,
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 25),
        st.integers(0, 60),
        st.integers(0, 60),
        st.one_of(
            st.just(""),
            st.just("Z"),
            st.builds(
                "{}{:02d}:{:02d}".format,
                st.sampled_from("+- "),
                st.integers(0, 99),
                st.integers(0, 99),
            ),
        ),
    ),
    st.dates().map(str),
)


@FUZZ
@given(
    unit=st.sampled_from(["hour", "day", "week", "month", "minute", "", "HOUR", "year"]),
    units=st.one_of(st.integers(-3, 20_000), st.text(max_size=8)),
    size=st.one_of(st.integers(-2, 20_000), st.just("")),
    reference=st.one_of(st.just(""), reference_text),
)
@example(unit="month", units=10000, size="", reference="")
@example(unit="day", units=3, size="", reference="9999-12-31")
def test_bitly_clicks_never_answer_500(bitly, link, unit, units, size, reference):
    params = {"unit": unit, "units": units, "size": size, "unit_reference": reference}
    for path in ("clicks", "clicks/summary"):
        response = bitly(link, params, path)
        assert response.status_code in (200, 400), (params, response.content)
        if response.status_code == 400:
            assert response.json()["message"].startswith("INVALID_ARG_"), response.content


# --- The stats API and pages -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["link", "tag"])
def test_api_series_past_the_bucket_cap_is_a_400_naming_it(api, link, settings, kind):
    settings.STATS_MAX_BUCKETS = 50
    path = f"/api/v1/links/{link.code}/stats/" if kind == "link" else "/api/v1/tags/spans/stats/"
    end = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)

    within = {"start": (end - timedelta(days=50)).isoformat(), "end": end.isoformat()}
    assert api.get(path, {**within, "bucket": "day"}).status_code == 200
    beyond = {"start": (end - timedelta(days=60)).isoformat(), "end": end.isoformat()}
    response = api.get(path, {**beyond, "bucket": "day"})

    assert response.status_code == 400
    assert list(response.json()) == ["start"]
    assert "50" in response.json()["start"][0]
    assert api.get(path, {**beyond, "bucket": "week"}).status_code == 200


def test_stats_page_custom_range_past_the_bucket_cap_names_it(client, user, link, settings):
    settings.STATS_MAX_BUCKETS = 50
    client.force_login(user)
    today = timezone.localdate()
    page = client.get(
        f"/dashboard/links/{link.code}/",
        {"range": "custom", "start": str(today - timedelta(days=59)), "end": str(today)},
    )
    assert page.status_code == 200
    assert "at most 50" in page.content.decode()
    assert page.context["time_range"].key != "custom"


api_moment = st.one_of(
    st.just(""),
    st.text(max_size=30),
    reference_text,
    st.datetimes(
        timezones=st.sampled_from([UTC, ZoneInfo("Asia/Kolkata"), ZoneInfo("Pacific/Kiritimati")])
    ).map(datetime.isoformat),
)


@FUZZ
@given(
    start=api_moment,
    end=api_moment,
    bucket=st.sampled_from(["", "hour", "day", "week", "auto", "month"]),
)
@example(start="2000-01-01T00:00:00Z", end="", bucket="day")
@example(start="0001-01-01T00:00:00+01:00", end="", bucket="week")
def test_api_stats_never_answer_500(api, link, start, end, bucket):
    params = {
        key: value for key, value in (("start", start), ("end", end), ("bucket", bucket)) if value
    }
    for path in (f"/api/v1/links/{link.code}/stats/", "/api/v1/tags/spans/stats/"):
        response = api.get(path, params)
        assert response.status_code in (200, 400), (params, response.content)


# --- Shlink ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("startDate", "0001-01-01T00:00:00+01:00"),
        ("endDate", "9999-12-31T23:00:00-05:00"),
    ],
)
def test_shlink_visit_dates_out_of_range_are_invalid_data(shlink, link, field, value):
    for path in (f"/rest/v3/short-urls/{link.code}/visits", "/rest/v3/visits/orphan"):
        response = shlink.get(path, {field: value})

        assert response.status_code == 400, (path, response.content)
        assert response["Content-Type"] == "application/problem+json"
        body = response.json()
        assert body["type"] == "https://shlink.io/api/error/invalid-data"
        assert body["invalidElements"] == [field]


@FUZZ
@given(start=api_moment, end=api_moment)
@example(start="0001-01-01T00:00:00+01:00", end="")
def test_shlink_visits_never_answer_500(shlink, link, start, end):
    params = {key: value for key, value in (("startDate", start), ("endDate", end)) if value}
    for path in (f"/rest/v3/short-urls/{link.code}/visits", "/rest/v3/visits/orphan"):
        response = shlink.get(path, params)
        assert response.status_code in (200, 400), (params, response.content)


# --- The rule itself ---------------------------------------------------------------------------


@FUZZ
@given(
    start=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
    ),
    hours=st.integers(1, 24 * 400),
    minutes=st.integers(0, 59),
    bucket=st.sampled_from(["hour", "day", "week", "month"]),
    zone=st.sampled_from(
        ["UTC", "Europe/Berlin", "Asia/Kolkata", "America/Santiago", "Australia/Lord_Howe"]
    ),
)
def test_a_series_has_as_many_entries_as_the_rule_counts(start, hours, minutes, bucket, zone):
    """What the limit counts is what a series lists, in any zone, DST changes included."""
    end = start + timedelta(hours=hours, minutes=minutes)
    with timezone.override(zone):
        entries = selectors.series(link_ids=[], start=start, end=end, bucket=bucket, people=False)
        assert len(entries) == ranges.bucket_count(start, end, bucket)


def test_the_people_of_many_buckets_are_counted_by_one_compiled_statement():
    """The backend in use takes the compiled statement (a queryset compiled per bucket cost
    ~1 ms each: 10 s of CPU for the days since 2000); test_bucket_people checks its counts."""
    from analytics.models import VisitRecord

    assert _people_statement(VisitRecord.objects.filter(is_bot=False)) is not None
