"""The stats page's "Last 7 days" chart in Chromium: 7 bars for 7 days, and room above the
tallest one (a marketer found 8 bars and the tallest touching the chart's top)."""

import datetime as dt

import pytest
from django.utils import timezone

from tests.browser_support import log_in, needs_chromium, page_at_width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def test_last_7_days_draws_7_bars_with_room_above_the_tallest(browser, live_server, user):
    from analytics.tests.factories import add_visits
    from links.services.create import link_create

    link = link_create(user=user, long_url="https://example.com/week", alias="week").link
    now = timezone.now()
    add_visits(link, 3, when=now)
    add_visits(link, 2, when=now - dt.timedelta(days=2))
    context, page = page_at_width(browser, 1280)
    log_in(page, live_server.url, "marketer", "s3cret-pass-1")
    page.wait_for_url(live_server.url + "/")
    page.goto(f"{live_server.url}/dashboard/links/{link.code}/?range=7d")
    page.wait_for_function("window.Chart && Chart.getChart('clicks-chart')")
    drawn = page.evaluate(
        """() => {
            const chart = Chart.getChart('clicks-chart');
            const tallest = Math.max(...chart.data.datasets.flatMap(d => d.data));
            return {bars: chart.data.labels.length, tallest, top: chart.scales.y.max};
        }"""
    )
    context.close()
    assert drawn["bars"] == 7
    assert drawn["tallest"] == 3
    assert drawn["top"] > drawn["tallest"], drawn
