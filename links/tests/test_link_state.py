"""One definition of a link's state (issue #26): a link whose visit cap is used up answers 410
to visitors, and every channel calls it `limit_reached`, not active: the API (status,
is_active, its active filter), My links and its stopped filter, the stats pages, the exports,
the admin and the Shlink layer's excludeMaxVisitsReached. They read the live count (what the
redirect goes by), before the row has followed it. Run in both suites: each meets its mode's
own counter (Redis, or the node's files)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import api_key_create
from links import selectors, visit_caps
from links.models import LinkStatus, UrlLink
from links.selectors import link_export_rows
from links.services.create import link_create
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"


@pytest.fixture
def capped_out(client, user) -> UrlLink:
    """A link capped at one visit, which one person has taken: the redirect now answers 410,
    while the link row's count still says 0 (the node's runner saves it seconds later)."""
    link = link_create(
        user=user, long_url="https://example.com/offer", max_visits=1, tags=["spring"]
    ).link
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER).status_code == 302
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER).status_code == 410
    assert UrlLink.objects.get(pk=link.pk).visits_used == 0  # the live count is ahead
    return link


@pytest.fixture
def open_link(user) -> UrlLink:
    return link_create(
        user=user, long_url="https://example.com/open", max_visits=5, tags=["spring"]
    ).link


def test_the_rule_itself(user):
    link = UrlLink(long_url="https://example.com/", max_visits=2, visits_used=0)
    assert link.status_at() == LinkStatus.ACTIVE
    assert link.status_at(visits_used=2) == LinkStatus.LIMIT_REACHED
    link.visits_used = 2
    assert link.status_at() == LinkStatus.LIMIT_REACHED
    assert not link.is_active


def test_the_api_detail_and_list(user, capped_out, open_link):
    api = client_for(user)
    shown = api.get(f"/api/v1/links/{capped_out.code}/").json()
    assert (shown["status"], shown["is_active"], shown["visits_left"]) == (
        "limit_reached",
        False,
        0,
    )

    listed = {item["code"]: item for item in api.get("/api/v1/links/").json()["results"]}
    assert listed[capped_out.code]["status"] == "limit_reached"
    assert listed[capped_out.code]["is_active"] is False
    assert listed[open_link.code]["status"] == "active"

    stopped = [item["code"] for item in api.get("/api/v1/links/?active=false").json()["results"]]
    working = [item["code"] for item in api.get("/api/v1/links/?active=true").json()["results"]]
    assert stopped == [capped_out.code]
    assert working == [open_link.code]


def test_my_links_and_its_stopped_filter(client, user, capped_out, open_link):
    client.force_login(user)
    page = client.get(reverse("dashboard"))
    statuses = {row["link"].code: row["status"] for row in page.context["rows"]}
    assert statuses == {capped_out.code: "limit_reached", open_link.code: "active"}
    assert "Visit limit reached" in page.content.decode()

    stopped = client.get(reverse("dashboard"), {"status": "expired"})
    assert [row["link"].code for row in stopped.context["rows"]] == [capped_out.code]
    working = client.get(reverse("dashboard"), {"status": "active"})
    assert [row["link"].code for row in working.context["rows"]] == [open_link.code]


def test_the_stats_pages(client, user, capped_out, open_link):
    client.force_login(user)
    page = client.get(reverse("link_stats", args=[capped_out.code]))
    assert page.context["status"] == "limit_reached"
    assert "Visit limit reached" in page.content.decode()

    tag_page = client.get(reverse("tag_stats", args=["spring"]))
    statuses = {row["link"].code: row["status"] for row in tag_page.context["rows"]}
    assert statuses == {capped_out.code: "limit_reached", open_link.code: "active"}


def test_the_exports(client, user, capped_out, open_link):
    rows = {row["code"]: row["status"] for row in link_export_rows(user=user)}
    assert rows == {capped_out.code: "limit_reached", open_link.code: "active"}

    client.force_login(user)
    download = client.get(reverse("links_export", args=["json"]))
    exported = json.loads(b"".join(download.streaming_content))["links"]
    assert {row["code"]: row["status"] for row in exported}[capped_out.code] == "limit_reached"


def test_the_export_command(user, capped_out, tmp_path):
    out = tmp_path / "links.json"
    call_command(
        "export_links", "--user", user.username, "--format", "json", "--output", out,
        "--base", "https://s.example.test/",
    )  # fmt: skip
    exported = json.loads(out.read_text())["links"]
    assert [row["status"] for row in exported] == ["limit_reached"]


def test_shlinks_exclude_max_visits_reached(user, capped_out, open_link):
    shlink = APIClient()
    shlink.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="shlink")[1])

    def codes(**params) -> list[str]:
        answer = shlink.get("/rest/v3/short-urls", params)
        assert answer.status_code == 200, answer.content
        return sorted(item["shortCode"] for item in answer.json()["shortUrls"]["data"])

    assert codes() == sorted([capped_out.code, open_link.code])
    assert codes(excludeMaxVisitsReached="true") == [open_link.code]
    # Past validUntil is another thing: a capped-out link is not expired.
    assert codes(excludePastValidUntil="true") == sorted([capped_out.code, open_link.code])


def test_the_admin_once_the_row_has_followed(admin_client, capped_out, open_link):
    visit_caps.save_counts()
    page = admin_client.get(reverse("admin:links_urllink_changelist"), {"status": "limit_reached"})
    assert page.status_code == 200
    html = page.content.decode()
    assert capped_out.code in html and open_link.code not in html
    assert "Visit limit reached" in html
    active = admin_client.get(reverse("admin:links_urllink_changelist"), {"status": "active"})
    assert capped_out.code not in active.content.decode()


def test_a_plain_create_does_not_hand_back_a_capped_out_link(user, capped_out):
    visit_caps.save_counts()
    again = link_create(user=user, long_url="https://example.com/offer")
    assert again.created and again.link.pk != capped_out.pk


def test_past_the_live_filter_bound_the_rows_decide_once_saved(user, capped_out, monkeypatch):
    """A scope with more open capped links than LIVE_FILTER_MAX is filtered by the rows'
    counts alone (no MGET of them all): the link is found once the runner has saved its count."""
    monkeypatch.setattr(selectors, "LIVE_FILTER_MAX", 0)
    api = client_for(user)
    stopped = "/api/v1/links/?active=false"
    assert api.get(stopped).json()["results"] == []
    visit_caps.save_counts()
    assert [item["code"] for item in api.get(stopped).json()["results"]] == [capped_out.code]


def test_the_rows_status_in_sql_is_status_at(user):
    """UrlLinkQuerySet.with_status (the admin's status filter, active()) picks the links whose
    status_at is that status, first match winning: a revoked link past its expiry and cap and
    before its start is revoked, an expired one (its start after its expiry, as a revoke or an
    old import can leave it) expired, a scheduled one past its cap scheduled."""
    now = timezone.now()
    past, future = now - timedelta(hours=1), now + timedelta(hours=1)
    made = {}
    capped_out = {"max_visits": 1, "visits_used": 1}
    for name, changes in {
        "open": {"valid_since": past},
        "capped": capped_out,
        "scheduled": {"valid_since": future, **capped_out},
        "expired": {"expires_at": past, "valid_since": future, **capped_out},
        "revoked": {"revoked_at": past, "expires_at": past, "valid_since": future, **capped_out},
    }.items():
        link = link_create(user=user, long_url=f"https://example.com/{name}").link
        UrlLink.objects.filter(pk=link.pk).update(**changes)
        made[name] = link.pk
    links = UrlLink.objects.filter(pk__in=made.values())
    for status in LinkStatus.values:
        picked = set(links.with_status(status, now).values_list("pk", flat=True))
        assert picked == {link.pk for link in links if link.status_at(now) == status}, status
        assert len(picked) == 1, status
