"""What staff meet in the admin: plain model names, the way to the staff overview, a link page
without internal fields and with a Revoke button, a code pool told as counts."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from links.models import UniqueCode, UniqueCodeStatus
from links.tests.factories import UrlLinkFactory

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


def test_staff_edit_another_user_s_tags_rules_and_split_from_the_link_page(admin_client, user):
    """The admin shows rules, variants and tags; they are changed in the dashboard's form,
    which the link page's button opens for staff on any user's link."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/spring")
    html = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk])).content.decode()
    edit_url = reverse("link_edit", args=[link.code])
    assert f'href="{edit_url}"' in html

    assert admin_client.get(edit_url).status_code == 200
    response = admin_client.post(
        edit_url,
        {
            "long_url": link.long_url,
            "redirect_type": "302",
            "pass_query": "on",
            "tags": "spring, mail",
            "rule_0_country": "DE",
            "rule_0_url": "https://example.com/de",
            "variant_0_url": "https://example.com/a",
            "variant_0_weight": "70",
            "variant_1_url": "https://example.com/b",
            "variant_1_weight": "30",
        },
    )

    assert response.status_code == 302, response.context["form"].errors
    link.refresh_from_db()
    assert sorted(tag.name for tag in link.tags.all()) == ["mail", "spring"]
    assert link.rules == [{"country": "DE", "url": "https://example.com/de"}]
    assert [variant["weight"] for variant in link.variants] == [70, 30]
    page = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk])).content
    assert "70% → https://example.com/a" in page.decode()


def test_staff_who_may_only_look_get_no_edit_button(client, user, django_user_model):
    from django.contrib.auth.models import Permission

    looker = django_user_model.objects.create_user("looker", password="x", is_staff=True)
    looker.user_permissions.add(Permission.objects.get(codename="view_urllink"))
    client.force_login(looker)
    link = UrlLinkFactory(owner=user)
    html = client.get(reverse("admin:links_urllink_change", args=[link.pk])).content.decode()
    assert "Revoke this link" not in html
    assert reverse("link_edit", args=[link.code]) not in html
