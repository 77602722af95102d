"""End to end on MariaDB + Redis: redirects → Redis buffer → real Celery worker → stats."""

import time

import pytest
from django.db.models import Sum
from django.test import Client
from django.utils import timezone

from analytics import selectors
from analytics.models import HourlyClick, VisitRecord
from analytics.tasks import aggregate_hourly_task, flush_visits_task
from analytics.tests.visits import (
    CHROME_MAC,
    FIREFOX_WINDOWS,
    GOOGLEBOT,
    SAFARI_IPAD,
    SAFARI_IPHONE,
    SLACKBOT,
    WECHAT_ANDROID,
)
from links.services.create import link_create

VISITS = 1000
BOTS = {GOOGLEBOT, SLACKBOT}
# 37 addresses × 7 User-Agents, walked so that the pairs repeat unevenly.
ADDRESSES = ["115.236.0.1", "81.2.69.160", "2001:4860:4860::8888"] + [
    f"198.51.100.{n}" for n in range(1, 35)
]
AGENTS = [
    CHROME_MAC,
    SAFARI_IPHONE,
    WECHAT_ANDROID,
    GOOGLEBOT,
    SLACKBOT,
    FIREFOX_WINDOWS,
    SAFARI_IPAD,
]


def _wait_for(condition, *, seconds: float, nudge=None) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        if nudge is not None:
            nudge()
        time.sleep(0.5)
    return condition()


@pytest.mark.worker
@pytest.mark.services
def test_a_thousand_redirects_are_each_counted_once(
    requires_mysql, requires_redis, celery_worker_real, settings, user
):
    settings.NUM_PROXIES = 1
    link = link_create(user=user, long_url="https://example.com/campaign").link
    browser = Client()
    sent = []
    for n in range(VISITS):
        ip = ADDRESSES[n % len(ADDRESSES)]
        ua = AGENTS[(n * 3 + n // len(ADDRESSES)) % len(AGENTS)]
        response = browser.get(
            f"/{link.code}",
            REMOTE_ADDR="10.0.0.1",  # the proxy
            HTTP_X_FORWARDED_FOR=f"6.6.6.{n % 200}, {ip}",  # a spoofed entry, then the proxy's
            HTTP_USER_AGENT=ua,
            HTTP_REFERER="https://news.example.net/item?id=1" if n % 4 == 0 else "",
        )
        assert response.status_code == 302
        sent.append((ip, ua))
        if n % 100 == 99:  # what beat does every 2 s, through the broker while clicks arrive
            flush_visits_task.delay()
        if n % 400 == 399:
            aggregate_hourly_task.delay()

    stored = VisitRecord.objects.filter(link=link)
    assert _wait_for(lambda: stored.count() >= VISITS, seconds=60, nudge=flush_visits_task.delay), (
        f"only {stored.count()} of {VISITS} visits stored"
    )

    def hourly_total():
        sums = HourlyClick.objects.filter(link=link).aggregate(c=Sum("clicks"), b=Sum("bot_clicks"))
        return (sums["c"] or 0) + (sums["b"] or 0)

    assert _wait_for(
        lambda: hourly_total() == VISITS, seconds=60, nudge=aggregate_hourly_task.delay
    ), f"hourly counts sum to {hourly_total()}, not {VISITS}"

    # Exactly once: every redirect stored, none twice, the spoofed entries never used.
    assert stored.count() == VISITS
    assert stored.values("event_id").distinct().count() == VISITS
    assert not stored.filter(client_ip__startswith="6.6.6.").exists()
    assert set(stored.values_list("client_ip", flat=True)) == set(ADDRESSES)

    people = [pair for pair in sent if pair[1] not in BOTS]
    rows = list(HourlyClick.objects.filter(link=link))
    assert sum(r.clicks for r in rows) == len(people)
    assert sum(r.bot_clicks for r in rows) == VISITS - len(people)
    end = timezone.now() + timezone.timedelta(hours=1)
    stats = selectors.link_stats(link=link, start=end - timezone.timedelta(days=1), end=end)
    assert stats["unique_visitors"] == len(set(people))
    if len(rows) == 1:  # unless the run straddled an hour boundary
        assert rows[0].unique_visitors == len(set(people))
    assert stats["total_clicks"] == len(people)
    assert stats["bot_clicks"] == VISITS - len(people)

    # Enriched on the worker, not on the redirect.
    hangzhou = stored.filter(client_ip="115.236.0.1").first()
    assert (hangzhou.country, hangzhou.province, hangzhou.city) == ("China", "Zhejiang", "Hangzhou")
    assert {"WeChat", "Chrome", "Mobile Safari", "Firefox"} <= {
        b["name"] for b in stats["browsers"]
    }
    assert {d["name"] for d in stats["devices"]} == {"PC", "Mobile", "Tablet"}
    referrers = {r["name"]: r["clicks"] for r in stats["referrers"]}
    assert referrers["news.example.net"] + referrers["Direct"] == len(people)
    assert {b["name"] for b in stats["bots"]} == {"Googlebot", "Slackbot-LinkExpanding"}
