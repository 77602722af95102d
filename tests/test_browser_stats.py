"""The stats page's breakdown shares, series buckets and periods in a real browser (issue #14),
at a phone's, a laptop's and a wide screen's width: shares of the period's total with an
"Other" row and "Show all", days and weeks on the chart, the 90-day and all-time presets, a
refused range said on the page, and the page fitting with axe-core finding nothing serious.
Screenshots go to test-artifacts/; UPDATE_SCREENSHOTS=1 also refreshes docs/screenshots/.
"""

import datetime as dt
import os

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser_support import (
    WIDTHS,
    assert_fits_and_accessible,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

# 12 browsers, 170 clicks: the top one is 30 of 170 (17.6 %), the last two (7 clicks) "Other".
CLICKS = [30, 25, 20, 18, 16, 14, 13, 11, 9, 7, 4, 3]


@pytest.fixture
def old_link(user):
    from analytics.tests.factories import add_visits
    from links.services.create import link_create

    link = link_create(user=user, long_url="https://example.com/sale", alias="sale").link
    link.created_at = timezone.now() - dt.timedelta(days=400)
    link.save(update_fields=["created_at"])
    now = timezone.now()
    for i, clicks in enumerate(CLICKS):
        add_visits(link, clicks, when=now, browser_type=f"Browser {i:02d}")
    return link


@pytest.mark.parametrize("width", WIDTHS)
def test_shares_other_show_all_buckets_and_presets(
    browser,
    live_server,
    old_link,
    artifacts_dir,
    width,
):
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    stats = f"{base}/dashboard/links/{old_link.code}/"

    # 7 days: one bar a day, shares of the period's 170 clicks, the 11th and 12th rows in Other.
    page.goto(stats + "?range=7d")
    assert page.get_by_role("heading", name="Clicks per day").is_visible()
    browsers = page.locator("table[data-breakdown=browsers]")
    top = browsers.locator("tr", has_text="Browser 00")
    assert "17.6%" in top.inner_text()
    other = browsers.locator("tr.other-row")
    other.scroll_into_view_if_needed()
    assert other.is_visible()
    assert "Other (2 more)" in other.inner_text() and "4.1%" in other.inner_text()
    page.screenshot(path=os.path.join(artifacts_dir, f"stats-shares-{width}.png"), full_page=True)
    if width == 1280:
        keep_screenshot(artifacts_dir, f"stats-shares-{width}.png")
    assert_fits_and_accessible(page, "stats, 7 days")

    # Every row on request, then back to the top rows.
    page.get_by_role("link", name="Show all browsers").click()
    page.wait_for_url("**rows=all**")
    assert browsers.locator("tbody tr").count() == len(CLICKS)
    assert browsers.locator("tr.other-row").count() == 0
    page.get_by_role("link", name="Show the top 10 of each").click()
    expect(browsers.locator("tbody tr")).to_have_count(11)

    # The longer presets: 90 days by day, all time (400 days) by week.
    tabs = page.get_by_role("navigation", name="Period")
    # A click only starts the navigation; wait for the new page before reading it.
    tabs.get_by_role("link", name="Last 90 days").click()
    page.wait_for_url("**range=90d**")
    expect(page.get_by_role("heading", name="Clicks per day")).to_be_visible()
    tabs.get_by_role("link", name="All time").click()
    page.wait_for_url("**range=all**")
    expect(page.get_by_role("heading", name="Clicks per week")).to_be_visible()
    assert tabs.get_by_role("link", name="All time").get_attribute("aria-current") == "page"
    assert "170" in page.get_by_test_id("total-clicks").inner_text()
    assert_fits_and_accessible(page, "stats, all time")

    # A range the page refuses is said, with what it shows instead.
    page.get_by_text("Custom range", exact=True).click()
    page.get_by_label("From").fill("2026-03-10")
    page.get_by_label("To (inclusive)").fill("2026-03-01")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("The start date must be on or before the end date.")).to_be_visible()
    expect(page.get_by_text("Showing the default period instead.")).to_be_visible()
    context.close()
