"""Live totals (analytics.selectors.live_totals): a click counted as soon as its visit is stored,
before the roll-up; the stats' own total once it has run; one query; the API's and the pages'
answers, each only to whoever may see the link, tag or overview."""

import datetime as dt

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import api_key_create
from analytics import selectors, services
from analytics.models import VisitRecord, utc_hour
from analytics.selectors.live import SETTLE
from analytics.tests.factories import VisitRecordFactory, add_visits
from core.api.scopes import ApiScope
from links.services.create import link_create

pytestmark = pytest.mark.django_db

HOUR = dt.timedelta(hours=1)


def _week_ago() -> dt.datetime:
    return timezone.now() - dt.timedelta(days=7)


def _page_total(link, start) -> int:
    return selectors.link_stats(link=link, start=start, end=utc_hour(timezone.now()) + HOUR)[
        "total_clicks"
    ]


def test_a_stored_visit_counts_before_the_rollup_and_the_rollup_changes_nothing(make_link):
    link = make_link()
    start = _week_ago()
    add_visits(link, 2, when=timezone.now() - dt.timedelta(days=2))  # rolled up long ago
    VisitRecordFactory(link=link)  # just stored by a flush, not yet rolled up
    VisitRecordFactory(link=link, bot=True)

    before = selectors.live_totals(link_ids=[link.pk], start=start)
    assert (before["clicks"], before["bot_clicks"]) == (3, 1)
    assert _page_total(link, start) == 2  # a reload now is behind

    services.aggregate_hourly(pairs=[(link.pk, utc_hour(timezone.now()))])
    after = selectors.live_totals(link_ids=[link.pk], start=start)
    assert (after["clicks"], after["bot_clicks"]) == (3, 1)
    assert _page_total(link, start) == after["clicks"]  # settled: what a reload shows


def test_hours_past_settling_are_read_from_the_rollup_not_the_visits(make_link):
    link = make_link()
    old = utc_hour(timezone.now() - SETTLE) - 2 * HOUR
    add_visits(link, 4, when=old + dt.timedelta(minutes=10))
    # Purged visits keep their roll-up (purge_visits): the live total still counts them.
    VisitRecord.objects.filter(link=link).delete()
    assert selectors.live_totals(link_ids=[link.pk], start=old)["clicks"] == 4
    assert selectors.live_totals(link_ids=[link.pk], start=old + HOUR)["clicks"] == 0


def test_one_query_whatever_the_scope(make_link):
    links = [make_link(f"https://example.com/{n}") for n in range(3)]
    for link in links:
        add_visits(link, 1, when=timezone.now() - dt.timedelta(days=1))
        VisitRecordFactory(link=link)
    for link_ids, expected in (([links[0].pk], 2), ([link.pk for link in links], 6), (None, 6)):
        with CaptureQueriesContext(connection) as queries:
            figures = selectors.live_totals(link_ids=link_ids, start=_week_ago())
        assert figures["clicks"] == expected
        assert len(queries) == 1, [query["sql"] for query in queries]


def test_the_api_answers_the_link_owner_and_404s_anyone_else(make_link, user, other_user):
    link = make_link()
    VisitRecordFactory(link=link)
    api = APIClient()
    api.force_authenticate(user)
    response = api.get(f"/api/v1/links/{link.code}/stats/live")
    assert response.status_code == 200
    body = response.json()
    assert (body["code"], body["clicks"], body["bot_clicks"], body["end"]) == (
        link.code,
        1,
        0,
        None,
    )
    assert response["Cache-Control"] == "no-store"

    api.force_authenticate(other_user)
    assert api.get(f"/api/v1/links/{link.code}/stats/live").status_code == 404


def test_the_api_range_and_its_refusals(make_link, user):
    link = make_link()
    add_visits(link, 2, when=timezone.now() - dt.timedelta(days=20))
    VisitRecordFactory(link=link)
    api = APIClient()
    api.force_authenticate(user)
    url = f"/api/v1/links/{link.code}/stats/live"
    assert api.get(url).json()["clicks"] == 1  # the last 7 days, as links_stats
    month = (timezone.now() - dt.timedelta(days=30)).isoformat()
    assert api.get(url, {"start": month}).json()["clicks"] == 3
    assert api.get(url, {"start": "yesterday"}).status_code == 400
    assert api.get(url, {"start": month, "end": month}).status_code == 400


def test_the_api_needs_the_stats_scope(make_link, user):
    link = make_link()
    links_only = api_key_create(user=user, name="links", scopes=[ApiScope.LINKS_READ])[1]
    stats = api_key_create(user=user, name="stats", scopes=[ApiScope.STATS_READ])[1]
    url = f"/api/v1/links/{link.code}/stats/live"
    assert Client().get(url, HTTP_AUTHORIZATION=f"Token {links_only}").status_code == 403
    assert Client().get(url, HTTP_AUTHORIZATION=f"Token {stats}").status_code == 200
    assert Client().get(url).status_code in (401, 403)


def _live_url(response) -> str:
    html = response.content.decode()
    marker = 'data-live-url="'
    assert marker in html, "the page has no live totals"
    return html.split(marker, 1)[1].split('"', 1)[0].replace("&amp;", "&")


def test_the_link_page_polls_its_own_period_and_the_answer_moves(make_link, user, other_user):
    link = make_link()
    page_client = Client()
    page_client.force_login(user)
    page = page_client.get(reverse("link_stats", args=[link.code]))
    url = _live_url(page)
    assert 'data-live="clicks" aria-live="polite"' in page.content.decode()
    assert page_client.get(url).json()["clicks"] == 0
    VisitRecordFactory(link=link)
    assert page_client.get(url).json()["clicks"] == 1

    stranger = Client()
    stranger.force_login(other_user)
    assert stranger.get(url).status_code == 404
    assert Client().get(url).status_code == 302  # to sign in


def test_a_period_that_ended_has_no_live_totals(make_link, user):
    link = make_link()
    client = Client()
    client.force_login(user)
    past = {"range": "custom", "start": "2024-05-01", "end": "2024-05-02"}
    html = client.get(reverse("link_stats", args=[link.code]), past).content.decode()
    assert "data-live-url" not in html


def test_the_tag_page_counts_only_the_tag_s_links(user, other_user):
    tagged = link_create(user=user, long_url="https://ex.com/1", tags=["Spring"]).link
    untagged = link_create(user=user, long_url="https://ex.com/2").link
    theirs = link_create(user=other_user, long_url="https://ex.com/3", tags=["Spring"]).link
    client = Client()
    client.force_login(user)
    url = _live_url(client.get(reverse("tag_stats", args=["spring"])))
    for link in (tagged, untagged, theirs):
        VisitRecordFactory(link=link)
    assert client.get(url).json()["clicks"] == 1
    assert client.get(reverse("tag_live", args=["autumn"]), {"start": "x"}).status_code == 404


def test_the_overview_is_staff_only(make_link, user, staff_user):
    VisitRecordFactory(link=make_link())
    staff = Client()
    staff.force_login(staff_user)
    url = _live_url(staff.get(reverse("overview")))
    assert staff.get(url).json()["clicks"] == 1
    marketer = Client()
    marketer.force_login(user)
    assert marketer.get(url).status_code == 403
    assert staff.get(reverse("overview_live"), {"start": "soon"}).status_code == 400
