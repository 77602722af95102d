"""Conversions (issue #29) as a site's server reports them: a lead and a sale for a click of a
link that tracks conversions, counted for that link; repeats counted once (a lead per click and
event name, a sale per invoice id); a click that is not stored yet found by flushing first; an
unknown click, or another workspace's, a 404 that says so; a viewer's report 403; a key without
conversions:write 403 naming it; a bad field 400 naming it."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.services import api_key_create
from analytics.models import Conversion
from analytics.services import link_raw_visits_erase
from core.api.scopes import ApiScope
from links.models import CLICK_ID_PARAM
from links.services.create import link_create
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

LEAD = "/api/v1/track/lead"
SALE = "/api/v1/track/sale"
PHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)


def _api(user, **key) -> APIClient:
    _, raw = api_key_create(user=user, name="Shop server", **key)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return api


def _click(client, link, **headers) -> str:
    """A visitor's click on `link`: the click id the redirect sent them on with."""
    response = client.get(f"/{link.code}", **headers)
    assert response.status_code == 302
    return parse_qs(urlsplit(response["Location"]).query)[CLICK_ID_PARAM][0]


@pytest.fixture
def tracked(user):
    return link_create(
        user=user, long_url="https://shop.example.com/landing", track_conversions=True
    ).link


def test_a_lead_for_a_click_not_stored_yet_is_counted_with_the_clicks_dimensions(
    client, user, tracked
):
    # No drain_visits: the visit is still in the spool when the lead comes in.
    click_id = _click(client, tracked, HTTP_USER_AGENT=PHONE, HTTP_REFERER="https://www.t.co/x")
    answer = _api(user).post(
        LEAD,
        {
            "click_id": click_id,
            "event_name": "Sign up",
            "customer_id": "cus_1",
            "metadata": {"plan": "trial"},
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["duplicate"] is False
    assert (body["kind"], body["code"], body["click_id"]) == ("lead", tracked.code, click_id)
    assert body["metadata"] == {"plan": "trial"}
    lead = Conversion.objects.get()
    assert (lead.link_id, lead.workspace_id) == (tracked.pk, tracked.workspace_id)
    assert (lead.device_type, lead.referrer_host) == ("Mobile", "t.co")


def test_a_repeated_lead_counts_once_and_answers_the_first(client, user, tracked):
    click_id = _click(client, tracked)
    api = _api(user)
    lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_1"}
    first = api.post(LEAD, lead, format="json")
    again = api.post(LEAD, {**lead, "customer_id": "cus_other"}, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["duplicate"] is True
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["customer_id"] == "cus_1"
    # Another event of the same click is another lead.
    other = api.post(LEAD, {**lead, "event_name": "Newsletter"}, format="json")
    assert other.status_code == 201
    assert Conversion.objects.count() == 2


def test_a_sale_by_invoice_counts_once_and_a_customer_id_finds_its_lead(client, user, tracked):
    click_id = _click(client, tracked)
    api = _api(user)
    lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_9"}
    assert api.post(LEAD, lead, format="json").status_code == 201
    sale = {"amount": 4990, "currency": "eur", "event_name": "Purchase", "invoice_id": "INV-1"}
    first = api.post(SALE, {**sale, "click_id": click_id}, format="json")
    assert first.status_code == 201, first.json()
    assert (first.json()["amount"], first.json()["currency"]) == (4990, "EUR")
    again = api.post(SALE, {**sale, "customer_id": "cus_9"}, format="json")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    # By customer id alone, with another invoice: the click of their latest lead.
    by_customer = api.post(
        SALE, {**sale, "invoice_id": "INV-2", "customer_id": "cus_9"}, format="json"
    )
    assert by_customer.status_code == 201
    assert by_customer.json()["click_id"] == click_id
    # An invoice id differing only in case is another order.
    other_case = api.post(
        SALE, {**sale, "invoice_id": "inv-1", "click_id": click_id}, format="json"
    )
    assert other_case.status_code == 201
    # Without an invoice id nothing is taken for a repeat.
    plain = {"amount": 100, "currency": "EUR", "event_name": "Tip", "click_id": click_id}
    assert api.post(SALE, plain, format="json").status_code == 201
    assert api.post(SALE, plain, format="json").status_code == 201
    assert Conversion.objects.filter(kind="sale").count() == 5


def test_a_sale_after_its_raw_click_was_deleted_still_counts_for_its_lead(client, user, tracked):
    # Retention or an erasure may delete the raw visit between the lead and the sale: the
    # lead kept the click's link and dimensions, and the sale takes them from it.
    click_id = _click(client, tracked, HTTP_USER_AGENT=PHONE)
    api = _api(user)
    lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_7"}
    assert api.post(LEAD, lead, format="json").status_code == 201
    assert link_raw_visits_erase(link=tracked).as_dict()["visits"] == 1

    sale = {"amount": 990, "currency": "EUR", "event_name": "Purchase"}
    by_customer = api.post(SALE, {**sale, "customer_id": "cus_7"}, format="json")
    by_click = api.post(SALE, {**sale, "click_id": click_id}, format="json")
    assert (by_customer.status_code, by_click.status_code) == (201, 201), by_click.json()
    for answer in (by_customer, by_click):
        assert (answer.json()["code"], answer.json()["click_id"]) == (tracked.code, click_id)
    sales = Conversion.objects.filter(kind="sale")
    assert {(s.link_id, s.device_type) for s in sales} == {(tracked.pk, "Mobile")}
    # A click with neither a raw visit nor a lead is still unknown.
    unknown = api.post(SALE, {**sale, "click_id": "0" * 32}, format="json")
    assert unknown.status_code == 404


def test_an_unknown_click_id_is_a_404_that_says_so(user):
    api = _api(user)
    answer = api.post(
        LEAD,
        {"click_id": "0" * 32, "event_name": "Sign up", "customer_id": "c"},
        format="json",
    )
    assert answer.status_code == 404
    assert answer.json()["detail"].startswith(f"No click has the id '{'0' * 32}'")
    sale = api.post(
        SALE,
        {"customer_id": "nobody", "amount": 1, "currency": "EUR", "event_name": "Purchase"},
        format="json",
    )
    assert sale.status_code == 404
    assert "No lead of the customer 'nobody'" in sale.json()["detail"]


def test_another_workspaces_click_is_a_404_and_a_viewers_a_403(client, user, other_user, tracked):
    click_id = _click(client, tracked)
    lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "c"}
    stranger = _api(other_user).post(LEAD, lead, format="json")
    assert stranger.status_code == 404
    assert "No click has the id" in stranger.json()["detail"]
    team = workspace_create(user=user, name="Shop team")
    member_add(by=user, workspace=team, username=other_user.username, role=Role.VIEWER)
    on_team = link_create(
        user=user, workspace=team, long_url="https://shop.example.com/t", track_conversions=True
    ).link
    viewer = _api(other_user, workspace=team).post(
        LEAD, {**lead, "click_id": _click(client, on_team)}, format="json"
    )
    assert viewer.status_code == 403
    # A key made for the personal workspace cannot report the team's clicks either.
    pinned = _api(user).post(LEAD, {**lead, "click_id": _click(client, on_team)}, format="json")
    assert pinned.status_code == 404
    assert not Conversion.objects.exists()


def test_a_key_without_the_scope_is_refused_naming_it(client, user, tracked):
    click_id = _click(client, tracked)
    api = _api(user, scopes=[ApiScope.LINKS_WRITE, ApiScope.STATS_READ])
    answer = api.post(
        LEAD, {"click_id": click_id, "event_name": "Sign up", "customer_id": "c"}, format="json"
    )
    assert answer.status_code == 403
    assert "conversions:write" in answer.json()["detail"]
    only = _api(user, scopes=[ApiScope.CONVERSIONS_WRITE])
    answer = only.post(
        LEAD, {"click_id": click_id, "event_name": "Sign up", "customer_id": "c"}, format="json"
    )
    assert answer.status_code == 201


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (LEAD, {"click_id": "xyz", "event_name": "a", "customer_id": "c"}, "click_id"),
        (LEAD, {"click_id": "a" * 32, "customer_id": "c"}, "event_name"),
        (LEAD, {"click_id": "a" * 32, "event_name": "a"}, "customer_id"),
        (
            LEAD,
            {"click_id": "a" * 32, "event_name": "a", "customer_id": "c", "metadata": [1]},
            "metadata",
        ),
        (
            LEAD,
            {
                "click_id": "a" * 32,
                "event_name": "a",
                "customer_id": "c",
                "metadata": {"x": "y" * 5000},
            },
            "metadata",
        ),
        (
            SALE,
            {"click_id": "a" * 32, "amount": 12.5, "currency": "EUR", "event_name": "P"},
            "amount",
        ),
        (
            SALE,
            {"click_id": "a" * 32, "amount": -1, "currency": "EUR", "event_name": "P"},
            "amount",
        ),
        (
            SALE,
            {"click_id": "a" * 32, "amount": 1, "currency": "EURO", "event_name": "P"},
            "currency",
        ),
        (SALE, {"amount": 1, "currency": "EUR", "event_name": "P"}, "click_id"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(user, path, body, field):
    answer = _api(user).post(path, body, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert not Conversion.objects.exists()


def test_the_stats_answer_counts_one_click_lead_and_sale_with_its_revenue(client, user, tracked):
    """The issue's "done when", in-process: a click, a lead and two sales (one a repeat of the
    other's invoice id) are 1 click, 1 lead, 1 sale and its revenue, by day and by device too;
    the link's tag answers the same."""
    api = _api(user)
    tagged = api.patch(f"/api/v1/links/{tracked.code}/", {"tags": ["spring"]}, format="json")
    assert tagged.status_code == 200
    click_id = _click(client, tracked, HTTP_USER_AGENT=PHONE)
    lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_1"}
    assert api.post(LEAD, lead, format="json").status_code == 201
    sale = {"click_id": click_id, "amount": 4990, "currency": "EUR", "event_name": "Purchase"}
    assert api.post(SALE, {**sale, "invoice_id": "INV-7"}, format="json").status_code == 201
    assert api.post(SALE, {**sale, "invoice_id": "INV-7"}, format="json").status_code == 200
    call_command("drain_visits", verbosity=0)
    for path in (f"/api/v1/links/{tracked.code}/stats/", "/api/v1/tags/spring/stats/"):
        stats = api.get(path).json()
        assert (stats["total_clicks"], stats["leads"], stats["sales"]) == (1, 1, 1)
        assert (stats["revenue"], stats["currency"]) == (4990, "EUR")
        assert (stats["lead_rate"], stats["sale_rate"]) == (100.0, 100.0)
        [day] = stats["conversions"]["days"]
        assert (day["clicks"], day["leads"], day["sales"], day["revenue"]) == (1, 1, 1, 4990)
        assert stats["conversions"]["devices"] == [
            {"name": "Mobile", "clicks": 1, "leads": 1, "sales": 1, "revenue": 4990}
        ]


def test_sales_in_two_currencies_are_never_added_up(client, user, tracked):
    api = _api(user)
    click_id = _click(client, tracked)
    for amount, currency in ((1000, "EUR"), (500, "USD"), (250, "EUR")):
        sale = {"click_id": click_id, "amount": amount, "currency": currency, "event_name": "P"}
        assert api.post(SALE, sale, format="json").status_code == 201
    stats = api.get(f"/api/v1/links/{tracked.code}/stats/").json()
    assert (stats["sales"], stats["revenue"], stats["currency"]) == (3, None, None)
    assert stats["revenue_by_currency"] == [
        {"currency": "EUR", "amount": 1250, "sales": 2},
        {"currency": "USD", "amount": 500, "sales": 1},
    ]
    assert stats["conversions"]["days"][0]["revenue"] is None


def test_the_api_sets_and_shows_track_conversions(user):
    api = _api(user)
    created = api.post(
        "/api/v1/links/",
        {"long_url": "https://shop.example.com/a", "track_conversions": True},
        format="json",
    )
    assert created.status_code == 201 and created.json()["track_conversions"] is True
    code = created.json()["code"]
    changed = api.patch(f"/api/v1/links/{code}/", {"track_conversions": False}, format="json")
    assert changed.json()["track_conversions"] is False
    refused = api.patch(f"/api/v1/links/{code}/", {"track_conversions": "yes"}, format="json")
    assert refused.status_code == 400 and "track_conversions" in refused.json()
    bulk = api.post(
        "/api/v1/links/bulk/",
        {"items": [{"long_url": "https://shop.example.com/b", "track_conversions": True}]},
        format="json",
    )
    assert bulk.json()["results"][0]["link"]["track_conversions"] is True


def test_the_stats_pages_show_the_funnel_and_the_overview_its_totals(
    client, user, staff_user, tracked
):
    api = _api(user)
    assert api.patch(f"/api/v1/links/{tracked.code}/", {"tags": ["spring"]}, format="json")
    click_id = _click(client, tracked)
    lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_1"}
    assert api.post(LEAD, lead, format="json").status_code == 201
    sale = {"click_id": click_id, "amount": 4990, "currency": "EUR", "event_name": "Purchase"}
    assert api.post(SALE, {**sale, "invoice_id": "INV-1"}, format="json").status_code == 201
    call_command("drain_visits", verbosity=0)
    client.force_login(user)
    for path in (f"/dashboard/links/{tracked.code}/", "/dashboard/tags/spring/"):
        page = client.get(path).content.decode()
        assert 'data-testid="funnel-leads">1<' in page, path
        assert 'data-testid="funnel-sales">1<' in page
        assert 'data-testid="funnel-revenue">49.90 EUR<' in page
        assert 'data-testid="lead-rate">100.0%<' in page
    client.force_login(staff_user)
    overview = client.get("/dashboard/overview/").content.decode()
    assert 'data-testid="overview-sales">1<' in overview
    assert 'data-testid="overview-revenue">49.90 EUR<' in overview


def test_a_link_without_conversions_shows_no_funnel_unless_it_tracks_them(client, user):
    plain = link_create(user=user, long_url="https://shop.example.com/p").link
    client.force_login(user)
    assert 'data-testid="conversions"' not in client.get(f"/dashboard/links/{plain.code}/").text
    tracked = link_create(
        user=user, long_url="https://shop.example.com/t", track_conversions=True
    ).link
    page = client.get(f"/dashboard/links/{tracked.code}/").text
    assert 'data-testid="no-conversions"' in page


def test_a_workspace_answers_its_links_clicks_and_conversions_together(client, user, other_user):
    team = workspace_create(user=user, name="Shop team")
    api = _api(user, workspace=team)
    links = [
        link_create(
            user=user,
            workspace=team,
            long_url=f"https://shop.example.com/{n}",
            track_conversions=True,
        ).link
        for n in range(2)
    ]
    for n, link in enumerate(links):
        click_id = _click(client, link)
        sale = {
            "click_id": click_id,
            "amount": 1000 * (n + 1),
            "currency": "EUR",
            "event_name": "P",
        }
        assert api.post(SALE, sale, format="json").status_code == 201
    call_command("drain_visits", verbosity=0)
    stats = api.get(f"/api/v1/workspaces/{team.slug}/stats/").json()
    assert stats["workspace"] == team.slug
    assert (stats["total_clicks"], stats["sales"], stats["revenue"]) == (2, 2, 3000)
    assert _api(other_user).get(f"/api/v1/workspaces/{team.slug}/stats/").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        '{"click_id": "%s", "event_name": "a\\u0000b", "customer_id": "c"}' % ("a" * 32),
        '{"click_id": "%s", "event_name": "\\ud800", "customer_id": "c"}' % ("a" * 32),
        '{"click_id": "%s", "event_name": "a", "customer_id": "c", "metadata": {"x": "\\ud800"}}'
        % ("a" * 32),
        '{"click_id": "%s", "event_name": "a", "customer_id": "c", "metadata": {"x": "\\u0000"}}'
        % ("a" * 32),
        "[1, 2]",
    ],
)
def test_text_a_database_cannot_store_is_a_400_not_a_500(user, body):
    answer = _api(user).post(LEAD, body, content_type="application/json")
    assert answer.status_code == 400, answer.content
