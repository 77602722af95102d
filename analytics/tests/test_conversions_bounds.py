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


def _two_shops(client, user):
    """Two workspaces of `user`, each with a lead of its own customer "cus_1"; their clicks."""
    from links.services.create import link_create
    from workspaces.services import workspace_create

    clicks = {}
    for name in ("Shop A", "Shop B"):
        team = workspace_create(user=user, name=name)
        link = link_create(
            user=user, workspace=team, long_url="https://shop.example.com/", track_conversions=True
        ).link
        response = client.get(f"/{link.code}")
        click_id = response["Location"].rsplit("sc_cid=", 1)[1]
        lead = {"click_id": click_id, "event_name": "Sign up", "customer_id": "cus_1"}
        assert _api(user, workspace=team).post(LEAD, lead, format="json").status_code == 201
        clicks[team.slug] = (team, click_id)
    return clicks


SALE_BODY = {"customer_id": "cus_1", "amount": 500, "currency": "EUR", "event_name": "Purchase"}


def test_a_sale_by_customer_id_with_a_workspace_key_stays_in_that_workspace(client, user):
    clicks = _two_shops(client, user)
    # Shop A's lead is the older one: a lookup across workspaces would take Shop B's.
    team, click_id = next(iter(clicks.values()))
    sale = _api(user, workspace=team).post("/api/v1/track/sale", SALE_BODY, format="json")
    assert sale.status_code == 201, sale.json()
    assert sale.json()["click_id"] == click_id


def test_a_sale_by_customer_id_in_several_workspaces_without_one_named_is_a_400(client, user):
    from rest_framework.test import APIClient

    _two_shops(client, user)
    session = APIClient()
    session.force_login(user)
    sale = session.post("/api/v1/track/sale", SALE_BODY, format="json")
    assert sale.status_code == 400, sale.json()
    assert "several of your workspaces" in sale.json()["customer_id"][0]
    assert not conversions.Conversion.objects.filter(kind="sale").exists()


def test_the_days_clicks_are_that_days_with_weekly_buckets(link):
    from datetime import datetime, time, timedelta

    from django.utils import timezone

    from analytics import selectors
    from analytics.models import Conversion, HourlyClick

    zone = timezone.get_current_timezone()
    today = timezone.localdate()
    monday = today - timedelta(days=today.weekday() + 14)
    tuesday = monday + timedelta(days=1)
    noon = {day: datetime.combine(day, time(12), tzinfo=zone) for day in (monday, tuesday)}
    HourlyClick.objects.create(link=link, hour=noon[monday], clicks=10)
    HourlyClick.objects.create(link=link, hour=noon[tuesday], clicks=4)
    Conversion.objects.create(
        link=link,
        workspace_id=link.workspace_id,
        kind="lead",
        click_id="a" * 32,
        event_name="Sign up",
        customer_id="c",
        created_at=noon[tuesday],
    )
    start = datetime.combine(monday, time.min, tzinfo=zone)
    for bucket in ("week", "day"):
        stats = selectors.link_stats(
            link=link, start=start, end=start + timedelta(days=7), bucket=bucket
        )
        [day] = stats["conversions"]["days"]
        assert (day["day"], day["clicks"], day["leads"]) == (tuesday.isoformat(), 4, 1), bucket
        assert day["lead_rate"] == 25.0
