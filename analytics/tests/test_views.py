"""Dashboard pages: a link's stats, its CSV export, and the staff overview."""

import csv
import datetime as dt
import io

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics.tests.factories import add_visits
from links.services.create import link_create
from links.services.domains import domain_save

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(user):
    return link_create(user=user, long_url="https://example.com/campaign", alias="campaign").link


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


# --- Link stats -------------------------------------------------------------------------------


def test_stats_page_needs_login(client, link):
    response = client.get(reverse("link_stats", args=[link.code]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_stats_of_another_marketers_link_is_404(client, other_user, link):
    client.force_login(other_user)
    assert client.get(reverse("link_stats", args=[link.code])).status_code == 404
    assert client.get(reverse("link_visits_csv", args=[link.code])).status_code == 404


def test_staff_may_open_any_links_stats(staff_client, link):
    assert staff_client.get(reverse("link_stats", args=[link.code])).status_code == 200


def test_stats_page_empty_state(logged_in, link):
    html = logged_in.get(reverse("link_stats", args=[link.code])).content.decode()
    assert "No clicks in this period yet." in html
    assert "No visits yet." in html


def test_stats_page_shows_totals_chart_breakdowns_and_bots_apart(logged_in, link):
    add_visits(link, referrer="https://news.example.org/story")
    add_visits(
        link,
        os_type="Windows",
        browser_type="Firefox",
        country="France",
        country_code="FR",
        city="Paris",
    )
    add_visits(link, bot=True)
    response = logged_in.get(reverse("link_stats", args=[link.code]))
    assert response.status_code == 200
    stats = response.context["stats"]
    assert (stats["total_clicks"], stats["bot_clicks"]) == (2, 1)
    chart = response.context["chart"]
    assert sum(chart["clicks"]) == 2
    assert sum(chart["bot_clicks"]) == 1
    assert chart["unit"] == "day"  # the default 7 days
    tables = {table["key"]: table["rows"] for table in response.context["breakdowns"]}
    assert {row["name"] for row in tables["browsers"]} == {"Chrome", "Firefox"}
    assert {row["name"] for row in tables["os"]} == {"Linux", "Windows"}
    assert {row["name"] for row in tables["countries"]} == {"Germany", "France"}
    assert {row["name"] for row in tables["referrers"]} == {"news.example.org", "Direct"}
    assert [row["name"] for row in tables["bots"]] == ["Googlebot"]  # apart from people
    html = response.content.decode()
    assert 'id="chart-data"' in html
    assert "vendor/chartjs/chart.umd.min.js" in html
    assert reverse("link_visits_csv", args=[link.code]) in html


@pytest.mark.parametrize(
    "key, hours, unit, points",
    [("24h", 24, "hour", 24), ("7d", 24 * 7, "day", 7), ("30d", 24 * 30, "day", 30)],
)
def test_preset_ranges(logged_in, link, key, hours, unit, points):
    response = logged_in.get(reverse("link_stats", args=[link.code]), {"range": key})
    time_range = response.context["time_range"]
    assert time_range.key == key
    # 24 hours by the hour; days are whole local days, today's so far among them.
    span = time_range.end - time_range.start
    assert dt.timedelta(hours=hours - 24) < span <= dt.timedelta(hours=hours)
    assert response.context["chart"]["unit"] == unit
    assert len(response.context["chart"]["labels"]) == points


def test_custom_range_counts_only_its_days(logged_in, link):
    old = timezone.now() - dt.timedelta(days=40)
    add_visits(link, when=old)
    add_visits(link)
    day = timezone.localtime(old).date()
    response = logged_in.get(
        reverse("link_stats", args=[link.code]),
        {"range": "custom", "start": day.isoformat(), "end": day.isoformat()},
    )
    assert response.context["time_range"].key == "custom"
    assert response.context["stats"]["total_clicks"] == 1
    assert len(response.context["chart"]["labels"]) == 24


def test_long_custom_range_is_charted_by_day(logged_in, link):
    today = timezone.localdate()
    response = logged_in.get(
        reverse("link_stats", args=[link.code]),
        {"range": "custom", "start": (today - dt.timedelta(days=89)).isoformat(), "end": today},
    )
    chart = response.context["chart"]
    assert chart["unit"] == "day"
    assert len(chart["labels"]) == 90


@pytest.mark.parametrize(
    "params, message",
    [
        ({"range": "custom", "start": "2025-03-10"}, "needs both a start and an end"),
        ({"range": "custom", "start": "2025-03-10", "end": "2025-03-01"}, "on or before"),
        ({"range": "custom", "start": "1999-01-01", "end": "1999-01-02"}, "hold no clicks"),
        ({"range": "custom", "start": "10/03/2025", "end": "2025-03-11"}, "Enter a date like"),
        ({"range": "forever"}, "Choose 24 hours, 7 days, 30 days"),
    ],
)
def test_range_form_rejects_bad_input_and_falls_back(logged_in, link, params, message):
    response = logged_in.get(reverse("link_stats", args=[link.code]), params)
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html
    assert "Showing the default period instead." in html
    assert response.context["time_range"].key == "7d"


def test_the_period_tabs_stay_on_a_link_of_another_short_domain(logged_in, user):
    """The same alias on two domains is two links: the tabs and the custom range keep the
    page's `?domain=`, or they would open the default domain's link of that code."""
    domain_save(host="go.example.test")
    link_create(user=user, long_url="https://example.com/default", alias="twin")
    on_go = link_create(
        user=user, long_url="https://example.com/go", alias="twin", domain="go.example.test"
    ).link
    add_visits(on_go, 3)

    page = logged_in.get(reverse("link_stats", args=["twin"]), {"domain": "go.example.test"})
    html = page.content.decode()
    assert 'href="?range=30d&amp;domain=go.example.test"' in html
    assert '<input type="hidden" name="domain" value="go.example.test">' in html
    month = logged_in.get(
        reverse("link_stats", args=["twin"]), {"range": "30d", "domain": "go.example.test"}
    )
    assert month.context["link"] == on_go
    assert month.context["stats"]["total_clicks"] == 3


def test_stats_page_query_count_is_bounded(logged_in, link, django_assert_max_num_queries):
    for _ in range(5):
        add_visits(link)
    with django_assert_max_num_queries(25):
        logged_in.get(reverse("link_stats", args=[link.code]))


# --- CSV export -------------------------------------------------------------------------------


def read_csv(response) -> list[list[str]]:
    assert response.streaming
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


def test_csv_export_streams_every_visit(logged_in, link):
    (first,) = add_visits(link, when=timezone.now() - dt.timedelta(days=3))
    add_visits(link, referrer="https://t.co/abc")
    add_visits(link, bot=True)
    response = logged_in.get(reverse("link_visits_csv", args=[link.code]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert f'filename="visits-{link.code}-' in response["Content-Disposition"]
    rows = read_csv(response)
    header, data = rows[0], rows[1:]
    # The server's zone (UTC here) when the person chose none; the UTC column either way.
    assert header[:2] == ["time (UTC)", "time (UTC)"]
    assert "browser_type" in header and "is_bot" in header
    assert len(data) == 3
    stamp = first.visit_time.astimezone(dt.UTC).isoformat(timespec="seconds")
    assert data[0][:2] == [stamp, stamp]
    assert stamp.endswith("+00:00")
    assert {row[header.index("is_bot")] for row in data} == {"True", "False"}


def test_csv_export_defuses_spreadsheet_formulas(logged_in, link):
    add_visits(link, referrer='=HYPERLINK("http://evil.example")', user_agent="@SUM(1)")
    rows = read_csv(logged_in.get(reverse("link_visits_csv", args=[link.code])))
    header, row = rows[0], rows[1]
    assert row[header.index("referrer")].startswith("'=")
    assert row[header.index("user_agent")] == "'@SUM(1)"


def test_csv_export_of_a_link_without_visits_is_just_the_header(logged_in, link):
    rows = read_csv(logged_in.get(reverse("link_visits_csv", args=[link.code])))
    assert len(rows) == 1


def test_csv_export_needs_login(client, link):
    assert client.get(reverse("link_visits_csv", args=[link.code])).status_code == 302


# --- Staff overview ---------------------------------------------------------------------------


def test_overview_is_refused_to_marketers(logged_in):
    response = logged_in.get(reverse("overview"))
    assert response.status_code == 403
    assert "not allowed" in response.content.decode()


def test_overview_sends_anonymous_visitors_to_login(client):
    response = client.get(reverse("overview"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_overview_shows_clicks_top_and_newest_links_and_pool(staff_client, link, other_user):
    other = link_create(
        user=other_user, long_url="https://example.com/other", alias="other-one"
    ).link
    add_visits(link)
    add_visits(link)
    add_visits(other)
    response = staff_client.get(reverse("overview"))
    assert response.status_code == 200
    assert response.context["total_clicks"] == 3
    top = response.context["top_links"]
    assert [row["code"] for row in top] == ["campaign", "other-one"]
    newest = [row["link"].code for row in response.context["newest_links"]]
    assert newest[:2] == ["other-one", "campaign"]
    assert response.context["pool_usage"]["links_created"] == 2
    html = response.content.decode()
    assert "Code pool" in html
    assert 'data-testid="pool-unused"' in html


def test_overview_ranks_tags_by_their_links_clicks_across_workspaces(
    staff_client, user, other_user
):
    spring = link_create(user=user, long_url="https://example.com/s1", tags=["Spring", "mail"])
    spring_too = link_create(user=user, long_url="https://example.com/s2", tags=["spring"])
    theirs = link_create(user=other_user, long_url="https://example.com/o", tags=["Spring"])
    link_create(user=user, long_url="https://example.com/quiet", tags=["quiet"])
    add_visits(spring.link, 2)
    add_visits(spring_too.link, 3)
    add_visits(spring_too.link, 4, bot=True)
    add_visits(theirs.link, 1)

    response = staff_client.get(reverse("overview"))

    rows = [
        (row["name"], row["workspace"], row["links"], row["clicks"], row["bot_clicks"])
        for row in response.context["top_tags"]
    ]
    assert rows == [
        ("Spring", user.username, 2, 5, 4),  # one tag per workspace, whatever the case
        ("mail", user.username, 1, 2, 0),
        ("Spring", other_user.username, 1, 1, 0),
    ]
    assert 'data-testid="top-tags"' in response.content.decode()


def test_overview_bad_range_falls_back_with_a_message(staff_client):
    response = staff_client.get(reverse("overview"), {"range": "custom", "start": "x"})
    assert response.status_code == 200
    assert "Enter a date like" in response.content.decode()
    assert response.context["time_range"].key == "24h"


def test_navigation_shows_overview_and_admin_to_staff_only(logged_in, client, staff_user):
    html = logged_in.get(reverse("dashboard")).content.decode()
    assert reverse("overview") not in html
    client.force_login(staff_user)
    html = client.get(reverse("dashboard")).content.decode()
    assert reverse("overview") in html and reverse("admin:index") in html


def test_export_rows_come_in_chunks_without_gaps_or_repeats(link, django_assert_num_queries):
    """Keyset chunks: visits sharing one timestamp are neither skipped nor repeated."""
    from analytics.selectors import visit_rows_for_export

    same_moment = timezone.now().replace(microsecond=0)
    for _ in range(5):
        add_visits(link, when=same_moment)
    add_visits(link, when=same_moment - dt.timedelta(minutes=1))
    with django_assert_num_queries(4):  # 6 rows in chunks of 2, then one that comes back empty
        rows = list(visit_rows_for_export(link=link, chunk_size=2))
    assert len(rows) == 6
    client_ids = [row[2] for row in rows]
    assert len(set(client_ids)) == 6
    assert rows[0][0] < rows[1][0]  # oldest first


def test_a_far_future_custom_range_is_refused_with_a_message(logged_in, link):
    for url in (reverse("link_stats", args=[link.code]),):
        response = logged_in.get(
            url, {"range": "custom", "start": "9999-12-01", "end": "9999-12-31"}
        )
        assert response.status_code == 200
        assert "cannot be in the future" in response.content.decode()


def test_chart_labels_keep_the_minutes_of_half_hour_zones(settings, logged_in, link):
    """Hourly counts are UTC hours; in Asia/Kolkata they start at half past."""
    settings.TIME_ZONE = "Asia/Kolkata"
    click_time = timezone.now().replace(minute=35, second=0, microsecond=0) - dt.timedelta(hours=2)
    add_visits(link, when=click_time)
    html = logged_in.get(reverse("link_stats", args=[link.code]), {"range": "24h"}).content.decode()
    bucket = click_time.replace(minute=0).astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30)))
    assert f"{bucket:%Y-%m-%d %H:%M}" in html
    assert bucket.minute == 30


def test_an_empty_overview_says_no_clicks_once(client, staff_user):
    """A period without clicks: the chart says so, and the top links card does not repeat it."""
    client.force_login(staff_user)
    html = client.get(reverse("overview")).content.decode()
    assert html.count("No clicks in this period") == 1
    assert "The most clicked links of the period will be listed here." in html


def test_an_empty_pool_is_not_said_to_last_zero_hours(client, staff_user):
    """Pool codes used today and none left: the overview says the next create refills it."""
    from links.models import CodeType, UniqueCode
    from links.tests.factories import UrlLinkFactory

    UniqueCode.objects.all().delete()
    UrlLinkFactory(owner=staff_user, code_type=CodeType.POOL)
    client.force_login(staff_user)
    html = client.get(reverse("overview")).content.decode()
    assert "about 0 hours" not in html
    assert "the pool lasts less than an hour; the next link made refills it" in html
