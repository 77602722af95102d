"""A database outage while visits are buffered: the flush waits for the database instead of
counting failed attempts, which after MAX_ATTEMPTS sent every buffered visit to the dead list.
Services mode (MariaDB + Redis). The outage is real: the connection is pointed at a loopback
port where nothing listens, never at the shared server stopped."""

import socket

import pytest
from django.db import DatabaseError, connection

from analytics import buffer, selectors, services
from analytics.models import VisitRecord
from analytics.services import ingest
from analytics.tests.visits import visit_message
from core.redis_conn import redis_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("requires_mysql")]


@pytest.fixture
def buffered(requires_redis, settings):
    settings.ANALYTICS_FLUSH_LANES = 1
    client = redis_client()
    yield client
    lane = buffer.lane(0)
    client.delete(lane.processing, lane.attempts, lane.lock, buffer.DEAD_KEY)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


@pytest.fixture
def database_down():
    """Within the block, the database refuses every connection; afterwards it is back."""
    settings_dict = connection.settings_dict
    saved = settings_dict["HOST"], settings_dict["PORT"]

    class Outage:
        def __enter__(self):
            connection.close()
            settings_dict["HOST"], settings_dict["PORT"] = "127.0.0.1", str(_closed_port())

        def __exit__(self, *exc):
            connection.close()
            settings_dict["HOST"], settings_dict["PORT"] = saved

    yield Outage()
    connection.close()
    settings_dict["HOST"], settings_dict["PORT"] = saved


def test_visits_buffered_during_an_outage_are_all_stored_once_it_ends(
    buffered, make_link, database_down
):
    link = make_link()
    messages = [visit_message(link, ip=f"198.51.100.{n}") for n in range(20)]
    buffered.rpush(buffer.VISITS_KEY, *messages)

    with database_down:
        for _ in range(services.MAX_ATTEMPTS + 2):
            assert services.flush_pending(max_seconds=0) == 0

    assert buffered.llen(buffer.DEAD_KEY) == 0, "an outage sends no visit to the dead list"
    assert services.flush_pending(max_seconds=0) == 20
    assert VisitRecord.objects.filter(link=link).count() == 20
    assert selectors.pipeline_status()["processing"] == 0


def test_an_outage_in_the_middle_of_a_batch_is_not_counted_against_it(
    buffered, make_link, database_down, monkeypatch
):
    """The database goes away while a batch is being stored, again and again: the batch is
    kept whole for when it is back, never split up and buried."""
    link = make_link()
    buffered.rpush(buffer.VISITS_KEY, *[visit_message(link) for _ in range(5)])
    real_store = ingest._store

    def store_as_the_database_goes(visits):
        database_down.__enter__()
        return real_store(visits)

    monkeypatch.setattr(ingest, "_store", store_as_the_database_goes)
    for _ in range(services.MAX_ATTEMPTS + 2):
        with pytest.raises(DatabaseError):
            services.flush_pending(max_seconds=0)
        database_down.__exit__()
    monkeypatch.setattr(ingest, "_store", real_store)

    assert buffered.llen(buffer.DEAD_KEY) == 0
    assert services.flush_pending(max_seconds=0) == 5
    assert VisitRecord.objects.filter(link=link).count() == 5
