"""Admin for staff: links with their clicks, revoke and cache actions, the code pool."""

import re

import pytest
from django.urls import reverse

from analytics.tests.factories import add_visits
from links import cache as link_cache
from links.models import UniqueCode, UniqueCodeStatus
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:links_urllink_changelist")


def test_non_staff_are_sent_to_the_admin_login(client, user):
    client.force_login(user)
    for url in (reverse("admin:index"), CHANGELIST):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))


def test_anonymous_visitors_are_sent_to_the_admin_login(client):
    response = client.get(CHANGELIST)
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def test_changelist_shows_code_linked_to_short_url_clicks_and_status(admin_client, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/" + "x" * 120, alias="promo")
    add_visits(link, 4)
    add_visits(link, 2, bot=True)
    response = admin_client.get(CHANGELIST)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<a href="/promo" target="_blank"' in html
    assert "x" * 120 not in html  # long URL truncated
    result = response.context["cl"].result_list[0]
    assert result.total_clicks == 4  # people only; bots are not clicks
    assert '<td class="field-clicks">4</td>' in html
    assert "Active" in html


def test_changelist_search_and_status_filter(admin_client, user):
    UrlLinkFactory(
        owner=user, long_url="https://example.com/alpha", alias="alpha-1", title="Spring"
    )
    UrlLinkFactory(owner=user, long_url="https://example.com/beta", alias="beta-1", revoked=True)

    def codes(**params):
        return [
            link.code for link in admin_client.get(CHANGELIST, params).context["cl"].result_list
        ]

    assert codes(q="alpha-1") == ["alpha-1"]
    assert codes(q="Spring") == ["alpha-1"]
    assert codes(q="example.com/beta") == ["beta-1"]
    assert codes(status="revoked") == ["beta-1"]
    assert codes(status="active") == ["alpha-1"]


def test_changelist_query_count_does_not_grow_with_rows(
    admin_client, user, django_assert_max_num_queries
):
    def count_queries():
        with django_assert_max_num_queries(40) as captured:
            assert admin_client.get(CHANGELIST).status_code == 200
        return len(captured.captured_queries)

    add_visits(UrlLinkFactory(owner=user), 1)
    few = count_queries()
    for link in UrlLinkFactory.create_batch(12, owner=user):
        add_visits(link, 1)
    many = count_queries()
    assert few == many, (few, many)


def test_revoke_action_stops_the_links(admin_client, user, client):
    link = UrlLinkFactory(owner=user)
    assert client.get(f"/{link.code}").status_code == 302  # cached as active
    response = admin_client.post(
        CHANGELIST, {"action": "revoke_links", "_selected_action": [link.pk]}, follow=True
    )
    assert "Revoked 1 link(s)." in response.content.decode()
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert client.get(f"/{link.code}").status_code == 410


def test_refresh_cache_action_drops_the_cached_entry(admin_client, user, client):
    link = UrlLinkFactory(owner=user)
    client.get(f"/{link.code}")
    assert link_cache.get_entry(link.code)
    response = admin_client.post(
        CHANGELIST, {"action": "refresh_link_cache", "_selected_action": [link.pk]}, follow=True
    )
    assert "Dropped the cached entry of 1 link(s)" in response.content.decode()
    assert link_cache.get_entry(link.code) is None


def test_change_page_is_read_only_with_chart_and_latest_visits(admin_client, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/detail")
    add_visits(link, 3, country="Japan", country_code="JP")
    url = reverse("admin:links_urllink_change", args=[link.pk])
    response = admin_client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Clicks in the last 7 days: 3 by people" in html
    assert 'id="admin-chart-data"' in html
    assert html.count("Japan") >= 3  # the latest visits table
    assert 'name="_save"' not in html  # nothing to save: links change through services
    assert sum(response.context["chart"]["clicks"]) == 3
    # A POST cannot change it either.
    admin_client.post(url, {"long_url": "https://evil.example/"})
    link.refresh_from_db()
    assert link.long_url == "https://example.com/detail"


def test_the_link_page_lists_bots_too_each_by_name_and_kind(admin_client, user):
    """Staff reviewing a link see every visit (the stats page hides bots unless asked); a bot
    reads as its name and kind, one stored before bots were named as "unnamed bot"."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/bots")
    add_visits(link)
    add_visits(link, bot=True)
    add_visits(link, is_bot=True, device_type="Bot")
    html = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk])).content
    latest = html.decode().split("<h2>Latest visits</h2>")[1]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in latest.split("<tr>")[2:]]
    # Time, Country, City, Browser, OS, Device, Bot, …
    assert sorted(cells[6] for cells in rows) == ["Googlebot (Search engine)", "no", "unnamed bot"]


def test_links_cannot_be_added_or_deleted_in_the_admin(admin_client, user):
    link = UrlLinkFactory(owner=user)
    assert admin_client.get(reverse("admin:links_urllink_add")).status_code == 403
    assert (
        admin_client.get(reverse("admin:links_urllink_delete", args=[link.pk])).status_code == 403
    )


# --- Code pool --------------------------------------------------------------------------------


def test_pool_changelist_shows_counts_by_status(admin_client):
    UniqueCode.objects.bulk_create(
        [UniqueCode(code=f"u{i:05d}x") for i in range(3)]
        + [UniqueCode(code=f"s{i:05d}x", status=UniqueCodeStatus.USED) for i in range(2)]
    )
    response = admin_client.get(reverse("admin:links_uniquecode_changelist"))
    assert response.status_code == 200
    assert response.context["pool"]["unused"] == 3
    assert response.context["pool"]["used"] == 2
    html = response.content.decode()
    assert "Unused: <strong>3</strong>" in html
    assert "Refill pool now" in html


def test_refill_button_adds_codes(admin_client, settings):
    settings.SHORTURL_POOL_BATCH = 150
    response = admin_client.post(reverse("admin:links_uniquecode_refill"), follow=True)
    assert "Added 150 fresh codes to the pool" in response.content.decode()
    assert UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED).count() == 150


def test_refill_is_post_only(admin_client):
    assert admin_client.get(reverse("admin:links_uniquecode_refill")).status_code == 405


def test_refill_is_refused_to_non_staff(client, user):
    client.force_login(user)
    client.post(reverse("admin:links_uniquecode_refill"))
    assert not UniqueCode.objects.exists()


def test_pool_changelist_query_count_does_not_grow(admin_client, django_assert_max_num_queries):
    def count_queries():
        with django_assert_max_num_queries(30) as captured:
            admin_client.get(reverse("admin:links_uniquecode_changelist"))
        return len(captured.captured_queries)

    UniqueCode.objects.create(code="aaaaaaa")
    few = count_queries()
    UniqueCode.objects.bulk_create([UniqueCode(code=f"b{i:06d}") for i in range(60)])
    assert count_queries() == few


def test_expired_filter(admin_client, user):
    link = UrlLinkFactory(owner=user, expired=True)
    UrlLinkFactory(owner=user)
    UrlLinkFactory(owner=user, revoked=True)
    result = admin_client.get(CHANGELIST, {"status": "expired"}).context["cl"].result_list
    assert [row.code for row in result] == [link.code]


def test_changelist_filters_by_tag_and_archived_and_the_page_shows_tags(admin_client, user):
    from links.services.create import link_create

    tagged = link_create(user=user, long_url="https://example.com/t", tags=["Spring", "mail"]).link
    archived = link_create(user=user, long_url="https://example.com/a", archived=True).link

    def codes(**params):
        return {
            link.code for link in admin_client.get(CHANGELIST, params).context["cl"].result_list
        }

    assert codes(tag="spring") == {tagged.code}
    assert codes(archived__exact="1") == {archived.code}
    assert codes(archived__exact="0") == {tagged.code}
    html = admin_client.get(reverse("admin:links_urllink_change", args=[tagged.pk])).content
    assert "mail, Spring" in html.decode()
