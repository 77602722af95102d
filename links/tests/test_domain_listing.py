"""Who is shown which short domains (security round 3, 12c): a domain kept for one workspace was
listed, with where it sends people, to every user of the native API and the Shlink layer. Each
caller now sees the domains they may put links on; their redirects only those who manage them."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.services import api_key_create
from links.services.domains import domain_save
from links.tests.helpers import client_for
from workspaces.models import Membership, Role
from workspaces.services import workspace_create

pytestmark = pytest.mark.django_db

OPEN, ACME, RIVAL = "go.example.org", "acme.example", "rival.example"
NO_REDIRECTS = {
    "baseUrlRedirect": None,
    "regular404Redirect": None,
    "invalidShortUrlRedirect": None,
}


@pytest.fixture
def workspaces(user, other_user):
    """`user` is in acme (an editor); `other_user` owns rival. Each keeps a domain; one is open."""
    acme = workspace_create(user=other_user, name="Acme")
    Membership.objects.create(workspace=acme, user=user, role=Role.EDITOR)
    rival = workspace_create(user=other_user, name="Rival")
    domain_save(host=OPEN, root_redirect="https://example.org/")
    domain_save(host=ACME, not_found_redirect="https://acme.example.com/404", workspace=acme)
    domain_save(host=RIVAL, root_redirect="https://rival.example.com/secret", workspace=rival)
    return acme, rival


def _shlink(key: str) -> dict:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    response = client.get("/rest/v3/domains")
    assert response.status_code == 200, response.content
    return response.json()["domains"]


def test_the_api_lists_only_the_domains_the_caller_may_use(
    user, other_user, staff_user, workspaces
):
    acme, _ = workspaces
    listed = client_for(user).get("/api/v1/domains/").json()
    assert [d["host"] for d in listed] == ["testserver", ACME, OPEN]
    in_acme = client_for(user).get("/api/v1/domains/", {"workspace": acme.slug}).json()
    assert [d["host"] for d in in_acme] == ["testserver", ACME, OPEN]
    owner = client_for(other_user).get("/api/v1/domains/").json()
    assert [d["host"] for d in owner] == ["testserver", ACME, OPEN, RIVAL]
    # Staff who manage domains see every one.
    staff = client_for(staff_user).get("/api/v1/domains/").json()
    assert [d["host"] for d in staff] == ["testserver", ACME, OPEN, RIVAL]


def test_an_api_key_lists_only_its_own_workspaces_domains(other_user, workspaces):
    acme, _ = workspaces
    _, key = api_key_create(user=other_user, name="acme only", workspace=acme)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    listed = client.get("/api/v1/domains/")
    assert listed.status_code == 200, listed.content
    assert [d["host"] for d in listed.json()] == ["testserver", ACME, OPEN]


def test_shlink_lists_usable_domains_and_redirects_only_to_who_manages_them(
    user, staff_user, workspaces
):
    acme, _ = workspaces
    _, personal_key = api_key_create(user=user, name="dashboard")  # acts for their own workspace
    assert [d["domain"] for d in _shlink(personal_key)["data"]] == ["testserver", OPEN]
    _, key = api_key_create(user=user, name="acme dashboard", workspace=acme)
    body = _shlink(key)
    assert [d["domain"] for d in body["data"]] == ["testserver", ACME, OPEN]
    assert all(d["redirects"] == NO_REDIRECTS for d in body["data"])
    assert body["defaultRedirects"] == NO_REDIRECTS

    from rest_framework.authtoken.models import Token

    managed = _shlink(Token.objects.create(user=staff_user).key)
    assert [d["domain"] for d in managed["data"]] == ["testserver", ACME, OPEN, RIVAL]
    redirects = {d["domain"]: d["redirects"] for d in managed["data"]}
    assert redirects[RIVAL]["baseUrlRedirect"] == "https://rival.example.com/secret"
    assert redirects[ACME]["invalidShortUrlRedirect"] == "https://acme.example.com/404"


def test_naming_an_unknown_domain_lists_only_the_ones_the_caller_could_use(user, workspaces):
    refused = client_for(user).post(
        "/api/v1/links/",
        {"long_url": "https://example.com/x", "domain": "nope.example"},
        format="json",
    )
    assert refused.status_code == 400
    (message,) = refused.json()["domain"]
    assert OPEN in message and RIVAL not in message and ACME not in message  # personal workspace
