"""link_list as the My links page and the API use it."""

import pytest

from analytics import services as analytics_services
from analytics.tests.conftest import record
from links import selectors, services

pytestmark = pytest.mark.django_db


def test_most_clicked_first(user):
    quiet = services.shorten(user, "https://example.com/quiet").link
    busy = services.shorten(user, "https://example.com/busy").link
    some = services.shorten(user, "https://example.com/some").link
    analytics_services.store_visits(
        records=[record(busy, ip=f"198.51.100.{i}") for i in range(3)]
        + [record(some, ip="198.51.100.9")]
    )
    ordered = list(selectors.link_list(user=user, order="clicks"))
    assert [link.code for link in ordered] == [busy.code, some.code, quiet.code]


def test_search_and_active_filter(user, other_user):
    kept = services.shorten(user, "https://example.com/spring", title="Spring sale").link
    stopped = services.shorten(user, "https://example.com/winter").link
    services.revoke(stopped.code, user)
    services.shorten(other_user, "https://example.com/spring-too")
    assert [link.code for link in selectors.link_list(user=user, search="spring")] == [kept.code]
    assert [link.code for link in selectors.link_list(user=user, active=False)] == [stopped.code]
    assert [link.code for link in selectors.link_list(user=user, active=True)] == [kept.code]
