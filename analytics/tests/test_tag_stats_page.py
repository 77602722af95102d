"""A tag's stats page (/dashboard/tags/<tag>/): the link stats page's cards summed over the
signed-in person's links carrying the tag, each link's own clicks, and the way there from My
links."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics.tests.factories import add_visits
from links.services.change import link_revoke
from links.services.create import link_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def campaign(user, other_user):
    """Two of the user's links tagged "Campaign" (in two spellings), one of theirs untagged and
    another marketer's link under a tag of the same name, each with visits an hour ago; one
    person visited both tagged links."""
    when = timezone.now() - dt.timedelta(hours=1)
    first = link_create(user=user, long_url="https://ex.com/1", tags=["Campaign"]).link
    second = link_create(user=user, long_url="https://ex.com/2", tags=["campaign", "mail"]).link
    untagged = link_create(user=user, long_url="https://ex.com/3", tags=["mail"]).link
    theirs = link_create(user=other_user, long_url="https://ex.com/4", tags=["Campaign"]).link
    add_visits(first, 2, when=when)
    add_visits(first, 1, when=when, client_id="shared")
    add_visits(second, 1, when=when, client_id="shared", os_type="Windows")
    add_visits(second, 1, when=when, bot=True)
    add_visits(untagged, 5, when=when)
    add_visits(theirs, 7, when=when)
    return {"first": first, "second": second, "untagged": untagged, "theirs": theirs}


def _page(client, tag: str, **params):
    return client.get(reverse("tag_stats", args=[tag]), params)


def test_the_page_sums_the_tagged_links_and_counts_a_shared_visitor_once(logged_in, campaign):
    response = _page(logged_in, "campaign")

    assert response.status_code == 200
    stats = response.context["stats"]
    # 3 + 1 people's clicks: not the untagged link's 5 nor the other marketer's 7.
    assert (stats["total_clicks"], stats["bot_clicks"]) == (4, 1)
    assert stats["unique_visitors"] == 3  # "shared" visited both links: one person
    chart = response.context["chart"]
    assert sum(chart["clicks"]) == 4 and sum(chart["bot_clicks"]) == 1
    tables = {table["key"]: table["rows"] for table in response.context["breakdowns"]}
    assert {row["name"]: row["clicks"] for row in tables["os"]} == {"Linux": 3, "Windows": 1}
    assert [(row["name"], row["clicks"]) for row in tables["bots"]] == [("Googlebot", 1)]
    html = response.content.decode()
    assert 'data-testid="total-clicks">4<' in html
    assert 'data-testid="unique-visitors">3<' in html
    assert 'data-testid="tag-link-count">2<' in html
    assert 'id="chart-data"' in html and "js/charts.js" in html


def test_the_links_table_lists_each_tagged_link_with_its_own_period_clicks(logged_in, campaign):
    response = _page(logged_in, "Campaign")

    rows = response.context["rows"]
    assert [(row["link"], row["clicks"], row["unique_visitors"]) for row in rows] == [
        (campaign["first"], 3, 3),  # busiest first
        (campaign["second"], 1, 1),
    ]
    assert rows[1]["bot_clicks"] == 1
    html = response.content.decode()
    first = reverse("link_stats", args=[campaign["first"].code])
    assert f'href="{first}?range=7d"' in html  # its own stats page, same period
    assert campaign["untagged"].code not in html
    assert campaign["theirs"].code not in html


def test_archived_and_revoked_links_are_counted_too(logged_in, user):
    archived = link_create(user=user, long_url="https://ex.com/a", tags=["old"], archived=True)
    revoked = link_create(user=user, long_url="https://ex.com/r", tags=["old"]).link
    add_visits(archived.link, 2)
    add_visits(revoked, 1)
    link_revoke(code=revoked.code, user=user)

    response = _page(logged_in, "old")

    assert response.context["stats"]["total_clicks"] == 3
    html = response.content.decode()
    assert "Archived" in html and "Revoked" in html
    # Back to My links filtered by the tag, with archived links shown (the table has one).
    assert f'href="{reverse("dashboard")}?tag=old&amp;archived=on"' in html


def test_the_page_links_back_to_my_links_filtered_by_the_tag(logged_in, campaign):
    html = _page(logged_in, "CAMPAIGN").content.decode()

    assert f'href="{reverse("dashboard")}?tag=Campaign"' in html


def test_the_page_needs_login(client, campaign):
    response = _page(client, "campaign")

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_another_marketers_tag_is_404(client, other_user, user):
    link_create(user=user, long_url="https://ex.com/mine", tags=["secret"])
    client.force_login(other_user)

    response = _page(client, "secret")

    assert response.status_code == 404
    assert "secret" not in response.content.decode()


def test_an_unknown_tag_is_404(logged_in, campaign):
    assert _page(logged_in, "no-such-tag").status_code == 404


def test_staff_see_only_their_own_tags(client, staff_user, campaign):
    client.force_login(staff_user)

    assert _page(client, "campaign").status_code == 404
    link_create(user=staff_user, long_url="https://ex.com/staff", tags=["Campaign"])
    response = _page(client, "campaign")
    assert response.status_code == 200
    assert response.context["stats"]["total_clicks"] == 0  # not the marketers' clicks


def test_a_tag_with_a_slash_works(logged_in, user):
    link = link_create(user=user, long_url="https://ex.com/s", tags=["spring/summer"]).link
    add_visits(link, 2)

    url = reverse("tag_stats", args=["Spring/Summer"])
    assert url == "/dashboard/tags/Spring/Summer/"
    response = logged_in.get(url)
    assert response.status_code == 200
    assert response.context["tag"].name == "spring/summer"
    assert response.context["stats"]["total_clicks"] == 2
    assert logged_in.get("/dashboard/tags/spring%2Fsummer/").status_code == 200  # as the API


def test_the_period_choice_is_kept(logged_in, campaign):
    old = timezone.now() - dt.timedelta(days=20)
    add_visits(campaign["first"], 4, when=old)

    week = _page(logged_in, "campaign")
    month = _page(logged_in, "campaign", range="30d")

    assert week.context["stats"]["total_clicks"] == 4  # the default: 7 days
    assert month.context["time_range"].key == "30d"
    assert month.context["stats"]["total_clicks"] == 8
    assert month.context["chart"]["unit"] == "day"
    html = month.content.decode()
    assert 'href="?range=30d" aria-current="page"' in html
    # Each link's own page opens on the same period.
    assert f'{reverse("link_stats", args=[campaign["first"].code])}?range=30d"' in html


def test_a_custom_range_is_kept_for_the_links_pages(logged_in, campaign):
    day = timezone.localdate() - dt.timedelta(days=2)

    response = _page(
        logged_in, "campaign", range="custom", start=day.isoformat(), end=day.isoformat()
    )

    assert response.context["time_range"].key == "custom"
    assert response.context["stats"]["total_clicks"] == 0
    stats_url = response.context["rows"][0]["stats_url"]
    assert stats_url.endswith(f"?range=custom&start={day}&end={day}")


def test_a_bad_range_shows_the_default_with_its_reason(logged_in, campaign):
    response = _page(logged_in, "campaign", range="custom", start="2030-01-02", end="2030-01-01")

    assert response.status_code == 200
    assert response.context["time_range"].key == "7d"
    assert "Showing the default period instead" in response.content.decode()
    assert response.context["rows"][0]["stats_url"].endswith("?range=7d")


def test_every_row_is_kept_across_the_period_tabs(logged_in, campaign):
    html = _page(logged_in, "campaign", rows="all").content.decode()

    assert 'href="?range=30d&amp;rows=all"' in html
    assert "Show the top 10 of each" in html


def test_an_empty_period_says_no_data_yet_once(logged_in, user):
    link = link_create(user=user, long_url="https://ex.com/quiet", tags=["quiet"]).link

    response = _page(logged_in, "quiet")

    html = response.content.decode()
    assert response.context["cards"]["nothing"]
    assert html.count("No data yet") == 1
    assert "No clicks in this period yet." in html
    assert link.code in html  # still listed, with 0 clicks
    assert response.context["rows"][0]["clicks"] == 0


def test_a_tag_no_link_carries_any_more_has_an_empty_page(logged_in, user):
    link = link_create(user=user, long_url="https://ex.com/x", tags=["gone"]).link
    link.tags.clear()

    response = _page(logged_in, "gone")

    assert response.status_code == 200
    assert response.context["rows"] == []
    assert "No link carries this tag any more." in response.content.decode()


def test_the_tag_and_the_links_are_escaped(logged_in, user):
    link_create(
        user=user,
        long_url="https://ex.com/?q=<b>",
        title="<img src=x onerror=alert(1)>",
        tags=["<script>alert(1)</script>"],
    )

    response = _page(logged_in, "<script>alert(1)</script>")

    html = response.content.decode()
    assert response.status_code == 200
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    assert "<script>" not in html.split("</main>")[0]  # no inline script: the CSP allows none


def test_the_query_count_does_not_grow_with_the_links(
    logged_in, user, django_assert_max_num_queries
):
    def queries():
        with django_assert_max_num_queries(60) as captured:
            assert _page(logged_in, "many").status_code == 200
        return len(captured.captured_queries)

    for i in range(2):  # two: one link's page reads some numbers its own way
        add_visits(link_create(user=user, long_url=f"https://ex.com/{i}", tags=["many"]).link, 2)
    few = queries()
    for i in range(2, 10):
        add_visits(link_create(user=user, long_url=f"https://ex.com/{i}", tags=["many"]).link)
    assert queries() == few


# --- The way there from My links --------------------------------------------------------------


def test_my_links_links_to_the_stats_of_the_one_tag_it_is_filtered_by(logged_in, campaign):
    html = logged_in.get(reverse("dashboard"), {"tag": "CAMPAIGN"}).content.decode()

    assert 'data-testid="tag-stats-link"' in html
    assert f'href="{reverse("tag_stats", args=["Campaign"])}"' in html
    assert "Stats for this tag" in html


@pytest.mark.parametrize(
    "params",
    [{}, {"tag": ["campaign", "mail"]}, {"tag": "no-such-tag"}, {"q": "ex.com"}],
    ids=["no tag", "two tags", "an unknown tag", "searched"],
)
def test_my_links_has_no_tag_stats_link_unless_filtered_by_one_tag(logged_in, campaign, params):
    html = logged_in.get(reverse("dashboard"), params).content.decode()

    assert "Stats for this tag" not in html


def test_my_links_links_a_tag_with_a_slash(logged_in, user):
    link_create(user=user, long_url="https://ex.com/s", tags=["spring/summer"])

    html = logged_in.get(reverse("dashboard"), {"tag": "spring/summer"}).content.decode()

    assert 'href="/dashboard/tags/spring/summer/"' in html
