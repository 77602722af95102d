"""What staff meet in the admin: plain model names, the way to the staff overview, a link page
without internal fields and with a Revoke button, a code pool told as counts."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from links.models import UniqueCode, UniqueCodeStatus

from .factories import UrlLinkFactory

pytestmark = pytest.mark.django_db


def test_the_admin_index_names_models_plainly_and_links_the_staff_overview(admin_client):
    html = admin_client.get(reverse("admin:index")).content.decode()
    assert "Short links" in html
    assert "Code pool" in html
    assert "Url links" not in html
    assert "Unique codes" not in html
    assert f'href="{reverse("overview")}"' in html


def test_the_link_page_hides_internal_fields_and_wraps_the_long_url(admin_client, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/" + "x" * 300)
    html = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk])).content.decode()
    assert "Seq id" not in html
    assert "Long url hash" not in html
    assert link.long_url_hash not in html
    assert 'class="long-url-wrap"' in html


def test_the_link_page_revokes_the_link(admin_client, user, client):
    link = UrlLinkFactory(owner=user)
    change_page = reverse("admin:links_urllink_change", args=[link.pk])
    assert "Revoke this link" in admin_client.get(change_page).content.decode()

    response = admin_client.post(reverse("admin:links_urllink_revoke", args=[link.pk]), follow=True)

    assert response.redirect_chain[-1][0] == change_page
    assert f"Revoked {link.code}" in response.content.decode()
    assert client.get(f"/{link.code}").status_code == 410
    assert "Revoke this link" not in admin_client.get(change_page).content.decode()


def test_revoking_from_the_link_page_is_post_only(admin_client, user):
    link = UrlLinkFactory(owner=user)
    assert (
        admin_client.get(reverse("admin:links_urllink_revoke", args=[link.pk])).status_code == 405
    )


def test_the_code_pool_shows_counts_not_a_thousand_codes(admin_client):
    UniqueCode.objects.bulk_create(
        [UniqueCode(code=f"u{i:05d}x") for i in range(40)]
        + [UniqueCode(code=f"s{i:05d}x", status=UniqueCodeStatus.USED) for i in range(7)]
    )
    html = admin_client.get(reverse("admin:links_uniquecode_changelist")).content.decode()
    assert "Unused: <strong>40</strong>" in html
    assert "Used: <strong>7</strong>" in html
    assert "u00001x" not in html  # no row of random codes
    assert "Refill pool now" in html


def test_the_code_pool_still_finds_one_code_by_search(admin_client):
    UniqueCode.objects.create(code="abcdefg", status=UniqueCodeStatus.USED)
    html = admin_client.get(
        reverse("admin:links_uniquecode_changelist"), {"q": "abcdefg"}
    ).content.decode()
    assert "abcdefg" in html


def test_make_runs_message_names_the_host_and_port_it_serves(monkeypatch, capsys):
    monkeypatch.setenv("HOST", "localhost")
    monkeypatch.setenv("PORT", "8123")
    call_command("ensure_demo_users")
    out = capsys.readouterr().out
    assert "http://localhost:8123/admin/" in out
    assert "http://localhost:8123/dashboard/" in out
