"""Orphan visits (#16): requests that reach no link (an unknown code, a short domain's bare root,
a host that is none of ours) are counted in memory on the 404 path and written by each process
in the background; staff see them on the overview, by path and by referrer. A flood of made-up
paths keeps its total exact with a bounded number of rows."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analytics import orphans
from analytics.models import OrphanVisitCount
from analytics.selectors import orphan_visit_slice, orphan_visit_total
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi

# Transactional: the WSGI fast path recycles the connection after a read, which on MariaDB would
# end a wrapping test transaction.
pytestmark = pytest.mark.django_db(transaction=True)


def _get(path: str, host: str = "testserver", referrer: str = "") -> str:
    extra = {"HTTP_HOST": host}
    if referrer:
        extra["HTTP_REFERER"] = referrer
    return call_wsgi(path, extra=extra)[0]


def _counted() -> dict[tuple[str, str, str, str], int]:
    return {
        (row.kind, row.host, row.path, row.referrer): row.count
        for row in OrphanVisitCount.objects.all()
    }


def test_unknown_codes_bare_roots_and_strange_hosts_are_counted_without_a_query(user):
    domain_save(host="go.example.test")
    link_create(user=user, long_url="https://example.com/real", alias="real-one")
    _get("/real-one")  # warm: a link that exists is no orphan
    _get("/nothing-here")  # the domain table and alias set are read once
    orphans.forget_counts()
    with CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            assert _get("/nothing-here", referrer="https://mail.example/").startswith("404")
        assert _get("/", host="go.example.test").startswith("404")
        assert _get("/real-one", host="stranger.example.test").startswith("404")
        assert _get("/real-one").startswith("302")
    assert len(queries.captured_queries) == 0
    assert OrphanVisitCount.objects.count() == 0  # nothing written on the request path

    assert orphans.flush_orphans() == 3
    assert _counted() == {
        ("unknown_code", "testserver", "/nothing-here", "https://mail.example/"): 3,
        ("bare_root", "go.example.test", "/", ""): 1,
        ("unknown_host", "stranger.example.test", "/real-one", ""): 1,
    }
    _get("/nothing-here", referrer="https://mail.example/")
    orphans.flush_orphans()
    assert _counted()[("unknown_code", "testserver", "/nothing-here", "https://mail.example/")] == 4


def test_orphan_visits_of_one_host_in_the_total_and_the_slice():
    """The host filter (Shlink's `domain` on orphan visits) reads the host as counted: whatever
    case or port the request's Host had."""
    for _ in range(2):
        _get("/gone", host="Go.Example.Test:8000")
    _get("/gone")
    _get("/also-gone")
    orphans.flush_orphans()
    assert orphan_visit_total(host="go.example.test") == 2
    assert orphan_visit_total(host="testserver") == 2
    assert orphan_visit_total(host="nowhere.example") == 0
    assert orphan_visit_total() == 4
    rows = orphan_visit_slice(offset=0, limit=10, host="go.example.test")
    assert [(row.host, row.path, many) for row, many in rows] == [("go.example.test", "/gone", 2)]
    assert sum(many for _, many in orphan_visit_slice(offset=1, limit=10, host="testserver")) == 1


def test_a_flood_of_made_up_paths_keeps_its_total_in_a_bounded_number_of_rows(settings):
    settings.ORPHAN_VISITS_MAX_KEYS = 5
    for index in range(40):
        _get(f"/made-up-{index}")
    orphans.flush_orphans()
    rows = _counted()
    assert len(rows) == 6  # the first five paths, then one row for the rest
    assert rows[("unknown_code", "testserver", orphans.OTHER_PATHS, "")] == 35
    assert sum(rows.values()) == 40


def test_staff_see_the_most_asked_paths_and_their_referrers_on_the_overview(admin_client):
    for _ in range(2):
        _get("/old-campaign", referrer="https://news.example/post")
    _get("/typo-link")
    orphans.flush_orphans()
    response = admin_client.get("/dashboard/overview/")
    page = response.content.decode()
    assert 'data-testid="orphan-visits"' in page, (response.status_code, page[:3000])
    section = page[page.index('data-testid="orphan-visits"') :]
    assert "3 in this period" in section
    assert "testserver/old-campaign" in section and "testserver/typo-link" in section
    assert section.index("old-campaign") < section.index("typo-link")  # most asked first
    assert "https://news.example/post" in section
