"""GET /api/v1/links/{code}/stats/: the hourly series and breakdowns of one link."""

from datetime import UTC, datetime, time, timedelta

import pytest
from django.utils import timezone

from analytics.models import DeviceType, HourlyClick, VisitRecord
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

BREAKDOWNS = ["countries", "provinces", "cities", "browsers", "os", "devices", "referrers"]


@pytest.fixture
def api(user):
    return client_for(user)


@pytest.fixture
def link(user):
    return UrlLinkFactory(owner=user, alias="stats-link")


def _visit(link, when, n, **fields):
    VisitRecord.objects.create(
        link=link,
        code=link.code,
        event_id=f"e{n}",
        client_id=fields.pop("client_id", f"c{n}"),
        visit_time=when,
        **fields,
    )


def test_stats_have_the_documented_shape_for_the_last_7_days(api, link):
    response = api.get(f"/api/v1/links/{link.code}/stats/")

    assert response.status_code == 200
    body = response.json()
    assert body["code"] == "stats-link"
    for key in ["total_clicks", "unique_visitors", "series", *BREAKDOWNS]:
        assert key in body
    assert body["total_clicks"] == body["unique_visitors"] == 0
    assert all(body[name] == [] for name in BREAKDOWNS)
    hours = [datetime.fromisoformat(point["hour"]) for point in body["series"]]
    # The last 7 days: today's hours so far and the 6 days before it, from local midnight.
    assert 6 * 24 < len(hours) <= 7 * 24 + 1
    assert timezone.localtime(hours[0]).time() == time.min
    assert hours[-1] <= timezone.now() < hours[-1] + timedelta(hours=1)
    assert all(set(p) >= {"hour", "clicks", "unique_visitors"} for p in body["series"])


def test_stats_count_people_per_hour_and_break_them_down(api, link):
    hour = datetime(2026, 3, 1, 10, tzinfo=UTC)
    HourlyClick.objects.create(link=link, hour=hour, clicks=3, unique_visitors=2, bot_clicks=1)
    common = {"device_type": DeviceType.MOBILE, "browser_type": "Chrome", "os_type": "Android"}
    _visit(link, hour + timedelta(minutes=1), 1, country="Germany", country_code="DE", **common)
    _visit(link, hour + timedelta(minutes=2), 2, country="Germany", country_code="DE", **common)
    _visit(link, hour + timedelta(minutes=3), 3, country="France", country_code="FR", **common)
    _visit(link, hour + timedelta(minutes=4), 4, is_bot=True, device_type=DeviceType.BOT)

    response = api.get(
        f"/api/v1/links/{link.code}/stats/",
        {"start": "2026-03-01T09:00:00Z", "end": "2026-03-01T12:00:00Z"},
    )

    assert response.status_code == 200
    body = response.json()
    assert body["total_clicks"] == 3
    assert [(p["clicks"], p["unique_visitors"]) for p in body["series"]] == [(0, 0), (3, 2), (0, 0)]
    assert [(c["name"], c["clicks"]) for c in body["countries"]] == [("Germany", 2), ("France", 1)]
    assert body["devices"] == [{"name": "Mobile", "clicks": 3, "share": 100.0}]
    assert body["browsers"] == [{"name": "Chrome", "clicks": 3, "share": 100.0}]


def test_an_offset_sent_unencoded_in_the_query_string_still_parses(api, link):
    """curl users type `+01:00`, which a query string delivers as ` 01:00`."""
    response = api.get(
        f"/api/v1/links/{link.code}/stats/?start=2026-03-01T10:00:00+01:00&end=2026-03-01T12:00:00Z"
    )

    assert response.status_code == 200
    assert len(response.json()["series"]) == 3


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("start=yesterday", "start", "Enter an ISO 8601 date and time, e.g. 2026-03-01T00:00:00Z."),
        ("end=2026-13-01", "end", "Enter an ISO 8601 date and time, e.g. 2026-03-01T00:00:00Z."),
        (
            "start=2026-03-02T00:00:00Z&end=2026-03-01T00:00:00Z",
            "start",
            "The start must be before the end.",
        ),
        (
            "start=2020-01-01T00:00:00Z&end=2026-01-01T00:00:00Z",
            "start",
            "Choose at most 366 days of hours at a time; for longer ranges ask for bucket=day, "
            "week or auto.",
        ),
        ("end=0001-01-01T00:00:00Z", "end", "Dates before 2000 hold no clicks."),
        ("end=9999-12-31T00:00:00Z", "end", "The end cannot be in the future."),
        ("limit=0", "limit", "Ensure this value is greater than or equal to 1."),
    ],
)
def test_bad_ranges_answer_400_with_a_field_message(api, link, query, field, message):
    response = api.get(f"/api/v1/links/{link.code}/stats/?{query}")

    assert response.status_code == 400
    assert response.json() == {field: [message]}


def test_stats_of_unknown_or_others_links_answer_404(api, other_user):
    theirs = UrlLinkFactory(owner=other_user)

    assert api.get("/api/v1/links/Zz9Zz9Q/stats/").status_code == 404
    assert api.get(f"/api/v1/links/{theirs.code}/stats/").status_code == 404
    assert client_for(other_user).get(f"/api/v1/links/{theirs.code}/stats/").status_code == 200


def test_totals_and_breakdowns_cover_the_same_visits_when_the_range_ends_mid_hour(api, link):
    from analytics.tests.factories import add_visits

    at = datetime(2026, 3, 1, 10, 40, tzinfo=UTC)
    add_visits(link, 1, when=at - timedelta(minutes=30))  # 10:10
    add_visits(link, 1, when=at)  # 10:40, after the requested end but in the same UTC hour
    stats = api.get(
        f"/api/v1/links/{link.code}/stats/?start=2026-03-01T10:00:00Z&end=2026-03-01T10:30:00Z"
    ).json()
    browsers = sum(row["clicks"] for row in stats["browsers"])
    assert stats["total_clicks"] == sum(point["clicks"] for point in stats["series"]) == browsers
