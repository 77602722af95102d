"""Shlink REST v3's visit lists by tag, domain and "every short URL", and its visit deletes
(DELETE …/short-urls/{code}/visits, DELETE …/visits/orphan) through analytics' services: after
a delete every count the product shows for the link says 0, and other links keep theirs."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import api_key_create
from analytics.models import (
    DailyBreakdown,
    HourlyBreakdown,
    HourlyClick,
    LinkVisitor,
    OrphanKind,
    OrphanVisitCount,
    VisitRecord,
    utc_hour,
)
from analytics.tests.factories import add_visits
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.factories import UserFactory
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

BASE = "/rest/v3"


def shlink(user, workspace=None) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="s", workspace=workspace)[1])
    return client


def _problem(response, status: int, type_: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == type_ and body["status"] == status
    return body


def _visits(client: APIClient, path: str, **params) -> dict:
    response = client.get(f"{BASE}{path}", params)
    assert response.status_code == 200, response.content
    return response.json()["visits"]


@pytest.fixture
def traffic(user, other_user):
    """Mine: `promo-a` (tag promo, 2 people + 1 bot), `plain-b` (1 person) and `go-c` on the
    extra domain go.example.test (tag promo, 1 person); theirs: `theirs` (tag promo, 3)."""
    domain_save(host="go.example.test")
    a = link_create(user=user, long_url="https://example.com/a", alias="promo-a", tags=["promo"])
    b = link_create(user=user, long_url="https://example.com/b", alias="plain-b").link
    c = link_create(
        user=user,
        long_url="https://example.com/c",
        alias="go-c",
        tags=["promo"],
        domain="go.example.test",
    ).link
    theirs = link_create(
        user=other_user, long_url="https://example.com/t", alias="theirs", tags=["promo"]
    ).link
    add_visits(a.link, 2)
    add_visits(a.link, 1, bot=True)
    add_visits(b, 1)
    add_visits(c, 1)
    add_visits(theirs, 3)
    return {"a": a.link, "b": b, "c": c, "theirs": theirs}


# --- Lists ---------------------------------------------------------------------------------


def test_non_orphan_visits_are_every_visit_of_the_callers_short_urls(user, traffic):
    client = shlink(user)
    body = _visits(client, "/visits/non-orphan")
    assert body["pagination"]["totalItems"] == 5
    visited = sorted(v["visitedUrl"] for v in body["data"])
    assert visited == [
        "http://go.example.test/go-c",
        "http://testserver/plain-b",
        "http://testserver/promo-a",
        "http://testserver/promo-a",
        "http://testserver/promo-a",
    ]
    people = _visits(client, "/visits/non-orphan", excludeBots="true")
    assert people["pagination"]["totalItems"] == 4
    page = _visits(client, "/visits/non-orphan", itemsPerPage=2, page=3)
    assert page["pagination"] == {
        "currentPage": 3,
        "pagesCount": 3,
        "itemsPerPage": 2,
        "itemsInCurrentPage": 1,
        "totalItems": 5,
    }
    later = _visits(client, "/visits/non-orphan", startDate="2999-01-01T00:00:00+00:00")
    assert later["data"] == []
    bad = client.get(f"{BASE}/visits/non-orphan", {"startDate": "soon"})
    _problem(bad, 400, "https://shlink.io/api/error/invalid-data")


def test_tag_visits_are_the_callers_short_urls_carrying_it(user, traffic):
    client = shlink(user)
    body = _visits(client, "/tags/PROMO/visits")  # any case, as the tag is found
    assert body["pagination"]["totalItems"] == 4  # promo-a's 3 and go-c's 1, not theirs
    assert {v["visitedUrl"] for v in body["data"]} == {
        "http://testserver/promo-a",
        "http://go.example.test/go-c",
    }
    missing = _problem(
        client.get(f"{BASE}/tags/nope/visits"), 404, "https://shlink.io/api/error/tag-not-found"
    )
    assert missing["tag"] == "nope"


def test_domain_visits_default_and_extra(user, traffic):
    client = shlink(user)
    default = _visits(client, "/domains/DEFAULT/visits")
    assert default["pagination"]["totalItems"] == 4  # promo-a and plain-b
    assert _visits(client, "/domains/testserver/visits")["pagination"]["totalItems"] == 4
    extra = _visits(client, "/domains/go.example.test/visits")
    assert [v["visitedUrl"] for v in extra["data"]] == ["http://go.example.test/go-c"]
    unknown = _problem(
        client.get(f"{BASE}/domains/nowhere.example/visits"),
        404,
        "https://shlink.io/api/error/domain-not-found",
    )
    assert unknown["authority"] == "nowhere.example"


def test_tag_and_non_orphan_visits_filtered_by_domain(user, traffic):
    """Shlink 4.6's `domain` on a tag's and every short URL's visits: DEFAULT (or the default
    domain's own host) the default domain's short URLs, a host its own, a host of no domain
    none."""
    client = shlink(user)

    def visited(path: str, domain: str) -> list[str]:
        return sorted(v["visitedUrl"] for v in _visits(client, path, domain=domain)["data"])

    promo_a = ["http://testserver/promo-a"] * 3
    assert visited("/tags/promo/visits", "DEFAULT") == promo_a
    assert visited("/tags/promo/visits", "testserver") == promo_a
    assert visited("/tags/promo/visits", "go.example.test") == ["http://go.example.test/go-c"]
    assert visited("/tags/promo/visits", "nowhere.example") == []
    assert visited("/visits/non-orphan", "DEFAULT") == ["http://testserver/plain-b", *promo_a]
    assert visited("/visits/non-orphan", "go.example.test") == ["http://go.example.test/go-c"]
    assert visited("/visits/non-orphan", "nowhere.example") == []
    on_go = _visits(client, "/visits/non-orphan", domain="go.example.test")
    assert on_go["pagination"]["totalItems"] == 1


def test_orphan_visits_filtered_by_domain(staff_user):
    """`domain` on orphan visits: the requests for that host (DEFAULT: the default domain's),
    in the list and its total."""
    hour = utc_hour(timezone.now())
    for key, host, count in [("k1", "testserver", 2), ("k2", "go.example.test", 3)]:
        OrphanVisitCount.objects.create(
            hour=hour, kind=OrphanKind.UNKNOWN_CODE, host=host, path="/gone", key=key, count=count
        )
    client = shlink(staff_user)

    def visited(domain: str | None = None) -> list[str]:
        body = _visits(client, "/visits/orphan", **({"domain": domain} if domain else {}))
        assert body["pagination"]["totalItems"] == len(body["data"])
        return [v["visitedUrl"] for v in body["data"]]

    assert visited("DEFAULT") == ["http://testserver/gone"] * 2
    assert visited("GO.example.test") == ["http://go.example.test/gone"] * 3
    assert visited("nowhere.example") == []
    assert len(visited()) == 5


# --- Deletes -------------------------------------------------------------------------------


def _counts(link) -> list[int]:
    return [
        model.objects.filter(link=link).count()
        for model in (VisitRecord, HourlyClick, HourlyBreakdown, DailyBreakdown, LinkVisitor)
    ]


def test_deleting_a_links_visits_makes_every_count_say_zero(user, traffic):
    client = shlink(user)
    a, b = traffic["a"], traffic["b"]
    assert all(_counts(a))

    response = client.delete(f"{BASE}/short-urls/promo-a/visits")
    assert response.status_code == 200, response.content
    assert response.json() == {"deletedVisits": 3}
    assert _counts(a) == [0, 0, 0, 0, 0]

    native = APIClient()
    native.force_authenticate(user)
    stats = native.get("/api/v1/links/promo-a/stats/").json()
    assert (stats["total_clicks"], stats["unique_visitors"], stats["bot_clicks"]) == (0, 0, 0)
    listed = {
        item["code"]: item["clicks"] for item in native.get("/api/v1/links/").json()["results"]
    }
    assert listed["promo-a"] == 0 and listed["plain-b"] == 1
    other = native.get("/api/v1/links/plain-b/stats/").json()
    assert (other["total_clicks"], other["unique_visitors"]) == (1, 1)

    shlink_list = client.get(f"{BASE}/short-urls").json()["shortUrls"]["data"]
    summaries = {item["shortCode"]: item["visitsSummary"] for item in shlink_list}
    assert summaries["promo-a"] == {"total": 0, "nonBots": 0, "bots": 0}
    assert summaries["plain-b"] == {"total": 1, "nonBots": 1, "bots": 0}
    assert _visits(client, "/short-urls/promo-a/visits")["data"] == []
    overview = client.get(f"{BASE}/visits").json()["visits"]["nonOrphanVisits"]
    assert overview == {"total": 2, "nonBots": 2, "bots": 0}  # plain-b and go-c
    assert all(_counts(b)) and all(_counts(traffic["theirs"]))

    again = client.delete(f"{BASE}/short-urls/promo-a/visits")
    assert again.json() == {"deletedVisits": 0}


def test_only_who_may_change_the_link_deletes_its_visits(user, traffic):
    _problem(
        shlink(user).delete(f"{BASE}/short-urls/theirs/visits"),
        404,
        "https://shlink.io/api/error/short-url-not-found",
    )
    acme = workspace_create(user=user, name="Acme", slug="acme")
    viewer = UserFactory(username="vi")
    member_add(by=user, workspace=acme, username="vi", role=Role.VIEWER)
    team = link_create(user=user, long_url="https://example.com/t1", alias="team-1", workspace=acme)
    add_visits(team.link, 2)
    body = _problem(
        shlink(viewer, workspace="acme").delete(f"{BASE}/short-urls/team-1/visits"),
        403,
        "about:blank",
    )
    assert "Viewers of the workspace 'acme'" in body["detail"]
    assert VisitRecord.objects.filter(link=team.link).count() == 2
    assert all(_counts(traffic["theirs"]))


def _orphans(count: int) -> None:
    OrphanVisitCount.objects.create(
        hour=utc_hour(timezone.now()),
        kind=OrphanKind.UNKNOWN_CODE,
        path="/gone",
        key="k1",
        count=count,
    )


def test_staff_delete_every_orphan_visit_count_others_are_refused(user, staff_user, traffic):
    _orphans(4)
    _problem(shlink(user).delete(f"{BASE}/visits/orphan"), 403, "about:blank")
    assert OrphanVisitCount.objects.count() == 1

    staff = shlink(staff_user)
    response = staff.delete(f"{BASE}/visits/orphan")
    assert response.status_code == 200, response.content
    assert response.json() == {"deletedVisits": 4}
    assert staff.get(f"{BASE}/visits").json()["visits"]["orphanVisits"]["total"] == 0
    assert VisitRecord.objects.count() == 8  # the links' visits stay
