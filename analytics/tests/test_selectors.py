"""Stats reads: series in local hours with gaps filled, totals, breakdowns for people only."""

import datetime as dt

import pytest
from django.utils import timezone

from analytics import selectors, services
from analytics.models import VisitRecord
from analytics.tests.factories import add_visits
from analytics.tests.visits import GOOGLEBOT, SAFARI_IPHONE, SLACKBOT, WECHAT_ANDROID, visit_message
from links.codes import pool
from links.selectors import link_click_totals

UTC = dt.UTC
T0 = dt.datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def _at(hours: int, minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours, minutes=minutes)


@pytest.fixture
def clicked_link(make_link):
    """A link with clicks at 10:xx and 12:xx UTC on 2024-05-01 (none at 11:xx)."""
    link = make_link()
    google, hn = "https://www.google.com/search?q=x", "https://news.ycombinator.com/item"
    services.store_visits(
        messages=[
            visit_message(link, ip="115.236.0.1", at=_at(0, 5)),
            visit_message(link, ip="115.236.0.1", at=_at(0, 6), referrer=google),
            visit_message(link, ip="81.2.69.160", ua=SAFARI_IPHONE, at=_at(0, 7), referrer=hn),
            visit_message(link, ip="115.236.0.1", at=_at(2, 1)),  # the same person, two hours later
            visit_message(
                link, ip="8.8.8.8", ua=WECHAT_ANDROID, at=_at(2, 2), referrer="https://google.com/"
            ),
            visit_message(link, ip="66.249.66.1", ua=GOOGLEBOT, at=_at(0, 8)),
            visit_message(link, ip="54.1.2.3", ua=SLACKBOT, at=_at(2, 3)),
        ]
    )
    return link


@pytest.mark.django_db
def test_series_has_every_hour_with_zeros_in_the_local_time_zone(settings, clicked_link):
    settings.TIME_ZONE = "Asia/Shanghai"
    series = selectors.hourly_series(
        link_ids=[clicked_link.pk],
        start=T0 - dt.timedelta(minutes=30),
        end=T0 + dt.timedelta(hours=3),
    )
    assert [point["hour"].isoformat() for point in series] == [
        "2024-05-01T17:00:00+08:00",
        "2024-05-01T18:00:00+08:00",
        "2024-05-01T19:00:00+08:00",
        "2024-05-01T20:00:00+08:00",
    ]
    assert [(p["clicks"], p["unique_visitors"], p["bot_clicks"]) for p in series] == [
        (0, 0, 0),
        (3, 2, 1),
        (0, 0, 0),
        (2, 2, 1),
    ]


@pytest.mark.django_db
def test_series_of_all_links_sums_them(clicked_link, make_link):
    other = make_link("https://example.org/b")
    services.store_visits(messages=[visit_message(other, at=T0 + dt.timedelta(minutes=30))])
    series = selectors.hourly_series(start=T0, end=T0 + dt.timedelta(hours=1))
    assert series[0]["clicks"] == 4
    assert (
        selectors.hourly_series(link_ids=[], start=T0, end=T0 + dt.timedelta(hours=1))[0]["clicks"]
        == 0
    )


@pytest.mark.django_db
def test_link_stats_totals_and_breakdowns_count_people_only(clicked_link):
    stats = selectors.link_stats(link=clicked_link, start=T0, end=T0 + dt.timedelta(days=1))
    assert (stats["total_clicks"], stats["bot_clicks"]) == (5, 2)
    # The Hangzhou visitor came back two hours later: one visitor over the range, not two.
    assert stats["unique_visitors"] == 3
    assert sum(point["clicks"] for point in stats["series"]) == 5
    assert stats["countries"] == [
        {"name": "China", "clicks": 3, "share": 60.0, "code": "CN"},
        {"name": "United Kingdom", "clicks": 1, "share": 20.0, "code": "GB"},
        {"name": "United States", "clicks": 1, "share": 20.0, "code": "US"},
    ]
    assert stats["cities"][0] == {"name": "Hangzhou", "clicks": 3, "share": 60.0}
    assert stats["provinces"][0] == {"name": "Zhejiang", "clicks": 3, "share": 60.0}
    assert stats["browsers"] == [
        {"name": "Chrome", "clicks": 3, "share": 60.0},
        {"name": "Mobile Safari", "clicks": 1, "share": 20.0},
        {"name": "WeChat", "clicks": 1, "share": 20.0},
    ]
    assert stats["os"][0] == {"name": "Mac OS X", "clicks": 3, "share": 60.0}
    assert stats["devices"] == [
        {"name": "PC", "clicks": 3, "share": 60.0},
        {"name": "Mobile", "clicks": 2, "share": 40.0},
    ]
    assert stats["referrers"] == [
        {"name": "Direct", "clicks": 2, "share": 40.0},
        {"name": "google.com", "clicks": 2, "share": 40.0},
        {"name": "news.ycombinator.com", "clicks": 1, "share": 20.0},
    ]
    assert stats["isps"] == [
        {"name": "Unknown", "clicks": 5, "share": 100.0}
    ]  # no ASN database configured
    assert stats["bots"] == [
        {"name": "Googlebot", "clicks": 1, "share": 50.0},
        {"name": "Slackbot-LinkExpanding", "clicks": 1, "share": 50.0},
    ]


@pytest.mark.django_db
def test_link_stats_range_excludes_other_hours(clicked_link):
    stats = selectors.link_stats(link=clicked_link, start=T0, end=T0 + dt.timedelta(hours=1))
    assert (stats["total_clicks"], stats["unique_visitors"], stats["bot_clicks"]) == (3, 2, 1)
    assert len(stats["series"]) == 1


@pytest.mark.django_db
def test_link_totals_for_a_list_page_count_each_person_once(
    clicked_link, make_link, django_assert_num_queries
):
    """115.236.0.1 came back two hours later: one person, not two (as summing hours would say)."""
    quiet = make_link("https://example.org/quiet")
    with django_assert_num_queries(3):  # as many at a million visits: no visit is read
        totals = link_click_totals(link_ids=[clicked_link.pk, quiet.pk])
    assert totals == {
        clicked_link.pk: {"clicks": 5, "unique_visitors": 3, "bot_clicks": 2},
        quiet.pk: {"clicks": 0, "unique_visitors": 0, "bot_clicks": 0},
    }


@pytest.mark.django_db
def test_links_totals_give_each_link_what_its_own_stats_give(clicked_link, make_link):
    """A tag's table of links: each link apart, over the range, as its own stats page says
    (115.236.0.1 at 10:05 and 12:01 is one person); zeros for a link without clicks."""
    quiet = make_link("https://example.org/quiet")
    day = {"start": T0, "end": T0 + dt.timedelta(days=1)}
    first_hour = {"start": T0, "end": T0 + dt.timedelta(hours=1)}

    totals = selectors.links_totals(link_ids=[clicked_link.pk, quiet.pk], **day)
    in_first_hour = selectors.links_totals(link_ids=[clicked_link.pk], **first_hour)

    assert totals == {
        clicked_link.pk: {"clicks": 5, "unique_visitors": 3, "bot_clicks": 2},
        quiet.pk: {"clicks": 0, "unique_visitors": 0, "bot_clicks": 0},
    }
    own = selectors.link_stats(link=clicked_link, **first_hour)
    assert in_first_hour[clicked_link.pk] == {
        "clicks": own["total_clicks"],
        "unique_visitors": own["unique_visitors"],
        "bot_clicks": own["bot_clicks"],
    }
    assert selectors.links_totals(link_ids=[], **day) == {}


@pytest.mark.django_db
def test_links_totals_without_people_skip_the_visitor_count(
    clicked_link, django_assert_num_queries
):
    """Bitly's clicks summary wants clicks only: the distinct-people scan over the visits is
    not run for it (one grouped query on the hourly rows)."""
    day = {"start": T0, "end": T0 + dt.timedelta(days=1)}
    with django_assert_num_queries(1):
        totals = selectors.links_totals(link_ids=[clicked_link.pk], people=False, **day)
    assert totals == {clicked_link.pk: {"clicks": 5, "unique_visitors": 0, "bot_clicks": 2}}


@pytest.mark.django_db
def test_top_links_rank_by_people_and_can_be_limited_to_some_links(clicked_link, make_link):
    other = make_link("https://example.org/b")
    services.store_visits(messages=[visit_message(other, at=T0 + dt.timedelta(minutes=30))])
    day = {"start": T0, "end": T0 + dt.timedelta(days=1)}
    top = selectors.top_links(**day)
    assert [(row["link"], row["clicks"], row["bot_clicks"]) for row in top] == [
        (clicked_link, 5, 2),
        (other, 1, 0),
    ]
    just_other = (pk for pk in [other.pk])  # any iterable, even one that can be read once
    assert [row["link_id"] for row in selectors.top_links(**day, link_ids=just_other)] == [other.pk]


@pytest.mark.django_db
def test_latest_visits_and_export_rows(clicked_link):
    latest = list(selectors.latest_visits(link=clicked_link, limit=2))
    assert [v.visit_time for v in latest] == sorted(
        VisitRecord.objects.values_list("visit_time", flat=True), reverse=True
    )[:2]
    rows = list(selectors.visit_rows_for_export(link=clicked_link))
    assert len(rows) == 7
    first = dict(zip(selectors.EXPORT_FIELDS, rows[0], strict=True))
    assert first["city"] == "Hangzhou"
    assert first["visit_time"] == T0 + dt.timedelta(minutes=5)
    # The same person (115.236.0.1, same browser) keeps one pseudonym; it is not the client id.
    visitors = [dict(zip(selectors.EXPORT_FIELDS, row, strict=True))["visitor"] for row in rows]
    assert visitors[0] == visitors[1]
    stored_ids = set(VisitRecord.objects.values_list("client_id", flat=True))
    assert not set(visitors) & stored_ids


@pytest.mark.django_db
def test_code_pool_usage_counts_links_made_since(make_link):
    generated = make_link()
    make_link("https://example.org/x", alias="spring-sale")
    usage = pool.pool_usage(since=timezone.now() - dt.timedelta(hours=1))
    assert usage == {"used": 1 if generated.code_type == "pool" else 0, "links_created": 2}
    assert pool.pool_usage(since=timezone.now() + dt.timedelta(seconds=1)) == {
        "used": 0,
        "links_created": 0,
    }


@pytest.mark.parametrize(
    ("referrer", "host"),
    [
        ("", "Direct"),
        ("https://www.Google.com/search?q=1", "google.com"),
        ("android-app://com.slack/", "com.slack"),
        ("not a url", "Unknown"),
    ],
)
def test_referrer_host(referrer, host):
    assert selectors.referrer_host(referrer) == host


@pytest.mark.django_db
def test_a_country_stored_under_two_names_is_one_entry(make_link):
    """GeoIP data from two sources names some countries differently ("Russia", "Russian
    Federation"): a range across the switch shows one entry per country code."""
    link = make_link()
    add_visits(link, 2, country="Russia", country_code="RU")
    add_visits(link, 1, country="Russian Federation", country_code="RU")
    add_visits(link, 1, country="France", country_code="FR")
    now = timezone.now()
    countries = selectors.breakdowns(
        link_ids=[link.pk], start=now - dt.timedelta(hours=2), end=now + dt.timedelta(hours=1)
    )["countries"]
    assert [(c["name"], c["code"], c["clicks"]) for c in countries] == [
        ("Russia", "RU", 3),
        ("France", "FR", 1),
    ]
