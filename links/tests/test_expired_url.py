"""A link's fallback (expired_url, issue #28) and its domain's default (expired_redirect): the URL
policy every channel goes through, and the channels: the API (create, PATCH, detail, bulk), the
create and edit forms, My links and the stats page, the stats API's count, the admin, the
exports and the import, `manage.py domains`. The redirect's side is serving/tests/test_fallback.py.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from links.imports.formats import parse_file
from links.imports.service import link_import
from links.models import DEFAULT_DOMAIN_ID, Domain, UrlLink
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

TARGET = "https://example.com/offer"
FALLBACK = "https://example.com/offer-ended"


# --- The rule: the long-URL policy, under the field's own name -------------------------------


@pytest.mark.parametrize(
    "given, refused",
    [
        ("ftp://example.com/file", "Only http and https"),
        ("http://localhost:9000/admin", "local address"),
        ("http://testserver/abc1234", "points back at this short-link service"),
        ("just words", "not a web address"),
    ],
)
def test_a_fallback_goes_through_the_long_url_policy(user, given, refused):
    with pytest.raises(ValidationError) as create:
        link_create(user=user, long_url=TARGET, expired_url=given, request_host="testserver")
    assert refused in " ".join(create.value.message_dict["expired_url"])
    link = link_create(user=user, long_url=TARGET).link
    with pytest.raises(ValidationError) as change:
        link_update(code=link.code, user=user, expired_url=given, request_host="testserver")
    assert list(change.value.message_dict) == ["expired_url"]


def test_a_bare_host_gets_its_scheme_and_a_fallback_makes_a_create_not_plain(user):
    plain = link_create(user=user, long_url=TARGET).link
    made = link_create(user=user, long_url=TARGET, expired_url="example.com/ended")
    assert made.created and made.link.pk != plain.pk  # not handed the plain link back
    assert made.link.expired_url == "https://example.com/ended"


def test_a_domain_default_goes_through_the_same_policy(user):
    default = Domain.objects.get(pk=DEFAULT_DOMAIN_ID)
    with pytest.raises(ValidationError) as refused:
        domain_save(domain=default, host="", expired_redirect="http://localhost/")
    assert list(refused.value.message_dict) == ["expired_redirect"]
    saved = domain_save(domain=default, host="", expired_redirect="example.com/all")
    assert saved.expired_redirect == "https://example.com/all"
    # Left out, a later change keeps it.
    assert domain_save(domain=saved, host="", not_found_redirect="").expired_redirect == (
        "https://example.com/all"
    )


# --- The API ----------------------------------------------------------------------------------


def test_the_api_creates_shows_changes_and_clears_the_fallback(user):
    api = client_for(user)
    made = api.post("/api/v1/links/", {"long_url": TARGET, "expired_url": FALLBACK}, format="json")
    assert made.status_code == 201, made.content
    code = made.json()["code"]
    assert made.json()["expired_url"] == FALLBACK
    assert api.get(f"/api/v1/links/{code}/").json()["expired_url"] == FALLBACK
    bad = api.patch(f"/api/v1/links/{code}/", {"expired_url": "ftp://x.example/"}, format="json")
    assert bad.status_code == 400
    assert list(bad.json()) == ["expired_url"]
    cleared = api.patch(f"/api/v1/links/{code}/", {"expired_url": None}, format="json")
    assert (cleared.status_code, cleared.json()["expired_url"]) == (200, None)
    plain = api.post("/api/v1/links/", {"long_url": TARGET + "/2"}, format="json").json()
    assert plain["expired_url"] is None


def test_a_revoked_link_s_fallback_may_be_set_through_the_api(user):
    api = client_for(user)
    link = link_create(user=user, long_url=TARGET).link
    link_revoke(code=link.code, user=user)
    answer = api.patch(f"/api/v1/links/{link.code}/", {"expired_url": FALLBACK}, format="json")
    assert (answer.status_code, answer.json()["expired_url"]) == (200, FALLBACK)
    # Anything else on a revoked link is still refused.
    assert (
        api.patch(f"/api/v1/links/{link.code}/", {"title": "x"}, format="json").status_code == 409
    )


def test_bulk_items_take_a_fallback(user):
    answer = client_for(user).post(
        "/api/v1/links/bulk/",
        {
            "items": [
                {"long_url": TARGET, "expired_url": FALLBACK},
                {"long_url": TARGET + "/2", "expired_url": "ftp://no.example/"},
            ]
        },
        format="json",
    )
    assert answer.status_code in (200, 201, 207), answer.content
    results = answer.json()["results"]
    assert results[0]["link"]["expired_url"] == FALLBACK
    assert "expired_url" in json.dumps(results[1]["errors"])


def test_the_stats_api_counts_people_sent_to_the_fallback(user):
    link = link_create(user=user, long_url=TARGET, expired_url=FALLBACK).link
    visitor = Client()
    visitor.get(f"/{link.code}")  # live: served by the link
    link_revoke(code=link.code, user=user)
    visitor.get(f"/{link.code}")
    visitor.get(f"/{link.code}")
    call_command("drain_visits", verbosity=0)
    stats = client_for(user).get(f"/api/v1/links/{link.code}/stats/").json()
    assert (stats["total_clicks"], stats["sent_to_fallback"]) == (3, 2)
    assert [(e["state"], e["name"], e["clicks"]) for e in stats["fallbacks"]] == [
        ("revoked", "Revoked", 2)
    ]


# --- The web UI -------------------------------------------------------------------------------


def test_the_create_form_takes_a_fallback_and_refuses_a_bad_one_beside_it(client, user):
    client.force_login(user)
    page = client.get(reverse("home")).content.decode()
    assert 'name="expired_url"' in page
    base = {"long_url": TARGET, "redirect_type": "302", "pass_query": "on"}
    refused = client.post(reverse("home"), {**base, "expired_url": "ftp://x.example/"})
    assert refused.status_code == 200
    assert refused.context["form"].errors["expired_url"]
    assert refused.context["options_open"]  # the options open on the error
    made = client.post(reverse("home"), {**base, "expired_url": FALLBACK})
    assert made.status_code == 302
    link = UrlLink.objects.get(expired_url=FALLBACK)
    created = client.get(made["Location"]).content.decode()
    assert 'data-testid="expired-url"' in created and FALLBACK in created
    assert link.long_url == TARGET


def test_the_edit_form_sets_and_clears_the_fallback(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url=TARGET).link
    url = reverse("link_edit", args=[link.code])
    base = {"long_url": link.long_url, "title": "", "redirect_type": "302", "pass_query": "on"}
    assert client.post(url, {**base, "expired_url": FALLBACK}).status_code == 302
    link.refresh_from_db()
    assert link.expired_url == FALLBACK
    assert f'value="{FALLBACK}"' in client.get(url).content.decode()
    assert client.post(url, {**base, "expired_url": ""}).status_code == 302
    link.refresh_from_db()
    assert link.expired_url == ""


def test_my_links_and_the_stats_page_show_the_fallback(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url=TARGET, expired_url=FALLBACK).link
    other = link_create(user=user, long_url=TARGET + "/none").link
    listing = client.get(reverse("dashboard")).content.decode()
    row = listing[listing.index(f'data-code="{link.code}"') :]
    assert "fallback set" in row[: row.index("</tr>")]
    other_row = listing[listing.index(f'data-code="{other.code}"') :]
    assert 'data-testid="fallback"' not in other_row[: other_row.index("</tr>")]
    link_revoke(code=link.code, user=user)
    Client().get(f"/{link.code}")
    call_command("drain_visits", verbosity=0)
    listing = client.get(reverse("dashboard") + "?status=expired").content.decode()
    assert "→ fallback" in listing
    stats = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert FALLBACK in stats
    total = stats[stats.index('data-testid="sent-to-fallback"') :]
    assert total[total.index(">") + 1 : total.index("<")] == "1"
    assert 'data-breakdown="fallbacks"' in stats


def test_the_admin_shows_a_link_s_fallback_and_edits_a_domain_s_default(admin_client, user):
    link = link_create(user=user, long_url=TARGET, expired_url=FALLBACK).link
    page = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk]))
    assert FALLBACK in page.content.decode()
    url = reverse("admin:links_domain_change", args=[DEFAULT_DOMAIN_ID])
    assert 'name="expired_redirect"' in admin_client.get(url).content.decode()
    saved = admin_client.post(url, {"not_found_redirect": "", "expired_redirect": FALLBACK})
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert Domain.objects.get(pk=DEFAULT_DOMAIN_ID).expired_redirect == FALLBACK
    refused = admin_client.post(url, {"not_found_redirect": "", "expired_redirect": "ftp://x/"})
    assert refused.status_code == 200  # the form again, with the policy's reason
    assert Domain.objects.get(pk=DEFAULT_DOMAIN_ID).expired_redirect == FALLBACK


def test_manage_py_domains_sets_and_lists_a_domain_s_default(capsys):
    call_command("domains", "add", "go.example.com", "--expired-redirect", FALLBACK)
    assert Domain.objects.get(host="go.example.com").expired_redirect == FALLBACK
    call_command("domains", "set", "go.example.com", "--root-redirect", "https://example.com/")
    assert Domain.objects.get(host="go.example.com").expired_redirect == FALLBACK  # kept
    call_command("domains", "list")
    assert f"stopped links → {FALLBACK}" in capsys.readouterr().out
    call_command("domains", "set", "go.example.com", "--expired-redirect", "")
    assert Domain.objects.get(host="go.example.com").expired_redirect == ""


def test_the_exports_carry_the_fallback_and_an_import_reads_it_back(client, user, other_user):
    link = link_create(
        user=user, long_url=TARGET, expired_url=FALLBACK, expires_at=timezone.now() + timedelta(1)
    ).link
    client.force_login(user)
    for fmt in ("csv", "json"):
        download = client.get(reverse("links_export", args=[fmt]))
        data = b"".join(download.streaming_content)
        if fmt == "json":
            assert json.loads(data)["links"][0]["expired_url"] == FALLBACK
        else:
            assert "expired_url" in data.decode().splitlines()[0].split(",")
        report = link_import(user=other_user, parsed=parse_file(data), request_host="testserver")
        assert [entry.outcome for entry in report.entries] == ["new code"], report.entries
        copy = UrlLink.objects.get(owner=other_user, code=report.entries[0].code)
        assert copy.expired_url == FALLBACK
        copy.delete()
    assert link.expired_url == FALLBACK
