"""App deep links as a visitor meets them (issue #28): an iPhone (or iPad) goes to the link's
ios_url, an Android phone to its android_url, a desktop to the long URL; a targeting rule that
matches still wins, the app link beats the variants; the visit is stored with the app link as
its destination. On each short domain, /.well-known/apple-app-site-association and
/.well-known/assetlinks.json answer the file its owner set as application/json, never a
redirect, and 404 where none is set. Both entry points (Django's view and the WSGI fast path)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from analytics.models import VisitRecord
from links.models import DEFAULT_DOMAIN_ID, Domain, UrlLink
from links.services.change import link_update
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1"
)
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36"
)
DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
TARGET = "https://example.com/product/7"
IOS_APP = "exampleshop://product/7"
ANDROID_APP = "https://shop.example.com/app/product/7"  # an Android App Link

AASA = {
    "applinks": {
        "details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": [{"/": "/*"}]}]
    }
}
ASSETLINKS = [
    {
        "relation": ["delegate_permission/common.handle_all_urls"],
        "target": {
            "namespace": "android_app",
            "package_name": "com.example.shop",
            "sha256_cert_fingerprints": ["14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64"],
        },
    }
]


def _app_link(user, **options) -> UrlLink:
    return link_create(
        user=user, long_url=TARGET, ios_url=IOS_APP, android_url=ANDROID_APP, **options
    ).link


def _wsgi_location(code: str, agent: str, query: str = "") -> tuple[str, str]:
    status, headers, _ = call_wsgi(f"/{code}", query_string=query, extra={"HTTP_USER_AGENT": agent})
    return status, headers.get("Location", "")


@pytest.mark.parametrize("entry", ["django", "wsgi"])
def test_each_os_goes_to_its_app_and_a_desktop_to_the_long_url(client, user, entry):
    link = _app_link(user)

    def location(agent: str) -> str:
        if entry == "wsgi":
            status, where = _wsgi_location(link.code, agent)
            assert status.startswith("302")
            return where
        response = client.get(f"/{link.code}", HTTP_USER_AGENT=agent)
        assert response.status_code == 302
        return response["Location"]

    assert location(IPHONE) == IOS_APP
    assert location(IPAD) == IOS_APP  # iPadOS is iOS to an app
    assert location(ANDROID) == ANDROID_APP
    assert location(DESKTOP) == TARGET


def test_the_visit_is_stored_and_shown_with_the_app_link_as_its_destination(client, user):
    link = _app_link(user)
    client.get(f"/{link.code}", HTTP_USER_AGENT=IPHONE)
    client.get(f"/{link.code}", HTTP_USER_AGENT=ANDROID)
    client.get(f"/{link.code}", HTTP_USER_AGENT=DESKTOP)
    call_command("drain_visits", verbosity=0)
    destinations = VisitRecord.objects.filter(link=link).values_list("destination", flat=True)
    assert sorted(destinations) == sorted(["", IOS_APP, ANDROID_APP])
    client.force_login(user)
    page = client.get(f"/dashboard/links/{link.code}/")
    table = page.content.decode()
    assert "Destinations (rules, app links, variants)" in table
    assert IOS_APP in table and ANDROID_APP in table


def test_a_matching_rule_wins_over_the_app_link_and_the_app_link_over_the_variants(client, user):
    link = _app_link(
        user,
        rules=[{"country": "DE", "url": "https://example.com/de"}, {"query": "web", "url": TARGET}],
        variants=[
            {"url": "https://example.com/a", "weight": 50},
            {"url": "https://example.com/b", "weight": 50},
        ],
    )
    ruled = client.get(f"/{link.code}?web", HTTP_USER_AGENT=IPHONE)
    assert ruled["Location"].startswith(TARGET)  # the rule took this visitor
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=IPHONE)["Location"] == IOS_APP
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=ANDROID)["Location"] == ANDROID_APP
    desktop = client.get(f"/{link.code}", HTTP_USER_AGENT=DESKTOP)["Location"]
    assert desktop in ("https://example.com/a", "https://example.com/b")


def test_the_visitor_query_goes_on_to_a_universal_link_but_not_to_an_app_scheme(client, user):
    link = _app_link(user)
    assert _wsgi_location(link.code, IPHONE, "utm_source=mail")[1] == IOS_APP
    assert (
        _wsgi_location(link.code, ANDROID, "utm_source=mail")[1] == f"{ANDROID_APP}?utm_source=mail"
    )


def test_mailto_tel_and_an_empty_host_app_scheme_go_out_as_written(client, user):
    link = link_create(
        user=user,
        long_url=TARGET,
        ios_url="tel:+49-30-1234567",
        android_url="myapp:///open?item=7&name=Grüße",
    ).link
    assert _wsgi_location(link.code, IPHONE)[1] == "tel:+49-30-1234567"
    # Non-ASCII percent-encoded for the header; the empty host kept.
    assert _wsgi_location(link.code, ANDROID)[1] == "myapp:///open?item=7&name=Gr%C3%BC%C3%9Fe"


# Committed rows: after the edit the fast path reads the link from the database, and then
# recycles the connection, as Django would (a test transaction cannot survive it on MariaDB).
@pytest.mark.django_db(transaction=True)
def test_an_edit_that_sets_or_clears_an_app_link_is_seen_at_once(client, user):
    link = link_create(user=user, long_url=TARGET).link
    assert _wsgi_location(link.code, IPHONE)[1] == TARGET  # cached, without an app link
    link_update(code=link.code, user=user, ios_url=IOS_APP)
    assert _wsgi_location(link.code, IPHONE)[1] == IOS_APP
    link_update(code=link.code, user=user, ios_url="")
    assert _wsgi_location(link.code, IPHONE)[1] == TARGET


def test_a_preview_fetcher_still_gets_the_preview_of_a_link_with_app_links(client, user):
    link = _app_link(user, og_title="Spring sale")
    page = client.get(f"/{link.code}", HTTP_USER_AGENT="facebookexternalhit/1.1")
    assert page.status_code == 200
    assert b"Spring sale" in page.content


def _association_domain(host: str = "go.example.net") -> Domain:
    return domain_save(
        host=host,
        apple_app_site_association=json.dumps(AASA, indent=2),
        assetlinks=json.dumps(ASSETLINKS),
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/.well-known/apple-app-site-association", AASA),
        ("/.well-known/assetlinks.json", ASSETLINKS),
    ],
)
@pytest.mark.parametrize("entry", ["django", "wsgi"])
def test_a_domain_serves_its_association_files_as_json(client, settings, path, expected, entry):
    _association_domain()
    if entry == "wsgi":
        status, headers, body = call_wsgi(path, extra={"HTTP_HOST": "go.example.net"})
        assert status.startswith("200")
    else:
        # Django's own view serves only the hosts ALLOWED_HOSTS names; the fast path any domain.
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "go.example.net"]
        response = client.get(path, HTTP_HOST="go.example.net")
        assert response.status_code == 200
        headers, body = response.headers, response.content
    assert headers["Content-Type"] == "application/json"
    assert "Location" not in headers
    assert json.loads(body) == expected
    assert "max-age=300" in headers["Cache-Control"]


def test_each_domain_serves_its_own_files_and_one_without_answers_404(client, settings):
    settings.ALLOWED_HOSTS = ["testserver", ".example.net"]
    _association_domain("go.example.net")
    domain_save(host="other.example.net")
    own = client.get("/.well-known/assetlinks.json", HTTP_HOST="go.example.net")
    assert own.status_code == 200
    for host in ("other.example.net", "testserver"):  # another domain; the default one
        answer = client.get("/.well-known/assetlinks.json", HTTP_HOST=host)
        assert answer.status_code == 404
        assert answer["Content-Type"] == "application/json"
    unknown = client.get("/.well-known/assetlinks.json", HTTP_HOST="nobody.example.net")
    assert unknown.status_code in (400, 404)  # not one of ours: never another domain's file


def test_the_default_domain_serves_files_too_and_a_change_is_served_at_once(client):
    default = Domain.objects.get(pk=DEFAULT_DOMAIN_ID)
    domain_save(domain=default, host="", assetlinks=json.dumps(ASSETLINKS))
    assert json.loads(client.get("/.well-known/assetlinks.json").content) == ASSETLINKS
    changed = [{**ASSETLINKS[0], "target": {"namespace": "web", "site": "https://example.com"}}]
    domain_save(
        domain=Domain.objects.get(pk=DEFAULT_DOMAIN_ID), host="", assetlinks=json.dumps(changed)
    )
    assert json.loads(client.get("/.well-known/assetlinks.json").content) == changed
    # Keeping the other fields as they are: None leaves the file alone.
    domain_save(domain=Domain.objects.get(pk=DEFAULT_DOMAIN_ID), host="")
    assert client.get("/.well-known/assetlinks.json").status_code == 200
    domain_save(domain=Domain.objects.get(pk=DEFAULT_DOMAIN_ID), host="", assetlinks="")
    assert client.get("/.well-known/assetlinks.json").status_code == 404
