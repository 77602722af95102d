"""End to end in a real browser: Playwright driving Debian's Chromium against a live server.

A marketer logs in, shortens the URL of a page this test serves, copies the short link, opens
it and lands on the page, then finds that click (Chromium on Linux) on the link's stats page,
in the chart and in the tables. A staff user then sees the click count in the admin.
Its create-link screenshot goes to test-artifacts/ (UPDATE_SCREENSHOTS=1: docs/screenshots/); the
pages' screenshots with more data come from tests/test_browser_pages.py.
"""

import os
import re

import pytest

# The helpers used to live in this module; older imports of them from here keep working
# (tests/browser_support.py is their home, and tests/conftest.py offers the fixtures to all).
from tests.browser_support import (
    CHROMIUM,
    LAUNCH_ARGS,
    TARGET_HOST,
    TARGET_TITLE,
    assert_fits_and_accessible,
    browser,
    chromium_user_agent,
    deliver_visits,
    keep_screenshot,
    log_in,
    needs_chromium,
    page_at_width,
    target_url,
)

__all__ = [
    "CHROMIUM",
    "LAUNCH_ARGS",
    "TARGET_HOST",
    "TARGET_TITLE",
    "browser",
    "chromium_user_agent",
    "deliver_visits",
    "keep_screenshot",
    "log_in",
    "page_at_width",
    "target_url",
]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def test_marketer_creates_copies_opens_and_sees_the_click(
    browser, live_server, target_url, user, staff_user, artifacts_dir
):
    base = live_server.url
    context = browser.new_context(
        user_agent=chromium_user_agent(browser), viewport={"width": 1280, "height": 900}
    )
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = context.new_page()
    page.set_default_timeout(10_000)

    # Log in and shorten the target page's URL.
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")
    page.get_by_label("Long URL").fill(target_url)
    page.get_by_text("Options: alias, title, start and expiry, redirect type").click()
    page.get_by_label("Title", exact=True).fill("Spring sale")
    page.get_by_role("button", name="Shorten").click()
    page.wait_for_selector("[data-testid=created-link]")
    short_url = page.locator("#short-url").inner_text().strip()
    assert re.fullmatch(re.escape(base) + r"/[0-9A-Za-z]{7}", short_url), short_url
    assert page.locator("figure.qr svg").is_visible()

    # Copy it: the page confirms, and the clipboard holds the short URL.
    page.get_by_role("button", name="Copy").click()
    feedback = page.locator("#copy-feedback")
    feedback.filter(has_text="Copied").wait_for()
    assert short_url in feedback.inner_text()
    assert page.evaluate("navigator.clipboard.readText()") == short_url
    page.screenshot(path=os.path.join(artifacts_dir, "create-link.png"), full_page=True)
    keep_screenshot(artifacts_dir, "create-link.png")

    # Open the short URL: the browser lands on the target page.
    page.goto(short_url)
    assert page.url == target_url
    assert page.title() == TARGET_TITLE

    deliver_visits()

    # The click is on the stats page: totals, chart and tables say Chrome on Linux.
    code = short_url.rsplit("/", 1)[1]
    page.goto(f"{base}/dashboard/links/{code}/?range=24h")
    assert page.get_by_test_id("total-clicks").inner_text() == "1"
    chart_total = page.evaluate(
        """() => {
            const chart = Chart.getChart(document.getElementById('clicks-chart'));
            return chart.data.datasets[0].data.reduce((a, b) => a + b, 0);
        }"""
    )
    assert chart_total == 1
    browsers = page.locator("table[data-breakdown=browsers]")
    assert "Chrome" in browsers.inner_text()
    assert "Linux" in page.locator("table[data-breakdown=os]").inner_text()
    latest = page.get_by_test_id("latest-visits").inner_text()
    assert "Chrome" in latest and "Linux" in latest
    page.screenshot(path=os.path.join(artifacts_dir, "first-click-stats.png"), full_page=True)

    # "My links" shows the click too; and the page works at phone width.
    page.goto(f"{base}/dashboard/")
    row = page.locator(f"tr[data-code='{code}']")
    assert row.locator("td[data-label=Clicks]").inner_text().strip() == "1"
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert_fits_and_accessible(page, "my links with the first click, on a phone")
    context.close()

    # Staff: the admin's link list shows the click count.
    staff = browser.new_context(viewport={"width": 1600, "height": 800})
    admin_page = staff.new_page()
    admin_page.set_default_timeout(10_000)
    log_in(admin_page, base, "staffer", "s3cret-pass-3", path="/admin/login/")
    admin_page.wait_for_url(base + "/admin/")
    admin_page.goto(f"{base}/admin/links/urllink/")
    admin_row = admin_page.locator("#result_list tbody tr", has_text=code)
    assert admin_row.locator("td.field-clicks").inner_text().strip() == "1"
    admin_row.locator(".field-long_url_short a").click()
    admin_page.get_by_text("Clicks in the last 7 days: 1 by people").wait_for()

    # Staff overview: the click across all links, and the code pool.
    admin_page.goto(f"{base}/dashboard/overview/")
    assert admin_page.get_by_test_id("overview-clicks").inner_text() == "1"
    assert code in admin_page.get_by_test_id("top-links").inner_text()
    staff.close()


def test_other_marketers_link_and_overview_are_closed(browser, live_server, user, other_user):
    """Isolation as a person sees it: a friendly 404 and a friendly 403, no tracebacks."""
    from links.tests.factories import UrlLinkFactory

    theirs = UrlLinkFactory(owner=other_user, alias="their-link")
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, live_server.url, "marketer", "s3cret-pass-1")
    page.wait_for_url(live_server.url + "/")
    response = page.goto(f"{live_server.url}/dashboard/links/{theirs.code}/")
    assert response.status == 404
    assert "Page not found" in page.content()
    response = page.goto(f"{live_server.url}/dashboard/overview/")
    assert response.status == 403
    assert "not allowed" in page.content()
    context.close()
