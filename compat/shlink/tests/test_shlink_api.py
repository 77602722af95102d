"""The Shlink REST v3 layer (/rest/…): Shlink's shapes and problem+json errors over our services."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from accounts.services import api_key_create, api_key_revoke
from analytics import orphans
from analytics.models import OrphanVisitCount
from analytics.services import aggregate_hourly, flush_pending
from links.models import Domain, UrlLink
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi

# Committed data: the redirects these tests follow go through the production entry point, which
# recycles the database connection a cache miss used (as the links tests that call it do).
pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/rest/v3"
PERSON = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
BOT = "Googlebot/2.1 (+http://www.google.com/bot.html)"


def shlink_client(user) -> APIClient:
    """A Shlink client as our users give it one of their API keys."""
    _, raw_key = api_key_create(user=user, name="Shlink dashboard")
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw_key)
    return client


def staff_shlink_client(user) -> APIClient:
    """A Shlink client with a staff member's DRF token: an API key acts for its one workspace
    only, a token in all of them, and staff see every link with it."""
    from rest_framework.authtoken.models import Token

    client = APIClient()
    client.credentials(HTTP_X_API_KEY=Token.objects.create(user=user).key)
    return client


@pytest.fixture
def shlink(user) -> APIClient:
    return shlink_client(user)


def create(client: APIClient, **body):
    return client.post(f"{BASE}/short-urls", body, format="json")


def assert_problem(response, status: int, type_suffix: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == f"https://shlink.io/api/error/{type_suffix}"
    assert body["status"] == status
    assert body["title"] and body["detail"]
    return body


# --- Auth --------------------------------------------------------------------------------------


def test_no_key_is_a_401_missing_authentication_problem():
    response = APIClient().get(f"{BASE}/short-urls")
    assert_problem(response, 401, "missing-authentication")


def test_a_wrong_or_revoked_key_is_a_401_invalid_api_key_problem(user):
    client = APIClient()
    client.credentials(HTTP_X_API_KEY="su_not-a-key")
    assert_problem(client.get(f"{BASE}/short-urls"), 401, "invalid-api-key")
    client.credentials(HTTP_X_API_KEY="0123456789abcdef")  # not a DRF token either
    assert_problem(client.get(f"{BASE}/short-urls"), 401, "invalid-api-key")
    api_key, raw_key = api_key_create(user=user, name="old")
    api_key_revoke(user=user, key_id=api_key.pk)
    client.credentials(HTTP_X_API_KEY=raw_key)
    assert_problem(client.get(f"{BASE}/short-urls"), 401, "invalid-api-key")


def test_a_drf_token_works_as_the_api_key(user):
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token.key)
    assert client.get(f"{BASE}/short-urls").status_code == 200


def test_the_native_authorization_header_is_not_a_shlink_key(user):
    from links.tests.helpers import client_for

    assert_problem(client_for(user).get(f"{BASE}/short-urls"), 401, "missing-authentication")


# --- Create ------------------------------------------------------------------------------------


def test_create_with_every_mapped_option(shlink, user):
    response = create(
        shlink,
        longUrl="https://example.com/spring",
        customSlug="spring-sale",
        tags=["promo", "Spring"],
        validUntil="2099-06-30T23:59:59+00:00",
        maxVisits=100,
        title="Spring sale",
        forwardQuery=False,
        crawlable=False,
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["shortCode"] == "spring-sale"
    assert body["shortUrl"] == "http://testserver/spring-sale"
    assert body["longUrl"] == "https://example.com/spring"
    assert body["tags"] == ["promo", "Spring"]
    assert body["meta"] == {
        "validSince": None,
        "validUntil": "2099-06-30T23:59:59+00:00",
        "maxVisits": 100,
    }
    assert body["visitsSummary"] == {"total": 0, "nonBots": 0, "bots": 0}
    assert body["domain"] is None  # Shlink's way of saying "the default domain"
    assert body["title"] == "Spring sale"
    assert body["forwardQuery"] is False
    assert body["crawlable"] is True  # accepted, not stored: robots.txt allows every short link
    assert body["dateCreated"].endswith("+00:00")
    link = UrlLink.objects.get(code="spring-sale")
    assert (link.owner, link.max_visits, link.pass_query) == (user, 100, False)
    # The short URL redirects.
    status, headers, _ = call_wsgi("/spring-sale")
    assert (status, headers["Location"]) == ("302 Found", "https://example.com/spring")


def test_a_generated_code_when_no_slug(shlink):
    body = create(shlink, longUrl="https://example.com/plain").json()
    assert UrlLink.objects.get(code=body["shortCode"]).long_url == "https://example.com/plain"


def test_a_taken_slug_is_the_non_unique_slug_problem(shlink, other_user):
    link_create(user=other_user, long_url="https://example.com/theirs", alias="taken-one")
    body = assert_problem(
        create(shlink, longUrl="https://example.com/mine", customSlug="taken-one"),
        400,
        "non-unique-slug",
    )
    assert body["customSlug"] == "taken-one"
    assert "already in use" in body["detail"]


def test_invalid_input_is_the_invalid_data_problem_naming_shlinks_fields(shlink):
    body = assert_problem(
        create(shlink, longUrl="ftp://example.com/x", customSlug="admin"), 400, "invalid-data"
    )
    assert set(body["invalidElements"]) == {"longUrl", "customSlug"}
    assert "reserved" in body["detail"]
    body = assert_problem(create(shlink, title="no url"), 400, "invalid-data")
    assert body["invalidElements"] == ["longUrl"]


def test_find_if_exists_returns_the_existing_link_with_options(shlink, user):
    first = create(shlink, longUrl="https://example.com/a", tags=["x"], title="A").json()
    again = create(shlink, longUrl="https://example.com/a", tags=["x"], findIfExists=True).json()
    assert again["shortCode"] == first["shortCode"]
    other = create(shlink, longUrl="https://example.com/a", tags=["y"], findIfExists=True).json()
    assert other["shortCode"] != first["shortCode"]
    without = create(shlink, longUrl="https://example.com/a", tags=["x"]).json()
    assert without["shortCode"] not in (first["shortCode"], other["shortCode"])
    assert UrlLink.objects.filter(owner=user).count() == 3


def test_create_on_another_domain(shlink):
    Domain.objects.create(host="go.example.org")
    body = create(
        shlink, longUrl="https://example.com/go", customSlug="go-here", domain="go.example.org"
    ).json()
    assert body["domain"] == "go.example.org"
    assert body["shortUrl"] == "http://go.example.org/go-here"
    assert_problem(
        create(shlink, longUrl="https://example.com/go", domain="nope.example.net"),
        400,
        "invalid-data",
    )


# --- List --------------------------------------------------------------------------------------


def test_list_paginates_newest_first_with_shlinks_pagination(shlink, user, other_user):
    for i in range(3):
        link_create(user=user, long_url=f"https://example.com/{i}", alias=f"page-{i}")
    link_create(user=other_user, long_url="https://example.com/theirs", alias="not-mine")
    body = shlink.get(f"{BASE}/short-urls", {"page": 2, "itemsPerPage": 2}).json()["shortUrls"]
    assert [item["shortCode"] for item in body["data"]] == ["page-0"]
    assert body["pagination"] == {
        "currentPage": 2,
        "pagesCount": 2,
        "itemsPerPage": 2,
        "itemsInCurrentPage": 1,
        "totalItems": 3,
    }
    everything = shlink.get(f"{BASE}/short-urls", {"itemsPerPage": -1}).json()["shortUrls"]
    assert [item["shortCode"] for item in everything["data"]] == ["page-2", "page-1", "page-0"]
    first = shlink.get(f"{BASE}/short-urls", {"page": 0, "itemsPerPage": 1}).json()["shortUrls"]
    assert [item["shortCode"] for item in first["data"]] == ["page-2"]
    body = assert_problem(
        shlink.get(f"{BASE}/short-urls", {"itemsPerPage": "ten"}), 400, "invalid-data"
    )
    assert body["invalidElements"] == ["itemsPerPage"]


def test_list_search_term_tags_and_order(shlink, user):
    link_create(
        user=user, long_url="https://example.com/shoes", alias="b-shoes", tags=["sale", "red"]
    )
    link_create(user=user, long_url="https://example.com/hats", alias="a-hats", tags=["sale"])
    link_create(user=user, long_url="https://example.com/socks", alias="c-socks")

    def codes(query: str) -> list[str]:
        response = shlink.get(f"{BASE}/short-urls?{query}")
        assert response.status_code == 200, response.content
        return [item["shortCode"] for item in response.json()["shortUrls"]["data"]]

    assert codes("searchTerm=shoes") == ["b-shoes"]
    assert codes("tags[]=sale") == ["a-hats", "b-shoes"]
    assert codes("tags[]=sale&tags[]=red") == ["a-hats", "b-shoes"]  # any, Shlink's default
    assert codes("tags[]=sale&tags[]=red&tagsMode=all") == ["b-shoes"]
    assert codes("orderBy=shortCode-ASC") == ["a-hats", "b-shoes", "c-socks"]
    assert codes("orderBy=dateCreated-ASC") == ["b-shoes", "a-hats", "c-socks"]
    body = assert_problem(shlink.get(f"{BASE}/short-urls?orderBy=rating-ASC"), 400, "invalid-data")
    assert body["invalidElements"] == ["orderBy"]


def test_staff_list_every_link(user, staff_user):
    link_create(user=user, long_url="https://example.com/m", alias="marketers")
    body = staff_shlink_client(staff_user).get(f"{BASE}/short-urls").json()["shortUrls"]
    assert [item["shortCode"] for item in body["data"]] == ["marketers"]


# --- Get, edit, delete -------------------------------------------------------------------------


def test_get_one_and_someone_elses_is_not_found(shlink, user, other_user):
    link_create(user=user, long_url="https://example.com/mine", alias="mine-1")
    link_create(user=other_user, long_url="https://example.com/theirs", alias="theirs-1")
    assert shlink.get(f"{BASE}/short-urls/mine-1").json()["longUrl"] == "https://example.com/mine"
    body = assert_problem(shlink.get(f"{BASE}/short-urls/theirs-1"), 404, "short-url-not-found")
    assert body["shortCode"] == "theirs-1"
    assert 'short code "theirs-1"' in body["detail"]
    assert_problem(shlink.get(f"{BASE}/short-urls/no-such"), 404, "short-url-not-found")
    assert_problem(
        shlink.patch(f"{BASE}/short-urls/theirs-1", {"title": "x"}, format="json"),
        404,
        "short-url-not-found",
    )
    assert_problem(shlink.delete(f"{BASE}/short-urls/theirs-1"), 404, "short-url-not-found")
    assert UrlLink.objects.get(code="theirs-1").revoked_at is None


def test_edit_changes_what_the_short_url_does(shlink, user):
    link_create(user=user, long_url="https://example.com/old", alias="edit-me", tags=["a"])
    assert call_wsgi("/edit-me")[1]["Location"] == "https://example.com/old"  # cached now
    response = shlink.patch(
        f"{BASE}/short-urls/edit-me",
        {"longUrl": "https://example.com/new", "title": "New", "tags": ["b"], "maxVisits": 5},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["longUrl"], body["title"], body["tags"]) == (
        "https://example.com/new",
        "New",
        ["b"],
    )
    assert body["meta"]["maxVisits"] == 5
    assert call_wsgi("/edit-me")[1]["Location"] == "https://example.com/new"
    body = shlink.patch(
        f"{BASE}/short-urls/edit-me", {"validUntil": None, "title": None}, format="json"
    ).json()
    assert (body["meta"]["validUntil"], body["title"]) == (None, None)
    assert_problem(
        shlink.patch(
            f"{BASE}/short-urls/edit-me", {"longUrl": "javascript:alert(1)"}, format="json"
        ),
        400,
        "invalid-data",
    )


def test_delete_revokes_then_the_short_url_is_gone(shlink, user):
    link_create(user=user, long_url="https://example.com/bye", alias="bye-bye")
    response = shlink.delete(f"{BASE}/short-urls/bye-bye")
    assert response.status_code == 204
    assert call_wsgi("/bye-bye")[0] == "410 Gone"
    assert UrlLink.objects.get(code="bye-bye").revoked_at is not None
    assert_problem(shlink.get(f"{BASE}/short-urls/bye-bye"), 404, "short-url-not-found")
    assert_problem(shlink.delete(f"{BASE}/short-urls/bye-bye"), 404, "short-url-not-found")
    assert shlink.get(f"{BASE}/short-urls").json()["shortUrls"]["data"] == []


# --- Visits ------------------------------------------------------------------------------------


def store_visits() -> None:
    """What the worker does every few seconds: store the buffered visits, then the hourly sums
    the totals are read from."""
    flush_pending()
    aggregate_hourly()


def _visit(code: str, user_agent: str, referrer: str = "") -> None:
    extra = {"HTTP_USER_AGENT": user_agent, "HTTP_REFERER": referrer}
    assert call_wsgi(f"/{code}", extra=extra)[0] == "302 Found"


def test_visits_newest_first_paginated_and_without_bots(shlink, user):
    link_create(user=user, long_url="https://example.com/v", alias="visited-1")
    _visit("visited-1", PERSON, "https://news.example.net/")
    _visit("visited-1", BOT)
    _visit("visited-1", PERSON)
    store_visits()

    body = shlink.get(f"{BASE}/short-urls/visited-1/visits").json()["visits"]
    assert body["pagination"]["totalItems"] == 3
    assert [v["potentialBot"] for v in body["data"]] == [False, True, False]
    oldest = body["data"][-1]
    assert oldest["referer"] == "https://news.example.net/"
    assert oldest["userAgent"] == PERSON
    assert oldest["visitedUrl"] == "http://testserver/visited-1"
    assert oldest["visitLocation"]["isEmpty"] is True  # 127.0.0.1 is nowhere
    assert oldest["date"].endswith("+00:00")

    people = shlink.get(f"{BASE}/short-urls/visited-1/visits?excludeBots=true").json()["visits"]
    assert [v["potentialBot"] for v in people["data"]] == [False, False]
    page = shlink.get(f"{BASE}/short-urls/visited-1/visits?itemsPerPage=1&page=2").json()["visits"]
    assert [v["potentialBot"] for v in page["data"]] == [True]
    assert page["pagination"]["pagesCount"] == 3

    summary = shlink.get(f"{BASE}/short-urls/visited-1").json()["visitsSummary"]
    assert summary == {"total": 3, "nonBots": 2, "bots": 1}


def test_visits_of_someone_elses_link_are_not_found(shlink, other_user):
    link_create(user=other_user, long_url="https://example.com/t", alias="their-visits")
    assert_problem(shlink.get(f"{BASE}/short-urls/their-visits/visits"), 404, "short-url-not-found")


# --- Tags, domains, health, unknown routes ------------------------------------------------------


def test_tags_and_tag_stats(shlink, user, other_user):
    link_create(
        user=user, long_url="https://example.com/1", alias="tagged-1", tags=["promo", "b2b"]
    )
    link_create(user=user, long_url="https://example.com/2", alias="tagged-2", tags=["promo"])
    link_create(user=other_user, long_url="https://example.com/3", tags=["secret"])
    _visit("tagged-1", PERSON)
    _visit("tagged-2", BOT)
    store_visits()
    assert shlink.get(f"{BASE}/tags").json()["tags"]["data"] == ["b2b", "promo"]
    stats = {row["tag"]: row for row in shlink.get(f"{BASE}/tags/stats").json()["tags"]["data"]}
    assert stats["promo"] == {
        "tag": "promo",
        "shortUrlsCount": 2,
        "visitsSummary": {"total": 2, "nonBots": 1, "bots": 1},
    }
    assert stats["b2b"]["shortUrlsCount"] == 1


def test_domains_default_first_with_redirects(staff_user):
    """With their redirects for those who manage domains (links/tests/test_domain_listing.py:
    others get nulls, and only the domains they may use)."""
    Domain.objects.create(host="go.example.org", not_found_redirect="https://example.org/404")
    body = staff_shlink_client(staff_user).get(f"{BASE}/domains").json()["domains"]
    assert body["data"] == [
        {
            "domain": "testserver",
            "isDefault": True,
            "redirects": {
                "baseUrlRedirect": None,
                "regular404Redirect": None,
                "invalidShortUrlRedirect": None,
            },
        },
        {
            "domain": "go.example.org",
            "isDefault": False,
            "redirects": {
                "baseUrlRedirect": None,
                "regular404Redirect": None,
                "invalidShortUrlRedirect": "https://example.org/404",
            },
        },
    ]
    assert body["defaultRedirects"]["baseUrlRedirect"] is None


@pytest.mark.parametrize("path", ["/rest/health", "/rest/v3/health"])
def test_health_needs_no_key(path):
    response = APIClient().get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/health+json"
    body = response.json()
    assert body["status"] == "pass"
    assert body["version"] == "5.0.0"  # the web UI's features up to 5.0 (views.SHLINK_API_VERSION)


def test_visits_overview_counts_the_callers_short_urls(shlink, user, other_user):
    link_create(user=user, long_url="https://example.com/1", alias="over-1")
    link_create(user=user, long_url="https://example.com/2", alias="over-2")
    link_create(user=other_user, long_url="https://example.com/3", alias="over-3")
    for code, agent in (
        ("over-1", PERSON),
        ("over-2", BOT),
        ("over-2", PERSON),
        ("over-3", PERSON),
    ):
        _visit(code, agent)
    store_visits()
    overview = shlink.get(f"{BASE}/visits").json()["visits"]
    assert overview["nonOrphanVisits"] == {"total": 3, "nonBots": 2, "bots": 1}
    assert overview["orphanVisits"] == {"total": 0, "nonBots": 0, "bots": 0}
    shlink.delete(f"{BASE}/short-urls/over-2")  # deleted: its visits go with it, as in Shlink
    overview = shlink.get(f"{BASE}/visits").json()["visits"]
    assert overview["nonOrphanVisits"] == {"total": 1, "nonBots": 1, "bots": 0}


# --- Orphan visits -----------------------------------------------------------------------------


def _orphan(path: str, host: str = "testserver", referrer: str = "") -> None:
    """A request through the production entry point that reaches no link (a 404)."""
    extra = {"HTTP_HOST": host, "HTTP_USER_AGENT": PERSON, "HTTP_REFERER": referrer}
    assert call_wsgi(path, extra=extra)[0].startswith("404")


def _orphan_visits(client: APIClient, **params) -> dict:
    response = client.get(f"{BASE}/visits/orphan", params)
    assert response.status_code == 200, response.content
    return response.json()["visits"]


@pytest.fixture
def orphan_traffic(user):
    """Requests that reached no link, written as the web processes write them: three for an
    unknown code (from a newsletter), one for a short domain's bare root, one for a host that is
    none of ours; a click on a real link beside them is no orphan."""
    domain_save(host="go.example.test")
    link_create(user=user, long_url="https://example.com/real", alias="real-one")
    for _ in range(3):
        _orphan("/old-campaign", referrer="https://news.example/post")
    _orphan("/", host="go.example.test")
    _orphan("/real-one", host="stranger.example.test")
    _visit("real-one", PERSON)
    orphans.flush_orphans()
    store_visits()


def test_staff_see_orphan_visits_in_the_overview(staff_user, orphan_traffic):
    overview = staff_shlink_client(staff_user).get(f"{BASE}/visits").json()["visits"]
    assert overview["orphanVisits"] == {"total": 5, "nonBots": 5, "bots": 0}
    assert overview["orphanVisitsCount"] == 5
    assert overview["nonOrphanVisits"] == {"total": 1, "nonBots": 1, "bots": 0}


def test_staff_list_each_counted_orphan_visit_with_its_type(staff_user, orphan_traffic):
    body = _orphan_visits(shlink_client(staff_user))
    assert body["pagination"] == {
        "currentPage": 1,
        "pagesCount": 1,
        "itemsPerPage": 5000,
        "itemsInCurrentPage": 5,
        "totalItems": 5,
    }
    visits = body["data"]
    hour = OrphanVisitCount.objects.values_list("hour", flat=True).first()
    assert sorted(v["visitedUrl"] for v in visits) == [
        "http://go.example.test/",
        "http://stranger.example.test/real-one",
        "http://testserver/old-campaign",
        "http://testserver/old-campaign",
        "http://testserver/old-campaign",
    ]
    newsletter = next(v for v in visits if v["visitedUrl"].endswith("/old-campaign"))
    assert newsletter == {
        "referer": "https://news.example/post",
        "date": hour.strftime("%Y-%m-%dT%H:00:00+00:00"),  # the hour it was counted in
        "userAgent": "",  # counts keep no User-Agent
        "visitLocation": None,
        "potentialBot": False,
        "visitedUrl": "http://testserver/old-campaign",
        "redirectUrl": None,
        "type": "invalid_short_url",
    }
    types = {v["visitedUrl"]: v["type"] for v in visits}
    assert types["http://go.example.test/"] == "base_url"
    assert types["http://stranger.example.test/real-one"] == "regular_404"

    by_type = _orphan_visits(
        shlink_client(staff_user), type="invalid_short_url", excludeBots="true"
    )
    assert by_type["pagination"]["totalItems"] == 3
    assert {v["type"] for v in by_type["data"]} == {"invalid_short_url"}
    roots = _orphan_visits(shlink_client(staff_user), type="base_url")["data"]
    assert [v["visitedUrl"] for v in roots] == ["http://go.example.test/"]


def test_orphan_visits_page_newest_hour_first_and_filter_by_date(staff_user, orphan_traffic):
    # An older hour's counts: the unknown host's visit, moved two days back.
    two_days_ago = OrphanVisitCount.objects.get(kind="unknown_host").hour - timedelta(days=2)
    OrphanVisitCount.objects.filter(kind="unknown_host").update(hour=two_days_ago)
    for _ in range(2):
        _orphan("/typo-link")
    orphans.flush_orphans()
    client = shlink_client(staff_user)

    pages = [_orphan_visits(client, page=number, itemsPerPage=2) for number in (1, 2, 3, 4)]
    assert [p["pagination"]["itemsInCurrentPage"] for p in pages] == [2, 2, 2, 1]
    assert {p["pagination"]["pagesCount"] for p in pages} == {4}
    assert {p["pagination"]["totalItems"] for p in pages} == {7}
    paged = [v for p in pages for v in p["data"]]
    assert paged == _orphan_visits(client)["data"]  # the pages add up to the whole list
    assert paged[-1]["visitedUrl"] == "http://stranger.example.test/real-one"  # oldest last
    assert paged[-1]["date"] == two_days_ago.strftime("%Y-%m-%dT%H:00:00+00:00")
    assert _orphan_visits(client, page=5, itemsPerPage=2)["data"] == []

    recent = _orphan_visits(client, startDate=(two_days_ago + timedelta(hours=1)).isoformat())
    assert recent["pagination"]["totalItems"] == 6
    assert "http://stranger.example.test/real-one" not in {v["visitedUrl"] for v in recent["data"]}
    old = _orphan_visits(client, endDate=(two_days_ago + timedelta(minutes=30)).isoformat())
    assert [v["type"] for v in old["data"]] == ["regular_404"]


def test_paths_past_the_per_process_limit_are_listed_without_their_url(staff_user, settings):
    settings.ORPHAN_VISITS_MAX_KEYS = 1
    for path in ("/first", "/second", "/third"):
        _orphan(path)
    orphans.flush_orphans()
    visits = _orphan_visits(shlink_client(staff_user))["data"]
    assert sorted(v["visitedUrl"] or "" for v in visits) == ["", "", "http://testserver/first"]


def test_orphan_visits_are_staffs_others_see_none(shlink, orphan_traffic):
    overview = shlink.get(f"{BASE}/visits").json()["visits"]
    assert overview["orphanVisits"] == {"total": 0, "nonBots": 0, "bots": 0}
    assert overview["orphanVisitsCount"] == 0
    body = _orphan_visits(shlink)
    assert body["data"] == []
    assert body["pagination"]["totalItems"] == 0


def test_orphan_visits_refuse_an_unknown_type_or_date(staff_user):
    client = shlink_client(staff_user)
    body = assert_problem(
        client.get(f"{BASE}/visits/orphan?type=valid_short_url"), 400, "invalid-data"
    )
    assert "base_url" in str(body)
    assert_problem(client.get(f"{BASE}/visits/orphan?startDate=yesterday"), 400, "invalid-data")
    assert_problem(client.get(f"{BASE}/visits/orphan?excludeBots=maybe"), 400, "invalid-data")
    assert APIClient().get(f"{BASE}/visits/orphan").status_code == 401
    posted = client.post(f"{BASE}/visits/orphan")  # a method the route does not take
    assert posted.status_code == 405
    assert posted["Content-Type"] == "application/problem+json"


def test_mercure_is_not_configured(shlink):
    assert_problem(shlink.get(f"{BASE}/mercure-info"), 501, "mercure-not-configured")


def test_unknown_routes_under_rest_are_shlinks_not_found(shlink):
    assert_problem(shlink.get(f"{BASE}/short-urls/x/qr-code"), 404, "not-found")
    assert_problem(APIClient().post("/rest/v2/whatever"), 404, "not-found")


def test_methods_and_rate_limits_are_problems_too(shlink, settings):
    response = shlink.put(f"{BASE}/short-urls", {}, format="json")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/problem+json"
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "api_read": "2/min",
        },
    }
    statuses = [shlink.get(f"{BASE}/tags").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    limited = shlink.get(f"{BASE}/tags")
    assert limited["Content-Type"] == "application/problem+json"
    assert int(limited["Retry-After"]) > 0


# --- The reserved path -------------------------------------------------------------------------


def test_rest_is_no_alias_and_never_a_short_code(user):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="reserved"):
        link_create(user=user, long_url="https://example.com/r", alias="rest")
    with pytest.raises(ValidationError, match="reserved"):
        link_create(user=user, long_url="https://example.com/r", alias="REST")
    # The fast path leaves /rest/… to Django: Shlink's answers, not a redirect or the 404 page.
    status, headers, _ = call_wsgi("/rest/health")
    assert status == "200 OK"
    assert headers["Content-Type"] == "application/health+json"
    status, headers, _ = call_wsgi("/rest")
    assert status.startswith("301")
    assert headers["Location"].endswith("/rest/")


# --- Browsers on another origin (Shlink's web client) ------------------------------------------


def test_cors_preflight_needs_no_key_and_answers_carry_allow_origin(shlink):
    preflight = APIClient().options(
        f"{BASE}/short-urls/some-code",
        HTTP_ORIGIN="https://app.shlink.io",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="PATCH",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-api-key, content-type",
    )
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == "*"
    assert "PATCH" in preflight["Access-Control-Allow-Methods"]
    assert "X-Api-Key" in preflight["Access-Control-Allow-Headers"]
    listed = shlink.get(f"{BASE}/short-urls", HTTP_ORIGIN="https://app.shlink.io")
    assert listed["Access-Control-Allow-Origin"] == "*"
    refused = APIClient().get(f"{BASE}/short-urls", HTTP_ORIGIN="https://app.shlink.io")
    assert refused.status_code == 401
    assert refused["Access-Control-Allow-Origin"] == "*"  # the dashboard can show why
