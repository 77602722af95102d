"""Visit caps counted where the redirect is (links.visit_caps): Redis in services mode, the
node's files in the embedded mode; the link row is the durable count they start from and are
saved back to. Run in both suites: each test meets the mode's own counter."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from core.redis_conn import redis_client, redis_failed, uses_redis
from links import visit_caps
from links.models import UrlLink
from links.services.create import link_create
from links.services.gates import visits_left
from links.tests.helpers import call_wsgi, redis_calls

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"


@pytest.fixture
def capped(user):
    return link_create(user=user, long_url="https://example.com/offer", max_visits=3).link


def click(client, link) -> int:
    return client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER).status_code


def row_count(link) -> int:
    return UrlLink.objects.values_list("visits_used", flat=True).get(pk=link.pk)


def lose_the_counter(link) -> None:
    """What a Redis restart (or an evicted key) or a wiped state dir does to a counter."""
    if uses_redis():
        redis_client().delete(visit_caps.REDIS_KEY.format(link.pk))
    else:
        visit_caps._counter_path(link.pk).unlink()


def test_a_person_s_click_on_a_capped_link_makes_no_database_query(
    client, capped, django_assert_num_queries
):
    assert click(client, capped) == 302  # the first click reads the row's count to start from
    with django_assert_num_queries(0):
        assert click(client, capped) == 302
        assert click(client, capped) == 302
        assert click(client, capped) == 410
    assert visits_left(capped) == 0


def test_the_row_follows_the_counter_once_saved_and_is_never_lowered(client, capped):
    click(client, capped)
    click(client, capped)
    assert row_count(capped) == 0  # the row lags: saved by the node's runner
    assert visits_left(capped) == 1  # what the API and the pages show is the live count

    assert visit_caps.save_counts() == 1
    assert row_count(capped) == 2
    UrlLink.objects.filter(pk=capped.pk).update(visits_used=3)  # ahead: taken on the row
    visit_caps.save_counts()
    assert row_count(capped) == 3


def test_a_lost_counter_starts_again_from_the_saved_count(client, capped):
    click(client, capped)
    click(client, capped)
    visit_caps.save_counts()
    lose_the_counter(capped)

    assert click(client, capped) == 302  # the third and last
    assert click(client, capped) == 410


def test_a_capped_link_s_bots_and_head_requests_take_nothing(client, capped):
    for _ in range(5):
        assert client.head(f"/{capped.code}").status_code == 403
        assert client.get(f"/{capped.code}", HTTP_USER_AGENT="Googlebot/2.1").status_code == 403
    assert visits_left(capped) == 3


@pytest.mark.django_db(transaction=True)
def test_racing_clicks_through_the_fast_path_take_exactly_the_cap(user):
    """Eight threads, 40 clicks, a cap of 7: the counter's take is atomic (Redis's Lua, or the
    file's exclusive lock), so exactly 7 get through. In the embedded suite no click writes to
    the in-memory database, which cannot take concurrent writers."""
    link = link_create(user=user, long_url="https://example.com/race", max_visits=7).link
    call_wsgi(f"/{link.code}", method="HEAD")  # the counter starts from the row here, once

    def one(_):
        from django.db import connection

        try:
            return call_wsgi(f"/{link.code}")[0][:3]
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(one, range(40)))
    assert (statuses.count("302"), statuses.count("410")) == (7, 33)
    visit_caps.save_counts()
    assert row_count(link) == 7


def test_while_redis_is_unreachable_the_row_counts_and_redis_catches_up(
    requires_redis, client, capped
):
    click(client, capped)  # one taken in Redis
    visit_caps.save_counts()
    redis_failed(ConnectionError("test: Redis unreachable"), consequence="-")
    assert click(client, capped) == 302  # counted on the row
    assert row_count(capped) == 2
    from core.redis_conn import reset_redis_state

    reset_redis_state()  # Redis is back
    visit_caps.save_counts()  # raises the Redis counter to the row's 2
    assert click(client, capped) == 302
    assert click(client, capped) == 410


def test_a_page_of_capped_links_shows_each_live_count_read_together(client, user):
    from links.tests.helpers import client_for

    links = [
        link_create(user=user, long_url=f"https://example.com/c{i}", max_visits=5).link
        for i in range(12)
    ]
    for link in links[:6]:
        click(client, link)
    mgets_before = redis_calls("mget")

    page = client_for(user).get("/api/v1/links/", {"page_size": 50}).json()["results"]

    left = {item["code"]: item["visits_left"] for item in page}
    assert left == {link.code: 4 if index < 6 else 5 for index, link in enumerate(links)}
    if uses_redis():  # one MGET for the page, not a round trip per link
        assert redis_calls("mget") - mgets_before == 1
