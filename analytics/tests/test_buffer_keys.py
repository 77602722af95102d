"""An upgrade from the untagged buffer key names (before the Redis Cluster hash tag) loses no
buffered visit: the first flush takes over what the old names hold."""

import pytest

from analytics import buffer, services
from analytics.models import VisitRecord
from analytics.services import ingest
from analytics.tests.visits import visit_message
from core.redis_conn import redis_client

pytestmark = pytest.mark.django_db


def test_visits_buffered_under_the_old_key_names_are_stored(requires_redis, make_link, monkeypatch):
    link = make_link()
    client = redis_client()
    client.rpush("analytics:visits", *[visit_message(link) for _ in range(5)])
    client.rpush("analytics:visits:processing", *[visit_message(link) for _ in range(2)])
    client.rpush(buffer.VISITS_KEY, visit_message(link))
    monkeypatch.setitem(ingest._untagged_keys_adopted, "done", False)
    while services.flush_pending():
        pass
    assert VisitRecord.objects.filter(link=link).count() == 8
    assert not client.exists("analytics:visits", "analytics:visits:processing")
