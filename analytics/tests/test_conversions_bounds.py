"""Conversion reports that cannot be turned against the service or across workspaces: made-up
click ids flush the pending visits at most once per interval (and not at all for an id already
found unknown); a sale by customer id alone stays in the key's workspace, and is refused when
the customer's leads are in several workspaces of the caller."""

from __future__ import annotations

import secrets
import time

import pytest

from analytics.models import VisitRecord
from analytics.services import conversions
from analytics.tests.test_conversions import LEAD, _api

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(user):
    from links.services.create import link_create

    return link_create(
        user=user, long_url="https://shop.example.com/landing", track_conversions=True
    ).link


def _lead(api, click_id: str):
    return api.post(
        LEAD, {"click_id": click_id, "event_name": "Sign up", "customer_id": "c"}, format="json"
    )


def test_made_up_click_ids_flush_the_pending_visits_at_most_once_per_interval(
    client, user, link, monkeypatch
):
    # Three seconds, so that the rounds (each well under one) are many per interval.
    monkeypatch.setattr(conversions, "FLUSH_INTERVAL", 3.0)
    api = _api(user)
    # Each round spools one visit, then reports an id nobody has: a visit stored by the report
    # (the runner is not running here) shows that the report flushed.
    flushes = 0
    began = time.monotonic()
    for _ in range(4):
        stored = VisitRecord.objects.count()
        assert client.get(f"/{link.code}").status_code == 302
        assert _lead(api, secrets.token_hex(16)).status_code == 404
        flushes += VisitRecord.objects.count() > stored
    elapsed = time.monotonic() - began
    assert flushes >= 1
    assert flushes <= elapsed / conversions.FLUSH_INTERVAL + 1, (flushes, elapsed)


def test_an_id_found_unknown_a_moment_ago_is_answered_without_a_flush(client, user, link):
    api = _api(user)
    made_up = secrets.token_hex(16)
    assert _lead(api, made_up).status_code == 404
    time.sleep(conversions.FLUSH_INTERVAL)
    assert client.get(f"/{link.code}").status_code == 302
    assert _lead(api, made_up).status_code == 404
    assert VisitRecord.objects.count() == 0, "the repeat flushed the spool"
    # A real click reported at once is still found: its id was never seen unknown.
    response = client.get(f"/{link.code}")
    click_id = response["Location"].rsplit("sc_cid=", 1)[1]
    assert _lead(api, click_id).status_code == 201


def test_a_flush_without_redis_keeps_to_its_time_limit(client, link):
    from analytics import services

    for _ in range(5):
        assert client.get(f"/{link.code}").status_code == 302
    # One batch, then the limit has passed: the rest waits for the runner.
    assert services.flush_pending(batch_size=2, max_seconds=0) == 2
    assert services.flush_pending() == 3
