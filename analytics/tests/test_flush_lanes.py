"""Flush lanes: several batches stored side by side by one flush (threads with their own database
connections), with nothing lost or stored twice. Services mode only (Redis and MariaDB): the
lanes' threads must see committed links, hence transactional tests."""

import threading

import pytest

from analytics import buffer, selectors, services
from analytics.models import HourlyClick, VisitRecord
from analytics.services import ingest, inserts
from analytics.tests.visits import SAFARI_IPHONE, visit_message
from core.redis_conn import redis_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("requires_mysql")]


@pytest.fixture
def lanes_buffer(requires_redis, settings):
    client = redis_client()
    settings.ANALYTICS_FLUSH_LANES = 3
    yield client
    for number in range(buffer.MAX_LANES):
        lane = buffer.lane(number)
        client.delete(lane.processing, lane.attempts, lane.lock)


@pytest.fixture
def stores_by_thread(monkeypatch):
    """Which threads stored batches, and how many visits each."""
    seen: dict[str, int] = {}
    guard = threading.Lock()
    real_store = ingest._store

    def store(visits):
        with guard:
            name = threading.current_thread().name
            seen[name] = seen.get(name, 0) + len(visits)
        return real_store(visits)

    monkeypatch.setattr(ingest, "_store", store)
    return seen


def test_lanes_share_a_backlog_and_store_every_visit_once(
    lanes_buffer, make_link, stores_by_thread
):
    links = [make_link(f"https://example.com/{n}") for n in range(4)]
    messages = [
        visit_message(links[n % 4], ip=f"198.51.100.{n % 200}", ua=SAFARI_IPHONE)
        for n in range(1200)
    ]
    lanes_buffer.rpush(buffer.VISITS_KEY, *messages)

    assert services.flush_pending(batch_size=50) == 1200

    assert VisitRecord.objects.count() == 1200
    assert VisitRecord.objects.values("event_id").distinct().count() == 1200
    assert len(stores_by_thread) > 1, stores_by_thread  # the backlog was shared out
    assert selectors.pipeline_status()["buffered"] == 0
    assert selectors.pipeline_status()["processing"] == 0
    services.aggregate_hourly()
    assert sum(HourlyClick.objects.values_list("clicks", flat=True)) == 1200


def test_a_batch_left_in_a_lane_beyond_todays_count_is_still_stored(
    lanes_buffer, make_link, settings
):
    """A worker that ran with more lanes died mid-batch; it restarts with one lane."""
    link = make_link()
    leftover = buffer.lane(5)
    lanes_buffer.rpush(leftover.processing, visit_message(link), visit_message(link))
    lanes_buffer.rpush(buffer.VISITS_KEY, visit_message(link))
    settings.ANALYTICS_FLUSH_LANES = 1

    assert selectors.pipeline_status()["processing"] == 2
    assert services.flush_pending(max_seconds=0) == 3
    assert VisitRecord.objects.count() == 3
    assert not lanes_buffer.exists(leftover.processing)


def test_a_lane_that_fails_raises_and_keeps_its_batch_for_the_next_flush(
    lanes_buffer, make_link, monkeypatch
):
    link = make_link()
    lanes_buffer.rpush(buffer.VISITS_KEY, *(visit_message(link) for _ in range(300)))
    real_insert = inserts._insert_visits
    failed = []

    def fail_once_in_a_lane_thread(rows):
        if threading.current_thread().name.startswith("flush-lane-") and not failed:
            failed.append(len(rows))
            raise RuntimeError("the database went away")
        real_insert(rows)

    monkeypatch.setattr(inserts, "_insert_visits", fail_once_in_a_lane_thread)

    with pytest.raises(RuntimeError, match="went away"):
        services.flush_pending(batch_size=50)
    assert failed  # a lane thread failed, and the caller heard of it
    assert selectors.pipeline_status()["processing"] == failed[0]

    # The next flush takes the failed batch again (no visit lost, none stored twice).
    services.flush_pending(batch_size=50)
    assert VisitRecord.objects.count() == 300
    assert VisitRecord.objects.values("event_id").distinct().count() == 300
    assert selectors.pipeline_status()["processing"] == 0
