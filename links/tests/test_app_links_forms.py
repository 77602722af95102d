"""App deep links in the channels people use by hand (issue #28): the create and edit forms'
"App links" group, the created page, My links, the admin's link page and Domain page, and
`manage.py domains --apple-app-site-association / --assetlinks`. Every one goes through
links.services.app_links (the rules themselves: links/tests/test_app_links.py)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from links.models import DEFAULT_DOMAIN_ID, Domain, UrlLink
from links.services.change import link_revoke
from links.services.create import link_create
from links.services.domains import domain_save

pytestmark = pytest.mark.django_db

TARGET = "https://example.com/product/7"
IOS = "exampleshop://product/7"
ANDROID = "https://shop.example.com/app/product/7"
FORM = {"long_url": TARGET, "redirect_type": "302", "pass_query": "on"}
AASA = json.dumps(
    {"applinks": {"details": [{"appIDs": ["TEAM.com.example.shop"], "components": [{"/": "/*"}]}]}}
)
ASSETLINKS = json.dumps(
    [
        {
            "relation": ["delegate_permission/common.handle_all_urls"],
            "target": {
                "namespace": "android_app",
                "package_name": "com.example.shop",
                "sha256_cert_fingerprints": ["AA:BB"],
            },
        }
    ]
)


# --- The create and edit forms ----------------------------------------------------------------


def test_the_create_form_answers_a_javascript_url_beside_its_field_the_group_open(client, user):
    client.force_login(user)
    page = client.get(reverse("home")).content.decode()
    assert 'id="app-links"' in page and 'id="app-links" open' not in page  # closed when empty
    assert 'name="ios_url"' in page and 'name="android_url"' in page
    refused = client.post(reverse("home"), {**FORM, "ios_url": "javascript:alert(1)"})
    assert refused.status_code == 200
    assert list(refused.context["form"].errors) == ["ios_url"]
    assert "javascript: URLs are refused" in refused.context["form"].errors["ios_url"][0]
    html = refused.content.decode()
    assert 'id="app-links" open' in html and 'id="id_ios_url_error"' in html
    assert not UrlLink.objects.exists()


def test_the_create_form_saves_both_app_links_and_the_created_page_shows_them(client, user):
    client.force_login(user)
    made = client.post(reverse("home"), {**FORM, "ios_url": IOS, "android_url": ANDROID})
    assert made.status_code == 302, made.context and made.context["form"].errors
    link = UrlLink.objects.get(owner=user)
    assert (link.ios_url, link.android_url) == (IOS, ANDROID)
    created = client.get(made["Location"]).content.decode()
    assert f'data-testid="ios-url">{IOS}</dd>' in created
    assert f'data-testid="android-url">{ANDROID}</dd>' in created


def test_the_edit_form_shows_changes_and_clears_the_app_links(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url=TARGET, ios_url=IOS).link
    url = reverse("link_edit", args=[link.code])
    page = client.get(url).content.decode()
    assert f'value="{IOS}"' in page and 'id="app-links" open' in page
    base = {**FORM, "title": ""}
    refused = client.post(url, {**base, "ios_url": IOS, "android_url": "data:text/html,hi"})
    assert list(refused.context["form"].errors) == ["android_url"]
    assert client.post(url, {**base, "ios_url": IOS, "android_url": ANDROID}).status_code == 302
    link.refresh_from_db()
    assert (link.ios_url, link.android_url) == (IOS, ANDROID)
    assert client.post(url, {**base, "ios_url": "", "android_url": ""}).status_code == 302
    link.refresh_from_db()
    assert (link.ios_url, link.android_url) == ("", "")


def test_my_links_marks_the_links_with_app_links(client, user):
    client.force_login(user)
    app = link_create(user=user, long_url=TARGET, android_url=ANDROID).link
    plain = link_create(user=user, long_url=TARGET + "/plain").link
    page = client.get(reverse("dashboard")).content.decode()
    row = page.split(f'data-code="{app.code}"')[1].split("</tr>")[0]
    assert 'data-testid="app-links"' in row and f"Android visitors go to {ANDROID}" in row
    plain_row = page.split(f'data-code="{plain.code}"')[1].split("</tr>")[0]
    assert 'data-testid="app-links"' not in plain_row


# --- The admin --------------------------------------------------------------------------------


def test_the_admin_shows_and_sets_a_link_s_app_links_through_the_rules(admin_client, user):
    link = link_create(user=user, long_url=TARGET, ios_url=IOS).link
    page_url = reverse("admin:links_urllink_change", args=[link.pk])
    page = admin_client.get(page_url).content.decode()
    assert f"iOS → {IOS}" in page and 'name="android_url"' in page
    save_url = reverse("admin:links_urllink_app_links", args=[link.pk])
    refused = admin_client.post(save_url, {"ios_url": IOS, "android_url": "file:///etc/passwd"})
    assert refused.status_code == 302
    said = admin_client.get(page_url).content.decode()
    assert "Android URL: file: URLs are refused" in said
    link.refresh_from_db()
    assert link.android_url == ""
    admin_client.post(save_url, {"ios_url": "", "android_url": ANDROID})
    link.refresh_from_db()
    assert (link.ios_url, link.android_url) == ("", ANDROID)
    # The redirect follows at once: the cached entry was refreshed by the service.
    android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile"
    assert Client().get(f"/{link.code}", HTTP_USER_AGENT=android)["Location"] == ANDROID


@pytest.mark.parametrize(
    ("box", "post"),
    [
        ("admin:links_urllink_app_links", {"ios_url": IOS, "android_url": ""}),
        ("admin:links_urllink_gates", {"max_visits": "5"}),
    ],
)
def test_the_admin_boxes_say_a_revoked_link_can_no_longer_change(admin_client, user, box, post):
    link = link_create(user=user, long_url=TARGET).link
    link_revoke(code=link.code, user=user)
    answer = admin_client.post(reverse(box, args=[link.pk]), post)
    assert answer.status_code == 302  # back to the link's page, not a server error
    said = admin_client.get(answer["Location"]).content.decode()
    assert "was revoked and can no longer be changed" in said
    link.refresh_from_db()
    assert (link.ios_url, link.max_visits) == ("", None)


def test_the_domain_admin_edits_the_association_files_and_says_what_it_refuses(admin_client):
    url = reverse("admin:links_domain_change", args=[DEFAULT_DOMAIN_ID])
    form = admin_client.get(url).content.decode()
    assert 'name="apple_app_site_association"' in form and 'name="assetlinks"' in form
    assert "/.well-known/assetlinks.json" in form  # the help text names where it is served
    base = {"not_found_redirect": "", "expired_redirect": ""}
    saved = admin_client.post(
        url, {**base, "apple_app_site_association": AASA, "assetlinks": ASSETLINKS}
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    domain = Domain.objects.get(pk=DEFAULT_DOMAIN_ID)
    assert (domain.apple_app_site_association, domain.assetlinks) == (AASA, ASSETLINKS)
    assert Client().get("/.well-known/assetlinks.json").content.decode() == ASSETLINKS
    # A textarea's CRLF lines are stored as the file's own newlines.
    typed = json.dumps(json.loads(ASSETLINKS), indent=2)
    admin_client.post(url, {**base, "assetlinks": typed.replace("\n", "\r\n")})
    assert Domain.objects.get(pk=DEFAULT_DOMAIN_ID).assetlinks == typed
    saved = admin_client.post(url, {**base, "assetlinks": ASSETLINKS})

    refused = admin_client.post(
        url, {**base, "apple_app_site_association": AASA, "assetlinks": '{"not": "a list"}'}
    )
    assert refused.status_code == 200
    assert list(refused.context["adminform"].form.errors) == ["assetlinks"]
    assert "JSON array" in refused.context["adminform"].form.errors["assetlinks"][0]
    assert Domain.objects.get(pk=DEFAULT_DOMAIN_ID).assetlinks == ASSETLINKS


def test_the_domain_list_says_which_files_a_domain_serves(admin_client):
    domain_save(domain=None, host="go.example.com", assetlinks=ASSETLINKS)
    page = admin_client.get(reverse("admin:links_domain_changelist")).content.decode()
    row = page.split(">go.example.com</a>")[1].split("</tr>")[0]
    assert "/.well-known/assetlinks.json" in row
    assert "apple-app-site-association" not in row


# --- manage.py domains ------------------------------------------------------------------------


def test_domains_sets_the_files_from_a_path_or_stdin_keeps_and_clears_them(
    tmp_path, capsys, monkeypatch, settings
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "go.example.com"]
    aasa_file = tmp_path / "aasa.json"
    aasa_file.write_text(AASA)
    call_command("domains", "add", "go.example.com", "--apple-app-site-association", str(aasa_file))
    monkeypatch.setattr("sys.stdin", io.StringIO(ASSETLINKS))
    call_command("domains", "set", "go.example.com", "--assetlinks", "-")
    domain = Domain.objects.get(host="go.example.com")
    assert (domain.apple_app_site_association, domain.assetlinks) == (AASA, ASSETLINKS)
    served = Client(HTTP_HOST="go.example.com").get("/.well-known/apple-app-site-association")
    assert (served.status_code, served.content.decode()) == (200, AASA)

    call_command("domains", "set", "go.example.com", "--root-redirect", "https://example.com/")
    call_command("domains", "list")
    listed = capsys.readouterr().out
    line = next(text for text in listed.splitlines() if text.startswith("go.example.com"))
    assert line.endswith(
        "app files → /.well-known/apple-app-site-association, /.well-known/assetlinks.json"
    )

    call_command("domains", "set", "go.example.com", "--apple-app-site-association", "")
    domain.refresh_from_db()
    assert (domain.apple_app_site_association, domain.assetlinks) == ("", ASSETLINKS)
    gone = Client(HTTP_HOST="go.example.com").get("/.well-known/apple-app-site-association")
    assert gone.status_code == 404


def test_domains_refuses_a_bad_file_naming_its_option_and_changes_nothing(tmp_path):
    call_command("domains", "add", "go.example.com", "--assetlinks", "")
    bad = tmp_path / "assetlinks.json"
    bad.write_text('[{"relation": "not a list", "target": {}}]')
    with pytest.raises(CommandError, match=r"^--assetlinks: In assetlinks.json, statement 0"):
        call_command("domains", "set", "go.example.com", "--assetlinks", str(bad))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("domains", "set", "go.example.com", "--assetlinks", str(tmp_path / "none"))
    assert Domain.objects.get(host="go.example.com").assetlinks == ""
