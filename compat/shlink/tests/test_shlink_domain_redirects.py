"""Shlink's PATCH /rest/v3/domains/redirects: staff who manage domains set a domain's root and
unknown-code redirects through links.services.domains.domain_save (the admin's and `manage.py
domains`'s way in, with the long-URL rules), GET /rest/v3/domains shows them, and the redirect
follows them. Everyone else gets a 403 problem and changes nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from compat.shlink.tests.test_shlink_api import assert_problem, shlink_client, staff_shlink_client
from links.models import DEFAULT_DOMAIN_ID, Domain
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi
from workspaces.services import workspace_create

# Committed data: the redirects these tests follow go through the production entry point.
pytestmark = pytest.mark.django_db(transaction=True)

URL = "/rest/v3/domains/redirects"
GO = "go.example.test"
NO_REDIRECTS = {
    "baseUrlRedirect": None,
    "regular404Redirect": None,
    "invalidShortUrlRedirect": None,
}


@pytest.fixture
def go(settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, GO]
    return domain_save(host=GO)


@pytest.fixture
def staff(staff_user) -> APIClient:
    return staff_shlink_client(staff_user)


def _patch(client: APIClient, body: dict, url: str = URL):
    return client.patch(url, body, format="json")


def _listed(client: APIClient) -> dict:
    body = client.get("/rest/v3/domains").json()["domains"]
    return {item["domain"]: item["redirects"] for item in body["data"]} | {
        "defaultRedirects": body["defaultRedirects"]
    }


def _location(host: str, path: str) -> tuple[str, str | None]:
    status, headers, _ = call_wsgi(path, extra={"HTTP_HOST": host})
    return status, headers.get("Location")


def test_staff_set_a_domains_redirects_which_the_list_shows_and_the_redirect_follows(staff, go):
    response = _patch(
        staff,
        {
            "domain": GO,
            "baseUrlRedirect": "https://www.example.com/home",
            "invalidShortUrlRedirect": "example.com/lost",  # https:// added, as for a long URL
            "regular404Redirect": None,
        },
    )
    assert response.status_code == 200, response.content
    expected = {
        "baseUrlRedirect": "https://www.example.com/home",
        "regular404Redirect": None,
        "invalidShortUrlRedirect": "https://example.com/lost",
    }
    assert response.json() == expected
    assert _listed(staff)[GO] == expected
    assert _location(GO, "/") == ("302 Found", "https://www.example.com/home")
    assert _location(GO, "/no-such-code") == ("302 Found", "https://example.com/lost")


def test_a_field_left_out_keeps_its_redirect_and_null_removes_it(staff, go):
    _patch(
        staff,
        {
            "domain": GO,
            "baseUrlRedirect": "https://www.example.com/home",
            "invalidShortUrlRedirect": "https://example.com/lost",
        },
    )
    # Any spelling of the authority: a port and capitals, as a client may send it.
    response = _patch(staff, {"domain": "GO.example.test:443", "invalidShortUrlRedirect": None})
    assert response.status_code == 200, response.content
    assert response.json() == {**NO_REDIRECTS, "baseUrlRedirect": "https://www.example.com/home"}
    assert _location(GO, "/no-such-code")[0] == "404 Not Found"
    response = _patch(
        staff, {"domain": GO, "baseUrlRedirect": ""}, url="/rest/v2/domains/redirects"
    )
    assert response.json() == NO_REDIRECTS
    assert _listed(staff)[GO] == NO_REDIRECTS


@pytest.mark.parametrize("named_as", ["testserver", "testserver:80", "DEFAULT"])
def test_the_default_domain_is_its_domain_row_whose_unknown_codes_may_be_sent_elsewhere(
    staff, named_as
):
    """The default domain maps to its Domain row (DEFAULT_DOMAIN_ID), as in the admin: its
    unknown-code redirect may be set; its root is the site's home page, never redirected."""
    response = _patch(
        staff, {"domain": named_as, "invalidShortUrlRedirect": "https://example.com/nothing-here"}
    )
    assert response.status_code == 200, response.content
    redirects = {**NO_REDIRECTS, "invalidShortUrlRedirect": "https://example.com/nothing-here"}
    assert response.json() == redirects
    listed = _listed(staff)
    assert listed["testserver"] == redirects
    assert listed["defaultRedirects"] == redirects
    assert (
        Domain.objects.get(pk=DEFAULT_DOMAIN_ID).not_found_redirect
        == redirects["invalidShortUrlRedirect"]
    )
    assert _location("testserver", "/no-such-code") == (
        "302 Found",
        "https://example.com/nothing-here",
    )

    refused = _patch(staff, {"domain": named_as, "baseUrlRedirect": "https://example.com/"})
    body = assert_problem(refused, 400, "invalid-data")
    assert body["invalidElements"] == ["baseUrlRedirect"]
    assert "home page" in body["detail"]
    assert _listed(staff)["testserver"] == redirects  # nothing changed
    assert _location("testserver", "/")[0] == "200 OK"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://go.example.test/elsewhere", "loop"),  # the domain itself
        ("https://testserver/somewhere", "loop"),  # this service's own host
        ("http://127.0.0.1/admin", "address"),  # a local address
        ("javascript:alert(1)", "http"),
    ],
)
def test_redirects_pass_the_long_url_rules_a_links_url_does(staff, go, url, says):
    for field in ("baseUrlRedirect", "invalidShortUrlRedirect"):
        body = assert_problem(_patch(staff, {"domain": GO, field: url}), 400, "invalid-data")
        assert body["invalidElements"] == [field]
        assert says in body["detail"].lower()
    assert _listed(staff)[GO] == NO_REDIRECTS


def test_other_404s_are_never_redirected_so_regular_404_redirect_is_refused(staff, go):
    body = assert_problem(
        _patch(staff, {"domain": GO, "regular404Redirect": "https://example.com/404"}),
        400,
        "invalid-data",
    )
    assert body["invalidElements"] == ["regular404Redirect"]
    assert _patch(staff, {"domain": GO, "regular404Redirect": None}).status_code == 200


def test_a_domain_that_is_none_of_ours_is_not_found_and_not_made(staff):
    body = assert_problem(
        _patch(staff, {"domain": "new.example.test", "baseUrlRedirect": "https://example.com/"}),
        404,
        "domain-not-found",
    )
    assert body["authority"] == "new.example.test"
    assert not Domain.objects.filter(host="new.example.test").exists()


@pytest.mark.parametrize("body", [{}, {"domain": ""}, {"domain": None}])
def test_a_missing_domain_is_invalid_data(staff, body):
    problem = assert_problem(_patch(staff, body), 400, "invalid-data")
    assert problem["invalidElements"] == ["domain"]


def test_others_get_a_403_problem_and_change_nothing(user, django_user_model, go):
    """Marketers, and staff without the permission to change domains."""
    helper = django_user_model.objects.create_user("helper", password="x-pass-123", is_staff=True)
    for client in (shlink_client(user), shlink_client(helper), staff_shlink_client(helper)):
        response = _patch(client, {"domain": GO, "baseUrlRedirect": "https://example.com/"})
        assert response.status_code == 403, response.content
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["status"] == 403
    assert Domain.objects.get(host=GO).root_redirect == ""
    assert APIClient().patch(URL, {"domain": GO}, format="json").status_code == 401


def test_a_non_staff_user_given_the_permission_by_a_group_still_gets_a_403(
    user, django_user_model, go
):
    """As in the admin, changing domains takes staff status and the permission: a group that
    hands a marketer `links.change_domain` does not open domain redirects to their keys."""
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.create(name="domain keepers")
    group.permissions.add(Permission.objects.get(codename="change_domain"))
    user.groups.add(group)
    response = _patch(shlink_client(user), {"domain": GO, "baseUrlRedirect": "https://e.com/"})
    assert response.status_code == 403, response.content
    assert Domain.objects.get(host=GO).root_redirect == ""


def test_a_key_acting_for_a_workspace_reaches_only_the_domains_it_may_use(staff_user, go):
    """An API key acts for one workspace: a domain kept for another is not found (it is not in
    the key's GET /rest/v3/domains either)."""
    other = workspace_create(user=staff_user, name="Other team")
    domain_save(domain=go, host=GO, workspace=other)
    key = shlink_client(staff_user)  # pinned to the staff member's personal workspace
    assert GO not in _listed(key)
    response = _patch(key, {"domain": GO, "baseUrlRedirect": "https://example.com/"})
    assert_problem(response, 404, "domain-not-found")
    assert _patch(staff_shlink_client(staff_user), {"domain": GO}).status_code == 200


def test_a_preflight_names_patch():
    response = APIClient().options(
        URL,
        HTTP_ORIGIN="https://app.shlink.io",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="PATCH",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-api-key, content-type",
    )
    assert response.status_code == 204
    assert response["Access-Control-Allow-Methods"] == "PATCH"
    assert response["Access-Control-Allow-Origin"] == "*"
