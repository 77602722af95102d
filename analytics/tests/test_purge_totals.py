"""One definition of a link's clicks and unique visitors (the hourly roll-ups and the per-visitor
table): every channel that shows them says what the stats say, before and after old visits are
purged (`purge_visits` keeps the roll-ups and deletes the visits they came from)."""

import datetime as dt
import io
import re

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from accounts.services import api_key_create
from analytics import services
from analytics.models import VisitRecord
from analytics.tests.visits import GOOGLEBOT, SAFARI_IPHONE, visit_message
from links.selectors import link_export_rows

T0 = dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


@pytest.fixture
def purged_link(make_link):
    """Two people (one of them back two hours later) and a bot, long ago; then the visits are
    purged: 3 clicks by 2 people and 1 bot click, by the roll-ups alone."""
    link = make_link()
    services.store_visits(
        messages=[
            visit_message(link, ip="115.236.0.1", at=T0 + MINUTE * 5),
            visit_message(link, ip="81.2.69.160", ua=SAFARI_IPHONE, at=T0 + MINUTE * 7),
            visit_message(link, ip="115.236.0.1", at=T0 + MINUTE * 120),
            visit_message(link, ip="66.249.66.1", ua=GOOGLEBOT, at=T0 + MINUTE * 8),
        ]
    )
    call_command("purge_visits", "--older-than", "1", stdout=io.StringIO())
    assert not VisitRecord.objects.filter(link=link).exists()
    return link


def _api_key(user) -> str:
    return api_key_create(user=user, name="totals")[1]


@pytest.mark.django_db
def test_the_stats_api_counts_from_the_rollups_after_a_purge(purged_link, user):
    client = APIClient()
    client.force_authenticate(user)
    body = client.get(
        f"/api/v1/links/{purged_link.code}/stats/",
        {"start": T0.isoformat(), "end": (T0 + dt.timedelta(days=1)).isoformat()},
    ).json()
    assert (body["total_clicks"], body["unique_visitors"], body["bot_clicks"]) == (3, 2, 1)


@pytest.mark.django_db
def test_the_dashboard_list_says_what_the_stats_say_after_a_purge(purged_link, user):
    client = Client()
    client.force_login(user)
    page = client.get("/dashboard/").content.decode()
    clicks = re.search(r'data-label="Clicks"[^>]*>\s*(\d+)', page)
    people = re.search(r'data-label="Unique visitors"[^>]*>\s*(\d+)', page)
    assert clicks and people, page
    assert (clicks.group(1), people.group(1)) == ("3", "2")


@pytest.mark.django_db
def test_the_export_says_what_the_stats_say_after_a_purge(purged_link, user):
    (row,) = list(link_export_rows(user=user))
    assert (row["clicks"], row["unique_visitors"]) == (3, 2)


@pytest.mark.django_db
def test_the_links_api_says_what_the_stats_say_after_a_purge(purged_link, user):
    client = APIClient()
    client.force_authenticate(user)
    (item,) = client.get("/api/v1/links/").json()["results"]
    assert item["clicks"] == 3


@pytest.mark.django_db
def test_the_shlink_list_says_what_the_stats_say_after_a_purge(purged_link, user):
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=_api_key(user))
    (item,) = client.get("/rest/v3/short-urls").json()["shortUrls"]["data"]
    assert item["visitsSummary"] == {"total": 4, "nonBots": 3, "bots": 1}


@pytest.mark.django_db
def test_yourls_url_stats_say_what_the_stats_say_after_a_purge(purged_link, user):
    body = (
        Client()
        .get(
            "/yourls-api.php",
            {
                "action": "url-stats",
                "format": "json",
                "signature": _api_key(user),
                "shorturl": purged_link.code,
            },
        )
        .json()
    )
    assert body["link"]["clicks"] == "3"
