"""One URL policy for every channel (issue #26): `example.com/page` is read as
https://example.com/page by the API, bulk, PATCH, imports, the YOURLS, Bitly and Shlink layers and
the form alike (links.services.policy.with_default_scheme, called by LongUrlRules.check), a full
URL stays exactly as sent, other schemes stay refused; and a short domain's root and not-found
redirects are held to the same rules as a link's long URL."""

from __future__ import annotations

import re
import time

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import api_key_create
from links.imports.formats import parse_file
from links.imports.service import link_import
from links.models import Domain, UrlLink
from links.services.create import link_create
from links.services.domains import domain_save
from links.services.policy import validate_long_url, with_default_scheme
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

BARE = "example.com/page"
FULL = "https://example.com/page"
# Refused as this machine: a local address, or this service itself where it runs there (the
# tests' ALLOWED_HOSTS name localhost).
LOCAL = "local address|visitors would loop"


# --- The rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed, stored",
    [
        ("example.com/page", "https://example.com/page"),
        ("example.com", "https://example.com"),
        ("www.example.com:8080/a?b=c#d", "https://www.example.com:8080/a?b=c#d"),
        ("bücher.example/katalog", "https://bücher.example/katalog"),
        ("203.0.113.9/x", "https://203.0.113.9/x"),
        # A full URL stays exactly as sent, http included.
        ("http://example.com/page", "http://example.com/page"),
        ("HTTPS://Example.com/P?q=1", "HTTPS://Example.com/P?q=1"),
    ],
)
def test_a_bare_host_gets_https_and_a_full_url_stays_as_sent(typed, stored):
    assert validate_long_url(typed) == stored


@pytest.mark.parametrize(
    "typed, message",
    [
        ("mailto:someone@example.com", "Only http and https"),
        ("javascript:alert(1)", "Only http and https"),
        ("ftp://example.com/file", "Only http and https"),
        ("someone@example.com", "not a web address"),
        ("spring sale.example/x", "not a web address"),
        ("localhost:8000/x", "Only http and https"),
        # Refused as this machine: a local address, or this service itself where it runs there.
        ("127.0.0.1/admin/", "local address|points back"),
    ],
)
def test_what_is_not_a_bare_host_is_not_given_a_scheme(typed, message):
    with pytest.raises(ValidationError) as refused:
        validate_long_url(typed)
    assert re.search(message, " ".join(refused.value.message_dict["long_url"]))
    assert with_default_scheme("mailto:someone@example.com") == "mailto:someone@example.com"


@pytest.mark.parametrize("text", ["a." * 20_000 + " ", "a." * 20_000 + "a b", "x" * 40_000 + " "])
def test_the_scheme_rule_answers_at_once_however_long_the_text(text):
    """A pattern whose host parts may each take a dot backtracks quadratically: this took 30 s
    with the first one. The deadline is generous; the linear one takes milliseconds."""
    started = time.monotonic()
    assert with_default_scheme(text) == text
    with pytest.raises(ValidationError):
        validate_long_url(text)
    assert time.monotonic() - started < 2


# --- Each channel -----------------------------------------------------------------------------


def test_the_form(client, user):
    client.force_login(user)
    client.post(reverse("home"), {"long_url": BARE, "redirect_type": "302", "pass_query": "on"})
    assert UrlLink.objects.get(owner=user).long_url == FULL


def test_the_api_create_and_patch(user):
    api = client_for(user)
    created = api.post("/api/v1/links/", {"long_url": BARE}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["long_url"] == FULL

    code = created.json()["code"]
    changed = api.patch(f"/api/v1/links/{code}/", {"long_url": "example.org/new"}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["long_url"] == "https://example.org/new"


def test_the_api_still_refuses_other_schemes(user):
    refused = client_for(user).post(
        "/api/v1/links/", {"long_url": "mailto:a@example.com"}, format="json"
    )
    assert refused.status_code == 400
    assert "Only http and https" in refused.json()["long_url"][0]


def test_bulk(user):
    response = client_for(user).post(
        "/api/v1/links/bulk/",
        {"items": [{"long_url": BARE}, {"long_url": "http://example.net/full"}]},
        format="json",
    )
    assert response.status_code == 200, response.content
    urls = [result["link"]["long_url"] for result in response.json()["results"]]
    assert urls == [FULL, "http://example.net/full"]


def test_an_import(user):
    parsed = parse_file(b"long_url,alias\nexample.com/page,imported-bare\n")
    report = link_import(user=user, parsed=parsed)
    assert report.entries[0].outcome != "skipped", report.entries[0]
    assert UrlLink.objects.get(code="imported-bare").long_url == FULL


def test_yourls(user):
    key = api_key_create(user=user, name="yourls")[1]
    answer = Client().get(
        "/yourls-api.php", {"action": "shorturl", "url": BARE, "format": "json", "signature": key}
    )
    assert answer.json()["status"] == "success", answer.content
    assert answer.json()["url"]["url"] == FULL


def test_bitly(user):
    key = api_key_create(user=user, name="bitly")[1]
    answer = Client().post(
        "/v4/shorten",
        {"long_url": BARE},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["long_url"] == FULL


def test_shlink_and_its_find_if_exists(user):
    shlink = APIClient()
    shlink.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="shlink")[1])
    first = shlink.post("/rest/v3/short-urls", {"longUrl": BARE}, format="json")
    assert first.status_code == 200, first.content
    assert first.json()["longUrl"] == FULL

    again = shlink.post(
        "/rest/v3/short-urls", {"longUrl": BARE, "findIfExists": True}, format="json"
    )
    assert again.json()["shortCode"] == first.json()["shortCode"]
    assert UrlLink.objects.count() == 1


def test_the_service_itself(user):
    assert link_create(user=user, long_url=BARE).link.long_url == FULL


# --- Domain redirects -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "redirect, message",
    [
        ("http://127.0.0.1/admin/", LOCAL),
        ("http://localhost:8080/", LOCAL),
        ("http://[::ffff:127.0.0.1]/", LOCAL),
        ("https://testserver/abc", "visitors would loop"),
        ("https://go.brand.example/some-code", "visitors would loop"),
        ("mailto:team@example.com", "Only http and https"),
        ("https://" + "a" * 2100 + ".example/", "at most"),
        ("https://xn--a.example/", "internationalised"),
    ],
)
@pytest.mark.parametrize("field", ["root_redirect", "not_found_redirect"])
def test_domain_redirects_refuse_what_links_refuse(field, redirect, message):
    with pytest.raises(ValidationError) as refused:
        domain_save(host="go.brand.example", **{field: redirect})
    assert re.search(message, " ".join(refused.value.message_dict[field]))
    assert not Domain.objects.filter(host="go.brand.example").exists()


def test_domain_redirects_get_the_default_scheme():
    domain = domain_save(
        host="go.brand.example", root_redirect=BARE, not_found_redirect="http://example.net/"
    )
    assert domain.root_redirect == FULL
    assert domain.not_found_redirect == "http://example.net/"


def test_the_domains_command_refuses_a_loopback_redirect():
    with pytest.raises(CommandError, match=LOCAL):
        call_command("domains", "add", "cli.example.test", "--root-redirect", "127.0.0.1/admin/")
    call_command("domains", "add", "cli.example.test", "--root-redirect", BARE)
    assert Domain.objects.get(host="cli.example.test").root_redirect == FULL


def test_the_admin_form_refuses_a_loopback_redirect(admin_client):
    page = admin_client.post(
        reverse("admin:links_domain_add"),
        {"host": "admin.example.test", "root_redirect": "http://127.0.0.1/admin/"},
    )
    assert page.status_code == 200
    assert re.search(LOCAL, page.content.decode())
    assert not Domain.objects.filter(host="admin.example.test").exists()
