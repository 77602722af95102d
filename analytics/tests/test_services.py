"""Storing visits and counting hours: at-least-once delivery, exactly-once counts."""

import datetime as dt
import json

import pytest

from analytics import buffer, selectors, services
from analytics.models import HourlyClick, VisitRecord
from analytics.services import inserts, rollups
from analytics.tests.visits import GOOGLEBOT, SAFARI_IPHONE, visit_message

UTC = dt.UTC


def hourly_rows(link=None):
    rows = HourlyClick.objects.order_by("link_id", "hour")
    if link is not None:
        rows = rows.filter(link=link)
    return list(rows.values_list("link_id", "hour", "clicks", "unique_visitors", "bot_clicks"))


# --- Direct path (both backends) -------------------------------------------------------------


@pytest.mark.django_db
def test_hourly_counts_people_unique_visitors_and_bots_apart(make_link):
    link = make_link()
    at = dt.datetime(2024, 5, 1, 10, 15, tzinfo=UTC)
    services.store_visits(
        messages=[
            visit_message(link, ip="198.51.100.1", at=at),
            visit_message(link, ip="198.51.100.1", at=at),  # same person again
            visit_message(
                link, ip="198.51.100.1", ua=SAFARI_IPHONE, at=at
            ),  # same IP, other device
            visit_message(link, ip="198.51.100.2", at=at),
            visit_message(link, ip="66.249.66.1", ua=GOOGLEBOT, at=at),
        ]
    )
    assert hourly_rows(link) == [(link.pk, dt.datetime(2024, 5, 1, 10, tzinfo=UTC), 4, 3, 1)]


@pytest.mark.django_db
def test_visits_fall_into_their_own_utc_hour(make_link):
    link = make_link()
    services.store_visits(
        messages=[
            visit_message(link, at=dt.datetime(2024, 5, 1, 10, 59, 59, 999000, tzinfo=UTC)),
            visit_message(link, at=dt.datetime(2024, 5, 1, 11, 0, 0, tzinfo=UTC)),
        ]
    )
    assert [row[1].hour for row in hourly_rows(link)] == [10, 11]


@pytest.mark.django_db
def test_aggregation_twice_gives_the_same_rows(make_link):
    link, other = make_link(), make_link("https://example.org/other")
    at = dt.datetime(2024, 5, 1, 10, 15, tzinfo=UTC)
    services.store_visits(
        messages=[visit_message(link, ip=f"198.51.100.{n % 7}", at=at) for n in range(20)]
        + [visit_message(other, ua=GOOGLEBOT, at=at + dt.timedelta(hours=2))]
    )
    first = hourly_rows()
    pairs = [(link.pk, at), (other.pk, at + dt.timedelta(hours=2))]
    services.aggregate_hourly(pairs=pairs)
    services.aggregate_hourly(pairs=pairs)
    assert hourly_rows() == first
    assert first == [
        (link.pk, dt.datetime(2024, 5, 1, 10, tzinfo=UTC), 20, 7, 0),
        (other.pk, dt.datetime(2024, 5, 1, 12, tzinfo=UTC), 0, 0, 1),
    ]


@pytest.mark.django_db
def test_the_same_event_delivered_twice_is_stored_once(make_link):
    link = make_link()
    again = visit_message(link)
    assert services.store_visits(messages=[again, again]) == 1
    assert services.store_visits(messages=[again]) == 0
    assert VisitRecord.objects.count() == 1
    assert hourly_rows(link)[0][2] == 1


@pytest.mark.django_db
def test_visits_of_deleted_links_and_malformed_records_are_dropped(make_link):
    link, gone = make_link(), make_link("https://example.org/gone")
    stale = visit_message(gone)
    gone.delete()
    stored = services.store_visits(messages=[visit_message(link), stale, "{not json", '{"e": "x"}'])
    assert stored == 1
    assert list(VisitRecord.objects.values_list("link_id", flat=True)) == [link.pk]


@pytest.mark.django_db
def test_purge_keeps_hourly_counts_and_a_rebuild_leaves_them(make_link):
    link = make_link()
    now = dt.datetime.now(UTC)
    old, recent = now - dt.timedelta(days=40), now - dt.timedelta(hours=1)
    services.store_visits(
        messages=[
            visit_message(link, at=old),
            visit_message(link, at=old),
            visit_message(link, at=recent),
        ]
    )
    before = hourly_rows(link)
    assert services.purge_visits(older_than_days=30) == 2
    assert VisitRecord.objects.count() == 1
    assert hourly_rows(link) == before
    services.rebuild_hourly(since=now - dt.timedelta(days=60))
    assert hourly_rows(link) == before


@pytest.mark.django_db
def test_rebuild_restores_lost_hourly_rows(make_link):
    link = make_link()
    now = dt.datetime.now(UTC)
    services.store_visits(
        messages=[visit_message(link, at=now - dt.timedelta(days=d, minutes=5)) for d in range(4)]
        + [visit_message(link, ua=GOOGLEBOT, at=now - dt.timedelta(days=2, minutes=5))]
    )
    expected = hourly_rows()
    HourlyClick.objects.all().delete()
    days_seen = []
    written = services.rebuild_hourly(
        since=now - dt.timedelta(days=5), progress=lambda done, total: days_seen.append(done)
    )
    assert written == 4
    assert hourly_rows() == expected
    assert days_seen == list(range(1, len(days_seen) + 1))
    assert len(days_seen) >= 5


# --- Buffered path (Redis) -------------------------------------------------------------------


@pytest.mark.django_db
def test_flush_stores_a_batch_and_aggregate_counts_it(redis_buffer, make_link):
    link = make_link()
    redis_buffer(*[visit_message(link, ip=f"198.51.100.{n}") for n in range(25)])
    assert services.flush_pending(batch_size=10, max_seconds=0) == 10
    assert selectors.pipeline_status()["buffered"] == 15
    assert HourlyClick.objects.count() == 0, "counted by aggregate_hourly, not by the flush"
    assert services.flush_pending(batch_size=10) == 15
    assert services.aggregate_hourly() == 1
    assert hourly_rows(link)[0][2:] == (25, 25, 0)
    assert selectors.pipeline_status() == {
        "buffered": 0,
        "processing": 0,
        "pending_hours": 0,
        "dead": 0,
    }


@pytest.mark.django_db
def test_a_flush_that_fails_after_taking_its_batch_loses_and_doubles_nothing(
    redis_buffer, make_link, monkeypatch
):
    link = make_link()
    redis_buffer(*[visit_message(link, ip=f"198.51.100.{n}") for n in range(25)])
    real_insert = inserts._insert_visits

    def insert_then_die(rows):
        real_insert(rows)
        raise RuntimeError("worker killed before the commit")

    monkeypatch.setattr(inserts, "_insert_visits", insert_then_die)
    with pytest.raises(RuntimeError):
        services.flush_pending(batch_size=10, max_seconds=0)
    assert VisitRecord.objects.count() == 0
    assert selectors.pipeline_status()["processing"] == 10  # kept for the next run
    monkeypatch.setattr(inserts, "_insert_visits", real_insert)

    # Now a crash after the commit but before Redis heard about it.
    def die_after_commit(link_id, hour):
        raise RuntimeError("worker killed after the commit")

    monkeypatch.setattr(buffer, "hour_member", die_after_commit)
    with pytest.raises(RuntimeError):
        services.flush_pending(batch_size=10, max_seconds=0)
    assert VisitRecord.objects.count() == 10
    assert selectors.pipeline_status()["processing"] == 10
    monkeypatch.undo()

    assert services.flush_pending(batch_size=10) == 15  # the retried 10 are not stored twice
    services.aggregate_hourly()
    services.aggregate_hourly()
    assert VisitRecord.objects.count() == 25
    assert VisitRecord.objects.values("event_id").distinct().count() == 25
    assert hourly_rows(link)[0][2:] == (25, 25, 0)


@pytest.mark.django_db
def test_a_record_that_never_stores_goes_to_the_dead_list_and_the_rest_flows(
    redis_buffer, make_link, monkeypatch
):
    link = make_link()
    redis_buffer(
        visit_message(link), visit_message(link, ua="POISON"), visit_message(link), "{not json"
    )
    real_insert = inserts._insert_visits

    def choke_on_poison(rows):
        if any(row.user_agent == "POISON" for row in rows):
            raise RuntimeError("this row breaks the insert")
        real_insert(rows)

    monkeypatch.setattr(inserts, "_insert_visits", choke_on_poison)
    for _ in range(services.MAX_ATTEMPTS):
        with pytest.raises(RuntimeError):
            services.flush_pending(max_seconds=0)
    assert services.flush_pending(max_seconds=0) == 2
    assert VisitRecord.objects.count() == 2
    dead = redis_buffer.client.lrange(buffer.DEAD_KEY, 0, -1)
    assert len(dead) == 2
    assert {json.loads(d).get("u") for d in dead if d.startswith(b'{"')} == {"POISON"}
    assert selectors.pipeline_status()["processing"] == 0


@pytest.mark.django_db
def test_only_one_flush_runs_at_a_time(redis_buffer, make_link):
    link = make_link()
    redis_buffer(visit_message(link))
    redis_buffer.client.set(buffer.FLUSH_LOCK_KEY, "someone-else")
    assert services.flush_pending(max_seconds=0) == 0
    assert selectors.pipeline_status()["buffered"] == 1
    redis_buffer.client.delete(buffer.FLUSH_LOCK_KEY)
    assert services.flush_pending(max_seconds=0) == 1


@pytest.mark.django_db
def test_hours_marked_during_an_aggregation_wait_for_the_next_one(
    redis_buffer, make_link, monkeypatch
):
    link = make_link()
    redis_buffer(visit_message(link))
    services.flush_pending(max_seconds=0)
    real_recompute = rollups._recompute_pairs

    def flush_meanwhile(pairs, **kwargs):
        pairs = list(pairs)
        redis_buffer(visit_message(link))
        services.flush_pending(
            max_seconds=0
        )  # marks the same hour again while this aggregation runs
        return real_recompute(pairs, **kwargs)

    monkeypatch.setattr(rollups, "_recompute_pairs", flush_meanwhile)
    services.aggregate_hourly()
    monkeypatch.undo()
    assert selectors.pipeline_status()["pending_hours"] == 1
    services.aggregate_hourly()
    assert hourly_rows(link)[0][2] == 2


@pytest.mark.django_db
def test_odd_event_ids_and_times_are_stored_exactly_as_sent(requires_mysql, make_link):
    """The MySQL INSERT quotes hex event ids and its own time text without the driver's
    escaping; anything else must still go through it."""
    link = make_link()
    at = dt.datetime(2026, 3, 1, 9, 5, 7, 250000, tzinfo=UTC)
    odd = "it's %s\\'); DELETE FROM x; --"
    messages = [
        visit_message(link, at=at, event="0123456789abcdef0123456789abcdef"),
        visit_message(link, at=at.replace(microsecond=0), event=odd),
    ]
    services.store_visits(messages=messages)
    services.store_visits(messages=messages)  # delivered again: found present, not repeated
    stored = dict(VisitRecord.objects.values_list("event_id", "visit_time"))
    assert stored == {
        "0123456789abcdef0123456789abcdef": at,
        odd[:32]: at.replace(microsecond=0),
    }
