"""A link before its start (valid_since, issue #27) as a visitor meets it: the "not live yet"
page (404, never cached, nothing counted), then, once the start has passed, the redirect from
the same cached entry with no edit and no database read, its visit counted once. Both entry
points (Django's view and the WSGI fast path) and both modes (the embedded process cache, and
Redis's entry read by the fused Lua call)."""

from __future__ import annotations

import time
from datetime import UTC, timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analytics.models import VisitRecord
from links import cache as link_cache
from links.cache import LinkEntry
from links.models import UrlLink
from links.services.change import link_update
from links.services.create import link_create
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
TARGET = "https://example.com/launch"
LEAD = 5.0  # seconds between now and the test link's start


def visits(link: UrlLink) -> int:
    call_command("drain_visits", verbosity=0)  # services mode: store what the buffer holds
    return VisitRecord.objects.filter(link=link).count()


def _link_queries(queries) -> list[str]:
    return [
        q["sql"]
        for q in queries
        if "links_urllink" in q["sql"] and "code" in q["sql"].split("WHERE", 1)[-1]
    ]


@pytest.fixture
def later(user) -> UrlLink:
    start = timezone.now() + timedelta(seconds=LEAD)
    return link_create(user=user, long_url=TARGET, valid_since=start).link


@pytest.fixture
def clock(monkeypatch):
    """`clock(seconds)`: from now on the redirect's clock (time.time, which it compares the
    start with) reads that many seconds later, as if they had passed."""
    real = time.time

    def move(seconds: float) -> None:
        monkeypatch.setattr(time, "time", lambda: real() + seconds)

    return move


def test_before_its_start_a_visitor_gets_the_not_yet_page_never_cached(client, later):
    response = client.get(f"/{later.code}", HTTP_USER_AGENT=BROWSER)
    assert response.status_code == 404  # as Shlink answers a short URL not valid yet
    assert response["Cache-Control"] == "private, max-age=0"
    assert "Location" not in response
    page = response.content.decode()
    assert "This short link is not live yet" in page
    assert f"/{later.code}" in page
    starts = later.valid_since.astimezone(UTC)
    assert f"{starts:%Y-%m-%d %H:%M} UTC" in page
    head = client.head(f"/{later.code}")
    assert (head.status_code, head["Cache-Control"]) == (404, "private, max-age=0")
    assert visits(later) == 0


# Committed data: the production entry point recycles the connection a cache miss used.
@pytest.mark.django_db(transaction=True)
def test_the_fast_path_answers_the_same(later):
    status, headers, body = call_wsgi(f"/{later.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert status == "404 Not Found"
    assert headers["Cache-Control"] == "private, max-age=0"
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "Content-Security-Policy" in headers  # the page family's security headers
    assert b"not live yet" in body
    status, headers, body = call_wsgi(f"/{later.code}", method="HEAD")
    assert (status, headers["Cache-Control"], body) == ("404 Not Found", "private, max-age=0", b"")
    assert visits(later) == 0


def test_the_cached_entry_goes_live_by_itself_and_counts_the_visit(client, later, clock):
    assert client.get(f"/{later.code}", HTTP_USER_AGENT=BROWSER).status_code == 404  # cached
    assert client.get(f"/{later.code}", HTTP_USER_AGENT=BROWSER).status_code == 404
    clock(LEAD + 1)  # the start has passed; nobody edited the link
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/{later.code}", HTTP_USER_AGENT=BROWSER)
    assert (response.status_code, response["Location"]) == (302, TARGET)
    assert _link_queries(captured.captured_queries) == []  # the same cached entry answered
    assert visits(later) == 1  # the two clicks before the start counted nowhere


# Committed data: the production entry point recycles the connection a cache miss used.
@pytest.mark.django_db(transaction=True)
def test_the_fast_path_goes_live_by_itself_too(later, clock):
    assert call_wsgi(f"/{later.code}")[0] == "404 Not Found"
    clock(LEAD + 1)
    status, headers, _ = call_wsgi(f"/{later.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert (status, headers["Location"]) == ("302 Found", TARGET)
    assert visits(later) == 1


def test_an_edit_of_the_start_is_followed_at_once(client, user, later):
    assert client.get(f"/{later.code}").status_code == 404
    link_update(code=later.code, user=user, valid_since=None)
    assert client.get(f"/{later.code}")["Location"] == TARGET
    link_update(code=later.code, user=user, valid_since=timezone.now() + timedelta(hours=1))
    assert client.get(f"/{later.code}").status_code == 404


def test_a_password_or_a_cap_waits_for_the_start(client, user, clock):
    start = timezone.now() + timedelta(seconds=LEAD)
    locked = link_create(user=user, long_url=TARGET, valid_since=start, password="open sesame")
    capped = link_create(user=user, long_url=TARGET + "/capped", valid_since=start, max_visits=1)
    # No unlock form for a link not live yet, and no visit taken from the cap.
    for _ in range(3):
        for link in (locked.link, capped.link):
            response = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)
            assert response.status_code == 404
            assert b"not live yet" in response.content
    clock(LEAD + 1)
    assert client.get(f"/{locked.link.code}", HTTP_USER_AGENT=BROWSER).status_code == 200  # form
    first = client.get(f"/{capped.link.code}", HTTP_USER_AGENT=BROWSER)
    assert (first.status_code, first["Location"]) == (302, TARGET + "/capped")
    assert client.get(f"/{capped.link.code}", HTTP_USER_AGENT=BROWSER).status_code == 410
    assert visits(capped.link) == 1


def test_the_entry_keeps_the_start_while_it_is_to_come(later):
    entry = LinkEntry.from_link(later)
    assert entry.valid_since == later.valid_since.timestamp()
    assert entry.starts_later() and not entry.starts_later(entry.valid_since)
    assert not entry.counted_by_read and not entry.gated
    # The fused read must not count it: the revoked field says "decided here".
    text = entry.serialize()
    assert text.split("\t")[3] == "2"
    again = LinkEntry.parse(entry.key, text)
    assert (again.valid_since, again.counted_by_read, again.gated) == (
        entry.valid_since,
        False,
        False,
    )
    assert again.location == TARGET


def test_a_start_already_past_caches_as_a_plain_link(user):
    """Once past, a start can matter no more: the entry is a plain link's, counted by the fused
    read, in the five-field form older code reads."""
    past = link_create(
        user=user, long_url=TARGET, valid_since=timezone.now() - timedelta(minutes=1)
    ).link
    entry = LinkEntry.from_link(past)
    assert entry.valid_since is None and entry.counted_by_read
    fields = entry.serialize().split("\t")
    assert (len(fields), fields[3]) == (5, "0")


def test_redis_counts_the_visit_once_after_the_start_and_never_before(
    requires_redis, client, later, clock
):
    """The Lua call reads the entry and pushes the visit of a plain link in one round trip; a
    link with a start to come is never pushed there, and once live its visit is recorded by the
    redirect itself: one visit, not two, not none."""
    from core.redis_conn import redis_client

    for _ in range(3):
        assert client.get(f"/{later.code}", HTTP_USER_AGENT=BROWSER).status_code == 404
    raw = redis_client().get(link_cache.entry_key(link_cache.key_of_link(later)))
    assert raw is not None and raw.decode().split("\t")[3] == "2"
    clock(LEAD + 1)
    assert client.get(f"/{later.code}", HTTP_USER_AGENT=BROWSER).status_code == 302
    assert visits(later) == 1
