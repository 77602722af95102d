"""link.broken and link.recovered (issue #29) as a receiver gets them: one each per spell, with
the link's health and failover URL in `data.link`; a webhook that did not ask for them hears
nothing."""

from __future__ import annotations

import json

import pytest

from links.checker import CheckResult
from links.services import health
from links.services.create import link_create
from webhooks import services

pytestmark = pytest.mark.django_db

TARGET = "https://example.com/spring"
FAILED = CheckResult(url=TARGET, ok=False, status_code=500, error="http", detail="answered 500.")
FINE = CheckResult(url=TARGET, ok=True, status_code=200)


def test_a_broken_then_recovered_link_is_told_once_each(
    user, receiver, settings, django_capture_on_commit_callbacks
):
    settings.LINK_CHECK_FAILURES = 2
    services.webhook_create(user=user, url=receiver.url, events=["link.broken", "link.recovered"])
    services.webhook_create(user=user, url=receiver.url + "/created", events=["link.created"])
    with django_capture_on_commit_callbacks(execute=True):
        link = link_create(
            user=user, long_url=TARGET, fallback_url="https://example.com/meanwhile"
        ).link
        for result in (FINE, FAILED, FAILED, FAILED, FINE, FINE):
            health.record_checks(link=link, results=[result])
    assert services.webhook_deliver_due() == 3  # link.created, link.broken, link.recovered
    bodies = {
        json.loads(item.body)["event"]: json.loads(item.body)
        for item in receiver.received
        if item.path == "/hook"
    }
    assert sorted(bodies) == ["link.broken", "link.recovered"]
    broken = bodies["link.broken"]["data"]["link"]
    assert broken["code"] == link.code
    assert broken["fallback_url"] == "https://example.com/meanwhile"
    assert broken["health"]["status"] == "broken" and "500" in broken["health"]["reason"]
    recovered = bodies["link.recovered"]["data"]["link"]["health"]
    assert recovered["status"] == "ok" and recovered["since"].endswith("Z")
