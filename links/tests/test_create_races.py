"""One owner shortening the same URL many times at once gets one link (issue #12, row 1).

Real threads, each with its own database connection, released together: the race is between
transactions, so the test needs committed data (transaction=True) and a database that runs
them side by side (MariaDB; SQLite's write lock and several server processes are covered by
e2e/test_creation_policy.py).
"""

from collections import Counter

import pytest

from links.codes import pool
from links.models import UrlLink
from links.services.bulk import link_create_many
from links.services.create import link_create
from links.tests.concurrency import all_at_once

pytestmark = pytest.mark.django_db(transaction=True)

CALLERS = 24


@pytest.mark.parametrize("strategy", ["pool", "sequence", "hash"])
def test_concurrent_plain_creates_of_one_url_give_one_link(
    requires_mysql, settings, user, strategy
):
    settings.SHORTURL_CODE_STRATEGY = strategy
    url = "https://example.com/raced"
    results, errors = all_at_once(CALLERS, lambda i: link_create(user=user, long_url=url))

    assert errors == []
    stored = list(UrlLink.objects.filter(owner=user, long_url=url).values_list("code", flat=True))
    assert len(stored) == 1, f"{len(stored)} links for one URL: {stored}"
    assert Counter(result.created for result in results) == {True: 1, False: CALLERS - 1}
    assert {result.link.code for result in results} == set(stored)


def test_concurrent_bulk_calls_and_creates_of_one_url_give_one_link(requires_mysql, user):
    url = "https://example.com/raced-in-bulk"

    def call(i: int) -> str:
        if i % 2:
            return link_create(user=user, long_url=url).link.code
        results = link_create_many(
            user=user, items=[{"long_url": url}, {"long_url": f"https://example.com/own/{i}"}]
        )
        assert results[0].errors is None, results[0].errors
        return results[0].link.code

    codes, errors = all_at_once(CALLERS, call)

    assert errors == []
    stored = list(UrlLink.objects.filter(owner=user, long_url=url).values_list("code", flat=True))
    assert len(stored) == 1, f"{len(stored)} links for one URL: {stored}"
    assert set(codes) == set(stored)


@pytest.mark.parametrize("pool_source", ["redis set when configured", "database rows only"])
def test_other_owners_and_links_with_options_are_not_held_back(
    requires_mysql, monkeypatch, user, other_user, pool_source
):
    """The guarantee is per owner and per plain request: others still get their own links, and
    creates with and without options of one owner, side by side, never deadlock."""
    if pool_source == "database rows only":
        monkeypatch.setattr(pool, "live_redis_client", lambda: None)
    url = "https://example.com/shared-target"

    def call(i: int):
        if i % 3 == 0:
            return link_create(user=other_user, long_url=url)
        if i % 3 == 1:
            return link_create(user=user, long_url=url, title=f"campaign {i}")
        return link_create(user=user, long_url=url)

    _, errors = all_at_once(CALLERS, call)

    assert errors == []
    mine_plain = UrlLink.objects.filter(owner=user, long_url=url, title="")
    assert mine_plain.count() == 1
    assert UrlLink.objects.filter(owner=other_user, long_url=url).count() == 1
    assert UrlLink.objects.filter(owner=user, long_url=url).exclude(title="").count() == (
        CALLERS // 3
    )


def test_codes_refilled_inside_a_transaction_are_handed_out_only_after_it_commits(
    requires_redis, user
):
    """A create that refills the empty pool inline holds its new rows until it commits: a code
    handed out before then makes another create wait on it, and two such creates each waiting
    for the other's codes deadlock."""
    from django.db import transaction

    from core.redis_conn import redis_client

    redis_client().delete(pool.POOL_SET_KEY)
    with transaction.atomic():
        assert pool.pool_refill(batch=5) == 5
        assert redis_client().scard(pool.POOL_SET_KEY) == 0
    assert redis_client().scard(pool.POOL_SET_KEY) == 5
