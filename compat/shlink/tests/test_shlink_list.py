"""GET /rest/v3/short-urls with every control Shlink's web UI offers: its orders, tag modes and
filters (links.selectors.link_list under them, the one list of orders: LINK_ORDERS)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from compat.shlink.tests.test_shlink_api import BASE, assert_problem, shlink_client
from links.models import UrlLink
from links.services.create import link_create
from links.services.domains import domain_save

pytestmark = pytest.mark.django_db


@pytest.fixture
def shlink(user):
    return shlink_client(user)


def _codes(client, **params) -> list[str]:
    response = client.get(f"{BASE}/short-urls", params)
    assert response.status_code == 200, response.content
    return [item["shortCode"] for item in response.json()["shortUrls"]["data"]]


# Shlink's orderBy → the links in the order expected (`four`, conftest.py). Text compares in
# lowercase (`Zebra` after `mango`, `Cherry` after `banana`); an untitled link sorts as "",
# first; visits are people's and bots' (A 6, D 4, B 3, C 2), nonBotVisits people's only (B 3,
# C 2, A 1, D 0).
ORDERS = {
    "dateCreated-ASC": "ABCD",
    "dateCreated-DESC": "DCBA",
    "shortCode-ASC": "CADB",
    "shortCode-DESC": "BDAC",
    "longUrl-ASC": "BDCA",
    "longUrl-DESC": "ACDB",
    "title-ASC": "CDAB",
    "title-DESC": "BADC",
    "visits-ASC": "CBDA",
    "visits-DESC": "ADBC",
    "nonBotVisits-ASC": "DACB",
    "nonBotVisits-DESC": "BCAD",
}


@pytest.mark.parametrize("order_by", ORDERS)
def test_every_order_shlink_offers(shlink, four, order_by):
    expected = [four[name].code for name in ORDERS[order_by]]
    assert _codes(shlink, orderBy=order_by) == expected


def test_the_orders_are_all_told_apart_by_the_fixture():
    assert len(set(ORDERS.values())) == len(ORDERS)


def test_no_order_is_newest_first_and_a_bare_field_is_ascending_as_in_shlink(shlink, four):
    assert _codes(shlink) == [four[name].code for name in "DCBA"]
    assert _codes(shlink, orderBy="title") == [four[name].code for name in "CDAB"]
    assert _codes(shlink, orderBy="visits-desc") == [four[name].code for name in "ADBC"]


@pytest.mark.parametrize("order_by", ["rating-ASC", "title-UP", "-DESC", "shortCode-ASC-DESC"])
def test_an_order_shlink_does_not_have_is_invalid_data(shlink, order_by):
    body = assert_problem(
        shlink.get(f"{BASE}/short-urls", {"orderBy": order_by}), 400, "invalid-data"
    )
    assert body["invalidElements"] == ["orderBy"]
    assert "nonBotVisits" in body["detail"]


@pytest.mark.parametrize("order_by", ["title-ASC", "title-DESC", "visits-ASC", "longUrl-DESC"])
def test_ties_come_newest_first_and_pages_neither_repeat_nor_skip(shlink, user, order_by):
    """Links that sort alike (one title, one long URL, no clicks) keep one order, the newest
    first, whichever the direction: page after page lists each once."""
    codes = []
    for n in range(5):
        made = link_create(
            user=user, long_url="https://example.com/same", alias=f"tie-{n}", title="Same"
        )
        codes.append(made.link.code)
    newest_first = codes[::-1]
    assert _codes(shlink, orderBy=order_by) == newest_first
    pages = [_codes(shlink, orderBy=order_by, itemsPerPage=2, page=page) for page in (1, 2, 3)]
    assert [code for page in pages for code in page] == newest_first


@pytest.fixture
def tagged(user) -> dict[str, str]:
    made = {
        "both": link_create(
            user=user, long_url="https://example.com/1", alias="both", tags=["sale", "Red"]
        ),
        "sale": link_create(
            user=user, long_url="https://example.com/2", alias="sale-only", tags=["sale"]
        ),
        "red": link_create(
            user=user, long_url="https://example.com/3", alias="red-only", tags=["red"]
        ),
        "none": link_create(user=user, long_url="https://example.com/4", alias="untagged"),
    }
    return {name: result.link.code for name, result in made.items()}


def test_tags_mode_any_is_shlinks_default(shlink, tagged):
    """Two tags without a mode: a link with either (once, with both), as Shlink lists them."""
    two = {"tags[]": ["sale", "RED"], "orderBy": "shortCode-ASC"}
    expected = sorted([tagged["both"], tagged["sale"], tagged["red"]])
    assert _codes(shlink, **two) == expected
    assert _codes(shlink, **two, tagsMode="any") == expected
    response = shlink.get(f"{BASE}/short-urls", {**two, "tagsMode": "any"})
    assert response.json()["shortUrls"]["pagination"]["totalItems"] == 3


def test_tags_mode_all(shlink, tagged):
    assert _codes(shlink, **{"tags[]": ["sale", "red"]}, tagsMode="all") == [tagged["both"]]
    assert _codes(shlink, **{"tags[]": ["sale"]}, tagsMode="all", orderBy="shortCode-ASC") == [
        tagged["both"],
        tagged["sale"],
    ]


def test_an_unknown_tags_mode_is_invalid_data(shlink):
    body = assert_problem(
        shlink.get(f"{BASE}/short-urls", {"tags[]": "x", "tagsMode": "some"}), 400, "invalid-data"
    )
    assert body["invalidElements"] == ["tagsMode"]


def test_exclude_tags_leaves_out_the_links_with_any_of_them_by_default(shlink, tagged):
    """Shlink 4.6's excludeTags[]: without a mode (or `any`), a link carrying either tag is
    left out, any case; untagged links stay."""
    expected = [tagged["none"]]
    assert _codes(shlink, **{"excludeTags[]": ["SALE", "red"]}) == expected
    assert _codes(shlink, **{"excludeTags[]": ["sale", "red"]}, excludeTagsMode="any") == expected
    response = shlink.get(f"{BASE}/short-urls", {"excludeTags[]": ["sale", "red"]})
    assert response.json()["shortUrls"]["pagination"]["totalItems"] == 1


def test_exclude_tags_mode_all_leaves_out_only_the_links_with_every_one(shlink, tagged):
    both = {"excludeTags[]": ["sale", "red"], "excludeTagsMode": "all", "orderBy": "shortCode-ASC"}
    assert _codes(shlink, **both) == sorted([tagged["sale"], tagged["red"], tagged["none"]])


def test_tags_and_excluded_tags_together(shlink, tagged):
    """With sale, without red: Shlink's example of both filters on one list."""
    assert _codes(shlink, **{"tags[]": ["sale"], "excludeTags[]": ["red"]}) == [tagged["sale"]]


def test_an_unknown_exclude_tags_mode_is_invalid_data(shlink):
    response = shlink.get(f"{BASE}/short-urls", {"excludeTags[]": "x", "excludeTagsMode": "none"})
    body = assert_problem(response, 400, "invalid-data")
    assert body["invalidElements"] == ["excludeTagsMode"]


def test_exclude_past_valid_until_and_max_visits_reached(shlink, user):
    """excludePastValidUntil leaves out the links whose expiry has passed, not those still
    running or without one; excludeMaxVisitsReached those whose visits are used up."""
    link_create(user=user, long_url="https://example.com/open", alias="open-one")
    link_create(
        user=user,
        long_url="https://example.com/later",
        alias="ends-later",
        expires_at=timezone.now() + timedelta(days=1),
    )
    link_create(
        user=user,
        long_url="https://example.com/past",
        alias="ended",
        expires_at=timezone.now() + timedelta(days=1),
    )
    UrlLink.objects.filter(code="ended").update(expires_at=timezone.now() - timedelta(minutes=1))
    used_up = link_create(
        user=user, long_url="https://example.com/capped", alias="used-up", max_visits=2
    ).link
    UrlLink.objects.filter(pk=used_up.pk).update(visits_used=2)
    order = {"orderBy": "shortCode-ASC"}
    assert _codes(shlink, **order) == ["ended", "ends-later", "open-one", "used-up"]
    assert _codes(shlink, **order, excludePastValidUntil="true") == [
        "ends-later",
        "open-one",
        "used-up",
    ]
    assert _codes(shlink, **order, excludeMaxVisitsReached="true") == [
        "ended",
        "ends-later",
        "open-one",
    ]
    both = {"excludePastValidUntil": "true", "excludeMaxVisitsReached": "true"}
    assert _codes(shlink, **order, **both) == ["ends-later", "open-one"]
    body = assert_problem(
        shlink.get(f"{BASE}/short-urls", {"excludePastValidUntil": "maybe"}), 400, "invalid-data"
    )
    assert body["invalidElements"] == ["excludePastValidUntil"]


def test_start_and_end_date_keep_the_links_created_between(shlink, user):
    """Both ends included; ISO 8601 with an offset as the web UI sends them (a `+` encoded),
    with `Z`, or a date alone."""
    now = timezone.now().replace(microsecond=0)
    for code, days_ago in [("month-old", 30), ("week-old", 7), ("today", 0)]:
        link = link_create(user=user, long_url=f"https://example.com/{code}", alias=code).link
        UrlLink.objects.filter(pk=link.pk).update(created_at=now - timedelta(days=days_ago))
    week_ago = now - timedelta(days=7)
    assert _codes(shlink, startDate=week_ago.isoformat()) == ["today", "week-old"]
    assert _codes(shlink, endDate=week_ago.isoformat()) == ["week-old", "month-old"]
    assert _codes(
        shlink,
        startDate=(now - timedelta(days=10)).isoformat().replace("+00:00", "Z"),
        endDate=(now - timedelta(days=1)).astimezone(timezone.get_fixed_timezone(120)).isoformat(),
    ) == ["week-old"]
    assert _codes(shlink, startDate=(now + timedelta(days=2)).date().isoformat()) == []


@pytest.mark.parametrize("name", ["startDate", "endDate"])
def test_a_bad_date_is_invalid_data_naming_it(shlink, name):
    body = assert_problem(
        shlink.get(f"{BASE}/short-urls", {name: "last week"}), 400, "invalid-data"
    )
    assert body["invalidElements"] == [name]


def test_the_domain_filter_lists_one_domains_links_and_default_means_the_default_one(shlink, user):
    """Shlink 4.3's list filter, which the web UI's domains page links to ("Short URLs" on a
    domain: ?domain=DEFAULT for the default one)."""
    domain_save(host="go.example.test")
    link_create(user=user, long_url="https://example.com/a", alias="on-default")
    link_create(
        user=user, long_url="https://example.com/b", alias="on-go", domain="go.example.test"
    )
    assert _codes(shlink, domain="DEFAULT") == ["on-default"]
    assert _codes(shlink, domain="testserver") == ["on-default"]  # the default one's own host
    assert _codes(shlink, domain="go.example.test") == ["on-go"]
    assert _codes(shlink, domain="nope.example.net") == []
    assert sorted(_codes(shlink)) == ["on-default", "on-go"]
