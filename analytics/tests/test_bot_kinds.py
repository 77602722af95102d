"""Bots by name and kind, from the stored visit to the stats page, the API and the admin; and
reclassify_visits, which runs the detectors again over visits stored before an update."""

import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from analytics import selectors, services
from analytics.models import HourlyClick, VisitRecord
from analytics.tests.factories import VisitRecordFactory
from analytics.tests.visits import CHROME_MAC, GOOGLEBOT, SLACKBOT, visit_message

pytestmark = pytest.mark.django_db

UTC = dt.UTC
AT = dt.datetime(2026, 5, 4, 10, 20, tzinfo=UTC)
GPTBOT = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
    "+https://openai.com/gptbot)"
)
CURL = "curl/8.5.0"
UPTIME_ROBOT = "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)"
PLAYWRIGHT_CHROME = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/131.0.6778.33 Safari/537.36"
)


@pytest.fixture
def visited(make_link):
    """One link clicked by two people and six bots of six kinds, stored and rolled up."""
    link = make_link()
    agents = [CHROME_MAC, CHROME_MAC, GOOGLEBOT, SLACKBOT, GPTBOT, CURL, UPTIME_ROBOT]
    agents.append(PLAYWRIGHT_CHROME)
    services.store_visits(
        messages=[
            visit_message(link, ip=f"198.51.100.{n}", ua=agent, at=AT)
            for n, agent in enumerate(agents)
        ]
    )
    return link


def test_each_bot_is_stored_with_its_name_and_kind(visited):
    stored = {
        (visit.bot_name, visit.bot_kind)
        for visit in VisitRecord.objects.filter(link=visited, is_bot=True)
    }
    kinds = {kind for _, kind in stored}
    assert kinds == {"search", "social", "ai", "library", "monitoring", "automation"}
    names = {name.lower() for name, _ in stored}
    assert {"googlebot", "gptbot", "curl"} <= names
    people = VisitRecord.objects.filter(link=visited, is_bot=False)
    assert people.count() == 2
    assert set(people.values_list("bot_name", "bot_kind")) == {("", "")}


def test_stats_count_bots_by_kind_apart_from_people(visited):
    stats = selectors.link_stats(
        link=visited, start=AT - dt.timedelta(hours=1), end=AT + dt.timedelta(hours=1)
    )
    assert (stats["total_clicks"], stats["bot_clicks"]) == (2, 6)
    kinds = {entry["kind"]: (entry["name"], entry["clicks"]) for entry in stats["bot_kinds"]}
    assert kinds["search"] == ("Search engine", 1)
    assert kinds["ai"] == ("AI crawler", 1)
    assert sum(clicks for _, clicks in kinds.values()) == 6
    assert sum(entry["clicks"] for entry in stats["bots"]) == 6
    assert sum(entry["clicks"] for entry in stats["browsers"]) == 2  # people only


def test_stats_api_and_page_show_bot_kinds(client, user, visited):
    client.force_login(user)
    window = {
        "start": (AT - dt.timedelta(hours=1)).isoformat(),
        "end": (AT + dt.timedelta(hours=1)).isoformat(),
    }
    body = client.get(reverse("api-link-stats", args=[visited.code]), window).json()
    assert {entry["kind"] for entry in body["bot_kinds"]} == {
        "search", "social", "ai", "library", "monitoring", "automation"
    }  # fmt: skip
    day = AT.date().isoformat()
    page = client.get(
        reverse("link_stats", args=[visited.code]), {"range": "custom", "start": day, "end": day}
    )
    tables = {table["key"]: table["rows"] for table in page.context["breakdowns"]}
    assert {row["name"] for row in tables["bot_kinds"]} >= {"Search engine", "AI crawler"}
    assert "Bots by kind" in page.content.decode()


def test_the_latest_visits_name_each_bot_and_its_kind(client, user, visited):
    client.force_login(user)
    # Bots are listed on request (?bots=1): people only by default.
    html = client.get(reverse("link_stats", args=[visited.code]), {"bots": "1"}).content.decode()
    assert "AI crawler</span>" in html
    assert 'data-label="Device">Bot <span' not in html  # no "Bot bot" any more


def test_admin_link_page_shows_the_weeks_bots_by_kind(admin_client, make_link):
    link = make_link()
    services.store_visits(
        messages=[visit_message(link, ua=GOOGLEBOT), visit_message(link, ua=CURL)]
    )
    html = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk])).content.decode()
    assert "Bots by kind:" in html
    assert "Search engine 1" in html
    assert "HTTP library 1" in html


def test_admin_lists_visits_by_bot_kind(admin_client, visited):
    url = reverse("admin:analytics_visitrecord_changelist")
    response = admin_client.get(url, {"bot_kind__exact": "ai"})
    assert response.status_code == 200
    shown = list(response.context["cl"].queryset)
    assert [visit.bot_kind for visit in shown] == ["ai"]


def test_reclassify_visits_applies_the_detectors_to_visits_stored_before(make_link):
    """Visits stored by an older detector: a curl call counted as a person, a person as a bot."""
    link = make_link()
    curl = VisitRecordFactory(link=link, visit_time=AT, user_agent=CURL, client_id="curl-1")
    person = VisitRecordFactory(
        link=link, visit_time=AT, user_agent=CHROME_MAC, bot=True, client_id="person-1"
    )
    services.aggregate_hourly(pairs=[(link.pk, AT)])
    before = HourlyClick.objects.get(link=link)
    assert (before.clicks, before.bot_clicks) == (1, 1)

    call_command("reclassify_visits", stdout=(out := io.StringIO()))

    curl.refresh_from_db()
    person.refresh_from_db()
    assert (curl.is_bot, curl.bot_kind, curl.device_type) == (True, "library", "Bot")
    assert (person.is_bot, person.bot_kind, person.browser_type) == (False, "", "Chrome")
    after = HourlyClick.objects.get(link=link)
    assert (after.clicks, after.bot_clicks, after.unique_visitors) == (1, 1, 1)
    stats = selectors.link_stats(
        link=link, start=AT - dt.timedelta(hours=1), end=AT + dt.timedelta(hours=1)
    )
    assert stats["unique_visitors"] == 1
    assert [entry["kind"] for entry in stats["bot_kinds"]] == ["library"]
    assert "2 changed" in out.getvalue()
    assert "visits 2/2" in out.getvalue()  # the progress bar

    # Run again: nothing left to change.
    call_command("reclassify_visits", stdout=(again := io.StringIO()))
    assert "0 changed" in again.getvalue()


def test_reclassify_visits_since_leaves_older_visits_alone(make_link):
    link = make_link()
    old = VisitRecordFactory(link=link, visit_time=AT - dt.timedelta(days=3), user_agent=CURL)
    new = VisitRecordFactory(link=link, visit_time=AT, user_agent=CURL)
    call_command("reclassify_visits", since=AT.date().isoformat(), stdout=io.StringIO())
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.is_bot, new.is_bot) == (False, True)
