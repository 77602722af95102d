"""link_list as the My links page and the API use it."""

import pytest

from analytics import services as analytics_services
from analytics.tests.visits import visit_message as record
from links import selectors
from links.services.change import link_revoke
from links.services.create import link_create

pytestmark = pytest.mark.django_db


def test_most_clicked_first(user):
    quiet = link_create(user=user, long_url="https://example.com/quiet").link
    busy = link_create(user=user, long_url="https://example.com/busy").link
    some = link_create(user=user, long_url="https://example.com/some").link
    analytics_services.store_visits(
        messages=[record(busy, ip=f"198.51.100.{i}") for i in range(3)]
        + [record(some, ip="198.51.100.9")]
    )
    ordered = list(selectors.link_list(user=user, order="clicks"))
    assert [link.code for link in ordered] == [busy.code, some.code, quiet.code]


def test_search_and_active_filter(user, other_user):
    kept = link_create(user=user, long_url="https://example.com/spring", title="Spring sale").link
    stopped = link_create(user=user, long_url="https://example.com/winter").link
    link_revoke(code=stopped.code, user=user)
    link_create(user=other_user, long_url="https://example.com/spring-too")
    assert [link.code for link in selectors.link_list(user=user, search="spring")] == [kept.code]
    assert [link.code for link in selectors.link_list(user=user, active=False)] == [stopped.code]
    assert [link.code for link in selectors.link_list(user=user, active=True)] == [kept.code]
