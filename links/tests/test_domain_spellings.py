"""One host normaliser (links.domains.host_form): a short domain is found by the spelling it was
added with, whichever way in (the domains command's add, set and remove, the API's `domain`, the
services, the admin)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from links.domains import host_form
from links.models import Domain
from links.services.create import link_create
from links.services.domains import domain_save

STORED = "xn--bcher-kva.example"
# What people type for it: Unicode, any case, a URL, a final dot, the ASCII form.
SPELLINGS = [
    "Bücher.example",
    "https://bücher.example/",
    "BÜCHER.EXAMPLE.",
    "http://Bücher.example:8080/shop",
    STORED,
]

pytestmark = pytest.mark.django_db


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command("domains", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_host_form_gives_every_spelling_the_stored_host(spelling):
    assert host_form(spelling) == STORED


@pytest.mark.parametrize(
    "added_as", ["Bücher.example", "https://bücher.example/", "bücher.example."]
)
def test_the_domains_command_sets_and_removes_by_the_spelling_it_added_with(added_as):
    _command("add", added_as)
    assert Domain.objects.filter(host=STORED).exists()

    _command("set", added_as, "--not-found-redirect", "https://www.example.com/missing")
    assert Domain.objects.get(host=STORED).not_found_redirect == "https://www.example.com/missing"
    _command("set", "BÜCHER.EXAMPLE", "--root-redirect", "https://www.example.com/")
    assert Domain.objects.get(host=STORED).root_redirect == "https://www.example.com/"

    _command("remove", added_as)
    assert not Domain.objects.filter(host=STORED).exists()


@pytest.mark.parametrize("named_as", SPELLINGS)
def test_links_are_put_on_the_domain_by_any_spelling(user, named_as):
    domain = domain_save(host="Bücher.example")
    link = link_create(user=user, long_url="https://example.com/a", domain=named_as).link
    assert link.domain_id == domain.pk


def test_the_api_takes_the_spelling_the_domain_was_added_with(user):
    domain = domain_save(host="https://bücher.example/")
    client = APIClient()
    client.force_authenticate(user)
    created = client.post(
        "/api/v1/links/",
        {"long_url": "https://example.com/b", "domain": "Bücher.example."},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert Domain.objects.get(links__code=created.json()["code"]) == domain


def test_the_admin_stores_and_refuses_again_by_the_same_spelling(admin_client):
    added = admin_client.post(
        "/admin/links/domain/add/",
        {"host": "https://Bücher.example/", "root_redirect": "", "not_found_redirect": ""},
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    assert Domain.objects.filter(host=STORED).exists()
    again = admin_client.post(
        "/admin/links/domain/add/",
        {"host": "bücher.example.", "root_redirect": "", "not_found_redirect": ""},
    )
    assert f"There is a domain {STORED} already" in again.content.decode()


def test_the_admin_keeps_a_domain_for_one_workspace_by_the_services_rule(
    admin_client, user, other_user
):
    """The rule lives in links.services.domains (domain_workspace_check); the admin's form asks
    it rather than repeating it."""
    from workspaces.selectors import personal_workspace_of

    domain = domain_save(host="Bücher.example")
    link_create(user=other_user, long_url="https://example.com/theirs", domain=STORED)
    refused = admin_client.post(
        f"/admin/links/domain/{domain.pk}/change/",
        {
            "host": "bücher.example",
            "root_redirect": "",
            "not_found_redirect": "",
            "workspace": personal_workspace_of(user).pk,
        },
    )
    assert "1 link of other workspaces use this domain" in refused.content.decode()
    assert Domain.objects.get(pk=domain.pk).workspace_id is None


@pytest.mark.parametrize("typed", ["Bücher", "https://BÜCHER.example/"])
def test_the_admins_search_finds_a_domain_by_its_spelling(admin_client, typed):
    domain_save(host="Bücher.example")
    listed = admin_client.get("/admin/links/domain/", {"q": typed}).content.decode()
    assert STORED in listed
