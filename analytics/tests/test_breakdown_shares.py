"""Breakdown shares are of the period's total, the rows past the limit are one "Other" row, and
every row can be asked for (issue #14)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics import selectors
from analytics.tests.factories import add_visits
from links.services.create import link_create
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

# 12 browsers: 30 + 25 + 20 + … clicks, 170 in all; the top 10 hold 163 of them.
CLICKS = {
    f"Browser {i:02d}": clicks
    for i, clicks in enumerate([30, 25, 20, 18, 16, 14, 13, 11, 9, 7, 4, 3])
}


@pytest.fixture
def link(user):
    link = link_create(user=user, long_url="https://example.com/sale", alias="sale").link
    now = timezone.now()
    for browser, clicks in CLICKS.items():
        add_visits(link, clicks, when=now, browser_type=browser)
    add_visits(link, 4, when=now, bot=True)
    return link


def _stats(link, **options):
    end = timezone.now() + timezone.timedelta(hours=1)
    return selectors.link_stats(
        link=link, start=end - timezone.timedelta(days=1), end=end, **options
    )


def test_shares_are_of_the_period_total_and_the_rest_is_other(link):
    stats = _stats(link)
    assert sum(CLICKS.values()) == stats["total_clicks"] == 170
    top = stats["browsers"][0]
    assert (top["name"], top["clicks"], top["share"]) == ("Browser 00", 30, 17.6)  # not 18.4
    assert len(stats["browsers"]) == 10
    assert stats["other"]["browsers"] == {"clicks": 7, "values": 2, "share": 4.1}
    assert stats["other"]["devices"] == {"clicks": 0, "values": 0, "share": 0.0}
    # Bots' breakdowns are shares of the bots' clicks.
    assert stats["bots"] == [{"name": "Googlebot", "clicks": 4, "share": 100.0}]


def test_no_limit_lists_every_row(link):
    stats = _stats(link, limit=None)
    assert [row["clicks"] for row in stats["browsers"]] == list(CLICKS.values())
    assert stats["other"]["browsers"]["clicks"] == 0


def test_stats_page_shows_other_and_links_to_every_row(client, user, link):
    client.force_login(user)
    url = reverse("link_stats", args=[link.code])
    html = client.get(url, {"range": "24h"}).content.decode()
    assert "17.6%" in html and "18.4%" not in html
    assert "Other (2 more)" in html
    assert "?range=24h&amp;rows=all" in html
    every = client.get(url, {"range": "24h", "rows": "all"})
    table = next(t for t in every.context["breakdowns"] if t["key"] == "browsers")
    assert [row["name"] for row in table["rows"]][-1] == "Browser 11"
    assert "Other (" not in every.content.decode()


def test_api_adds_shares_other_and_limit_all(user, link):
    api = client_for(user)
    body = api.get(f"/api/v1/links/{link.code}/stats/").json()
    assert body["browsers"][0] == {"name": "Browser 00", "clicks": 30, "share": 17.6}
    assert body["other"]["browsers"] == {"clicks": 7, "values": 2, "share": 4.1}
    every = api.get(f"/api/v1/links/{link.code}/stats/?limit=all").json()
    assert len(every["browsers"]) == 12 and every["other"]["browsers"]["clicks"] == 0
    bad = api.get(f"/api/v1/links/{link.code}/stats/?limit=many")
    assert bad.status_code == 400 and "limit" in bad.json()
