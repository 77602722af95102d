"""A stopped link's fallback (UrlLink.expired_url, issue #28) as a visitor meets it: an expired,
a revoked and a capped-out link with one answer 302 there instead of the 410 page, the visit
counted as the link's with its state noted, never taking one of the cap's visits; without one,
the 410 page as before; the domain's default (Domain.expired_redirect) when the link names none,
the link's own winning; a link not started yet keeps its "not live yet" page. Both entry points;
in services mode the same through the fused Lua read."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from analytics import selectors
from analytics.models import VisitRecord
from links import cache as link_cache
from links import visit_caps
from links.cache import LinkEntry
from links.models import DEFAULT_DOMAIN_ID, Domain, UrlLink
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
TARGET = "https://example.com/offer"
FALLBACK = "https://example.com/offer-ended"
DOMAIN_FALLBACK = "https://example.com/all-offers"


def stored(link: UrlLink) -> list[tuple[str, str]]:
    """(link_state, destination) of the link's stored visits, oldest first."""
    call_command("drain_visits", verbosity=0)  # services mode: store what the buffer holds
    rows = VisitRecord.objects.filter(link=link).order_by("visit_time", "id")
    return list(rows.values_list("link_state", "destination"))


def _expired(user, **options) -> UrlLink:
    link = link_create(user=user, long_url=TARGET, **options).link
    # Past its expiry: set on the row (the services refuse an expiry in the past), entry dropped.
    UrlLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    link.refresh_from_db()
    link_cache.drop(link_cache.key_of_link(link))
    return link


def test_an_expired_link_with_a_fallback_sends_visitors_there_and_counts_them(client, user):
    link = _expired(user, expired_url=FALLBACK)
    response = client.get(f"/{link.code}?utm_source=mail", HTTP_USER_AGENT=BROWSER)
    assert response.status_code == 302
    assert response["Location"] == FALLBACK  # as stored: the campaign's query stays behind
    assert response["Cache-Control"] == "private, max-age=0"
    assert stored(link) == [("expired", FALLBACK)]


def test_a_revoked_link_with_a_fallback_sends_visitors_there(client, user):
    link = link_create(user=user, long_url=TARGET, expired_url=FALLBACK).link
    link_revoke(code=link.code, user=user)
    response = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
    assert (response.status_code, response["Location"]) == (302, FALLBACK)
    assert stored(link) == [("revoked", FALLBACK)]


def test_a_capped_out_link_sends_the_next_people_to_the_fallback_without_using_the_cap(
    client, user
):
    link = link_create(user=user, long_url=TARGET, max_visits=1, expired_url=FALLBACK).link
    first = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
    assert (first.status_code, first["Location"]) == (302, TARGET)
    for n in range(3):
        later = client.get(f"/{link.code}", HTTP_USER_AGENT=f"{BROWSER} {n}")
        assert (later.status_code, later["Location"]) == (302, FALLBACK)
    assert stored(link) == [("", "")] + [("limit_reached", FALLBACK)] * 3
    # The cap's counter saw one visit: the fallback's three never count toward it.
    assert visit_caps.live_counts({link.pk: 0})[link.pk] == 1
    stats = selectors.link_stats(
        link=link, start=link.created_at, end=timezone.now() + timedelta(hours=1)
    )
    assert stats["total_clicks"] == 4  # the link's visits, all of them
    assert stats["sent_to_fallback"] == 3
    assert [(entry["state"], entry["clicks"]) for entry in stats["fallbacks"]] == [
        ("limit_reached", 3)
    ]


def test_a_capped_password_link_sends_visitors_to_the_fallback_before_asking(client, user):
    link = link_create(
        user=user, long_url=TARGET, max_visits=1, password="open-sesame", expired_url=FALLBACK
    ).link
    UrlLink.objects.filter(pk=link.pk).update(visits_used=1)  # used up before this node started
    response = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
    assert (response.status_code, response["Location"]) == (302, FALLBACK)
    assert stored(link) == [("limit_reached", FALLBACK)]


@pytest.mark.parametrize("stop", ["expired", "revoked", "limit_reached"])
def test_without_a_fallback_the_410_page_answers_as_before(client, user, stop):
    if stop == "expired":
        link = _expired(user)
    else:
        link = link_create(user=user, long_url=TARGET, max_visits=1).link
        if stop == "revoked":
            link_revoke(code=link.code, user=user)
        else:
            client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
    response = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
    assert response.status_code == 410
    assert "Location" not in response
    assert [state for state, _ in stored(link)] == ([""] if stop == "limit_reached" else [])


def test_the_domain_default_catches_links_without_their_own_and_the_link_s_own_wins(client, user):
    domain_save(
        domain=Domain.objects.get(pk=DEFAULT_DOMAIN_ID),
        host="",
        expired_redirect=DOMAIN_FALLBACK,
    )
    plain = link_create(user=user, long_url=TARGET, title="no fallback").link
    own = link_create(user=user, long_url=TARGET, expired_url=FALLBACK).link
    for link in (plain, own):
        link_revoke(code=link.code, user=user)
    assert client.get(f"/{plain.code}")["Location"] == DOMAIN_FALLBACK
    assert client.get(f"/{own.code}")["Location"] == FALLBACK
    assert stored(plain) == [("revoked", DOMAIN_FALLBACK)]


def test_a_link_not_started_yet_keeps_its_not_yet_page(client, user):
    start = timezone.now() + timedelta(hours=1)
    link = link_create(user=user, long_url=TARGET, valid_since=start, expired_url=FALLBACK).link
    response = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
    assert response.status_code == 404
    assert "not live yet" in response.content.decode()
    assert stored(link) == []


def test_a_head_is_sent_on_and_never_counted(client, user):
    link = _expired(user, expired_url=FALLBACK)
    response = client.head(f"/{link.code}")
    assert (response.status_code, response["Location"]) == (302, FALLBACK)
    assert stored(link) == []


def test_the_fallback_may_be_set_on_a_revoked_link_and_removed(client, user):
    link = link_create(user=user, long_url=TARGET).link
    link_revoke(code=link.code, user=user)
    link_update(code=link.code, user=user, expired_url=FALLBACK)
    assert client.get(f"/{link.code}")["Location"] == FALLBACK
    link_update(code=link.code, user=user, expired_url=None)
    assert client.get(f"/{link.code}").status_code == 410


# Committed data: the production entry point recycles the connection a cache miss used.
@pytest.mark.django_db(transaction=True)
def test_the_fast_path_sends_the_same_302(user):
    link = _expired(user, expired_url=FALLBACK)
    for _ in range(2):  # a miss, then the cached entry
        status, headers, body = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})
        assert (status, headers["Location"], body) == ("302 Found", FALLBACK, b"")
    assert stored(link) == [("expired", FALLBACK)] * 2


def test_the_cached_entry_keeps_the_fallback_and_a_plain_link_stays_counted_by_the_read(user):
    link = link_create(user=user, long_url=TARGET, expired_url=FALLBACK).link
    entry = LinkEntry.from_link(link)
    text = entry.serialize()
    assert text.split("\t")[3] == "0"  # the fused read still counts its live clicks
    assert LinkEntry.parse(entry.key, text) == entry
    assert LinkEntry.parse(entry.key, text).fallback == FALLBACK
    plain = LinkEntry.from_link(link_create(user=user, long_url=TARGET + "/plain").link)
    assert len(plain.serialize().split("\t")) == 5  # no fallback: the old five-field form
